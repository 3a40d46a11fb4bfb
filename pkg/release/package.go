package release

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/layout"
)

// Formats are the package formats a release makes, both with nfpm.
var Formats = []string{"deb", "rpm"}

// Where the package puts what is not one of syslet's own files (those are
// pkg/layout's): the places Debian and the systemd ecosystem expect.
const (
	BinDir  = "/usr/bin"
	UnitDir = "/usr/lib/systemd/system"
	DocDir  = "/usr/share/doc/syslet"
	// MonitoringDir holds the Prometheus alert rules and the Grafana
	// dashboard, for an operator to copy or point the fleet's Prometheus
	// and Grafana at.
	MonitoringDir = "/usr/share/syslet/monitoring"
	ServiceName   = "webhookd.service"
	// Packaging is the folder of the files the package ships that are not
	// programs, relative to the module root.
	Packaging = "pkg/release/packaging"
)

// DriftUnits are the drift check for hosts without webhookd: a read-only
// plan on a timer (installed, not enabled).
var DriftUnits = []string{"syslet-drift.service", "syslet-drift.timer"}

// Monitoring are the files of packaging/monitoring the package installs
// into MonitoringDir (their promtool tests stay in the source).
var Monitoring = []string{"syslet-alerts.yml", "syslet-fleet.json"}

// UpdateUnits run syslet update on a timer (installed, not enabled: an
// operator chooses when images may move).
var UpdateUnits = []string{"syslet-update.service", "syslet-update.timer"}

// The package's metadata.
const (
	pkgName     = "syslet"
	maintainer  = "syslet maintainers <maintainers@syslet.invalid>"
	homepage    = "https://github.com/syslet/syslet"
	summary     = "deploy rootful podman quadlet units from JSON specs"
	description = `deploy rootful podman quadlet units from JSON specs
syslet validates JSON specs of containers, volumes, networks, image builds,
secrets and config files, renders them as podman quadlet units, plans them
against what the host runs and applies the plan in one fixed, safe order.
webhookd (webhookd.service) deploys the host from signed git pushes.`
)

// Depends are the package's dependencies, per format.
var Depends = map[string][]string{
	"deb": {"podman (>= 5.4)", "systemd"},
	"rpm": {"podman >= 5.4", "systemd"},
}

// FileName is the file name of the package of format for arch, as the
// format's own tools name it.
func FileName(format, arch string, st Stamp) string {
	if format == "rpm" {
		return fmt.Sprintf("%s-%s-1.%s.rpm", pkgName, st.PackageVersion(), rpmArch(arch))
	}
	return fmt.Sprintf("%s_%s-1_%s.%s", pkgName, st.PackageVersion(), arch, format)
}

func rpmArch(arch string) string {
	switch arch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return arch
}

// content is one entry of the package, as nfpm's configuration spells it.
type content struct {
	Src      string    `json:"src,omitempty"`
	Dst      string    `json:"dst"`
	Type     string    `json:"type,omitempty"`
	Packager string    `json:"packager,omitempty"`
	FileInfo *fileInfo `json:"file_info"`
}

type fileInfo struct {
	Mode os.FileMode `json:"mode"`
}

// Completions are where each shell finds the script for a command, per
// format (Debian's zsh looks in vendor-completions, Fedora's in
// site-functions), and the script's name under packaging/completions.
var Completions = []struct{ Shell, File, Deb, RPM string }{
	{"bash", "syslet", "/usr/share/bash-completion/completions/syslet", "/usr/share/bash-completion/completions/syslet"},
	{"zsh", "_syslet", "/usr/share/zsh/vendor-completions/_syslet", "/usr/share/zsh/site-functions/_syslet"},
	{"fish", "syslet.fish", "/usr/share/fish/vendor_completions.d/syslet.fish", "/usr/share/fish/vendor_completions.d/syslet.fish"},
}

// ManDir is where man pages go; page NAME.N in section N is installed
// gzipped as ManDir/manN/NAME.N.gz.
const ManDir = "/usr/share/man"

