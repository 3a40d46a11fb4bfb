#!/usr/bin/env bash
# encrypt-secret.sh NAME PLAINTEXT.yaml RECIPIENT[,RECIPIENT...] — print a syslet secret spec.
#
# Encrypts a flat YAML map of key → string with sops (the version pinned in go.mod, `go tool sops`)
# for the given age recipients (each host's `syslet host-key`) and wraps the ciphertext in a spec:
#   {"apiVersion": "v1", "type": "secret", "name": NAME, "ciphertext": "<the SOPS document>"}
# Each key K becomes the podman secret NAME-K on the host.
set -euo pipefail
[[ $# == 3 ]] || { echo "usage: $0 NAME PLAINTEXT.yaml RECIPIENT[,RECIPIENT...]" >&2; exit 2; }
name=$1 plain=$(realpath "$2") recipients=$3
cd "$(dirname "$0")/.."
# go tool builds sops on its first use (fetching its source the first time on a machine): that takes
# from half a minute to several, so say it when it does not answer at once.
# sops is built with one fixed setting whoever calls: the demo runs this under Task's env
# (CGO_ENABLED=0), a reader's plain shell has cgo on where a C compiler is installed, and go keeps
# one build per setting, so each would build sops again. sops needs no cgo; GOFLAGS (Task's podman
# build tags) does not change its build.
tool=$(mktemp); trap 'rm -f "$tool"' EXIT
CGO_ENABLED=0 go tool -n sops > "$tool" & pid=$!
sleep 1
if kill -0 "$pid" 2>/dev/null; then
  echo "encrypt-secret.sh: preparing sops, the version go.mod pins (go tool builds it on its first use here: a minute or more) ..." >&2
fi
wait "$pid" || { echo "encrypt-secret.sh: go tool sops could not be built (the go command says why above)" >&2; exit 1; }
ct=$("$(cat "$tool")" encrypt --age "$recipients" --input-type yaml --output-type yaml "$plain")
jq -n --arg name "$name" --arg ct "$ct"$'\n' '{apiVersion: "v1", type: "secret", name: $name, ciphertext: $ct}'
