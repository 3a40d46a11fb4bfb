package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// versionInfo is what `syslet version` reports: enough to tell exactly
// which build runs on a host.
type versionInfo struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	Go        string `json:"go"`
	PodmanAPI string `json:"podmanAPI"` // the podman bindings (REST API client) syslet is built with
}

// Stamped by a release build (go tool task release, package release) with
// -ldflags -X: Go records no VCS information for a build from a git
// worktree, and a release must not depend on where it was checked out.
// An unstamped build falls back to what Go recorded (go install, go build
// in a plain clone).
var (
	commit     string // the full commit hash
	commitTime string // the commit's time, RFC 3339 UTC
	modified   string // "true" when the tree had uncommitted changes
)

func buildVersion() versionInfo {
	v := versionInfo{Version: version, Go: runtime.Version(), PodmanAPI: "unknown"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/containers/podman/v5" {
			v.PodmanAPI = d.Version
		}
	}
	if commit != "" {
		v.Revision, v.Time, v.Modified = commit, commitTime, modified == "true"
	}
	return v
}

type versionOptions struct{ output string }

func (o *versionOptions) define(f *flags) {
	f.String(&o.output, "output", "text", "print as `FORMAT`: text or json")
}

func cmdVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o versionOptions
	f := commandFlags("version")
	o.define(f)
	output := &o.output
	err := parseNone(f, args)
	if err == nil && *output != "text" && *output != "json" {
		err = fmt.Errorf("%w: --output must be text or json, got %q", errUsage, *output)
	}
	if err != nil {
		return usage(stdout, stderr, "version", err)
	}
	v := buildVersion()
	if *output == "json" {
		return writeJSON(stdout, v)
	}
	rev := v.Revision
	if rev == "" {
		rev = "unknown"
	}
	if v.Modified {
		rev += "+dirty"
	}
	fmt.Fprintf(stdout, "syslet %s (commit %s, built %s) %s, podman bindings %s\n", v.Version, rev, orUnknown(v.Time), v.Go, v.PodmanAPI)
	return exitOK
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
