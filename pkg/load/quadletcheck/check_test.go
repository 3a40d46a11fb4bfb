package quadletcheck_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/containers/podman/v5/pkg/systemd/parser"
	"github.com/containers/podman/v5/pkg/systemd/quadlet"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/load/quadletcheck"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

func loadStream(t testing.TB, stream string) (*render.Output, report.Report) {
	t.Helper()
	set := load.Bytes("test.json", []byte(stream))
	return set.Out, set.Report
}

// TestServiceNamesAreQuadlets: for every kind syslet renders, the service
// name render derives (and the planner starts, stops and reads) is the one
// podman's quadlet gives the rendered file — and so are the resource names.
func TestServiceNamesAreQuadlets(t *testing.T) {
	out, rep := loadStream(t, `[
	 {"apiVersion":"v1","type":"network","name":"net.work-1","unit":{}},
	 {"apiVersion":"v1","type":"volume","name":"data_1","unit":{}},
	 {"apiVersion":"v1","type":"build","name":"app","containerfile":"FROM scratch\n","unit":{"Build":{"ImageTag":["localhost/app:1","localhost/app:latest"]}}},
	 {"apiVersion":"v1","type":"container","name":"web.v2","unit":{"Container":{"Image":"app.build","Volume":{"data_1.volume":"/data"},"Network":"net.work-1.network"}}},
	 {"apiVersion":"v1","type":"pod","name":"shop","unit":{"Pod":{"Network":"net.work-1.network"}}},
	 {"apiVersion":"v1","type":"image","name":"base","unit":{"Image":{"Image":"docker.io/library/busybox:1.37","ImageTag":"localhost/base:1"}}},
	 {"apiVersion":"v1","type":"kube","name":"play","yaml":"kind: Pod\n","unit":{"Kube":{"Network":"net.work-1.network"}}},
	 {"apiVersion":"v1","type":"container","name":"side","unit":{"Container":{"Image":"base.image","Pod":"shop.pod"}},
	  "dropIns":{"10-vol.conf":{"Container":{"Volume":"data_1.volume:/data"}}}},
	 {"apiVersion":"v1","type":"container","name":"api","unit":{"Container":{"Image":"base.image","ServiceName":"shop-api"}}},
	 {"apiVersion":"v1","type":"container","name":"job","unit":{"Container":{"Image":"base.image"}},
	  "instances":["1",{"name":"b.2","dropIns":{"10-net.conf":{"Container":{"Network":"net.work-1.network"}}}}]}
	]`)
	if rep.HasErrors() {
		t.Fatal(rep.String())
	}
	kinds := map[spec.Kind]bool{}
	for _, u := range out.Units {
		kinds[u.Kind] = true
		f := parser.NewUnitFile()
		f.Filename = u.FileName
		if err := f.Parse(string(u.MergedFile().Bytes())); err != nil {
			t.Fatal(err)
		}
		name, err := quadlet.GetUnitServiceName(f)
		if err != nil {
			t.Fatal(err)
		}
		if name+".service" != u.Service || unit.ServiceOf(u.FileName, u.Parsed()) != u.Service {
			t.Errorf("%s: render says %s, quadlet %s.service", u.FileName, u.Service, name)
		}
	}
	if len(kinds) != 7 {
		t.Fatalf("rendered kinds %v, want all seven of podman 5.4", kinds)
	}
	// unit.DefaultService, the one place syslet names services, for every
	// kind of the kind table.
	for _, ext := range unit.Exts() {
		for _, base := range []string{"app.v1_x", "web@", "web@1", "a-b@c.d"} {
			f := parser.NewUnitFile()
			f.Filename = base + ext
			name, err := quadlet.GetUnitServiceName(f)
			if err != nil || name+".service" != unit.DefaultService(f.Filename) {
				t.Errorf("%s: syslet says %s, quadlet %s.service (%v)", f.Filename, unit.DefaultService(f.Filename), name, err)
			}
			// ServiceName= wins, as quadlet reads it.
			if sec := unit.KindOf(f.Filename).Section; base == "app.v1_x" {
				uf := &unit.File{}
				uf.Add(sec, unit.KeyServiceName, "custom")
				f.Add(sec, unit.KeyServiceName, "custom")
				if name, _ := quadlet.GetUnitServiceName(f); name+".service" != unit.ServiceOf(f.Filename, uf) {
					t.Errorf("%s with ServiceName=custom: syslet says %s, quadlet %s.service", f.Filename, unit.ServiceOf(f.Filename, uf), name)
				}
			}
			// The drop-in directories quadlet merges, in its order.
			if got, want := layout.DropInDirs(f.Filename), f.GetUnitDropinPaths(); !slices.Equal(got, want) {
				t.Errorf("%s: drop-in dirs %q, quadlet reads %q", f.Filename, got, want)
			}
		}
	}
	// Check compares names, resources and dependencies with the converter
	// for the whole set; here it must find nothing.
	if r := quadletcheck.Check(out, unit.OldestPodman, rep); len(r.Findings) > 0 {
		t.Fatal(r.String())
	}
}

