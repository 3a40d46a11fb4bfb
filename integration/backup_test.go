//go:build integration

package integration

// Issue 41's acceptance on a real test host: a deploy that deletes a
// Delete volume holding data exports it first (0600 in a 0700 directory,
// its size and sha256 in the run journal); a volume whose spec says
// "backup": false goes without one and the plan says so; a backup that
// cannot fit stops the run before anything changes; `syslet restore`
// brings the data back byte for byte, read from inside the container;
// what is planted in the backup directory is refused.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
)

const bkDir = "/root/bk"

// bkSpecs is the stack: a container mounting volume data (backed up) and
// volume scratch ("backup": false), both reclaimPolicy Delete; with
// mounts false the container mounts neither and the volumes' specs are
// gone.
func bkSpecs(mounts bool) string {
	ctr := map[string]any{"Image": "localhost:5000/busybox:latest", "Exec": "sleep 999999", "RunInit": "true"}
	specs := []string{}
	if mounts {
		ctr["Volume"] = []string{"data.volume:/data", "scratch.volume:/scratch"}
		specs = append(specs,
			`{"apiVersion":"v1","type":"volume","name":"data","reclaimPolicy":"Delete","unit":{}}`,
			`{"apiVersion":"v1","type":"volume","name":"scratch","reclaimPolicy":"Delete","backup":false,"unit":{}}`)
	}
	c, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "db", "unit": map[string]any{"Container": ctr}})
	return strings.Join(append(specs, string(c)), "\n") + "\n"
}

// dataSums are the sha256 of every file in /data, read inside db.
func dataSums(t *testing.T, h *testhost.Host) string {
	t.Helper()
	return h.MustRun(t, `podman exec db sh -c 'cd /data && find . -type f | sort | xargs sha256sum; find . -type l | sort | xargs ls -l | sed "s/.* \.\//.\//"'`)
}

