# recipe-podman6.sh - the third platform: podman 6 (6.0.2), which Fedora's podman users are moving to and
# no Debian release packages yet, on Debian testing. Sourced by testhost.sh after recipe.sh and
# recipe-testing.sh when TESTHOST_RECIPE=podman6: everything not set here is testing's. Its image starts
# from a copy of the testing image (RECIPE_ON), whose podman 5.8 package it replaces with podman 6 built
# from the Go module proxy's source inside that tree, so that it links the libraries the guest has. The
# image is cached under a hash of the three files.
#
# Where the build runs: in a chroot of the copied tree, with this machine's Go (podman 6 needs Go 1.25;
# Debian testing's golang may lag) and this machine's module and build caches bind-mounted. Building on
# this machine instead would link bookworm's libraries (libgpgme11, not testing's libgpgme45): the binary
# would not run in the guest. The compiler and the -dev packages come from testing's archive and are
# purged again after the build, so the image holds what a podman 6 host has and no build tools.
# shellcheck shell=bash

RECIPE_ON=testing
PODMAN6_MODULE=go.podman.io/podman/v6@v6.0.2
# podman's install.md: cgo with libseccomp, libsystemd and gpgme; like Debian's podman it also links
# SQLite (podman 6's only database) and libsubid.
PODMAN6_BUILD_DEPS="gcc libc6-dev pkg-config libseccomp-dev libsystemd-dev libgpgme-dev libsqlite3-dev libsubid-dev"
# netavark from Debian's experimental suite (below); podman 6 needs 2.0 or later
PODMAN6_NETAVARK=2.0.0-1
# the Makefile's BUILDTAGS as they come out on Debian testing with these -dev packages (no apparmor, no btrfs)
PODMAN6_TAGS="grpcnotrace seccomp systemd libsqlite3 libsubid exclude_graphdriver_btrfs"

