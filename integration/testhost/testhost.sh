#!/usr/bin/env bash
# testhost.sh - disposable Debian test hosts for syslet's integration tests: systemd as PID 1 in a
# systemd-nspawn container, rootful podman + quadlet, and a registry on the guest's 127.0.0.1:5000 seeded
# with localhost:5000/busybox:latest. SSH as root on a loopback port of this machine. Three platforms:
# Debian trixie (systemd 257, podman 5.4; the default), Debian testing (TESTHOST_RECIPE=testing) and
# podman 6 built from source on Debian testing (TESTHOST_RECIPE=podman6).
#
#   testhost.sh tools            install the host tools it needs (apt; needs root)
#   testhost.sh build            build the base image if the recipe changed (cached; minutes cold, with progress)
#   testhost.sh up               boot a fresh instance, wait for SSH and boot-up, print the SSH port on stdout
#   testhost.sh ssh [CMD...]     run CMD in the guest as root (stdin passed through; no CMD = shell)
#   testhost.sh cp SRC DEST      copy host SRC to guest DEST (SRC ':path' copies guest -> host)
#   testhost.sh down             stop the instance and delete its state (prints cpu_usec=N: the guest's CPU)
#   testhost.sh status           running / stopped
#   testhost.sh list             every instance this machine knows of (all checkouts)
#   testhost.sh cleanup [--all]  stop leftovers: instances whose owner process died, orphan cgroups,
#                                forwarders and run dirs; --all also stops live instances of this cache
#   testhost.sh paths            print the cache, images, base and key paths (for tools)
#
# Environment:
#   TESTHOST_RECIPE  the platform: trixie (default; recipe.sh), testing (recipe.sh, then recipe-testing.sh) or
#                    podman6 (then recipe-podman6.sh; built from a copy of testing's image, needs go in PATH);
#                    each has its own base image, cached under a hash of its recipe files
#   TESTHOST_NAME    instance name, [a-z0-9-], up to 40 chars (default: default); instances run concurrently
#   TESTHOST_CACHE   this checkout's state: instances, built binaries (default: integration/.cache)
#   TESTHOST_IMAGES  the base images and the .debs they were built from, shared by every checkout on this
#                    machine and kept across fresh clones (default: $TESTHOST_CACHE when that is set,
#                    else ${XDG_CACHE_HOME:-~/.cache}/syslet-testhost)
#   TESTHOST_OWNER   PID whose death makes the instance a leftover for `cleanup` (the Go test binary sets
#                    its own); unset = a manual instance, stopped only by `down` or `cleanup --all`
#   TESTHOST_ROOTFS  overlay (default: overlayfs over the base, instant) | copy (cp -a of the base, ~5 s)
#   TESTHOST_FWD     extra forwards "HOSTPORT:GUESTPORT[,...]" (host side binds 127.0.0.1)
#   TESTHOST_STOP_TIMEOUT  seconds `down` waits for a clean poweroff before killing the cgroup
#                    (default 10; 0 = kill at once, what the Go tests use)
#   TESTHOST_BOOT_TIMEOUT  seconds to wait for SSH (default 120)
#   TESTHOST_MIRROR  Debian mirror (default: the archive URI in this machine's apt sources)
#
# How an instance is held: a launcher moves itself into its own cgroup2 group testhost-<cachehash>-<name>
# (PID 1 of this machine is not systemd), enters a private mount namespace, mounts the rootfs and execs
# `systemd-nspawn -b`. SSH reaches the guest via systemd-socket-activate + nsenter -n +
# systemd-socket-proxyd, started in the same cgroup. `down`/`cleanup` end everything with cgroup.kill,
# so a killed test run leaves nothing the next `cleanup` cannot find. /run/syslet-testhost/<id> maps
# each cgroup to its run dir, across checkouts.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=recipe.sh
source "$HERE/recipe.sh"

