package release

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// License is the license syslet is released under (LICENSE): the
// packages declare it, and so does each SBOM for its own component.
const License = "Apache-2.0"

// SBOM writes a CycloneDX SBOM (JSON) of the built binary bin to out:
// every module it was linked from, as the module graph resolved them for
// its build (Go records them in the binary), with their hashes and the
// licenses found in their own files. It reads the binary rather than the
// checkout because cyclonedx-gomod's own git reader cannot open a git
// worktree. No serial number, no timestamp, no network: the SBOM of a
// commit does not change.
//
// The tool finds a module's licenses by running `go mod download` outside
// any module, which checks each module against the checksum database; with
// the network off (GOPROXY=off) that check fails for every module, and the
// SBOM then carried no license at all. GOSUMDB=off skips that check: the
// tool compares each module's hash in the cache with the hash the binary
// records, and drops a module whose hashes differ. Every module the binary
// was linked from is in the cache, because it was just built from it.
func SBOM(root, bin, out string, st Stamp) error {
	name := filepath.Base(bin)
	tool, err := Tool(root, "cyclonedx-gomod")
	if err != nil {
		return fmt.Errorf("the SBOM of %s: %w", name, err)
	}
	cmd := exec.Command(tool, "bin", "-json", "-licenses", "-noserial", "-notimestamp",
		"-version", st.Version, "-output", out, bin)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off", "GOSUMDB=off")
	// Its stderr is a warning per module whose license it cannot tell, read
	// again from the SBOM below; kept for when it fails.
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = Log, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the SBOM of %s: cyclonedx-gomod bin: %w%s", name, err, lastLines(stderr.String(), 5))
	}
	lic, err := completeLicenses(out)
	if err != nil {
		return fmt.Errorf("the SBOM of %s: %w", name, err)
	}
	logf("SBOM %s: %d of %d modules carry a license%s", filepath.Base(out), lic.Licensed, lic.Modules, lic.note())
	return nil
}

// Tool returns the path of the tool name pinned in go.mod, building it
// first if the build cache lacks it. On a machine that never built it,
// the go command fetches its source through the module proxy: what it
// prints while it does goes to Log, and its error says why it could not.
func Tool(root, name string) (string, error) {
	t0 := time.Now()
	cmd := exec.Command("go", "tool", "-n", name)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &teeWriter{Log, &stderr}
	path, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building the tool %s pinned in go.mod (go tool -n %s; on first use it is fetched through the module proxy): %w%s",
			name, name, err, lastLines(stderr.String(), 5))
	}
	if d := time.Since(t0); d > 2*time.Second {
		logf("built the tool %s in %s", name, d.Round(time.Second))
	}
	return strings.TrimSpace(string(path)), nil
}

// teeWriter writes to both writers; the second one keeps what was written.
type teeWriter struct {
	show io.Writer
	keep *bytes.Buffer
}

func (t *teeWriter) Write(p []byte) (int, error) {
	t.keep.Write(p)
	return t.show.Write(p)
}

// curatedLicenses are licenses a person read in a module's own license
// file where cyclonedx-gomod's detector names none: it wants 85%
// confidence in one license text. They are keyed by exact version, so a
// new version is read again (the SBOM test fails until it is).
var curatedLicenses = map[string]string{
	// LICENSE is the MIT text, with "The AUTHORS" as holder: matched at 84.8%.
	"github.com/tchap/go-patricia/v2@v2.3.3": "MIT",
	// LICENSE is the Apache License 2.0 text; the detector finds no license file.
	"github.com/stefanberger/go-pkcs11uri@v0.0.0-20230803200340-78284954bff6": "Apache-2.0",
}

// licenseCount is how many of an SBOM's modules carry a license.
type licenseCount struct {
	Modules, Licensed int
	Curated, Missing  []string // module@version
}

func (c licenseCount) note() string {
	var parts []string
	if len(c.Curated) > 0 {
		parts = append(parts, fmt.Sprintf("%d read by a person: %s", len(c.Curated), strings.Join(c.Curated, ", ")))
	}
	if len(c.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("none found for %s: read its license file and add it to curatedLicenses (pkg/release/sbom.go)", strings.Join(c.Missing, ", ")))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// completeLicenses adds to the SBOM in file the licenses its tool could
// not name: syslet's own, declared, and those of curatedLicenses. It
// counts the modules, syslet's own component among them. It also drops
// the hashes of the tool's own binary (dropToolHashes).
func completeLicenses(file string) (licenseCount, error) {
	var c licenseCount
	raw, err := os.ReadFile(file)
	if err != nil {
		return c, err
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(raw), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return c, fmt.Errorf("reading %s: %w", file, err)
	}
	if bom.Metadata != nil && bom.Metadata.Component != nil && !hasLicense(bom.Metadata.Component) {
		bom.Metadata.Component.Licenses = &cdx.Licenses{{License: &cdx.License{ID: License, Acknowledgement: cdx.LicenseAcknowledgementDeclared}}}
	}
	all := []*cdx.Component{}
	if bom.Metadata != nil && bom.Metadata.Component != nil {
		all = append(all, bom.Metadata.Component)
	}
	if bom.Components != nil {
		for i := range *bom.Components {
			all = append(all, &(*bom.Components)[i])
		}
	}
	for _, comp := range all {
		c.Modules++
		ref := comp.Name + "@" + comp.Version
		if id, ok := curatedLicenses[ref]; ok && !hasLicense(comp) {
			comp.Evidence = &cdx.Evidence{Licenses: &cdx.Licenses{{License: &cdx.License{ID: id, Acknowledgement: cdx.LicenseAcknowledgementConcluded}}}}
			c.Curated = append(c.Curated, ref)
		}
		if hasLicense(comp) {
			c.Licensed++
		} else {
			c.Missing = append(c.Missing, ref)
		}
	}
	slices.Sort(c.Curated)
	dropToolHashes(&bom)
	var b bytes.Buffer
	if err := cdx.NewBOMEncoder(&b, cdx.BOMFileFormatJSON).SetPretty(true).EncodeVersion(&bom, bom.SpecVersion); err != nil {
		return c, err
	}
	return c, os.WriteFile(file, b.Bytes(), 0o644)
}

// dropToolHashes removes the hashes of the SBOM tool's own binary from
// the SBOM's metadata. The tool is built on each builder from the version
// go.mod pins, and its binary embeds the builder's module cache path (a
// -trimpath in GOFLAGS does not reach `go tool`): the same commit built
// with another GOMODCACHE gave other hashes, so another SBOM and two
// lines of SHA256SUMS that differ. The tool's name and version, which
// stay, say which tool made the SBOM.
func dropToolHashes(bom *cdx.BOM) {
	if bom.Metadata == nil || bom.Metadata.Tools == nil {
		return
	}
	if ts := bom.Metadata.Tools.Tools; ts != nil {
		for i := range *ts {
			(*ts)[i].Hashes = nil
		}
	}
	if cs := bom.Metadata.Tools.Components; cs != nil {
		for i := range *cs {
			(*cs)[i].Hashes = nil
		}
	}
}

// hasLicense reports whether a component names a license, as asserted or
// as the evidence found in its files.
func hasLicense(c *cdx.Component) bool {
	return c.Licenses != nil && len(*c.Licenses) > 0 || c.Evidence != nil && c.Evidence.Licenses != nil && len(*c.Evidence.Licenses) > 0
}

// ansi matches the colour codes of the tools' log lines.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// lastLines is the end of a command's stderr as the tail of an error
// message: at most n lines, without colour codes.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(ansi.ReplaceAllString(s, "")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	return ":\n  " + strings.Join(lines, "\n  ")
}
