//go:build integration

package integration

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/unit"
)

// unknownKey is systemd's word for a key it does not know, as systemd 257
// and 262 print it ("Unknown key 'K' in section [S], ignoring." or
// "Unknown key name 'K' in section 'S', ignoring.").
var unknownKey = regexp.MustCompile(`Unknown key (?:name )?'([^']+)' in section \[?'?([A-Za-z]+)`)

// TestHostSystemdAgreesWithKeyTable writes every key of syslet's systemd
// key table into one service and asks the host's systemd-analyze verify:
// each key the table dates at or before the host's release it knows (a
// value it cannot parse is another message), each later one, and a typo,
// it calls unknown. So validate refuses no key the host reads, and warns
// of every key it would ignore.
func TestHostSystemdAgreesWithKeyTable(t *testing.T) {
	t.Parallel()
	h := testhost.Start(t)
	first := strings.Fields(h.MustRun(t, "systemctl --version | head -1")) // systemd 257 (257.9-1~deb13u1)
	if len(first) < 2 {
		t.Fatalf("systemctl --version: %q", first)
	}
	n, err := strconv.Atoi(first[1])
	if err != nil {
		t.Fatalf("systemctl --version: %q", first)
	}
	release := unit.Systemd(n)
	// One service per key: a value systemd cannot parse is a message of
	// its own, but some (DynamicUser=x) end the parsing of the whole file.
	dir := t.TempDir()
	var names []string
	write := func(section, key, value string) {
		name := fmt.Sprintf("probe%d.service", len(names))
		body := "[Service]\nExecStart=/bin/true\n"
		body += fmt.Sprintf("[%s]\n%s=%s\n", section, key, value)
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
		names = append(names, "/root/keys/"+name)
	}
	for _, section := range []string{unit.Unit, unit.Service, unit.Install} {
		for _, k := range slices.Sorted(maps.Keys(unit.SystemdKeysSince[section])) {
			write(section, k, "x")
		}
	}
	write(unit.Service, "TimeoutStarSec", "60")
	must(t, h.CopyIn(dir, "/root/keys"))
	out := h.Run("cd /root/keys && systemd-analyze verify --man=no " + strings.Join(names, " "))
	unknown := map[string]bool{}
	for _, m := range unknownKey.FindAllStringSubmatch(out.Stdout+out.Stderr, -1) {
		unknown[m[2]+"."+m[1]] = true
	}
	if !unknown["Service.TimeoutStarSec"] {
		t.Fatalf("systemd %d did not call the typo unknown; its output:\n%s", release, out)
	}
	checked := 0
	for _, section := range []string{unit.Unit, unit.Service, unit.Install} {
		for k, since := range unit.SystemdKeysSince[section] {
			checked++
			switch known := !unknown[section+"."+k]; {
			case since <= release && !known:
				t.Errorf("[%s] %s: the table dates it systemd %d, and systemd %d does not know it", section, k, since, release)
			case since > release && known:
				t.Errorf("[%s] %s: the table dates it systemd %d, and systemd %d knows it already", section, k, since, release)
			}
		}
	}
	t.Logf("systemd %d agrees with the table on %d keys (%d unknown to it)", release, checked, len(unknown)-1)
}
