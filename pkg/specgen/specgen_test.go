package specgen_test

import (
	"bytes"
	"testing"

	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/specgen"
)

func TestGeneratedSetsAreValid(t *testing.T) {
	cases := []struct {
		name string
		o    specgen.Options
	}{
		{"default", specgen.Default(57)},
		{"sized", specgen.Sized(200)},
		{"host", specgen.Options{Containers: 5, Images: []string{"localhost:5000/busybox:latest"}, PerVolume: 2, PerNetwork: 3, ConfigFiles: 2, ConfigDirFiles: 1, Exec: "sleep 1000000", RunInit: true, Changed: []int{3}}},
		{"bare", specgen.Options{Containers: 3}},
		{"config-files", specgen.Options{Containers: 1, ConfigFiles: 50}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := load.Bytes("gen.json", specgen.Generate(c.o))
			specs, out, rep := set.Specs, set.Out, set.Report
			if len(rep.Findings) > 0 {
				t.Fatalf("findings:\n%s", rep.String())
			}
			if len(specs) != c.o.Resources() {
				t.Errorf("%d specs, Resources() says %d", len(specs), c.o.Resources())
			}
			if len(out.Units) != c.o.Resources() {
				t.Errorf("%d units, want %d", len(out.Units), c.o.Resources())
			}
		})
	}
}

func TestSized(t *testing.T) {
	for _, n := range []int{1, 200, 2000, 20000} {
		o := specgen.Sized(n)
		if r := o.Resources(); r < n || r > n+2 {
			t.Errorf("Sized(%d) gives %d resources", n, r)
		}
	}
}

// TestChanged checks that a change touches exactly the named container's
// spec and that generation is deterministic.
func TestChanged(t *testing.T) {
	o := specgen.Default(20)
	a, b := specgen.Generate(o), specgen.Generate(o)
	if !bytes.Equal(a, b) {
		t.Fatal("same options gave different output")
	}
	o.Changed = []int{7}
	c := specgen.Generate(o)
	al, cl := bytes.Split(a, []byte("\n")), bytes.Split(c, []byte("\n"))
	var diff []string
	for i := range al {
		if !bytes.Equal(al[i], cl[i]) {
			diff = append(diff, string(cl[i]))
		}
	}
	if len(diff) != 1 || !bytes.Contains([]byte(diff[0]), []byte(`"name":"`+specgen.ContainerName(7)+`"`)) {
		t.Errorf("changed lines: %q", diff)
	}
}
