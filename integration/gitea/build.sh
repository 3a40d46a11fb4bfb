#!/usr/bin/env bash
# build.sh - build the Gitea of this wrapper module into the test host cache, once per version, and print
# the directory that holds it: gitea (the program, static, pure-Go SQLite), templates/ and options/
# (Gitea's web pages and data files, read from disk: the wrapper does not embed them).
#
# The directory is gitea-<version>-<hash of go.mod, go.sum and main.go> beside the test host images
# (testhost.sh paths: images=, shared by this machine's checkouts); a new version or wrapper builds
# afresh (cold: about 10 minutes on two loaded cores, mostly compiling; Go's build cache turns a second
# build into a link). Older directories are deleted after a build. Nothing here is committed.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=$(bash "$HERE/../testhost/testhost.sh" paths | sed -n 's/^images=//p')
[[ -d $CACHE ]] || { echo "gitea/build.sh: testhost.sh paths named no images directory" >&2; exit 1; }
cd "$HERE"
# Gitea needs no cgo (its SQLite is pure Go) and none of syslet's build tags.
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false
VERSION=$(sed -n 's/^require gitea.dev v//p' go.mod)
[[ -n $VERSION ]] || { echo "gitea/build.sh: no 'require gitea.dev vX.Y.Z' line in go.mod" >&2; exit 1; }
OUT=$CACHE/gitea-$VERSION-$(cat go.mod go.sum main.go | sha256sum | cut -c1-12)
if [[ -x $OUT/gitea ]]; then echo "$OUT"; exit 0; fi

exec 9>"$CACHE/gitea.lock"
flock 9
if [[ -x $OUT/gitea ]]; then echo "$OUT"; exit 0; fi
t0=$SECONDS
rm -rf "$OUT.tmp"; mkdir -p "$OUT.tmp"
go build -trimpath -ldflags='-s -w' -o "$OUT.tmp/gitea" .
src=$(go list -m -f '{{.Dir}}' gitea.dev)
cp -r "$src/templates" "$src/options" "$OUT.tmp/"
chmod -R u+w "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
for old in "$CACHE"/gitea-*; do [[ $old == "$OUT" || ! -d $old ]] || rm -rf "$old"; done
echo "gitea/build.sh: Gitea $VERSION built in $((SECONDS - t0))s: $OUT" >&2
echo "$OUT"
