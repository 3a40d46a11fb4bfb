package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// TestSBOMCarriesLicenses: the SBOM of a binary names, for every module it
// was linked from, the license the module's own files declare, and
// syslet's own, with the network off as a release runs it.
func TestSBOMCarriesLicenses(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "sbomprog")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./pkg/release/testdata/sbomprog")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var log bytes.Buffer
	Log = &log
	t.Cleanup(func() { Log = os.Stderr })
	out := bin + ".cdx.json"
	if err := SBOM(root, bin, out, Stamp{Version: "v0.0.0-20261201000000-000000000000"}); err != nil {
		t.Fatal(err)
	}
	bom := readBOM(t, out)
	if got := licenseIDs(bom.Metadata.Component); got != License {
		t.Errorf("syslet's own component: license %q, want %s", got, License)
	}
	if bom.Components == nil || len(*bom.Components) < 3 {
		t.Fatalf("components: %v", bom.Components)
	}
	for i := range *bom.Components {
		c := &(*bom.Components)[i]
		if licenseIDs(c) == "" {
			t.Errorf("%s@%s: no license", c.Name, c.Version)
		}
	}
	// A release is byte-identical for one commit: so is the SBOM.
	again := out + ".again"
	if err := SBOM(root, bin, again, Stamp{Version: "v0.0.0-20261201000000-000000000000"}); err != nil {
		t.Fatal(err)
	}
	if a, b := readFile(t, out), readFile(t, again); !bytes.Equal(a, b) {
		t.Errorf("two SBOMs of one binary differ:\n%s\n%s", a, b)
	}
	n := len(*bom.Components) + 1
	if want := fmt.Sprintf("%d of %d modules carry a license", n, n); !strings.Contains(log.String(), want) {
		t.Errorf("the log does not count the licenses (%q):\n%s", want, log.String())
	}
}

// TestSBOMSaysWhyItCannot: when the SBOM tool cannot be built (here: no
// module cache and no network), the error carries the go command's reason.
func TestSBOMSaysWhyItCannot(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOPROXY", "off")
	Log = &bytes.Buffer{}
	t.Cleanup(func() { Log = os.Stderr })
	err = SBOM(root, filepath.Join(t.TempDir(), "bin"), filepath.Join(t.TempDir(), "out.json"), Stamp{Version: "v1.2.3"})
	if err == nil || !strings.Contains(err.Error(), "GOPROXY=off") || !strings.Contains(err.Error(), "cyclonedx-gomod") {
		t.Fatalf("want the go command's reason (module lookup disabled by GOPROXY=off), got %v", err)
	}
}

