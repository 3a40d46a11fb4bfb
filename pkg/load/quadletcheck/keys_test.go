package quadletcheck_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/load/quadletcheck"
	"github.com/syslet/syslet/pkg/unit"
)

// converterKeys reads the supported-key lists of the linked converter from
// its source in the module cache: groupsInfo[…].SupportedKeys and
// supportedQuadletKeys of pkg/systemd/quadlet/quadlet.go. They are
// unexported, so reading the source is the only way to compare.
func converterKeys(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/containers/podman/v5").Output()
	if err != nil {
		t.Fatalf("locating the podman module: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "pkg", "systemd", "quadlet", "quadlet.go"))
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*(Key\w+)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(string(src), -1) {
		consts[m[1]] = m[2]
	}
	groups := map[string][]string{}
	var group, cur string
	for _, line := range strings.Split(string(src), "\n") {
		s := strings.TrimSpace(line)
		switch {
		case cur != "" && (s == "}," || s == "}"):
			cur = ""
		case cur != "":
			if m := regexp.MustCompile(`^(Key\w+):\s*true`).FindStringSubmatch(s); m != nil {
				groups[cur] = append(groups[cur], consts[m[1]])
			}
		case strings.HasPrefix(s, "supportedQuadletKeys = map[string]bool{"):
			cur = unit.Quadlet
		case strings.HasSuffix(s, "Group: {"):
			group = strings.TrimSuffix(s, "Group: {")
		case strings.HasPrefix(s, "SupportedKeys: map[string]bool{") && group != "":
			cur = group
		}
	}
	for g := range groups {
		slices.Sort(groups[g])
	}
	return groups
}

// TestKeyTableMatchesConverter: pkg/unit's key-by-release table, cut at
// the linked converter's release, is exactly the converter's own lists, and
// its rows for later releases name keys the converter does not know yet.
func TestKeyTableMatchesConverter(t *testing.T) {
	conv := converterKeys(t)
	if len(conv[unit.Container]) < 80 {
		t.Fatalf("read %d [Container] keys from podman's source; has its layout changed?", len(conv[unit.Container]))
	}
	for _, sec := range []string{unit.Container, unit.Volume, unit.Network, unit.Build, unit.Quadlet} {
		ours := quadletKeys(sec, quadletcheck.Converter)
		if !slices.Equal(ours, conv[sec]) {
			t.Errorf("[%s] at podman %s:\n table:     %v\n converter: %v", sec, quadletcheck.Converter, ours, conv[sec])
		}
		for _, k := range quadletKeys(sec, unit.Podman{Major: 99}) {
			if since, _ := unit.KeySince(sec, k); quadletcheck.Converter.Less(since) && slices.Contains(conv[sec], k) {
				t.Errorf("[%s] %s: the table says podman %s, but the %s converter knows it", sec, k, since, quadletcheck.Converter)
			}
		}
	}
}

// TestConverterStaysOutOfRenderAndPlan: podman's converter imports os, so
// it lives here and never in the pure packages.
func TestConverterStaysOutOfRenderAndPlan(t *testing.T) {
	for _, pkg := range []string{"../../../render", "../../../plan"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/containers/podman/") || dep == "github.com/syslet/syslet/pkg/load/quadletcheck" {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}

// quadletKeys lists the keys podman release p accepts in a quadlet
// section, sorted, from the key table.
func quadletKeys(section string, p unit.Podman) []string {
	var out []string
	for k, v := range unit.KeysSince[section] {
		if !p.Less(v) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
