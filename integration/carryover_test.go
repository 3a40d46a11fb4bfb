//go:build integration

package integration

// Issue 54: a volume recreated for a changed option carries its data over
// (exported, removed, created with its new options, the export imported),
// so the service comes back on its own data: the files' checksums read
// inside the container are the same before and after, through a plain
// apply, through a failed gate with its rollback and the next plain apply,
// and through a kill during the import that the next run finishes.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
)

// carryHost starts a host with db mounting volume data (rbkSpecs), 3 MB of
// files in it, and returns it with the writer of its specs and the
// files' checksums read inside db.
func carryHost(t *testing.T, fill string) (*testhost.Host, func(label, exec string), string) {
	t.Helper()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	write := func(label, exec string) {
		t.Helper()
		if err := h.WriteFile(bkDir+"/specs.json", []byte(rbkSpecs(label, exec)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tier=a", "sleep 999999")
	apply(t, h, bkDir)
	h.MustRun(t, `podman exec db sh -c '`+fill+` && mkdir -p /data/sub && echo hello > /data/sub/b.txt && ln -s b.txt /data/sub/link'`)
	return h, write, dataSums(t, h)
}

// label is the Label= podman gives volume data now.
func label(t *testing.T, h *testhost.Host) string {
	t.Helper()
	return strings.TrimSpace(h.MustRun(t, "podman volume inspect data --format '{{.Labels.tier}}'"))
}

func TestVolumeRecreateCarriesDataOver(t *testing.T) {
	t.Parallel()
	h, write, before := carryHost(t, "head -c 3000000 /dev/urandom > /data/big.bin")
	t.Logf("data inside db:\n%s", before)

	write("tier=b", "sleep 999999")
	d := syslet(h, "--diff", bkDir)
	t.Logf("%s", d)
	if !strings.Contains(d.Stdout, "recreate, data carried over (2.9 MiB)") {
		t.Errorf("the plan does not say the data is carried over:\n%s", d.Stdout)
	}
	res := syslet(h, "--soak", testSoak, bkDir)
	t.Logf("%s", res)
	if !res.OK() {
		t.Fatalf("apply of the label change:\n%s", res)
	}
	if got := label(t, h); got != "b" {
		t.Errorf("volume data's label after the apply: %q, want b", got)
	}
	if got := dataSums(t, h); got != before {
		t.Fatalf("after the recreate, inside db:\n%s\nwant\n%s", got, before)
	}
	if d := syslet(h, "--diff", "--detailed-exitcode", bkDir); d.Code != 0 {
		t.Errorf("after the recreate a --diff plans changes:\n%s", d)
	}

	// A run that changes the label again and whose db fails the gate is
	// rolled back; the next plain apply of the good specs recreates the
	// volume once more. The data stays live throughout.
	write("tier=c", "sh -c 'exit 3'")
	res = syslet(h, "--soak", "2s", bkDir)
	t.Logf("%s", res)
	if res.OK() || !strings.Contains(res.Stdout, "ROLLED BACK") {
		t.Fatalf("want a failed gate and a rollback:\n%s", res)
	}
	if got := dataSums(t, h); got != before {
		t.Errorf("after the rollback, inside db:\n%s\nwant\n%s", got, before)
	}
	write("tier=b", "sleep 999999")
	res = syslet(h, "--soak", testSoak, bkDir)
	t.Logf("%s", res)
	if !res.OK() {
		t.Fatalf("the next plain apply:\n%s", res)
	}
	if got := label(t, h); got != "b" {
		t.Errorf("volume data's label after the next apply: %q, want b", got)
	}
	if got := dataSums(t, h); got != before {
		t.Errorf("after the next plain apply, inside db:\n%s\nwant\n%s", got, before)
	}
}

// A run killed while it imports the carried-over data is finished by the
// next plain run, which imports the same export again, whole.
func TestVolumeCarryOverKilledDuringImportResumes(t *testing.T) {
	t.Parallel()
	// Thirty files of 10 MB: enough that the import takes a while.
	const files = 30
	h, write, before := carryHost(t, fmt.Sprintf(`for i in $(seq -w 1 %d); do head -c 10000000 /dev/urandom > /data/f$i; done`, files))
	mp := strings.TrimSpace(h.MustRun(t, "podman volume inspect data --format '{{.Mountpoint}}'"))

	write("tier=b", "sleep 999999")
	killed := h.MustRun(t, fmt.Sprintf(`syslet --soak 1s %s > /root/killed.log 2>&1 < /dev/null & pid=$!
until [ "$(ls /var/lib/syslet/backups/*_data.tar 2>/dev/null | wc -l)" = 1 ] && [ "$(podman volume inspect data --format '{{.Labels.tier}}' 2>/dev/null)" = b ] && [ "$(ls %s 2>/dev/null | grep -c '^f')" -ge 1 ]; do
  kill -0 $pid 2>/dev/null || { echo "syslet ended before its import"; cat /root/killed.log; exit 1; }
done
kill -9 $pid; wait $pid; ls %s | grep -c '^f'`, bkDir, mp, mp))
	t.Logf("apply killed with %s file(s) of %d imported; its log:\n%s", strings.TrimSpace(killed), files, h.MustRun(t, "cat /root/killed.log"))
	if n := strings.TrimSpace(killed); n == fmt.Sprint(files) {
		t.Fatalf("the kill landed after the import wrote every file")
	}
	if got := prop(t, h, "db.service", "ActiveState"); got == "active" {
		t.Errorf("db runs on the half-imported volume")
	}
	res := syslet(h, "--soak", testSoak, bkDir)
	t.Logf("%s", res)
	if !res.OK() || !strings.Contains(res.Stdout, "did not finish; resuming") {
		t.Fatalf("the next plain syslet:\n%s", res)
	}
	if got := label(t, h); got != "b" {
		t.Errorf("volume data's label after the resumed run: %q, want b", got)
	}
	if got := dataSums(t, h); got != before {
		t.Errorf("after the resumed run, inside db:\n%s\nwant\n%s", got, before)
	}
	if d := syslet(h, "--diff", "--detailed-exitcode", bkDir); d.Code != 0 {
		t.Errorf("after the resumed run a --diff plans changes:\n%s", d)
	}
}

// A rollback by hand brings volume data back as the rollback after a
// failed gate does: a run that dropped the volume's spec deleted it (its
// data in a backup); `syslet rollback` to the generation before fills it
// again, and the files read inside the container are the old ones.
func TestRollbackByHandRestoresVolumeData(t *testing.T) {
	t.Parallel()
	h, write := backupHost(t)
	write(true)
	apply(t, h, bkDir)
	h.MustRun(t, `podman exec db sh -c 'head -c 3000000 /dev/urandom > /data/big.bin && mkdir -p /data/sub && echo hello > /data/sub/b.txt && ln -s b.txt /data/sub/link'`)
	before := dataSums(t, h)
	write(false)
	apply(t, h, bkDir)
	backups := strings.Fields(h.MustRun(t, "cd /var/lib/syslet/backups && ls *_data.tar"))
	if len(backups) != 1 {
		t.Fatalf("backups of data: %q", backups)
	}
	d := syslet(h, "rollback", "--diff")
	t.Logf("%s", d)
	if !strings.Contains(d.Stdout, "fill volume data from backup "+backups[0]) {
		t.Errorf("the rollback's plan does not fill volume data from its backup:\n%s", d.Stdout)
	}
	res := syslet(h, "rollback", "--yes", "--soak", testSoak)
	t.Logf("%s", res)
	if !res.OK() {
		t.Fatalf("syslet rollback:\n%s", res)
	}
	if got := dataSums(t, h); got != before {
		t.Errorf("after the rollback by hand, inside db:\n%s\nwant\n%s", got, before)
	}
}