// backupHost starts a host with podman's socket and returns it with a
// writer of the backup tests' specs (bkSpecs): with mounts false the
// volumes' specs are gone, so an apply deletes them.
func backupHost(t *testing.T) (*testhost.Host, func(mounts bool)) {
	t.Helper()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	return h, func(mounts bool) {
		t.Helper()
		if err := h.WriteFile(bkDir+"/specs.json", []byte(bkSpecs(mounts)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBackupBeforeDeleteAndRestore(t *testing.T) {
	t.Parallel()
	h, write := backupHost(t)
	write(true)
	apply(t, h, bkDir)
	h.MustRun(t, `podman exec db sh -c 'mkdir -p /data/sub && head -c 3000000 /dev/urandom > /data/big.bin && echo hello > /data/sub/b.txt && ln -s b.txt /data/sub/link && echo x > /scratch/x'`)
	before := dataSums(t, h)
	if !strings.Contains(before, "big.bin") || !strings.Contains(before, "sub/link -> b.txt") {
		t.Fatalf("data inside db:\n%s", before)
	}
	t.Logf("data inside db:\n%s", before)

	// The mistake: the volumes' specs leave (a bad merge).
	write(false)
	diff := syslet(h, "--diff", bkDir)
	t.Logf("plan:\n%s", diff.Stdout)
	if !strings.Contains(diff.Stdout, "volume scratch (deleted, no backup: its spec says backup false, so its data goes)") || !strings.Contains(diff.Stdout, "volume scratch  [irreversible]") {
		t.Errorf("the plan does not say which volume goes without a backup:\n%s", diff)
	}
	// data's backup is planned with its size, as podman counts it (the
	// 3 MB file and a few bytes more).
	if !strings.Contains(diff.Stdout, "volume data  [backed up first: 2.9 MiB (") || !strings.Contains(diff.Stdout, "Backed up first: volume data (2.9 MiB (") {
		t.Errorf("the plan does not say volume data is backed up first, with its size:\n%s", diff)
	}

	// --no-backup: this run's plan says the data goes.
	if d := syslet(h, "--diff", "--no-backup", bkDir); !strings.Contains(d.Stdout, "volume data (deleted, no backup: --no-backup, so its data goes)") || !strings.Contains(d.Stdout, "volume data  [irreversible]") {
		t.Errorf("the plan with --no-backup does not say volume data's data goes:\n%s", d)
	}

	t.Run("no room stops the run before anything changes", func(t *testing.T) {
		inv := prop(t, h, "db.service", "InvocationID")
		units := h.MustRun(t, "sha256sum /etc/containers/systemd/*.*")
		h.MustRun(t, "mkdir -p /var/lib/syslet/backups && mount -t tmpfs -o size=1m,mode=0700 tmpfs /var/lib/syslet/backups")
		defer h.MustRun(t, "umount /var/lib/syslet/backups")
		res := syslet(h, "--soak", testSoak, bkDir)
		t.Logf("%s", res)
		if res.OK() || !strings.Contains(res.Stdout+res.Stderr, "volume data holds") || !strings.Contains(res.Stdout+res.Stderr, "free; nothing applied") {
			t.Fatalf("want a refusal naming volume data, its size and the space left, got:\n%s", res)
		}
		if got := prop(t, h, "db.service", "InvocationID"); got != inv {
			t.Errorf("db.service was restarted (%s → %s)", inv, got)
		}
		if got := h.MustRun(t, "sha256sum /etc/containers/systemd/*.*"); got != units {
			t.Errorf("unit files changed:\n%s\nwas\n%s", got, units)
		}
		h.MustRun(t, "podman volume exists data && podman volume exists scratch")
		if got := h.MustRun(t, "ls -A /var/lib/syslet/backups"); got != "" {
			t.Errorf("the backup directory holds %q", got)
		}
		if !strings.Contains(res.Stdout, "Nothing was changed") {
			t.Errorf("the refused run does not say nothing changed:\n%s", res.Stdout)
		}
		if d := syslet(h, "--diff", bkDir); strings.Contains(d.Stdout, "did not finish") {
			t.Errorf("the refused run is taken for one to resume:\n%s", d.Stdout)
		}
	})

	res := apply(t, h, bkDir)
	t.Logf("%s", res.Stdout)
	if r := h.Run("podman volume exists data"); r.OK() {
		t.Fatal("volume data was not deleted")
	}
	if got := strings.TrimSpace(h.MustRun(t, "stat -c '%a %F' /var/lib/syslet/backups")); got != "700 directory" {
		t.Errorf("backup directory: %s", got)
	}
	ls := strings.Fields(h.MustRun(t, "cd /var/lib/syslet/backups && ls -A"))
	if len(ls) != 1 || !strings.HasSuffix(ls[0], "_data.tar") {
		t.Fatalf("backups: %q, want one of data and none of scratch", ls)
	}
	file := "/var/lib/syslet/backups/" + ls[0]
	if got := strings.TrimSpace(h.MustRun(t, "stat -c '%a %F' "+file)); got != "600 regular file" {
		t.Errorf("backup file: %s", got)
	}
	sum := strings.Fields(h.MustRun(t, "sha256sum "+file))[0]
	size := strings.TrimSpace(h.MustRun(t, "stat -c %s "+file))
	journal := h.MustRun(t, "grep '\"op\":\"delete-volume\"' /var/lib/syslet/runs.jsonl | grep '\"target\":\"data\"' | grep '\"result\"'")
	if !strings.Contains(journal, `"sha256":"`+sum+`"`) || !strings.Contains(journal, `"size":`+size) || !strings.Contains(journal, ls[0]) {
		t.Errorf("the journal's delete of data does not record the backup %s (size %s, sha256 %s):\n%s", ls[0], size, sum, journal)
	}
	list := syslet(h, "backups")
	if !list.OK() || !strings.Contains(list.Stdout, "data") || !strings.Contains(list.Stdout, size) {
		t.Errorf("syslet backups:\n%s", list)
	}
	t.Logf("syslet backups:\n%s", list.Stdout)

	// Put the specs back: data is created again, empty, and mounted; then
	// the restore brings its data back into it, db stopped around it.
	write(true)
	apply(t, h, bkDir)
	if got := dataSums(t, h); got == before {
		t.Fatal("the recreated volume already holds the data")
	}
	inv := prop(t, h, "db.service", "InvocationID")
	// The restore's plan, alone: nothing changes.
	if d := syslet(h, "restore", "--diff", "data"); !d.OK() || !strings.Contains(d.Stdout, "Restore plan for volume data:") ||
		!strings.Contains(d.Stdout, "1. stop db.service") || !strings.Contains(d.Stdout, "import backup "+ls[0]) || !strings.Contains(d.Stdout, "nothing was changed") {
		t.Errorf("syslet restore --diff data:\n%s", d)
	}
	if got := prop(t, h, "db.service", "InvocationID"); got != inv {
		t.Error("syslet restore --diff restarted db.service")
	}
	rs := syslet(h, "restore", "data")
	t.Logf("%s", rs)
	if !rs.OK() || !strings.Contains(rs.Stdout, "restored volume data from "+ls[0]) || !strings.Contains(rs.Stdout, "sha256 "+sum) {
		t.Fatalf("syslet restore data:\n%s", rs)
	}
	if got := dataSums(t, h); got != before {
		t.Errorf("after the restore, inside db:\n%s\nwant\n%s", got, before)
	}
	if !strings.Contains(rs.Stdout, "Restore plan for volume data:") {
		t.Errorf("the restore did not show its plan first:\n%s", rs.Stdout)
	}
	// Journalled like a run: syslet history lists it, with its backup.
	if hist := syslet(h, "history"); !strings.Contains(hist.Stdout, "restore volume data from "+ls[0]) {
		t.Errorf("syslet history does not list the restore:\n%s", hist)
	}
	if j := h.MustRun(t, `grep '"type":"end"' /var/lib/syslet/runs.jsonl | tail -1`); !strings.Contains(j, `"restored":[{`) || !strings.Contains(j, sum) {
		t.Errorf("the restore's journal end does not name its backup:\n%s", j)
	}
	if got := prop(t, h, "db.service", "InvocationID"); got == inv {
		t.Error("db.service was not stopped and started around the restore")
	}
	if got := strings.Fields(h.MustRun(t, "cd /var/lib/syslet/backups && ls -A")); len(got) != 2 {
		t.Errorf("backups after the restore: %q, want the deleted volume's and the one of what the restore replaced", got)
	}
	if res := syslet(h, "--diff", "--detailed-exitcode", bkDir); res.Code != 0 {
		t.Errorf("after the restore the specs plan changes:\n%s", res)
	}

	t.Run("planted files are refused", func(t *testing.T) {
		d := "/var/lib/syslet/backups/"
		h.MustRun(t, fmt.Sprintf("ln -s /etc/shadow %s20300101T000000Z-aaaaaa_data.tar && mkfifo %s20300101T000000Z-bbbbbb_data.tar", d, d))
		list := syslet(h, "backups")
		if !list.OK() || !strings.Contains(list.Stderr, "a symlink") || !strings.Contains(list.Stderr, "a FIFO") {
			t.Errorf("syslet backups with planted files:\n%s", list)
		}
		for _, name := range []string{"20300101T000000Z-aaaaaa_data.tar", "20300101T000000Z-bbbbbb_data.tar"} {
			res := syslet(h, "restore", "data", name)
			if res.OK() || !strings.Contains(res.Stderr, "refused") {
				t.Errorf("restore from a planted %s:\n%s", name, res)
			}
		}
		if got := dataSums(t, h); got != before {
			t.Errorf("a refused restore changed the data:\n%s", got)
		}
	})
}

// rbkSpecs is a container db mounting volume data; label changes the
// volume's options (a recreate), exec what db runs.
func rbkSpecs(label, exec string) string {
	vol := map[string]any{}
	if label != "" {
		vol["Volume"] = map[string]any{"Label": label}
	}
	v, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "volume", "name": "data", "reclaimPolicy": "Delete", "unit": vol})
	c, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "db", "unit": map[string]any{"Container": map[string]any{
		"Image": "localhost:5000/busybox:latest", "Exec": exec, "RunInit": "true", "Volume": []string{"data.volume:/data"}}}})
	return string(v) + "\n" + string(c) + "\n"
}