// Contents lists what the package installs. bins maps a program's name to
// its built binary; src is the folder the packaging files are read from
// (the module's packaging/); man is the folder of the gzipped man pages
// (manPages writes it).
func Contents(bins map[string]string, src, man string) ([]content, error) {
	file := func(from, to string, mode os.FileMode) content {
		return content{Src: from, Dst: to, FileInfo: &fileInfo{Mode: mode}}
	}
	var cs []content
	for _, p := range Programs {
		cs = append(cs, file(bins[p.Name], BinDir+"/"+p.Name, 0o755))
	}
	cs = append(cs,
		file(filepath.Join(src, ServiceName), UnitDir+"/"+ServiceName, 0o644),
		// The operator's directory: settings, the stored specs, webhookd's
		// config and the secrets it names; root only.
		content{Dst: layout.ConfigHome, Type: "dir", FileInfo: &fileInfo{Mode: 0o700}},
		// An example to edit; an upgrade never overwrites the edited file.
		content{Src: filepath.Join(src, "webhookd.yaml"), Dst: layout.WebhookdConfig, Type: "config|noreplace", FileInfo: &fileInfo{Mode: 0o600}},
		content{Dst: layout.StateHome, Type: "dir", FileInfo: &fileInfo{Mode: 0o700}},
		file(filepath.Join(src, "copyright"), DocDir+"/copyright", 0o644),
	)
	for _, u := range slices.Concat(DriftUnits, UpdateUnits) {
		cs = append(cs, file(filepath.Join(src, u), UnitDir+"/"+u, 0o644))
	}
	for _, m := range Monitoring {
		cs = append(cs, file(filepath.Join(src, "monitoring", m), MonitoringDir+"/"+m, 0o644))
	}
	for _, c := range Completions {
		from := filepath.Join(src, "completions", c.File)
		cs = append(cs, content{Src: from, Dst: c.Deb, Packager: "deb", FileInfo: &fileInfo{Mode: 0o644}},
			content{Src: from, Dst: c.RPM, Packager: "rpm", FileInfo: &fileInfo{Mode: 0o644}})
	}
	pages, err := filepath.Glob(filepath.Join(man, "*.gz"))
	if err != nil {
		return nil, err
	}
	for _, p := range pages {
		name := strings.TrimSuffix(filepath.Base(p), ".gz")
		cs = append(cs, file(p, ManDir+"/man"+name[strings.LastIndex(name, ".")+1:]+"/"+filepath.Base(p), 0o644))
	}
	return cs, nil
}

