package adopt_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/app/adopt"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/unit"
)

// readQuadlets reads testdata/quadlets, the same hand-written set the integration
// test starts by hand before adopting it.
func readQuadlets(t *testing.T) []adopt.File {
	t.Helper()
	paths, _ := filepath.Glob("testdata/quadlets/*")
	var files []adopt.File
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := adopt.File{Path: p, Data: data}
		if strings.HasSuffix(p, ".build") {
			f.Context = map[string]adopt.ContextFile{}
			for _, n := range []string{"Containerfile", "hello.txt"} {
				c, err := os.ReadFile(filepath.Join("testdata/builds/app", n))
				if err != nil {
					t.Fatal(err)
				}
				f.Context[n] = adopt.ContextFile{Data: c, Mode: 0o644}
			}
		}
		files = append(files, f)
	}
	if len(files) < 10 {
		t.Fatalf("want at least ten quadlet files, found %d", len(files))
	}
	return files
}

func TestAdoptRendersBackToTheSameMeaning(t *testing.T) {
	files := readQuadlets(t)
	res := adopt.Convert(files)
	if len(res.Failed) > 0 || len(res.Notes) > 0 {
		t.Fatalf("failed %q notes %q\n%s", res.Failed, res.Notes, res.Specs)
	}
	set := load.Bytes("adopted.json", res.Specs)
	out, rep := set.Out, set.Report
	if rep.HasErrors() {
		t.Fatalf("adopted specs invalid:\n%s\n%s", rep.String(), res.Specs)
	}
	if len(out.Units) != len(files) {
		t.Fatalf("%d units rendered from %d files", len(out.Units), len(files))
	}
	// The podman secrets the containers use are declared external, once
	// each, in name order.
	var ext []string
	for _, s := range out.ExternalSecrets {
		ext = append(ext, s.Name)
	}
	if want := []string{"apitoken", "dbpass"}; !slices.Equal(ext, want) || !slices.Equal(res.ExternalSecrets, want) || len(out.Secrets) != 0 {
		t.Errorf("external secrets %q (result %q), want %q", ext, res.ExternalSecrets, want)
	}
	for _, f := range files {
		uf, _ := unit.Parse(f.Data)
		for _, u := range out.Units {
			if u.FileName == filepath.Base(f.Path) && !unit.SameMeaning(uf, u.Parsed()) {
				t.Errorf("%s renders to another meaning:\n%s", f.Path, u.Bytes())
			}
		}
	}
}