# recipe_derive ROOTFS PUBKEY DEBCACHE - turn a copy of the testing image into the podman 6 one (run on
# this machine as root; its own bash with errexit)
recipe_derive() {
  local R=$1 pub=$2 debs=$3 t0=$SECONDS src common goroot
  command -v go >/dev/null || { echo "podman6: no go in PATH: this machine's Go builds podman 6 (1.25 or later)" >&2; return 1; }
  goroot=$(go env GOROOT)
  # The source and every module it needs, from the module proxy, on this machine (the chroot builds offline).
  src=$(go mod download -json "$PODMAN6_MODULE" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -d $src ]] || { echo "podman6: go mod download $PODMAN6_MODULE gave no source directory" >&2; return 1; }
  (cd "$src" && go mod download)
  # podman 6 wants the configuration files of the common library it was built with (its release notes)
  common=$(cd "$src" && go list -m -f '{{.Dir}}' go.podman.io/common)
  echo "podman6: source $src, modules downloaded at $((SECONDS - t0))s"

  # a fresh identity: the guest is not the testing image's
  rm -f "$R/etc/machine-id" "$R/var/lib/dbus/machine-id"
  chroot "$R" systemd-machine-id-setup >/dev/null 2>&1
  install -m 600 "$pub" "$R/root/.ssh/authorized_keys"

  # The build, in a private mount namespace: its mounts end with it, even if it is killed.
  unshare --mount --propagation private -- bash -c "set -euo pipefail; $(declare -p PODMAN6_BUILD_DEPS PODMAN6_TAGS PODMAN6_NETAVARK); $(declare -f podman6_build); podman6_build \"\$@\"" \
    podman6 "$R" "$debs" "$goroot" "$(go env GOMODCACHE)" "$(go env GOCACHE)" "$src" "$common"

  # A test host's root is an overlayfs (testhost.sh up). Podman 6's build mounts an overlay over its build
  # context with the upper directory under /var/tmp, which the kernel refuses on overlayfs ("creating
  # overlay scaffolding for build context directory: ... invalid argument"; podman 5 mounted none): its
  # temporary files go under its storage instead, a plain directory in every instance.
  mkdir -p "$R/etc/containers/containers.conf.d"
  printf '[engine]\nimage_copy_tmp_dir = "storage"\n' > "$R/etc/containers/containers.conf.d/80-testhost-tmp.conf"

  # A new host's state: no storage of podman 5.8's, an empty registry, to be seeded by podman 6 at the
  # provisioning boot.
  rm -rf "$R"/var/lib/containers/* "$R"/var/lib/docker-registry/* "$R/var/lib/testhost/seeded"
  echo "podman6: podman 6 installed in the tree in $((SECONDS - t0))s"
}

# podman6_build ROOTFS DEBCACHE GOROOT GOMODCACHE GOCACHE SRC COMMON - in its own mount namespace
podman6_build() {
  local R=$1 debs=$2 goroot=$3 mod=$4 cache=$5 src=$6 common=$7 t0=$SECONDS
  mount -t proc proc "$R/proc"
  mount --rbind /dev "$R/dev"
  # /run is a tmpfs here: the resolver apt needs, and the mount points of this machine's Go and caches,
  # leave nothing in the image
  mount -t tmpfs tmpfs "$R/run"
  mkdir -p "$R/run/systemd/resolve" "$R/run/build/go" "$R/run/build/mod" "$R/run/build/cache" "$R/run/build/out"
  cat /etc/resolv.conf > "$R/run/systemd/resolve/stub-resolv.conf"
  mount --bind "$goroot" "$R/run/build/go"
  mount --bind "$mod" "$R/run/build/mod"
  mount --bind "$cache" "$R/run/build/cache"
  mount --bind "$debs" "$R/var/cache/apt/archives"
  local in=(chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8)

  "${in[@]}" dpkg --purge podman
  # Podman 6 speaks netavark 2's protocol (its release notes: netavark and aardvark-dns 2.0): testing's
  # netavark 1.17 fails every container on a network ("failed to load network options: invalid type:
  # sequence, expected a map"). Debian's experimental suite has netavark 2.0 (it works with aardvark-dns
  # 1.12 and later, testing's 1.17 included); only that package comes from there, and the suite is
  # removed from the guest's sources again.
  sed -n 's/^deb \([^ ]*\) testing main$/deb \1 experimental main/p' "$R/etc/apt/sources.list" > "$R/etc/apt/sources.list.d/experimental.list"
  [[ -s $R/etc/apt/sources.list.d/experimental.list ]] || { echo "podman6: no 'deb MIRROR testing main' line in the guest's sources.list" >&2; return 1; }
  # the archive here can be a snapshot whose Release has expired (debootstrap does not check that)
  "${in[@]}" apt-get -o Acquire::Check-Valid-Until=false update -q
  "${in[@]}" apt-get install -y -q --no-install-recommends -t experimental "netavark=$PODMAN6_NETAVARK"
  rm -f "$R/etc/apt/sources.list.d/experimental.list" "$R"/var/lib/apt/lists/*_experimental_*
  # shellcheck disable=SC2086
  "${in[@]}" apt-get install -y -q --no-install-recommends $PODMAN6_BUILD_DEPS
  echo "podman6: netavark 2 and the build dependencies installed in $((SECONDS - t0))s"

  local pkg=go.podman.io/podman/v6 ldflags
  ldflags="-X $pkg/libpod/define.buildInfo=$(date +%s) -X $pkg/libpod/config._installPrefix=/usr -X $pkg/libpod/config._etcDir=/etc -X $pkg/pkg/systemd/quadlet._binDir=/usr/bin"
  "${in[@]}" PATH=/run/build/go/bin:/usr/bin:/bin GOMODCACHE=/run/build/mod GOCACHE=/run/build/cache GOPROXY=off \
    GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOTELEMETRY=off CGO_ENABLED=1 \
    bash -euc 'cd "$1" && for c in podman quadlet rootlessport; do go build -trimpath -tags "$2" -ldflags "$3" -o /run/build/out/$c ./cmd/$c; done' \
    build "/run/build/mod/${src#"$mod"/}" "$PODMAN6_TAGS" "$ldflags"
  echo "podman6: podman, quadlet and rootlessport built in $((SECONDS - t0))s"

  # what podman's `make install.bin install.systemd` installs for a system (PREFIX=/usr)
  install -m 755 "$R/run/build/out/podman" "$R/usr/bin/podman"
  ln -sf podman "$R/usr/bin/podmansh"
  install -d "$R/usr/libexec/podman" "$R/usr/lib/systemd/system-generators" "$R/usr/lib/systemd/user-generators" \
    "$R/etc/containers/systemd/users"
  install -m 755 "$R/run/build/out/quadlet" "$R/run/build/out/rootlessport" "$R/usr/libexec/podman/"
  ln -sf ../../../libexec/podman/quadlet "$R/usr/lib/systemd/system-generators/podman-system-generator"
  ln -sf ../../../libexec/podman/quadlet "$R/usr/lib/systemd/user-generators/podman-user-generator"
  install -m 644 "$src/contrib/tmpfile/podman.conf" "$R/usr/lib/tmpfiles.d/podman.conf"
  local u
  for u in "$src"/contrib/systemd/system/*.service.in; do
    sed 's;@@PODMAN@@;/usr/bin/podman;g' "$u" > "$R/usr/lib/systemd/system/$(basename "$u" .in)"
  done
  install -m 644 "$src/contrib/systemd/system/podman.socket" "$src/contrib/systemd/system/podman-auto-update.timer" \
    "$R/usr/lib/systemd/system/"
  # containers.conf and seccomp.json of podman 6's common library, over Debian's 0.67 copies (registries.conf,
  # policy.json and shortnames.conf stay Debian's)
  install -m 644 "$common/pkg/config/containers.conf" "$common/pkg/seccomp/seccomp.json" "$R/usr/share/containers/"

  # shellcheck disable=SC2086
  "${in[@]}" apt-get purge -y -q --autoremove $PODMAN6_BUILD_DEPS
  "${in[@]}" apt-get clean
  if "${in[@]}" ldd /usr/bin/podman /usr/libexec/podman/quadlet | grep 'not found'; then
    echo "podman6: a library podman links was purged with the build dependencies" >&2
    return 1
  fi
  "${in[@]}" podman --version
}

# the provisioning boot also checks, once the guest is up and its registry seeded, that podman 6 is what
# runs, with netavark 2 (a container on podman's network), the overlay driver and its generator
RECIPE_PROVISION_CHECK="$RECIPE_PROVISION_CHECK
podman --version | grep -q '^podman version 6\.'
podman info --format '{{.Host.NetworkBackendInfo.Version}}' | grep -q '^netavark 2\.'
podman info --format '{{.Store.GraphDriverName}}' | grep -qx overlay
podman run --rm -q localhost:5000/busybox:latest true && podman rmi -a -f >/dev/null
/usr/libexec/podman/quadlet -version | grep -q '^6\.'
journalctl --rotate -q && journalctl --vacuum-time=1s -q"