# A recipe other than trixie is trixie's with its own file sourced on top; a file whose line
# `RECIPE_ON=NAME` names another recipe is sourced on top of that one's (podman6 on testing). Its key
# hashes every file of the chain.
RECIPE=${TESTHOST_RECIPE:-trixie}
RECIPE_FILES=("$HERE/recipe.sh")
recipe_chain() { # NAME -> the recipe files above recipe.sh, the base of the chain first
  [[ $1 =~ ^[a-z0-9-]+$ && -f $HERE/recipe-$1.sh ]] ||
    { echo "testhost: ERROR: no recipe '$1' (want trixie, or a file $HERE/recipe-NAME.sh)" >&2; exit 1; }
  local on; on=$(sed -n 's/^RECIPE_ON=\([a-z0-9-]*\)$/\1/p' "$HERE/recipe-$1.sh")
  if [[ -n $on && $on != trixie ]]; then recipe_chain "$on"; fi
  echo "$HERE/recipe-$1.sh"
}
if [[ $RECIPE != trixie ]]; then
  mapfile -t chain < <(recipe_chain "$RECIPE")
  ((${#chain[@]})) || exit 1
  for f in "${chain[@]}"; do
    RECIPE_FILES+=("$f")
    # shellcheck disable=SC1090
    source "$f"
  done
fi

CACHE=${TESTHOST_CACHE:-$HERE/../.cache}
# An image is keyed by its recipe's hash, like Go's caches by content: a fresh clone on a machine that
# built it before boots it at once. A TESTHOST_CACHE of its own (a test's) keeps its images too.
IMAGES=${TESTHOST_IMAGES:-${TESTHOST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/syslet-testhost}}
mkdir -p "$CACHE" "$IMAGES"
CACHE=$(cd "$CACHE" && pwd -P)
IMAGES=$(cd "$IMAGES" && pwd -P)
KEY=$(cat "${RECIPE_FILES[@]}" | sha256sum | cut -c1-12)
# trixie keeps the names it had before there were two recipes (base-KEY, debs, build.lock)
if [[ $RECIPE == trixie ]]; then BASE=$IMAGES/base-$KEY; SUFFIX=; else BASE=$IMAGES/base-$RECIPE-$KEY; SUFFIX=-$RECIPE; fi
SSHKEY=$BASE/ssh/id_ed25519
NAME=${TESTHOST_NAME:-default}
CACHEHASH=$(printf %s "$CACHE" | sha256sum | cut -c1-6)
REGISTRY=/run/syslet-testhost
BOOT_TIMEOUT=${TESTHOST_BOOT_TIMEOUT:-120}
STOP_TIMEOUT=${TESTHOST_STOP_TIMEOUT:-10}
ROOTFS_MODE=${TESTHOST_ROOTFS:-overlay}

# Messages name the instance they are about; those of the image and the sweep are the harness's own.
LOGNAME_=testhost[$NAME]
case ${1:-} in build|cleanup|list|tools|paths) LOGNAME_=testhost ;; esac
log() { echo "$LOGNAME_: $*" >&2; }
die() { echo "$LOGNAME_: ERROR: $*" >&2; exit 1; }

[[ $NAME =~ ^[a-z0-9][a-z0-9-]{0,39}$ ]] || die "bad TESTHOST_NAME '$NAME' (want [a-z0-9-], 1-40 chars)"
ID=$CACHEHASH-$NAME
CG=testhost-$ID
RUN=$CACHE/run/$NAME

SSH_OPTS=(-i "$SSHKEY" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
          -o BatchMode=yes -o ConnectTimeout=5 -o ServerAliveInterval=10 -o ServerAliveCountMax=6)

# ---------------------------------------------------------------- host checks
# cgroup2 mount: the hybrid layout's /sys/fs/cgroup/unified, or /sys/fs/cgroup on a pure v2 host
cg2_root() {
  if [[ $(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null) == cgroup2fs ]]; then echo /sys/fs/cgroup/unified
  elif [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]]; then echo /sys/fs/cgroup
  fi
}
# the named v1 "systemd" hierarchy (hybrid hosts); nspawn wants to be in a group of its own there too
cg1_root() { if [[ -f /sys/fs/cgroup/systemd/cgroup.procs ]]; then echo /sys/fs/cgroup/systemd; fi; }
U=$(cg2_root)
V1=$(cg1_root)

HOST_TOOLS=(debootstrap:debootstrap systemd-nspawn:systemd-container nsenter:util-linux unshare:util-linux
            systemd-socket-activate:systemd ssh:openssh-client scp:openssh-client ss:iproute2 flock:util-linux)
SOCKET_PROXYD=/lib/systemd/systemd-socket-proxyd

missing_tools() {
  local t
  for t in "${HOST_TOOLS[@]}"; do command -v "${t%%:*}" >/dev/null || echo "${t##*:}"; done | sort -u
  [[ -x $SOCKET_PROXYD ]] || echo systemd
}

preflight() { # what every instance needs; fail with a clear message, never silently
  [[ $(id -u) == 0 ]] || die "the test host needs root (systemd-nspawn, cgroups, mount namespaces); run as root"
  local m; m=$(missing_tools | sort -u | tr '\n' ' ')
  [[ -z $m ]] || die "missing host tools (packages: $m); run: $0 tools"
  [[ -n $U ]] || die "no cgroup2 hierarchy (neither /sys/fs/cgroup/unified nor /sys/fs/cgroup is cgroup2): systemd 257 in the guest needs one"
  [[ ! -d /run/systemd/system ]] || die "this machine's PID 1 is systemd: the harness drives cgroupfs directly and supports only hosts whose PID 1 is not systemd (CI and dev machines of this project)"
  [[ -w $U ]] || die "$U is not writable: cannot create the instance cgroup"
}

cmd_tools() {
  local m; m=$(missing_tools | sort -u | tr '\n' ' ')
  [[ -n $m ]] || return 0
  [[ $(id -u) == 0 ]] || die "missing host tools ($m) and not root"
  log "installing host tools: $m"
  apt-get update -q >/dev/null
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $m >/dev/null
}

host_mirror() { # the main Debian archive URI from this machine's apt configuration
  { grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
    grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '{print $2}'
  } | grep -E '/debian/?$' | head -n1 || true
}

# ---------------------------------------------------------------- process and cgroup helpers
proc_start() { # pid -> start time in clock ticks (field 22 of /proc/PID/stat), empty if gone
  local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  s=${s##*) }; set -- $s; echo "${20}"
}
alive() { # pid -> 0 if it runs (a zombie waiting for this machine's PID 1 to reap it does not)
  [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null || return 1
  local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }; [[ ${s:0:1} != Z ]]
}
owner_alive() { # run dir -> 0 if the owner process still lives (manual instances always do)
  local o; o=$(cat "$1/owner" 2>/dev/null) || return 1
  [[ $o == manual ]] && return 0
  set -- $o
  [[ -n ${1:-} && -n ${2:-} && $(proc_start "$1") == "$2" ]]
}

cg_kill() { # cgroup name: SIGKILL everything in the group (cgroup.kill), wait until it is empty, remove it
  local cg=$1 i
  if [[ -d $U/$cg ]]; then
    echo 1 > "$U/$cg/cgroup.kill" 2>/dev/null || true
    for i in $(seq 200); do
      grep -q '^populated 0' "$U/$cg/cgroup.events" 2>/dev/null && break
      sleep 0.05
    done
    grep -q '^populated 0' "$U/$cg/cgroup.events" 2>/dev/null || log "WARNING: $U/$cg still has processes"
    find "$U/$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
  fi
  if [[ -n $V1 && -d $V1/$cg ]]; then
    local p
    for p in $(find "$V1/$cg" -name cgroup.procs -exec cat {} + 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
    find "$V1/$cg" -depth -type d -exec rmdir {} + 2>/dev/null || true
  fi
}

# stop_instance RUNDIR CGNAME TIMEOUT: forwarders first, then a clean poweroff if TIMEOUT>0, then cgroup.kill
stop_instance() {
  local d=$1 cg=$2 timeout=$3 pid="" i
  [[ -f $d/pid ]] && pid=$(cat "$d/pid")
  [[ -d $U/$cg/fwd ]] && { echo 1 > "$U/$cg/fwd/cgroup.kill"; } 2>/dev/null || true
  if ((timeout > 0)) && alive "$pid" && [[ $(proc_start "$pid") == "$(cat "$d/pid.start" 2>/dev/null)" ]]; then
    kill -TERM "$pid" 2>/dev/null || true   # nspawn sends SIGRTMIN+3: the guest's systemd halts cleanly
    for ((i = 0; i < timeout * 10; i++)); do alive "$pid" || break; sleep 0.1; done
  fi
  cg_kill "$cg"
  if [[ -n $pid && $(proc_start "$pid") == "$(cat "$d/pid.start" 2>/dev/null)" ]]; then
    # a launcher that died before it joined its cgroup (up killed at the wrong moment)
    alive "$pid" && kill -9 "$pid" 2>/dev/null
    # give this machine's PID 1 a moment to reap it, so no <defunct> nspawn lingers in ps
    for ((i = 0; i < 40; i++)); do [[ -e /proc/$pid ]] || break; sleep 0.05; done
  fi
  rm -rf "/run/systemd/nspawn/propagate/$cg" 2>/dev/null || true
  rm -f "$REGISTRY/${cg#testhost-}"
  if [[ -n $d && -d $d ]]; then
    if [[ ${TESTHOST_KEEP:-0} == 1 ]]; then rm -f "$d/pid" "$d/port"; else rm -rf "$d"; fi
  fi
}

# ---------------------------------------------------------------- build
cmd_build() {
  if [[ -f $BASE/ready ]]; then log "base image $BASE is up to date"; return 0; fi
  [[ $(id -u) == 0 ]] || die "build must run as root (debootstrap, chroot, nspawn)"
  cmd_tools
  preflight
  exec 9>"$IMAGES/build$SUFFIX.lock"   # one lock per recipe: platforms build side by side
  flock 9
  if [[ -f $BASE/ready ]]; then log "base image $BASE was built meanwhile"; return 0; fi
  local t0=$SECONDS mirror; mirror=${TESTHOST_MIRROR:-$(host_mirror)}
  [[ -n $mirror ]] || die "no Debian archive URI in this machine's apt sources; set TESTHOST_MIRROR"
  rm -rf "$BASE"; mkdir -p "$BASE/ssh" "$IMAGES/debs$SUFFIX"
  ssh-keygen -q -t ed25519 -N '' -C syslet-testhost -f "$SSHKEY"
  if declare -F recipe_derive >/dev/null; then
    # A recipe that changes another's image (RECIPE_ON) starts from a copy of it: that image's build
    # (or its cache) is shared, and what this recipe adds is all this build does.
    local parent
    log "the $RECIPE image starts from the $RECIPE_ON image (built first if needed)"
    TESTHOST_RECIPE=$RECIPE_ON bash "$HERE/testhost.sh" build
    parent=$(TESTHOST_RECIPE=$RECIPE_ON bash "$HERE/testhost.sh" paths | sed -n 's/^base=//p')
    [[ -f $parent/ready ]] || die "no $RECIPE_ON image at $parent after its build"
    cp -a --reflink=auto "$parent/rootfs" "$BASE/rootfs"
    log "copied $parent/rootfs at $((SECONDS - t0))s"
    # in a bash of its own, so that errexit holds inside recipe_derive (a function called in an `if`
    # or before `||` runs with it off)
    bash -c 'set -euo pipefail; for f in "${@:4}"; do source "$f"; done; recipe_derive "$1" "$2" "$3"' derive \
      "$BASE/rootfs" "$SSHKEY.pub" "$IMAGES/debs$SUFFIX" "${RECIPE_FILES[@]}" > >(tee "$BASE/derive.log" >&2) 2>&1 ||
      die "building the $RECIPE image failed (log: $BASE/derive.log)"
  else
    # RECIPE_SCRIPT names debootstrap's script for a suite it may not know by name (testing: sid's)
    local script=()
    [[ -z ${RECIPE_SCRIPT:-} ]] || script=("/usr/share/debootstrap/scripts/$RECIPE_SCRIPT")
    log "debootstrap $RECIPE_SUITE from $mirror -> $BASE/rootfs (log: $BASE/debootstrap.log)"
    debootstrap --variant=minbase --cache-dir="$IMAGES/debs$SUFFIX" --include="$RECIPE_PACKAGES" \
      "$RECIPE_SUITE" "$BASE/rootfs" "$mirror" "${script[@]}" 2>&1 | tee "$BASE/debootstrap.log" | debootstrap_progress ||
      { tail -20 "$BASE/debootstrap.log" >&2; die "debootstrap failed (log: $BASE/debootstrap.log)"; }
    log "debootstrap done in $((SECONDS - t0))s"
    recipe_configure "$BASE/rootfs" "$SSHKEY.pub"
  fi
  # provisioning boot on the base tree itself: seeds the registry, initialises podman's storage
  log "provisioning boot"
  NAME=provision-$KEY; ID=$CACHEHASH-$NAME; CG=testhost-$ID; RUN=$CACHE/run/$NAME
  ROOTFS_MODE=direct TESTHOST_OWNER=$$ start_instance
  ssh "${SSH_OPTS[@]}" -p "$(cat "$RUN/port")" root@127.0.0.1 "$RECIPE_PROVISION_CHECK" >&2 ||
    { stop_instance "$RUN" "$CG" 0; die "provisioning checks failed"; }
  stop_instance "$RUN" "$CG" 30
  rm -f "$BASE/rootfs/etc/containers/containers.conf.d/90-testhost.conf"
  echo "$KEY" > "$BASE/ready"
  log "build done in $((SECONDS - t0))s; rootfs $(du -sh "$BASE/rootfs" | cut -f1)"
  gc_bases
}

# debootstrap_progress: debootstrap's log on stdin, condensed to a line when it starts retrieving,
# extracting, unpacking or configuring packages and every 50 packages after, with the time so far:
# a cold build takes minutes, which it spent in silence.
debootstrap_progress() {
  local line verb phase="" n=0 of="" t0=$SECONDS
  while IFS= read -r line; do
    case $line in "I: Retrieving "* | "I: Extracting "* | "I: Unpacking "* | "I: Configuring "*) ;; *) continue ;; esac
    verb=${line#I: }; verb=${verb%% *}
    if [[ $verb != "$phase" ]]; then
      if [[ $phase == Retrieving ]]; then of=" of about $n"; fi
      phase=$verb n=0
    fi
    n=$((n + 1))
    if ((n == 1 || n % 50 == 0)); then log "debootstrap: ${phase,,} $n$of package(s), $((SECONDS - t0))s so far"; fi
  done
}

gc_bases() { # delete base images of older versions of this recipe that no live instance uses
  local b f r used
  for b in "$IMAGES"/base-*; do
    [[ -d $b && $b != "$BASE" ]] || continue
    if [[ $RECIPE == trixie ]]; then [[ ${b##*/} =~ ^base-[0-9a-f]{12}$ ]] || continue
    else [[ ${b##*/} =~ ^base-$RECIPE-[0-9a-f]{12}$ ]] || continue; fi
    used=0
    # instances of every checkout: the registry maps each to its run dir
    for f in "$REGISTRY"/*; do
      [[ -f $f ]] || continue
      r=$(cat "$f" 2>/dev/null)
      [[ $(cat "$r/base" 2>/dev/null) == "$b" ]] && alive "$(cat "$r/pid" 2>/dev/null)" && used=1
    done
    if ((used == 0)); then log "removing old base image $b"; rm -rf "$b"; fi
  done
}

# ---------------------------------------------------------------- up
free_port() {
  local p
  for p in $(shuf -i 20000-45000 -n 200); do
    [[ -z $(ss -Htln "sport = :$p") ]] && { echo "$p"; return; }
  done
  die "no free port"
}

# Up to 8192 connections at once (socket-proxyd refuses more, by a reset; its default is 256): the
# fleet benchmark's hosts all fetch through one forward.
start_forwarder() { # leader hostport guestport -> 0 if listening
  local leader=$1 hp=$2 gp=$3 pid i
  setsid bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$U/$CG/fwd" \
    systemd-socket-activate -l "127.0.0.1:$hp" -- nsenter -t "$leader" -n -- "$SOCKET_PROXYD" --connections-max=8192 "127.0.0.1:$gp" \
    >>"$RUN/fwd.log" 2>&1 </dev/null 9>&- &
  pid=$!; disown "$pid"
  for i in $(seq 100); do
    alive "$pid" || return 1
    [[ -n $(ss -Htln "sport = :$hp") ]] && { echo "$pid $hp $gp" >> "$RUN/fwd"; return 0; }
    sleep 0.02
  done
  kill "$pid" 2>/dev/null; return 1
}

write_launcher() { # rootfs -> $RUN/launch.sh
  local root=$1 mount="" bind=""
  if [[ $ROOTFS_MODE == overlay ]]; then
    mount="mount -t overlay overlay -o 'lowerdir=$BASE/rootfs,upperdir=$RUN/upper,workdir=$RUN/work' '$root'"
    bind="--bind='$RUN/containers:/var/lib/containers'"
  fi
  cat > "$RUN/launch.sh" <<EOF
#!/bin/bash
# generated by testhost.sh for instance $NAME
set -euo pipefail
if [[ \${1:-} != inner ]]; then
  echo \$\$ > '$U/$CG/nspawn/cgroup.procs'
  ${V1:+echo \$\$ > '$V1/$CG/nspawn/cgroup.procs'}
  exec unshare --mount --propagation private -- "\$0" inner
fi
${mount}
export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
exec systemd-nspawn -D '$root' -b --register=no --keep-unit --private-network --capability=all \\
  --system-call-filter='@keyring bpf' --machine='$CG' --console=read-only --link-journal=no $bind
EOF
  chmod +x "$RUN/launch.sh"
}

nspawn_leader() { # -> pid of the guest's PID 1 (the child of systemd-nspawn running systemd)
  { ps --ppid "$(cat "$RUN/pid")" -o pid=,comm= 2>/dev/null || true; } | awk '$2=="systemd"{print $1; exit}'
}

# start_instance: uses NAME ID CG RUN ROOTFS_MODE; on return the guest answers SSH and has finished booting
start_instance() {
  local t0=$SECONDS root leader="" port="" hp gp i state
  mkdir -p "$REGISTRY"
  exec 8>"$REGISTRY/.lock"; flock 8   # a concurrent cleanup must not see a half-registered instance
  [[ ! -e $REGISTRY/$ID ]] || die "instance $NAME is registered already ($REGISTRY/$ID); down or cleanup first"
  rm -rf "$RUN"; mkdir -p "$RUN"
  if [[ -n ${TESTHOST_OWNER:-} ]]; then
    local st; st=$(proc_start "$TESTHOST_OWNER"); [[ -n $st ]] || die "TESTHOST_OWNER $TESTHOST_OWNER is not running"
    echo "$TESTHOST_OWNER $st" > "$RUN/owner"
  else
    echo manual > "$RUN/owner"
  fi
  echo "$RUN" > "$REGISTRY/$ID"   # registered before anything runs, so cleanup can always find it
  exec 8>&-
  echo "$BASE" > "$RUN/base"
  echo "$CG" > "$RUN/cgroup"
  case $ROOTFS_MODE in
    direct) root=$BASE/rootfs ;;
    copy) root=$RUN/root; cp -a --reflink=auto "$BASE/rootfs" "$root" ;;
    overlay)
      root=$RUN/root; mkdir -p "$root" "$RUN/upper" "$RUN/work"
      cp -a "$BASE/rootfs/var/lib/containers" "$RUN/containers" ;;
    *) die "TESTHOST_ROOTFS must be overlay or copy" ;;
  esac
  # podman tweaks for this machine: cgroup2 has no controllers here (the host keeps them on v1), so the
  # default pids limit cannot be applied; the hard RLIMIT_NOFILE/NPROC are below the 1048576 buildah asks for
  local conf="" ul="" hn hu etc=$root/etc
  [[ $ROOTFS_MODE == overlay ]] && etc=$RUN/upper/etc
  hn=$(ulimit -Hn); hu=$(ulimit -Hu)
  [[ -s $U/cgroup.controllers ]] || conf+=$'pids_limit = 0\n'
  if [[ $hn != unlimited ]] && ((hn < 1048576)); then ul+="\"nofile=$hn:$hn\", "; fi
  if [[ $hu != unlimited ]] && ((hu < 1048576)); then ul+="\"nproc=$hu:$hu\", "; fi
  [[ -z $ul ]] || conf+="default_ulimits = [${ul%, }]"$'\n'
  if [[ -n $conf ]]; then
    mkdir -p "$etc/containers/containers.conf.d"
    printf '[containers]\n%s' "$conf" > "$etc/containers/containers.conf.d/90-testhost.conf"
  fi

  mkdir -p "$U/$CG/nspawn" "$U/$CG/fwd"
  [[ -z $V1 ]] || mkdir -p "$V1/$CG/nspawn"
  write_launcher "$root"
  setsid "$RUN/launch.sh" >"$RUN/console.log" 2>&1 </dev/null 9>&- &
  echo $! > "$RUN/pid"; proc_start "$!" > "$RUN/pid.start"; disown $!
  for i in $(seq 400); do
    alive "$(cat "$RUN/pid")" || { tail -20 "$RUN/console.log" >&2; die "systemd-nspawn exited during start (log: $RUN/console.log)"; }
    leader=$(nspawn_leader); [[ -n $leader ]] && break
    sleep 0.025
  done
  [[ -n $leader ]] || die "the guest's PID 1 did not appear"
  echo "$leader" > "$RUN/leader"
  for i in 1 2 3 4 5; do port=$(free_port); start_forwarder "$leader" "$port" 22 && break; port=""; done
  [[ -n $port ]] || die "could not start the SSH forwarder (log: $RUN/fwd.log)"
  echo "$port" > "$RUN/port"
  if [[ -n ${TESTHOST_FWD:-} ]]; then
    local f x; IFS=, read -ra f <<<"$TESTHOST_FWD"
    for x in "${f[@]}"; do start_forwarder "$leader" "${x%%:*}" "${x##*:}" || die "cannot forward 127.0.0.1:${x%%:*}"; done
  fi
  # SSH, then boot-up finished
  while ! ssh "${SSH_OPTS[@]}" -o ConnectTimeout=2 -p "$port" root@127.0.0.1 true 2>/dev/null; do
    alive "$(cat "$RUN/pid")" || { tail -20 "$RUN/console.log" >&2; die "the guest exited during boot (log: $RUN/console.log)"; }
    ((SECONDS - t0 < BOOT_TIMEOUT)) || die "no SSH after ${BOOT_TIMEOUT}s (log: $RUN/console.log)"
    sleep 0.1
  done
  state=$(ssh "${SSH_OPTS[@]}" -p "$port" root@127.0.0.1 'systemctl is-system-running --wait' || true)
  printf 'Host testhost\n  HostName 127.0.0.1\n  Port %s\n  User root\n  IdentityFile %s\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n' \
    "$port" "$SSHKEY" > "$RUN/ssh_config"
  log "up in $((SECONDS - t0))s: pid $(cat "$RUN/pid"), ssh 127.0.0.1:$port, system $state"
}

running() { [[ -f $RUN/pid ]] && alive "$(cat "$RUN/pid")"; }

cmd_up() {
  preflight
  [[ -f $BASE/ready ]] || die "no base image for this recipe ($BASE); run: $0 build"
  if running; then die "instance $NAME is running already (port $(cat "$RUN/port")); down it first"; fi
  # leftovers of a previous instance of this name
  if [[ -e $REGISTRY/$ID || -d $U/$CG || -d $RUN ]]; then stop_instance "$RUN" "$CG" 0; fi
  start_instance
  if [[ -z ${TESTHOST_OWNER:-} ]]; then
    log "reach it: go tool task testhost:shell NAME=$NAME (a root shell), or TESTHOST_NAME=$NAME bash integration/testhost/testhost.sh ssh CMD; stop it: go tool task testhost:down NAME=$NAME"
  fi
  cat "$RUN/port"
}

cmd_down() {
  [[ -e $REGISTRY/$ID || -d $RUN || -d $U/$CG ]] || { log "not running"; return 0; }
  # The CPU the guest used, booting included (its cgroup's usage, before the group goes): on a busy
  # machine a test's cost is its CPU, not its duration. Printed for the Go harness's usage lines.
  [[ -r $U/$CG/cpu.stat ]] && sed -n 's/^usage_usec /cpu_usec=/p' "$U/$CG/cpu.stat"
  stop_instance "$RUN" "$CG" "$STOP_TIMEOUT"
  log "down"
}

cmd_ssh() {
  running || die "instance $NAME is not running (testhost.sh up)"
  local tty=(); (($# == 0)) && [[ -t 0 ]] && tty=(-t)
  exec ssh "${SSH_OPTS[@]}" "${tty[@]}" -p "$(cat "$RUN/port")" root@127.0.0.1 "$@"
}

cmd_cp() {
  (($# == 2)) || die "usage: cp SRC DEST   (SRC ':path' = guest -> host)"
  running || die "instance $NAME is not running (testhost.sh up)"
  local port; port=$(cat "$RUN/port")
  if [[ $1 == :* ]]; then exec scp -r "${SSH_OPTS[@]}" -P "$port" "root@127.0.0.1$1" "$2"
  else exec scp -r "${SSH_OPTS[@]}" -P "$port" "$1" "root@127.0.0.1:$2"; fi
}

cmd_status() {
  if running; then echo "running pid=$(cat "$RUN/pid") port=$(cat "$RUN/port") run=$RUN"; else echo stopped; fi
}

cmd_list() {
  local f id d n=0
  for f in "$REGISTRY"/*; do
    [[ -f $f ]] || continue
    # a header over the first row, so a person knows what the columns are
    ((n++ == 0)) && printf 'CGROUP\tRUN DIR\tPID\tPORT\tOWNER\n'
    id=${f##*/}; d=$(cat "$f")
    printf '%s\t%s\tpid=%s\tport=%s\towner=%s\n' "testhost-$id" "$d" "$(cat "$d/pid" 2>/dev/null || echo -)" \
      "$(cat "$d/port" 2>/dev/null || echo -)" "$(cat "$d/owner" 2>/dev/null || echo -)"
  done
  ((n > 0)) || echo "No test host is running on this machine."
}

# cleanup [--all]: the start-up sweep. Stops every registered instance (of any checkout on this machine)
# whose owner process is gone, whose launcher is gone, or whose run dir is gone; every testhost-* cgroup of
# this harness that has no registry entry; and leftover run dirs of this cache. --all also stops the
# live instances of this cache (CI: nothing of ours may survive from before).
cmd_cleanup() {
  local all=0 f id d cg n=0; [[ ${1:-} == --all ]] && all=1
  [[ $(id -u) == 0 ]] || die "cleanup needs root"
  mkdir -p "$REGISTRY"
  exec 8>"$REGISTRY/.lock"; flock 8
  for f in "$REGISTRY"/*; do
    [[ -f $f ]] || continue
    id=${f##*/}; d=$(cat "$f"); cg=testhost-$id
    if ((all)) && [[ $d == "$CACHE"/run/* ]] || [[ ! -d $d ]] || ! owner_alive "$d" ||
       { [[ -f $d/pid ]] && ! alive "$(cat "$d/pid")"; }; then
      log "cleanup: stopping $cg ($d)"; stop_instance "$d" "$cg" 0; n=$((n + 1))
    fi
  done
  if [[ -n $U ]]; then
    for d in "$U"/testhost-* ${V1:+"$V1"/testhost-*}; do
      [[ -d $d ]] || continue
      cg=${d##*/}; id=${cg#testhost-}
      [[ $id =~ ^[0-9a-f]{6}- ]] || continue    # not ours (another harness's naming)
      [[ -e $REGISTRY/$id ]] && continue
      log "cleanup: orphan cgroup $cg"; cg_kill "$cg"; rm -rf "/run/systemd/nspawn/propagate/$cg"; n=$((n + 1))
    done
  fi
  for d in "$CACHE"/run/*/; do
    [[ -d $d ]] || continue
    d=${d%/}; n1=${d##*/}
    [[ -e $REGISTRY/$CACHEHASH-$n1 ]] && continue
    log "cleanup: removing run dir $d"; rm -rf "$d"; n=$((n + 1))
  done
  log "cleanup: $n leftover(s) removed"
}

cmd_paths() { printf 'cache=%s\nimages=%s\nbase=%s\nkey=%s\nsshkey=%s\nrun=%s\nrecipe=%s\n' "$CACHE" "$IMAGES" "$BASE" "$KEY" "$SSHKEY" "$RUN" "$RECIPE"; }

case ${1:-} in
  tools) cmd_tools ;;
  build) cmd_build ;;
  up) cmd_up ;;
  ssh) shift; cmd_ssh "$@" ;;
  cp) shift; cmd_cp "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  list) cmd_list ;;
  cleanup) shift; cmd_cleanup "$@" ;;
  paths) cmd_paths ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