func TestAdoptSaysWhatTheFirstApplyChanges(t *testing.T) {
	res := adopt.Convert([]adopt.File{
		{Path: "/etc/containers/systemd/plain.container", Data: []byte("[Container]\nImage=busybox\nExec=sleep 1\n")},
		{Path: "/etc/containers/systemd/v.volume", Data: []byte("[Volume]\n")},
		{Path: "/etc/containers/systemd/x.pod", Data: []byte("[Pod]\n")},
		{Path: "/etc/containers/systemd/x.timer", Data: []byte("[Timer]\n")},
		// A running container's Restart= and WantedBy= are syslet's.
		{Path: "/etc/containers/systemd/edge.container", Data: []byte("[Container]\nContainerName=edge\nImage=busybox\n[Service]\nRestart=on-failure\n[Install]\nWantedBy=multi-user.target\n")},
	})
	all := strings.Join(res.Notes, "\n")
	for _, want := range []string{"ContainerName= is not set", "VolumeName= is not set", "PodName= is not set", "differs in meaning",
		"[Service] Restart=on-failure cannot be kept in the spec", "edge.container.d/restart.conf",
		"[Install] WantedBy=multi-user.target after an empty WantedBy= in a drop-in"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
	if len(res.Failed) != 1 || !strings.Contains(res.Failed[0], "x.timer") {
		t.Errorf("failed: %q", res.Failed)
	}
}

// TestAdoptDeclaresUsedSecretsExternal: every podman secret a Secret= line
// names (one line may name several, as quadlet splits it into words) gets
// one external secret spec, after the unit specs, sorted; the stream is
// exactly this, so it stays stable for review and diffs.
func TestAdoptDeclaresUsedSecretsExternal(t *testing.T) {
	res := adopt.Convert([]adopt.File{
		{Path: "/etc/containers/systemd/b.container", Data: []byte("[Container]\nContainerName=b\nImage=busybox\nSecret=zeta beta\nSecret=alpha,type=env,target=A\n[Service]\nRestart=always\n[Install]\nWantedBy=multi-user.target default.target\n")},
		{Path: "/etc/containers/systemd/a.container", Data: []byte("[Container]\nContainerName=a\nImage=busybox\nSecret=alpha,type=mount,target=/run/secrets/a\n[Service]\nRestart=always\n[Install]\nWantedBy=multi-user.target default.target\n")},
	})
	if len(res.Failed) > 0 || len(res.Notes) > 0 {
		t.Fatalf("failed %q notes %q", res.Failed, res.Notes)
	}
	want := `[
  {
    "apiVersion": "v1",
    "type": "container",
    "name": "b",
    "unit": {
      "Container": {
        "Image": "busybox",
        "Secret": ["zeta beta","alpha,type=env,target=A"]
      },
      "Service": {
        "Restart": "always"
      },
      "Install": {
        "WantedBy": "multi-user.target default.target"
      }
    }
  },
  {
    "apiVersion": "v1",
    "type": "container",
    "name": "a",
    "unit": {
      "Container": {
        "Image": "busybox",
        "Secret": "alpha,type=mount,target=/run/secrets/a"
      },
      "Service": {
        "Restart": "always"
      },
      "Install": {
        "WantedBy": "multi-user.target default.target"
      }
    }
  },
  {
    "apiVersion": "v1",
    "type": "secret",
    "name": "alpha",
    "external": true
  },
  {
    "apiVersion": "v1",
    "type": "secret",
    "name": "beta",
    "external": true
  },
  {
    "apiVersion": "v1",
    "type": "secret",
    "name": "zeta",
    "external": true
  }
]
`
	if string(res.Specs) != want {
		t.Errorf("adopted stream:\n%s\nwant:\n%s", res.Specs, want)
	}
	if !slices.Equal(res.ExternalSecrets, []string{"alpha", "beta", "zeta"}) {
		t.Errorf("external secrets %q", res.ExternalSecrets)
	}
}

// TestAdoptPodsTemplatesDropIns: a pod with two containers, one with a
// drop-in, and a template with two instance links and drop-ins of its own
// and of one instance (testdata/pods, the set the integration test starts
// by hand) are adopted with nothing left to change: every unit and drop-in
// renders back to what the files say, and the instances are the
// template's.
func TestAdoptPodsTemplatesDropIns(t *testing.T) {
	paths, _ := filepath.Glob("testdata/pods/*")
	files, err := adopt.Read(paths)
	if err != nil {
		t.Fatal(err)
	}
	res := adopt.Convert(files)
	if len(res.Failed) > 0 || len(res.Notes) > 0 {
		t.Fatalf("failed %q notes %q\n%s", res.Failed, res.Notes, res.Specs)
	}
	set := load.Bytes("adopted.json", res.Specs)
	if set.Report.HasErrors() {
		t.Fatalf("adopted specs invalid:\n%s\n%s", set.Report.String(), res.Specs)
	}
	got := map[string]string{}
	for _, u := range set.Out.Units {
		got[u.FileName] = u.Link
		for _, d := range u.DropIns {
			got[d.Rel()] = u.FileName
		}
	}
	want := map[string]string{"shop.pod": "", "web.container": "", "side.container": "", "work@.container": "",
		"work@1.container": "work@.container", "work@2.container": "work@.container",
		"web.container.d/10-env.conf": "web.container", "work@.container.d/10-role.conf": "work@.container",
		"work@2.container.d/20-shard.conf": "work@2.container"}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: rendered %v (%q), want %q", k, ok, g, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rendered %v", got)
	}
}

// TestAdoptRefusesDirectories: a directory named as a unit, or paths that
// hold no unit file at all, are an error naming them, not "0 file(s)
// adopted".
func TestAdoptRefusesDirectories(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"x.container", "users"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{filepath.Join(dir, "x.container")}, filepath.Join(dir, "x.container") + " is a directory, not a quadlet unit file"},
		{[]string{dir}, "no quadlet unit file among " + dir + ": directories are skipped; give the unit files (syslet adopt DIR/*)"},
		{[]string{filepath.Join(dir, "users")}, "no quadlet unit file among " + filepath.Join(dir, "users")},
	} {
		files, err := adopt.Read(tc.paths)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%q) = %d file(s), %v; want the error %q", tc.paths, len(files), err, tc.want)
		}
	}
}
