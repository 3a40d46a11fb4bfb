#!/usr/bin/env bash
# demo.sh — deploy examples/ onto a throwaway test host and show what syslet does.
#
# Builds the test host image if needed (integration/testhost; about seven minutes the first time),
# boots one host, deploys the older stack in examples/demo-previous/, prints the plan to upgrade it
# to examples/ and applies it, shows what runs, then plans again in a fresh process: nothing to do.
# The host is stopped at the end; KEEP=1 leaves it running (shell: go tool task testhost:shell NAME=demo).
set -euo pipefail
cd "$(dirname "$0")/.."
TH=integration/testhost/testhost.sh
export TESTHOST_NAME=${TESTHOST_NAME:-demo}
bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
g() { bash "$TH" ssh "$@"; }

[[ $(id -u) == 0 ]] || { echo "demo: the test host needs root (systemd-nspawn)" >&2; exit 1; }
bold "building syslet and the test host image"
CGO_ENABLED=0 go build -trimpath -tags remote,containers_image_openpgp,exclude_graphdriver_btrfs,btrfs_noversion -o bin/syslet ./cmd/syslet
bash "$TH" tools
bash "$TH" build
bash "$TH" down >/dev/null 2>&1 || true
[[ ${KEEP:-0} == 1 ]] || trap 'bash "$TH" down >/dev/null 2>&1 || true' EXIT
bash "$TH" up >/dev/null
bash "$TH" cp bin/syslet /usr/local/bin/syslet
bash "$TH" cp examples /root/examples
g 'systemctl enable --now podman.socket' >/dev/null 2>&1

bold "0. encrypt the example secret for this host: syslet host-key, then sops (examples/encrypt-secret.sh)"
recipient=$(g syslet host-key)
echo "this host's age recipient: $recipient"
bash examples/encrypt-secret.sh shop examples/secrets/shop.yaml "$recipient" > bin/70-secrets.json
bash "$TH" cp bin/70-secrets.json /root/examples/70-secrets.json
echo "examples/70-secrets.json re-encrypted for it: keys $(jq -r .ciphertext bin/70-secrets.json | grep -o '^[a-z0-9-]*: ENC' | cut -d: -f1 | tr '\n' ' ')(values stay encrypted)"

bold "1. deploy the previous version of the stack: syslet /root/examples/demo-previous"
g 'syslet /root/examples/demo-previous 2>/dev/null | sed -n "/^Summary/,\$p"'

bold "2. what an upgrade to examples/ would do: syslet --diff /root/examples"
g 'syslet --diff /root/examples'

bold "3. apply it: syslet /root/examples"
g 'syslet /root/examples 2>&1 | sed -n "/^Applying/,\$p"'

bold "4. what runs now"
# The reload is a SIGHUP: the app re-reads its config dir a moment after
# syslet returns. Wait (at most 10 s) until what it serves is what the host
# now holds, so the settings shown below are the reloaded ones.
g 'want=$(cat /etc/containers/config/app/etc/app/conf.d/*)
   for i in $(seq 50); do
     [[ $(curl -fsS http://127.0.0.1:9000/settings 2>/dev/null | grep -v "^loaded ") == "$want" ]] && exit 0
     sleep 0.2
   done
   echo "the app still serves its old settings after 10 s" >&2; exit 1'
g 'podman ps --format "table {{.Names}}\t{{.Image}}\t{{.Status}}"; echo
   systemctl list-units --no-pager --all --legend=no backend-network.service db-data-volume.service web-cache-volume.service app-build.service app.service db.service web.service migrate.service; echo
   echo "GET http://127.0.0.1:8080/          → $(curl -fsS http://127.0.0.1:8080/)"
   echo "GET http://127.0.0.1:9000/settings  →"; curl -fsS http://127.0.0.1:9000/settings | sed "s/^/    /"
   echo "podman volumes: $(podman volume ls -q | tr "\n" " ")"
   echo "podman secrets (name, syslet/hash label): $(curl -fsS --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/secrets/json | jq -r ".[] | \"\(.Spec.Name)=\(.Spec.Labels[\"syslet/hash\"][:12])…\"" | tr "\n" " ")"
   echo "inside web: API_TOKEN=$(podman exec web sh -c "echo \$API_TOKEN"), /run/secrets/shop-db-password=$(podman exec web cat /run/secrets/shop-db-password)  (demo values)"'

bold "5. plan again, in a fresh process: syslet --diff --detailed-exitcode /root/examples"
g 'syslet --diff --detailed-exitcode /root/examples; echo "exit code $? (0: nothing to change)"'

bold "6. the run journal: syslet history (and the upgrade run's actions)"
g 'syslet history; echo; syslet history "$(syslet history --output json | jq -r "map(select(.source == \"/root/examples\" and .result == \"ok\"))[0].run")" | head -25'
if [[ ${KEEP:-0} == 1 ]]; then echo; echo "test host left running: go tool task testhost:shell NAME=$TESTHOST_NAME"; fi
