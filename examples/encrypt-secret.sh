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
ct=$(go tool sops encrypt --age "$recipients" --input-type yaml --output-type yaml "$plain")
jq -n --arg name "$name" --arg ct "$ct"$'\n' '{apiVersion: "v1", type: "secret", name: $name, ciphertext: $ct}'
