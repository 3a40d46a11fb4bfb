//go:build integration

package integration

// Issue 51: a restore is executor work, journalled action by action, so a
// restore killed during its import is finished by the next plain syslet:
// the volume's files, read inside the container, are the backup's again,
// byte for byte.

import (
	"fmt"
	"strings"
	"testing"
)

func TestRestoreKilledDuringImportResumes(t *testing.T) {
	t.Parallel()
	h, write := backupHost(t)
	// Applied from stdin, so that a plain `syslet` applies the same specs.
	stdin := func() {
		t.Helper()
		if r := h.Run("cd " + bkDir + " && syslet --stdin --soak " + testSoak + " < specs.json"); !r.OK() {
			t.Fatalf("apply:\n%s", r)
		}
	}
	write(true)
	stdin()
	// Thirty files of 10 MB: enough that the import takes a while, and one
	// cut short leaves some of them.
	const files = 30
	h.MustRun(t, fmt.Sprintf(`podman exec db sh -c 'for i in $(seq -w 1 %d); do head -c 10000000 /dev/urandom > /data/f$i; done; mkdir -p /data/sub && echo hello > /data/sub/b.txt && ln -s b.txt /data/sub/link'`, files))
	before := dataSums(t, h)
	// The volume's spec leaves and comes back: its data is in a backup,
	// the volume empty.
	write(false)
	stdin()
	write(true)
	stdin()
	backups := strings.Fields(h.MustRun(t, "cd /var/lib/syslet/backups && ls *_data.tar"))
	if len(backups) != 1 {
		t.Fatalf("backups of data: %q", backups)
	}
	h.MustRun(t, `podman exec db sh -c 'echo since > /data/since.txt'`)

	// The restore, killed once the volume is created again and its import
	// has written some of its files.
	mp := strings.TrimSpace(h.MustRun(t, "podman volume inspect data --format '{{.Mountpoint}}'"))
	killed := h.MustRun(t, fmt.Sprintf(`syslet restore data > /root/killed.log 2>&1 < /dev/null & pid=$!
until [ "$(ls /var/lib/syslet/backups/*_data.tar 2>/dev/null | wc -l)" = 2 ] && [ "$(ls %s 2>/dev/null | grep -c '^f')" -ge 1 ]; do
  kill -0 $pid 2>/dev/null || { echo "syslet restore ended before its import"; cat /root/killed.log; exit 1; }
done
kill -9 $pid; wait $pid; ls %s | grep -c '^f'`, mp, mp))
	t.Logf("restore killed with %s file(s) of %d imported; its log:\n%s", strings.TrimSpace(killed), files, h.MustRun(t, "cat /root/killed.log"))
	if n := strings.TrimSpace(killed); n == fmt.Sprint(files) {
		t.Fatalf("the kill landed after the import wrote every file")
	}
	runs := history(t, h)
	last := runs[len(runs)-1]
	if last.Result != "unfinished" || !strings.HasPrefix(last.Source, "restore volume data from "+backups[0]) {
		t.Fatalf("the killed restore's run: %+v", last)
	}
	if got := prop(t, h, "db.service", "ActiveState"); got == "active" {
		t.Errorf("db runs on the half-imported volume")
	}
	if d := syslet(h, "--diff"); !strings.Contains(d.Stdout, "did not finish") || !strings.Contains(d.Stdout, "fill volume data from backup "+backups[0]) {
		t.Errorf("the plan after the kill does not resume the import:\n%s", d)
	}

	res := syslet(h, "--soak", testSoak)
	t.Logf("%s", res)
	if !res.OK() || !strings.Contains(res.Stdout, "did not finish; resuming") {
		t.Fatalf("the next plain syslet:\n%s", res)
	}
	if got := dataSums(t, h); got != before {
		t.Errorf("after the resumed restore, inside db:\n%s\nwant the backup's:\n%s", got, before)
	}
	runs = history(t, h)
	if last := runs[len(runs)-1]; last.Result != "ok" || last.Resumes == "" {
		t.Errorf("the resuming run: %+v", last)
	}
	if j := h.MustRun(t, `grep '"type":"end"' /var/lib/syslet/runs.jsonl | tail -1`); !strings.Contains(j, `"restored":[{"file":"`+backups[0]) {
		t.Errorf("the resuming run's journal end does not name the backup it imported:\n%s", j)
	}
	if d := syslet(h, "--diff", "--detailed-exitcode"); d.Code != 0 {
		t.Errorf("after the resumed restore a plain --diff plans changes:\n%s", d)
	}
}
