package status

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/load"
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
