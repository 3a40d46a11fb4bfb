package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/render"
)

// TestCheckLines: a published port podman would refuse at the container's
// start, and a named volume one letter short of a declared one, are found
// offline at their JSON paths; a podman volume made by hand is a warning.
func TestCheckLines(t *testing.T) {
	const cache = `{"apiVersion": "v1", "type": "volume", "name": "web-cache", "unit": {}}`
	n := 0 // each container of a stream needs a name of its own
	web := func(key, value string) string {
		n++
		return `{"apiVersion": "v1", "type": "container", "name": "web-` + fmt.Sprint(n) + `", "unit": {"Container": {"Image": "localhost/web:1", "` + key + `": "` + value + `"}}}`
	}
	tests := []struct {
		name, data string
		severity   report.Severity // "" for no finding
		path, says string
	}{
		{"port out of range", web("PublishPort", "127.0.0.1:8080:80800"), report.Error,
			"[0].unit.Container.PublishPort", "container port 80800 is out of range (1-65535)"},
		{"host port out of range", web("PublishPort", "70000:80"), report.Error,
			"[0].unit.Container.PublishPort", "host port 70000 is out of range"},
		{"backwards range", web("PublishPort", "8090-8080:80-90/udp"), report.Error,
			"[0].unit.Container.PublishPort", "range 8090-8080 runs backwards"},
		{"no container port", web("PublishPort", "127.0.0.1:8080:"), report.Error,
			"[0].unit.Container.PublishPort", "the container port is missing"},
		{"ports podman takes", web("PublishPort", "[::1]:8080:80/tcp") + web("PublishPort", "127.0.0.1::80"), "", "", ""},
		{"volume typo", cache + web("Volume", "web-cache.volum:/data"), report.Error,
			"[1].unit.Container.Volume", `"web-cache.volum" is no volume a spec declares, so podman would create an empty volume of that name: did you mean web-cache.volume?`},
		{"podman volume made by hand", web("Volume", "scratch:/data"), report.Warning,
			"[0].unit.Container.Volume", `podman volume "scratch" is declared by no spec`},
		{"declared by podman name, host paths", cache + web("Volume", "web-cache:/data") + web("Volume", "/srv/data:/data:ro"), "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, rep := spec.Load([]spec.Source{{Name: "in.json", Data: []byte(tt.data)}})
			if rep.HasErrors() {
				t.Fatalf("specs: %s", rep.String())
			}
			rep = render.Check(render.Render(specs))
			if tt.severity == "" {
				if len(rep.Findings) > 0 {
					t.Fatalf("want no finding, got:\n%s", rep.String())
				}
				return
			}
			if len(rep.Findings) != 1 {
				t.Fatalf("want 1 finding, got:\n%s", rep.String())
			}
			f := rep.Findings[0]
			if f.Severity != tt.severity || f.Path != tt.path || !strings.Contains(f.Message, tt.says) {
				t.Errorf("got %s %s %q, want %s %s saying %q", f.Severity, f.Path, f.Message, tt.severity, tt.path, tt.says)
			}
		})
	}
}
