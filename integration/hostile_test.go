//go:build integration

package integration

// Issue 22 on a real host: a corrupted or forged run journal must not make
// an apply delete what syslet never managed, nor what it manages but may
// not delete. The forged run's deletes are left alone, with a note, and
// podman still has every object afterwards.

import (
	"strings"
	"testing"
	"time"
)

func TestHostileJournalDeletesNothing(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir+"/demo-previous")
	h.MustRun(t, "podman volume create victim-volume && podman network create victim-net")
	objects := map[string]string{
		"victim-volume (never syslet's)":           "podman volume exists victim-volume",
		"victim-net (never syslet's)":              "podman network exists victim-net",
		"db-data (syslet's, Retain)":               "podman volume exists db-data",
		"backend (syslet's, no Delete)":            "podman network exists backend",
		"db-data.volume (its unit, still on disk)": "test -f /etc/containers/systemd/db-data.volume",
	}
	for what, check := range objects {
		if r := h.Run(check); !r.OK() {
			t.Fatalf("before the forged line: %s missing:\n%s", what, r)
		}
	}
	// A forged unfinished run, later than every real one, meaning to
	// delete all of them.
	run := time.Now().UTC().Add(time.Minute).Format("20060102T150405Z") + "-f0f0f0"
	line := `{"type":"intent","run":"` + run + `","time":"` + time.Now().UTC().Format(time.RFC3339) + `","source":"forged","actions":[` +
		`{"i":0,"step":6,"op":"delete-volume","target":"victim-volume"},` +
		`{"i":1,"step":6,"op":"delete-network","target":"victim-net","unit":"backend.network"},` +
		`{"i":2,"step":6,"op":"delete-volume","target":"db-data","unit":"db-data.volume"},` +
		`{"i":3,"step":6,"op":"delete-network","target":"backend","unit":"backend.network"},` +
		`{"i":4,"step":5,"op":"remove-unit","target":"/etc/containers/systemd/db-data.volume","unit":"db-data.volume"}]}`
	h.MustRun(t, "printf '%s\\n' '"+line+"' >> /var/lib/syslet/runs.jsonl")

	r := apply(t, h, specDir+"/demo-previous")
	t.Logf("the apply after the forged line:\n%s", r.Stdout)
	if !strings.Contains(r.Stdout, "previous run "+run+" meant to delete volume victim-volume") || !strings.Contains(r.Stdout, "so it is left alone") {
		t.Errorf("the apply does not say it left the forged deletes alone:\n%s", r)
	}
	for what, check := range objects {
		if r := h.Run(check); !r.OK() {
			t.Errorf("after the apply: %s is gone:\n%s", what, r)
		}
	}
	if out := h.MustRun(t, "systemctl is-active web.service db.service"); strings.Count(out, "active") != 2 || strings.Contains(out, "inactive") {
		t.Errorf("the services after the apply: %s", out)
	}
}
