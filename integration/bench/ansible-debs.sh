#!/usr/bin/env bash
# ansible-debs.sh DEST - download trixie's `ansible` package and everything it needs (the
# containers.podman collection comes with it) as .debs into DEST, for the real-host benchmark to
# install into its guest (the guest has no network). It resolves them inside a throwaway copy of
# the test host's base rootfs, so the versions are exactly what the guest's apt would choose; the
# base image itself is never touched. Needs root and this machine's network. A no-op when DEST
# already holds the set.
set -euo pipefail
DEST=$1
[[ -f $DEST/ready ]] && exit 0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
base=$(bash "$HERE/../testhost/testhost.sh" paths | sed -n 's/^base=//p')
[[ -d $base/rootfs ]] || { echo "ansible-debs: no base image at $base (run: go tool task testhost:build)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ansible-debs.XXXXXX")
root=$work/rootfs
cleanup() {
  for m in dev/pts dev sys proc; do umount -l "$root/$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
echo "ansible-debs: copying $base/rootfs" >&2
cp -a --reflink=auto "$base/rootfs" "$root"
# Keep package scripts from starting services in the chroot.
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"; chmod 755 "$root/usr/sbin/policy-rc.d"
rm -f "$root/etc/resolv.conf"; cp /etc/resolv.conf "$root/etc/resolv.conf"
mount --bind /proc "$root/proc"; mount --bind /sys "$root/sys"; mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
echo "ansible-debs: apt-get install --download-only ansible (in the copy)" >&2
chroot "$root" apt-get update -q >&2
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --download-only ansible python3-apt >&2
mkdir -p "$DEST"
cp "$root"/var/cache/apt/archives/*.deb "$DEST"/
ls "$DEST"/*.deb | wc -l > "$DEST/ready"
echo "ansible-debs: $(cat "$DEST/ready") packages in $DEST" >&2