// TestDisagreementIsReported: were render to derive a name quadlet does not
// give, validation fails instead of deploying units nothing would start.
func TestDisagreementIsReported(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(*render.Output)
		want   string
	}{
		{"service", func(o *render.Output) { o.Units[1].Service = "db-container.service" }, `the service "db-container.service" but podman's quadlet derives "db.service"`},
		{"volume name", func(o *render.Output) { o.Units[0].Resource = "systemd-data" }, `the volume name "systemd-data" but podman's quadlet derives "data"`},
		{"requires", func(o *render.Output) { o.Units[1].Uses.Requires = nil }, `the units it requires "" but podman's quadlet derives "data.volume"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, rep := loadStream(t, `[{"apiVersion":"v1","type":"volume","name":"data","unit":{}},
			 {"apiVersion":"v1","type":"container","name":"db","unit":{"Container":{"Image":"docker.io/library/postgres:17","Volume":"data.volume:/var/lib/postgresql"}}}]`)
			tc.break_(out)
			r := quadletcheck.Check(out, unit.OldestPodman, rep)
			if len(r.Findings) != 1 || r.Findings[0].Rule != spec.RuleDisagreement || !strings.Contains(r.Findings[0].Message, tc.want) {
				t.Fatalf("want one %s finding containing %q, got:\n%s", spec.RuleDisagreement, tc.want, r.String())
			}
		})
	}
}

// TestCrossUnit: a container is judged with the other units of the set —
// a volume's own mistakes are reported on the volume, and a container
// using it is not blamed for them.
func TestCrossUnit(t *testing.T) {
	out, rep := loadStream(t, `[{"apiVersion":"v1","type":"volume","name":"data","unit":{"Volume":{"Options":"size=1m"}}},
	 {"apiVersion":"v1","type":"container","name":"db","unit":{"Container":{"Image":"docker.io/library/postgres:17","Volume":"data.volume:/data"}}}]`)
	r := quadletcheck.Check(out, unit.OldestPodman, rep)
	if len(r.Findings) != 1 || r.Findings[0].Path != "[0].unit.Volume.Options" {
		t.Fatalf("want one finding at [0].unit.Volume.Options, got:\n%s", r.String())
	}

	// A network the converter refuses has no name, so a container joining
	// it fails on the host too: both are told, the container's finding
	// pointing at the network.
	out, rep = loadStream(t, `[{"apiVersion":"v1","type":"network","name":"lan","unit":{"Network":{"Gateway":"10.89.0.1"}}},
	 {"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"docker.io/library/nginx:1.27","Network":"lan.network"}}}]`)
	r = quadletcheck.Check(out, unit.OldestPodman, rep)
	if len(r.Findings) != 2 || r.Findings[0].Path != "[0].unit.Network.Gateway" || r.Findings[1].Path != "[1].unit.Container.Network" ||
		!strings.Contains(r.Findings[1].Message, "lan.network itself fails to convert") {
		t.Fatalf("got:\n%s", r.String())
	}
}

// TestPriorFindingsAreNotRepeated: a spec syslet already refused is not
// reported again in the converter's words.
func TestPriorFindingsAreNotRepeated(t *testing.T) {
	out, rep := loadStream(t, `{"apiVersion":"v1","type":"container","name":"x","unit":{"Container":{"Exec":"true"}}}`)
	if !rep.HasErrors() {
		t.Fatal("want syslet's own image-required finding")
	}
	if r := quadletcheck.Check(out, unit.OldestPodman, rep); len(r.Findings) > 0 {
		t.Fatalf("repeated:\n%s", r.String())
	}
	if r := quadletcheck.Check(out, unit.OldestPodman, report.Report{}); len(r.Findings) != 1 || r.Findings[0].Rule != spec.RuleQuadlet {
		t.Fatalf("without prior findings the converter's own should show:\n%s", r.String())
	}
}

// TestGate: one finding per key (not per list item), naming the release;
// a release that knows the key passes it; keys newer than the converter
// pass under that release without the converter calling them unknown.
func TestGate(t *testing.T) {
	stream := `[{"apiVersion":"v1","type":"container","name":"c","unit":{"Container":{"Image":"docker.io/library/busybox:1.37","Retry":["3","4"],"ReloadSignal":"SIGHUP"}}},
	 {"apiVersion":"v1","type":"volume","name":"v","unit":{"Volume":{"UID":"1000","GID":"1000"}}}]`
	for _, tc := range []struct {
		podman unit.Podman
		want   []string
	}{
		{unit.Podman{Major: 5, Minor: 4}, []string{ // units in render's order: volumes first
			"[1].unit.Volume.UID: [Volume] UID needs podman 6.0 or later; these specs are checked against podman 5.4",
			"[1].unit.Volume.GID: [Volume] GID needs podman 6.0 or later; these specs are checked against podman 5.4",
			"[0].unit.Container.Retry[0]: [Container] Retry needs podman 5.5 or later; these specs are checked against podman 5.4",
			"[0].unit.Container.ReloadSignal: [Container] ReloadSignal needs podman 5.5 or later; these specs are checked against podman 5.4"}},
		{unit.Podman{Major: 5, Minor: 8}, []string{
			"[1].unit.Volume.UID: [Volume] UID needs podman 6.0 or later; these specs are checked against podman 5.8",
			"[1].unit.Volume.GID: [Volume] GID needs podman 6.0 or later; these specs are checked against podman 5.8"}},
		{unit.Podman{Major: 6, Minor: 0}, nil},
	} {
		t.Run(tc.podman.String(), func(t *testing.T) {
			gate(t, stream, tc.podman, tc.want)
		})
	}
}

// TestGatePodman6: what podman 6.0 and 6.1 added. ImageVolume= (6.1) is
// refused for 6.0 naming 6.1 and passes for 6.1; a volume's Options=
// without Device= and an anonymous Mount= are refused by every 5.x
// generator and the linked 5.8 converter, so syslet gates them as 6.0
// features — and for 6.0 withholds them from the converter instead of
// repeating its refusal. (The anonymous Mount= is not in the corpus: podman
// 5.4.2's generator panics on it, and the trixie host runs the corpus
// through that generator in one go.)
func TestGatePodman6(t *testing.T) {
	stream := `[{"apiVersion":"v1","type":"container","name":"c","unit":{"Container":{"Image":"docker.io/library/busybox:1.37","ImageVolume":"tmpfs","Mount":"type=volume,destination=/scratch"}}},
	 {"apiVersion":"v1","type":"volume","name":"v","unit":{"Volume":{"Options":"size=1m"}}},
	 {"apiVersion":"v1","type":"volume","name":"d","unit":{"Volume":{"Device":"tmpfs","Type":"tmpfs","Options":"size=1m"}}}]`
	for _, tc := range []struct {
		podman unit.Podman
		want   []string
	}{
		{unit.Podman{Major: 5, Minor: 8}, []string{ // units in render's order: volumes first
			"[1].unit.Volume.Options: [Volume] Options=size=1m: Options= without Device= (generic volume options) needs podman 6.0 or later; these specs are checked against podman 5.8 (for older podman: set Device= too)",
			"[0].unit.Container.ImageVolume: [Container] ImageVolume needs podman 6.1 or later; these specs are checked against podman 5.8",
			"[0].unit.Container.Mount: [Container] Mount=type=volume,destination=/scratch: an anonymous volume Mount= (a volume mount without source=) needs podman 6.0 or later; these specs are checked against podman 5.8 (for older podman: name the volume with source=)"}},
		{unit.Podman{Major: 6, Minor: 0}, []string{
			"[0].unit.Container.ImageVolume: [Container] ImageVolume needs podman 6.1 or later; these specs are checked against podman 6.0"}},
		{unit.Podman{Major: 6, Minor: 1}, nil},
	} {
		t.Run(tc.podman.String(), func(t *testing.T) {
			gate(t, stream, tc.podman, tc.want)
		})
	}
}

// gate checks stream for podman: on a host the findings are want; without
// one, each has the --podman hint.
func gate(t *testing.T, stream string, podman unit.Podman, want []string) {
	t.Helper()
	out, rep := loadStream(t, stream)
	if rep.HasErrors() {
		t.Fatal(rep.String())
	}
	r := quadletcheck.CheckHost(out, podman, rep)
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.Path+": "+f.Message)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without a host, each says how to check against a newer podman.
	r = quadletcheck.Check(out, podman, rep)
	for i, f := range r.Findings {
		if i >= len(want) {
			break
		}
		since := strings.SplitN(strings.SplitN(want[i], "needs podman ", 2)[1], " ", 2)[0]
		if hint := ": if the host runs podman " + since + " or later, say so with --podman (syslet validate --podman " + since + ")"; f.Path+": "+f.Message != want[i]+hint {
			t.Errorf("without a host: %s: %s, want the hint %q", f.Path, f.Message, hint)
		}
	}
}

// TestNewerPodmanHint: the earlier syslet required podman 6, so its users'
// builds use BuildArg= (podman 5.7); checked against the default 5.4, the
// finding says to pass --podman. On a host, whose podman is what it is,
// it does not.
func TestNewerPodmanHint(t *testing.T) {
	out, rep := loadStream(t, `{"apiVersion":"v1","type":"build","name":"b","containerfile":"FROM x\n",
		"unit":{"Build":{"ImageTag":"localhost/b:1","BuildArg":"VERSION=1"}}}`)
	if rep.HasErrors() {
		t.Fatal(rep.String())
	}
	r := quadletcheck.Check(out, unit.OldestPodman, rep)
	if len(r.Findings) != 1 || r.Findings[0].Rule != spec.RuleNewerPodman || r.Findings[0].Path != "[0].unit.Build.BuildArg" ||
		!strings.Contains(r.Findings[0].Message, "say so with --podman (syslet validate --podman 5.7)") {
		t.Errorf("without a host: %s", r.String())
	}
	if r := quadletcheck.Check(out, unit.Podman{Major: 5, Minor: 7}, rep); len(r.Findings) > 0 {
		t.Errorf("--podman 5.7: %s", r.String())
	}
	if r := quadletcheck.CheckHost(out, unit.OldestPodman, rep); len(r.Findings) != 1 || strings.Contains(r.Findings[0].Message, "--podman") {
		t.Errorf("on a host: %s", r.String())
	}
}

// TestExamplesConvert: the shipped examples pass the converter for podman
// 5.4, with no warning either.
func TestExamplesConvert(t *testing.T) {
	srcs, err := spec.ReadSources(filepath.Join("..", "..", "..", "examples"), nil)
	if err != nil {
		t.Fatal(err)
	}
	set := load.Sources(srcs)
	out, rep := set.Out, set.Report
	if r := quadletcheck.Check(out, unit.OldestPodman, rep); len(r.Findings) > 0 || rep.HasErrors() {
		t.Fatalf("%s%s", rep.String(), r.String())
	}
}
