package status

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/probe"
)

type fakeHost map[string]host.UnitHealth

func (f fakeHost) Health(_ context.Context, names []string) (map[string]host.UnitHealth, error) {
	out := map[string]host.UnitHealth{}
	for _, n := range names {
		h, ok := f[n]
		if !ok {
			h = host.UnitHealth{ActiveState: "inactive", SubState: "dead"}
		}
		out[n] = h
	}
	return out, nil
}

const specs = `
{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"localhost:5000/busybox:latest"}}}
{"apiVersion":"v1","type":"container","name":"api","unit":{"Container":{"Image":"localhost:5000/busybox:latest"}}}
{"apiVersion":"v1","type":"container","name":"job","desiredState":"oneshot","unit":{"Container":{"Image":"localhost:5000/busybox:latest"}}}
{"apiVersion":"v1","type":"container","name":"off","desiredState":"stopped","unit":{"Container":{"Image":"localhost:5000/busybox:latest"}}}
{"apiVersion":"v1","type":"volume","name":"data","unit":{"Volume":{}}}
`

func TestRead(t *testing.T) {
	l := load.Bytes("specs.json", []byte(specs))
	if l.Report.HasErrors() {
		t.Fatalf("specs: %v", l.Report)
	}
	h := fakeHost{"web.service": {ActiveState: "active", SubState: "running", Result: "success", InvocationID: "abc", NRestarts: 2}}
	r, err := Read(context.Background(), h, l.Out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Services {
		names = append(names, s.Service+"/"+s.Container)
	}
	if got := strings.Join(names, " "); got != "api.service/api web.service/web" {
		t.Errorf("services = %s; want the running containers only, by name", got)
	}
	if r.Services[1].InvocationID != "abc" || r.Services[1].NRestarts != 2 || r.Services[0].Up() {
		t.Errorf("health = %+v", r.Services)
	}
	if d := Down(r); len(d) != 1 || d[0] != "api.service" {
		t.Errorf("Down = %q", d)
	}
	var b bytes.Buffer
	Write(&b, r)
	want := `SERVICE      CONTAINER  STATE           RESTARTS  INVOCATION
api.service  api        inactive/dead   0         -
web.service  web        active/running  2         abc
1 of 2 up; not up: api.service
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

type fakeProber map[string]probe.Answer

func (f fakeProber) Probe(_ context.Context, container string, _ *probe.Probe) probe.Answer {
	return f[container]
}

// A probe is read from the installed unit's marker, asked when its
// service is up, and shown with its answer and latency; a failing one is
// named at the end.
func TestProbe(t *testing.T) {
	const probed = `
{"apiVersion":"v1","type":"container","name":"web","probe":{"http":{"port":8080,"path":"/up"}},"unit":{"Container":{"Image":"localhost:5000/busybox:latest"}}}
{"apiVersion":"v1","type":"container","name":"api","probe":{"tcp":{"port":9000}},"unit":{"Container":{"Image":"localhost:5000/busybox:latest"}}}
{"apiVersion":"v1","type":"container","name":"db","unit":{"Container":{"Image":"localhost:5000/busybox:latest"}}}
{"apiVersion":"v1","type":"container","name":"off","probe":{"tcp":{"port":1}},"unit":{"Container":{"Image":"localhost:5000/busybox:latest"}}}
`
	l := load.Bytes("specs.json", []byte(probed))
	if l.Report.HasErrors() {
		t.Fatalf("specs: %v", l.Report)
	}
	// Installed: web, api and db as the specs say; off not at all (its
	// probe is not installed yet, so it is not asked).
	root := t.TempDir()
	for _, u := range l.Out.Units {
		if u.Name == "off" {
			continue
		}
		path := layout.Under(root, u.Path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, u.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	up := host.UnitHealth{ActiveState: "active", SubState: "running", Result: "success", InvocationID: "x"}
	h := fakeHost{"web.service": up, "db.service": up, "off.service": up}
	r, err := Read(context.Background(), h, l.Out)
	if err != nil {
		t.Fatal(err)
	}
	pr := fakeProber{"web": {Kind: probe.KindHTTP, Status: 503, Body: "db unreachable", Took: 1234 * time.Microsecond, Via: "127.0.0.1:8080 (published)"}}
	Probe(context.Background(), pr, root, l.Out, &r)
	var b bytes.Buffer
	Write(&b, r)
	want := `SERVICE      CONTAINER  STATE           RESTARTS  INVOCATION
api.service  api        inactive/dead   0         -
db.service   db         active/running  0         x
off.service  off        active/running  0         x
web.service  web        active/running  0         x

SERVICE      PROBE                            ANSWER                         LATENCY  VIA
api.service  TCP :9000 → connects every 1s    - (not up)                     -        -
web.service  GET :8080/up → 200-399 every 1s  answered 503 "db unreachable"  1.2ms    127.0.0.1:8080 (published)
3 of 4 up; not up: api.service; probe failing: web.service
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}