// A deploy that recreates a volume (its options change) and fails the
// health gate: the rollback fills the volume again from the backup the
// failed run took, says so, and the data read inside the container is
// the old data, byte for byte.
func TestRollbackRestoresRecreatedVolume(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	write := func(label, exec string) {
		t.Helper()
		if err := h.WriteFile(bkDir+"/specs.json", []byte(rbkSpecs(label, exec)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("", "sleep 999999")
	apply(t, h, bkDir)
	h.MustRun(t, `podman exec db sh -c 'mkdir -p /data/sub && head -c 2000000 /dev/urandom > /data/big.bin && echo hello > /data/sub/b.txt && ln -s b.txt /data/sub/link'`)
	before := dataSums(t, h)
	t.Logf("data inside db:\n%s", before)

	// The bad commit: new volume options (a recreate) and a db that exits.
	write("tier=new", "sh -c 'exit 3'")
	res := syslet(h, "--soak", "2s", bkDir)
	t.Logf("%s", res)
	if res.OK() || !strings.Contains(res.Stdout, "ROLLED BACK") {
		t.Fatalf("want a failed gate and a rollback:\n%s", res)
	}
	if !strings.Contains(res.Stdout, "Restored: volume data from backup ") {
		t.Errorf("the rollback does not say it restored volume data:\n%s", res.Stdout)
	}
	if strings.Contains(res.Stdout, "volume data (deleted by the failed run; irreversible)") {
		t.Errorf("the rollback calls the backed-up volume lost:\n%s", res.Stdout)
	}
	if got := strings.TrimSpace(h.MustRun(t, "systemctl is-active db.service")); got != "active" {
		t.Errorf("db.service after the rollback: %s", got)
	}
	if got := dataSums(t, h); got != before {
		t.Errorf("after the rollback, inside db:\n%s\nwant\n%s", got, before)
	}
	journal := h.MustRun(t, `grep '"type":"end"' /var/lib/syslet/runs.jsonl | tail -1`)
	if !strings.Contains(journal, `"restored":[{`) || !strings.Contains(journal, `_data.tar"`) {
		t.Errorf("the rollback's journal end does not record the restored backup:\n%s", journal)
	}
}