// manPages gzips every page of packaging/man into dir, as Debian ships man
// pages (gzip -9n: no name, no time stamp, so the same bytes every time).
func manPages(src, dir string) error {
	pages, err := filepath.Glob(filepath.Join(src, "man", "*.[0-9]"))
	if err != nil {
		return err
	}
	if len(pages) == 0 {
		return fmt.Errorf("no man pages in %s", filepath.Join(src, "man"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range pages {
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(raw)
		if err := zw.Close(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(p)+".gz"), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Package builds the package of format for arch from the binaries bins
// (program name → file) into the folder out and returns its path. nfpm
// stamps every file and the archive members with the commit time.
func Package(root, format, arch string, bins map[string]string, st Stamp, out string) (string, error) {
	t0 := time.Now()
	tmp, err := os.MkdirTemp("", "syslet-package-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cfg, err := nfpmConfig(root, format, arch, bins, st, tmp)
	if err != nil {
		return "", err
	}
	cfgFile := filepath.Join(tmp, "nfpm.json")
	if err := os.WriteFile(cfgFile, cfg, 0o644); err != nil {
		return "", err
	}
	target := filepath.Join(out, FileName(format, arch, st))
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "tool", "nfpm", "package", "--config", cfgFile, "--packager", format, "--target", target)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+st.Epoch())
	if err := runLogged(cmd); err != nil {
		return "", fmt.Errorf("packaging %s for %s: %w", format, arch, err)
	}
	logf("packaged %s in %s", target, time.Since(t0).Round(time.Millisecond))
	return target, nil
}

// nfpmConfig is the nfpm configuration (JSON, which nfpm reads as YAML)
// of the package; its maintainer scripts are written into tmp.
func nfpmConfig(root, format, arch string, bins map[string]string, st Stamp, tmp string) ([]byte, error) {
	for _, p := range Programs {
		if bins[p.Name] == "" {
			return nil, fmt.Errorf("packaging: no %s binary", p.Name)
		}
	}
	src := filepath.Join(root, Packaging)
	man := filepath.Join(tmp, "man")
	if err := manPages(src, man); err != nil {
		return nil, err
	}
	contents, err := Contents(bins, src, man)
	if err != nil {
		return nil, err
	}
	scripts := map[string]string{}
	for name, body := range maintainerScripts[format] {
		f := filepath.Join(tmp, format+"-"+name)
		if err := os.WriteFile(f, []byte(body), 0o755); err != nil {
			return nil, err
		}
		scripts[name] = f
	}
	cfg := map[string]any{
		"name":           pkgName,
		"arch":           arch,
		"platform":       "linux",
		"version":        st.PackageVersion(),
		"version_schema": "none",
		"release":        "1",
		"section":        "admin",
		"priority":       "optional",
		"maintainer":     maintainer,
		"description":    description,
		"vendor":         "syslet",
		"homepage":       homepage,
		"license":        License,
		"contents":       contents,
		"overrides": map[string]any{
			format: map[string]any{"depends": Depends[format], "scripts": scripts},
		},
		"deb": map[string]any{"compression": "gzip"},
		"rpm": map[string]any{"summary": summary, "group": "System Environment/Daemons", "buildhost": "syslet-release", "compression": "gzip"},
	}
	return json.MarshalIndent(cfg, "", "  ")
}

// maintainerScripts are the package's scripts per format, keyed by nfpm's
// names. Debian's: dpkg's arguments; the service is not enabled on
// install (webhookd needs its config first), a running one is restarted on
// upgrade, stopped on remove; purge deletes syslet's own files only —
// the deployed units, their config files and builds, the containers,
// volumes, podman secrets and the systemd journal are the host's and stay,
// and so do files an operator put into the config directory. RPM's: the
// argument is the number of installed versions left.
var maintainerScripts = map[string]map[string]string{
	"deb": {
		"postinstall": script(`if [ "$1" = configure ]; then
	# dpkg keeps the mode of a directory that existed before the package.
	chmod 0700 ` + layout.ConfigHome + ` ` + layout.StateHome + `
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload >/dev/null || true
		if [ -n "$2" ]; then
			systemctl try-restart ` + ServiceName + ` >/dev/null || true
		fi
	fi
fi`),
		"preremove": script(`if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
	systemctl stop ` + ServiceName + ` >/dev/null 2>&1 || true
fi`),
		"postremove": script(`if [ "$1" = purge ]; then
	rm -f /etc/systemd/system/multi-user.target.wants/` + ServiceName + `
	rm -f ` + layout.StoredSpecs + ` ` + layout.Settings + `
	rm -rf ` + layout.StateHome + ` ` + layout.RunHome + `
	rmdir ` + layout.ConfigHome + ` 2>/dev/null || true
fi
if [ "$1" = remove ] || [ "$1" = purge ]; then
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload >/dev/null || true
	fi
fi`),
	},
	"rpm": {
		"postinstall": script(`chmod 0700 ` + layout.ConfigHome + ` ` + layout.StateHome + `
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null || true
	if [ "$1" -ge 2 ]; then
		systemctl try-restart ` + ServiceName + ` >/dev/null || true
	fi
fi`),
		"preremove": script(`if [ "$1" -eq 0 ] && [ -d /run/systemd/system ]; then
	systemctl stop ` + ServiceName + ` >/dev/null 2>&1 || true
fi`),
		"postremove": script(`if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null || true
fi`),
	},
}

func script(body string) string {
	return "#!/bin/sh\n# generated by syslet's release package (pkg/release/package.go)\nset -e\n" + strings.TrimSpace(body) + "\n"
}
