#!/usr/bin/env bash
# The figures of the hostile-input suite (issue 22's acceptance: every case
# under 5 s and 300 MB of peak RSS; validate of 100,000 specs under 3 s and
# 1 GB). Runs every case of cmd/syslet's hostile suite with the built
# binary, each as its own process (cmd/syslet/hostile_figures_test.go),
# plus the cases kept for the figures alone (100,000 and 106,888 specs),
# and prints one table, slowest first. The cases' trees are made under
# TMPDIR: the render cases' time is mostly the filesystem's, and TMPFS=1
# takes the disk out of it (root: a tmpfs mounted for the run, outside /dev,
# which adopt refuses as a build context). Peak RSS is /usr/bin/time's
# (Debian's package time).
#   usage: hostile-figures.sh BIN [go test -run PATTERN]
set -euo pipefail
bin=$(realpath "$1")
pattern=${2:-TestHostile}
cd "$(dirname "$0")/../.."
figures=$(mktemp) log=$(mktemp) mnt=
trap 'rm -f "$figures" "$log"; [[ -z $mnt ]] || { umount "$mnt" && rmdir "$mnt"; }' EXIT
if [[ ${TMPFS:-} == 1 ]]; then
	mnt=$(mktemp -d /tmp/hf.XXXXXX) # short: the cases bind unix sockets (108 bytes)
	mount -t tmpfs -o size=8g tmpfs "$mnt"
	export TMPDIR=$mnt
fi
if ! SYSLET_FIGURES_BIN=$bin SYSLET_FIGURES_OUT=$figures go test -count=1 -timeout 60m -v -run "$pattern" ./cmd/syslet >"$log" 2>&1; then
	grep -E -- '^\s*(--- FAIL|FAIL|panic)|_test.go:[0-9]+:' "$log" | grep -v -E 'figures: |: took [0-9]' | head -40
	echo "hostile-figures: the suite failed (above); its figures follow" >&2
	failed=1
fi
tmp=${TMPDIR:-/tmp}
echo "syslet $("$bin" version 2>/dev/null | head -1); cases' trees under $tmp ($(df -T "$tmp" | awk 'NR==2{print $2}')); $(nproc) CPUs"
echo
echo "| case | seconds | peak RSS, MB | exit |"
echo "|---|---:|---:|---:|"
sort -t$'\t' -k2,2gr "$figures" | awk -F'\t' '{printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4}'
echo
awk -F'\t' '
	{ n++; if ($2 > t) { t = $2; tn = $1 } if ($3 > m) { m = $3; mn = $1 } }
	$1 !~ /validate_of_100,000/ && ($2 > 5 || $3 > 300) { over = over "\n  over 5 s or 300 MB: " $1 " (" $2 " s, " $3 " MB)" }
	$1 ~ /validate_of_100,000/ && ($2 > 3 || $3 > 1024) { over = over "\n  over 3 s or 1 GB: " $1 " (" $2 " s, " $3 " MB)" }
	END { printf "%d cases; slowest %s s (%s); largest %s MB (%s)%s\n", n, t, tn, m, mn, over }' "$figures"
exit "${failed:-0}"
