package release

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/layout"
)

func TestVersion(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 50, 36, 0, time.UTC)
	hash := "c73c345a7a6d0d96dc14677dabc6b87e8fd340cb"
	for _, tc := range []struct {
		exact, last, want, pkg string
	}{
		{"", "", "v0.0.0-20261201125036-c73c345a7a6d", "0.0.0~20261201125036.c73c345a7a6d"},
		{"v1.2.3", "v1.2.3", "v1.2.3", "1.2.3"},
		{"", "v1.2.3", "v1.2.4-0.20261201125036-c73c345a7a6d", "1.2.4~0.20261201125036.c73c345a7a6d"},
		{"", "v1.0.0-rc.1", "v1.0.0-rc.1.0.20261201125036-c73c345a7a6d", "1.0.0~rc.1.0.20261201125036.c73c345a7a6d"},
		{"v1.0.0-rc.1", "v1.0.0-rc.1", "v1.0.0-rc.1", "1.0.0~rc.1"},
	} {
		got := version(tc.exact, tc.last, at, hash)
		if got != tc.want {
			t.Errorf("version(%q, %q) = %q, want %q", tc.exact, tc.last, got, tc.want)
		}
		if pv := (Stamp{Version: got}).PackageVersion(); pv != tc.pkg {
			t.Errorf("PackageVersion(%q) = %q, want %q", got, pv, tc.pkg)
		}
	}
}

func TestFileNames(t *testing.T) {
	st := Stamp{Version: "v1.2.3"}
	for format, want := range map[string]string{"deb": "syslet_1.2.3-1_arm64.deb", "rpm": "syslet-1.2.3-1.aarch64.rpm"} {
		if got := FileName(format, "arm64", st); got != want {
			t.Errorf("FileName(%s) = %s, want %s", format, got, want)
		}
	}
}

// TestPackagedFilesAgree: the unit the package installs runs the packaged
// binary with the config file the package ships, and every file the
// contents name exists in packaging/.
func TestPackagedFilesAgree(t *testing.T) {
	src := filepath.Join("..", "..", Packaging)
	unit, err := os.ReadFile(filepath.Join(src, ServiceName))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ExecStart=" + BinDir + "/webhookd --config " + layout.WebhookdConfig + "\n",
		"ExecStartPre=" + BinDir + "/webhookd --check --config " + layout.WebhookdConfig + "\n",
		"ReadWritePaths=/etc/containers " + layout.ConfigHome + " " + layout.StateHome + "\n",
		"WantedBy=multi-user.target\n",
	} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("%s lacks %q", ServiceName, want)
		}
	}
	bins := map[string]string{}
	for _, p := range Programs {
		bins[p.Name] = "/build/" + p.Name
	}
	man := t.TempDir()
	if err := manPages(src, man); err != nil {
		t.Fatal(err)
	}
	contents, err := Contents(bins, src, man)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range contents {
		if seen[c.Packager+c.Dst] {
			t.Errorf("%s is in the package twice", c.Dst)
		}
		seen[c.Packager+c.Dst] = true
		seen[c.Dst] = true
		if c.Src == "" || strings.HasPrefix(c.Src, "/build/") {
			continue
		}
		if _, err := os.Stat(c.Src); err != nil {
			t.Errorf("%s: %v", c.Dst, err)
		}
	}
	for _, want := range []string{BinDir + "/syslet", BinDir + "/webhookd", UnitDir + "/" + ServiceName, layout.ConfigHome, layout.WebhookdConfig, layout.StateHome,
		ManDir + "/man1/syslet.1.gz", ManDir + "/man1/syslet-validate.1.gz", ManDir + "/man5/syslet-specs.5.gz", ManDir + "/man8/webhookd.8.gz",
		"/usr/share/bash-completion/completions/syslet", "/usr/share/zsh/vendor-completions/_syslet", "/usr/share/fish/vendor_completions.d/syslet.fish",
		MonitoringDir + "/syslet-alerts.yml", MonitoringDir + "/syslet-fleet.json"} {
		if !seen[want] {
			t.Errorf("the package lacks %s", want)
		}
	}
}

// TestNfpmConfig: the configuration nfpm gets names the format's own
// dependency syntax and scripts, and stamps the version.
func TestNfpmConfig(t *testing.T) {
	st := Stamp{Version: "v1.2.3", Commit: strings.Repeat("a", 40), Time: time.Unix(1796129436, 0).UTC()}
	bins := map[string]string{"syslet": "/b/syslet", "webhookd": "/b/webhookd"}
	for _, format := range Formats {
		raw, err := nfpmConfig(filepath.Join("..", ".."), format, "amd64", bins, st, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Version   string
			Overrides map[string]struct {
				Depends []string
				Scripts map[string]string
			}
		}
		if err := json.Unmarshal(raw, &cfg); err != nil {
			t.Fatal(err)
		}
		o := cfg.Overrides[format]
		if cfg.Version != "1.2.3" || strings.Join(o.Depends, ", ") != strings.Join(Depends[format], ", ") || len(o.Scripts) != 3 {
			t.Errorf("%s: %s", format, raw)
		}
		for name, f := range o.Scripts {
			b, err := os.ReadFile(f)
			if err != nil || !strings.HasPrefix(string(b), "#!/bin/sh\n") {
				t.Errorf("%s %s: %v %q", format, name, err, b)
			}
		}
	}
	if _, err := nfpmConfig(filepath.Join("..", ".."), "deb", "amd64", map[string]string{"syslet": "/b/syslet"}, st, t.TempDir()); err == nil {
		t.Error("a missing binary is not refused")
	}
}

// TestPurgeRemovesOnlySysletsOwnFiles: the purge script names only
// syslet's own files (pkg/layout) and webhookd's enablement link, and the
// remove script deletes nothing.
func TestPurgeRemovesOnlySysletsOwnFiles(t *testing.T) {
	own := map[string]bool{layout.StoredSpecs: true, layout.Settings: true, layout.StateHome: true, layout.RunHome: true,
		"/etc/systemd/system/multi-user.target.wants/" + ServiceName: true}
	for _, line := range strings.Split(maintainerScripts["deb"]["postremove"], "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "rm" {
			continue
		}
		for _, p := range f[2:] {
			if !own[p] {
				t.Errorf("purge removes %s, which is not syslet's own", p)
			}
		}
	}
	for format, scripts := range maintainerScripts {
		for name, s := range scripts {
			if name != "postremove" || format != "deb" {
				if strings.Contains(s, "rm ") {
					t.Errorf("%s %s removes files: %s", format, name, s)
				}
			}
		}
	}
}
