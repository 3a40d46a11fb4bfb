//go:build integration

package integration

// Issue 41: a run killed while it exports a volume leaves no backup that
// is not whole. The export is written under a temporary name, fsynced and
// renamed: the killed run leaves only the temporary file, which nothing
// lists as a backup, and the volume, which it had not deleted yet. The
// next run resumes the delete: it exports the volume again, whole (its
// sha256 as the journal records it, a tar that lists every file), and
// only then deletes it.

import (
	"fmt"
	"strings"
	"testing"
)

func TestKillDuringExportResumes(t *testing.T) {
	t.Parallel()
	h, write := backupHost(t)
	write(true)
	apply(t, h, bkDir)
	// Big enough that the export takes a while: the kill lands in it.
	const big = 600000000
	h.MustRun(t, fmt.Sprintf(`podman exec db sh -c 'head -c %d /dev/zero > /data/big.bin && echo hello > /data/small.txt'`, big))

	write(false)
	const d = "/var/lib/syslet/backups"
	// Start the apply, wait for its export to have written something, and
	// kill it there.
	killed := h.MustRun(t, fmt.Sprintf(`syslet --soak 1s %s > /root/killed.log 2>&1 < /dev/null & pid=$!
until for f in %s/.tmp-*; do test -s "$f" && break; done && test -s "$f"; do
  kill -0 $pid 2>/dev/null || { echo "syslet ended before its export began"; cat /root/killed.log; exit 1; }
done
kill -9 $pid; wait $pid; ls -lA %s`, bkDir, d, d))
	t.Logf("backup directory after the kill:\n%s\nlog:\n%s", killed, h.MustRun(t, "cat /root/killed.log"))
	names := strings.Fields(h.MustRun(t, "cd "+d+" && ls -A"))
	if len(names) != 1 || !strings.HasPrefix(names[0], ".tmp-") {
		t.Fatalf("want only the killed export's temporary file, got %q (the kill landed after the export finished?)", names)
	}
	if size := strings.TrimSpace(h.MustRun(t, "stat -c %s "+d+"/"+names[0])); size == "0" {
		t.Errorf("the temporary file is empty")
	}
	h.MustRun(t, "podman volume exists data")
	if list := syslet(h, "backups"); !list.OK() || strings.Contains(list.Stdout, "data") {
		t.Errorf("syslet backups lists the half-written export:\n%s", list)
	}
	if rs := syslet(h, "restore", "data"); rs.OK() || !strings.Contains(rs.Stderr, "no backup of volume data") {
		t.Errorf("syslet restore data from a half-written export:\n%s", rs)
	}

	res := apply(t, h, bkDir)
	t.Logf("%s", res.Stdout)
	runs := history(t, h)
	if last := runs[len(runs)-1]; last.Resumes == "" || last.Result != "ok" {
		t.Errorf("the next run did not resume the killed one: %+v", last)
	}
	if r := h.Run("podman volume exists data"); r.OK() {
		t.Error("volume data was not deleted by the resumed run")
	}
	names = strings.Fields(h.MustRun(t, "cd "+d+" && ls -A"))
	if len(names) != 1 || !strings.HasSuffix(names[0], "_data.tar") {
		t.Fatalf("backups after the resumed run: %q, want one whole backup of data", names)
	}
	file := d + "/" + names[0]
	sum := strings.Fields(h.MustRun(t, "sha256sum "+file))[0]
	journal := h.MustRun(t, `grep '"op":"delete-volume"' /var/lib/syslet/runs.jsonl | grep '"target":"data"' | grep '"result"'`)
	if !strings.Contains(journal, `"sha256":"`+sum+`"`) || !strings.Contains(journal, names[0]) {
		t.Errorf("the journal does not record the whole backup %s (sha256 %s):\n%s", names[0], sum, journal)
	}
	listing := h.MustRun(t, "tar -tvf "+file)
	if !strings.Contains(listing, fmt.Sprintf(" %d ", big)) || !strings.Contains(listing, "big.bin") || !strings.Contains(listing, "small.txt") {
		t.Errorf("the backup does not hold the whole volume:\n%s", listing)
	}
}
