# recipe.sh - what goes into the test host's base image. Sourced by testhost.sh.
#
# The base image is cached under $TESTHOST_IMAGES/base-<key> (~/.cache/syslet-testhost by default),
# where <key> is a hash of THIS FILE: any edit here rebuilds the image on the next run (minutes:
# integration/README.md says how long; the .debs are cached across rebuilds in $TESTHOST_IMAGES/debs). Runtime behaviour (up/down/ssh) lives in
# testhost.sh and can be changed without a rebuild.
# shellcheck shell=bash

RECIPE_SUITE=trixie
# debootstrap does not install Recommends: openssh-sftp-server (scp), nftables (netavark) and
# catatonit (RunInit=) are listed explicitly. man-db: the tutorial reads syslet's man pages on the host.
# haproxy and caddy: the reverse proxies a start-first replacement was measured behind (their own
# services are disabled below: syslet runs the proxy it manages as a unit of its own).
RECIPE_PACKAGES=systemd-sysv,systemd-resolved,dbus,udev,\
podman,conmon,crun,runc,netavark,aardvark-dns,catatonit,nftables,iptables,\
docker-registry,busybox-static,openssh-server,openssh-sftp-server,\
git,ca-certificates,iproute2,curl,jq,procps,less,tar,man-db,haproxy,caddy

# recipe_configure ROOTFS PUBKEY - configure a freshly debootstrapped tree (run on the host, via chroot)
recipe_configure() {
  local R=$1 pub=$2
  echo testhost > "$R/etc/hostname"
  printf '127.0.0.1\tlocalhost\n127.0.1.1\ttesthost\n::1\tlocalhost ip6-localhost ip6-loopback\n' > "$R/etc/hosts"
  : > "$R/etc/fstab"
  # fresh machine-id (debootstrap copies the host's), so first boot does not run preset-all
  rm -f "$R/etc/machine-id" "$R/var/lib/dbus/machine-id"
  chroot "$R" systemd-machine-id-setup >/dev/null 2>&1

  # SSH: root by key only
  install -d -m 700 "$R/root/.ssh"
  install -m 600 "$pub" "$R/root/.ssh/authorized_keys"
  cat > "$R/etc/ssh/sshd_config.d/testhost.conf" <<'EOF'
PermitRootLogin prohibit-password
PasswordAuthentication no
UseDNS no
MaxStartups 100:30:200
MaxSessions 100
EOF

  # quiet, fast guest: no timers that wake up apt, no wait-online
  chroot "$R" systemctl disable apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer fstrim.timer >/dev/null 2>&1 || true
  # the packages' own proxies would listen on :80 in every guest
  chroot "$R" systemctl disable haproxy.service caddy.service >/dev/null 2>&1 || true
  chroot "$R" systemctl mask systemd-networkd-wait-online.service >/dev/null 2>&1 || true

  # local registry (distribution v2), plain HTTP, loopback only, deletes allowed.
  # (Debian's default config wants an htpasswd file and listens on all addresses.)
  cat > "$R/etc/docker/registry/config.yml" <<'EOF'
version: 0.1
log:
  level: info
  fields:
    service: registry
storage:
  filesystem:
    rootdirectory: /var/lib/docker-registry
  delete:
    enabled: true
http:
  addr: 127.0.0.1:5000
EOF
  mkdir -p "$R/etc/containers/registries.conf.d"
  cat > "$R/etc/containers/registries.conf.d/50-testhost.conf" <<'EOF'
[[registry]]
location = "localhost:5000"
insecure = true
EOF

  # testhost-mkimage NAME[:TAG] [MARKER]: a busybox-static image with MARKER in /etc/testhost-marker and
  # /www/index.html (different markers give different digests), pushed to localhost:5000.
  cat > "$R/usr/local/sbin/testhost-mkimage" <<'EOF'
#!/bin/sh
# usage: testhost-mkimage NAME[:TAG] [MARKER]
# Builds localhost:5000/NAME:TAG from busybox-static, with /etc/testhost-marker and /www/index.html
# set to MARKER (default: the reference), pushes it to the local registry, and removes the local copy
# unless KEEP=1. Prints the pushed reference.
set -eu
ref=${1:?usage: testhost-mkimage NAME[:TAG] [MARKER]}
case $ref in localhost:5000/*) ref=${ref#localhost:5000/} ;; esac
case $ref in *:*) ;; *) ref=$ref:latest ;; esac
marker=${2:-$ref}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/bin" "$d/etc" "$d/tmp" "$d/www" "$d/root" "$d/data"
cp /usr/bin/busybox "$d/bin/busybox"
# one process makes the ~270 applet links (/bin/x -> /bin/busybox); an ln per applet cost seconds per image
chroot "$d" /bin/busybox --install -s /bin
echo "$marker" > "$d/etc/testhost-marker"; echo "$marker" > "$d/www/index.html"
echo 'root:x:0:0:root:/root:/bin/sh' > "$d/etc/passwd"; echo 'root:x:0:' > "$d/etc/group"
chmod 1777 "$d/tmp"
tar -C "$d" --numeric-owner --owner=0 --group=0 -c . |
  podman import -q --change 'CMD ["/bin/sh"]' --change 'ENV PATH=/bin' - "localhost:5000/$ref" >/dev/null
podman push -q --tls-verify=false "localhost:5000/$ref"
[ "${KEEP:-0}" = 1 ] || podman rmi -f "localhost:5000/$ref" >/dev/null
echo "localhost:5000/$ref"
EOF
  chmod 755 "$R/usr/local/sbin/testhost-mkimage"

  # first boot seeds the registry with localhost:5000/busybox:latest
  cat > "$R/etc/systemd/system/testhost-seed.service" <<'EOF'
[Unit]
Description=Seed the local registry with localhost:5000/busybox:latest
Requires=docker-registry.service
After=docker-registry.service
ConditionPathExists=!/var/lib/testhost/seeded
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStartPre=/bin/sh -c 'for i in $(seq 200); do curl -sf http://127.0.0.1:5000/v2/ >/dev/null && exit 0; sleep 0.1; done; exit 1'
ExecStart=/usr/local/sbin/testhost-mkimage busybox:latest
ExecStartPost=/bin/sh -c 'mkdir -p /var/lib/testhost && touch /var/lib/testhost/seeded'
[Install]
WantedBy=multi-user.target
EOF
  chroot "$R" systemctl enable testhost-seed.service docker-registry.service ssh.service >/dev/null 2>&1
  rm -f "$R"/var/cache/apt/archives/*.deb
}

# recipe_provision_check: run in the guest during the provisioning boot; must exit 0
RECIPE_PROVISION_CHECK='systemctl is-system-running --wait >/dev/null || { systemctl --failed --no-legend; exit 1; }
systemctl is-active testhost-seed.service >/dev/null
curl -sf http://127.0.0.1:5000/v2/busybox/tags/list
podman info --format "{{.Store.GraphDriverName}}" >/dev/null
journalctl --rotate -q && journalctl --vacuum-time=1s -q'
