#!/bin/bash
# fleet-run.sh OUT ARGS…: in a test host, one run of `syslet push ARGS…`
# under /usr/bin/time -v (GNU time, copied in: its peak RSS), each line of
# its stdout stamped with its arrival time ($EPOCHREALTIME, no fork per
# line), and its open file descriptors counted every 10 ms (a glob of
# /proc/PID/fd, no fork either). The stamping and the counting run at a
# higher priority (nice -10) than push and its targets (0), so that a CPU
# saturated by the targets delays them least. Prints one line:
#   WALL_S PEAK_RSS_KB PEAK_FDS GAP_S EXIT CPU_S
# CPU_S is push's own user + system time.
# GAP_S is the time from the last host's last line ("tNNNNN | …") to the
# table's first ("HOST …"). Leaves OUT.lines, OUT.err and OUT.time.
set -u
out=$1
shift
renice -n -10 $$ >/dev/null
t0=$EPOCHREALTIME
{
	nice -n 10 /usr/local/bin/time -v -o "$out.time" syslet push "$@" 2>"$out.err"
	echo $? >"$out.rc"
} | while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done >"$out.lines" &
pipeline=$!
peak=0 pid=
while kill -0 "$pipeline" 2>/dev/null; do
	[[ -n $pid ]] || pid=$(pgrep -n -f '^syslet push ' || true)
	if [[ -n $pid && -d /proc/$pid/fd ]]; then
		fds=(/proc/"$pid"/fd/*)
		((${#fds[@]} > peak)) && peak=${#fds[@]}
	fi
	sleep 0.01
done
wait "$pipeline"
t1=$EPOCHREALTIME
rss=$(sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$out.time")
cpu=$(awk -F': ' '/User time \(seconds\)|System time \(seconds\)/ { s += $2 } END { printf "%.3f", s }' "$out.time")
gap=$(awk '$2 ~ /^t[0-9]+$/ && $3 == "|" { last = $1 } $2 == "HOST" && !table { table = $1 } END { printf "%.4f", table - last }' "$out.lines")
echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $rss $peak $gap $(cat "$out.rc") $cpu"