// TestCompleteLicenses: a module the detector misses gets its curated
// license, syslet's own component its declared one, and a module neither
// names is counted as missing.
func TestCompleteLicenses(t *testing.T) {
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{Component: &cdx.Component{Name: "github.com/syslet/syslet", Version: "v1.2.3"}}
	mit := &cdx.Licenses{{License: &cdx.License{ID: "MIT"}}}
	bom.Components = &[]cdx.Component{
		{Name: "github.com/go-chi/chi/v5", Version: "v5.5.0", Evidence: &cdx.Evidence{Licenses: mit}},
		{Name: "github.com/tchap/go-patricia/v2", Version: "v2.3.3"},
		{Name: "example.com/unlicensed", Version: "v1.0.0"},
	}
	file := filepath.Join(t.TempDir(), "bom.json")
	var b bytes.Buffer
	if err := cdx.NewBOMEncoder(&b, cdx.BOMFileFormatJSON).Encode(bom); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := completeLicenses(file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Modules != 4 || c.Licensed != 3 || strings.Join(c.Curated, ",") != "github.com/tchap/go-patricia/v2@v2.3.3" ||
		strings.Join(c.Missing, ",") != "example.com/unlicensed@v1.0.0" {
		t.Errorf("count: %+v", c)
	}
	got := readBOM(t, file)
	if id := licenseIDs(&(*got.Components)[1]); id != "MIT" {
		t.Errorf("go-patricia: %q", id)
	}
	if id := licenseIDs(got.Metadata.Component); id != License {
		t.Errorf("syslet: %q", id)
	}
	if !strings.Contains(c.note(), "none found for example.com/unlicensed@v1.0.0") {
		t.Errorf("note: %s", c.note())
	}
}

func readBOM(t *testing.T, file string) *cdx.BOM {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var bom cdx.BOM
	if err := json.Unmarshal(raw, &bom); err != nil {
		t.Fatal(err)
	}
	return &bom
}

// licenseIDs lists a component's license IDs, asserted or found.
func licenseIDs(c *cdx.Component) string {
	var ids []string
	for _, l := range []*cdx.Licenses{c.Licenses, evidenceLicenses(c)} {
		if l == nil {
			continue
		}
		for _, lc := range *l {
			if lc.License != nil {
				ids = append(ids, lc.License.ID)
			}
		}
	}
	return strings.Join(ids, ",")
}

func evidenceLicenses(c *cdx.Component) *cdx.Licenses {
	if c.Evidence == nil {
		return nil
	}
	return c.Evidence.Licenses
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReleaseIsTheSameOnAnotherBuilder: a release is byte-identical for
// one commit whoever builds it. Two releases of this checkout, one built
// with another module cache, build cache and home directory, have the
// same SHA256SUMS: binaries, their SBOMs, the .deb and the .rpm. Both
// programs are a small stand-in (testdata/sbomprog, linked from a few of
// syslet's modules) and only amd64 is built, so the test compiles for
// seconds, not minutes; the rest is the release's own pipeline (build
// flags, stamp, SBOM, nfpm, the sums). The SBOM tool is built on each
// builder, and its binary differs with the module cache's path (checked
// here, so the test keeps meaning something): the SBOMs must not carry
// its hashes, which they did.
func TestReleaseIsTheSameOnAnotherBuilder(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	stand := []Program{{"syslet", "./pkg/release/testdata/sbomprog"}, {"webhookd", "./pkg/release/testdata/sbomprog"}}
	log := &bytes.Buffer{}
	Log = log
	t.Cleanup(func() { Log = os.Stderr })
	release := func(out string) (sums []byte, tool []byte) {
		t.Helper()
		if _, err := build(root, out, []string{"amd64"}, stand); err != nil {
			t.Fatalf("%v\n%s", err, log)
		}
		bin, err := Tool(root, "cyclonedx-gomod")
		if err != nil {
			t.Fatal(err)
		}
		return readFile(t, filepath.Join(out, SumsFile)), readFile(t, bin)
	}
	here, hereTool := release(filepath.Join(t.TempDir(), "dist"))

	// The other builder's caches are this one's under other paths (what a
	// build reads from them is the same; where they are is not), at paths
	// kept between runs so that its build of the tools is cached too.
	other := filepath.Join(os.TempDir(), "syslet-release-test-other-builder")
	for name, to := range map[string]string{"mod": goEnv(t, "GOMODCACHE"), "cache": goEnv(t, "GOCACHE")} {
		link := filepath.Join(other, name)
		if err := os.MkdirAll(other, 0o755); err != nil {
			t.Fatal(err)
		}
		if cur, err := os.Readlink(link); err != nil || cur != to {
			os.Remove(link)
			if err := os.Symlink(to, link); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("GOMODCACHE", filepath.Join(other, "mod"))
	t.Setenv("GOCACHE", filepath.Join(other, "cache"))
	t.Setenv("HOME", t.TempDir())
	there, thereTool := release(filepath.Join(t.TempDir(), "dist"))

	if bytes.Equal(hereTool, thereTool) {
		t.Fatal("the SBOM tool built the same on both builders: the test no longer shows what it is about")
	}
	if !bytes.Equal(here, there) {
		t.Fatalf("SHA256SUMS of one commit differ between builders:\n%s\n%s", here, there)
	}
	t.Logf("SHA256SUMS, the same on both builders:\n%s", here)
}

// goEnv is `go env NAME`.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}
