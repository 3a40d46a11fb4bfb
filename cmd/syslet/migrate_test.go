package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// earlierDir is a host as the earlier syslet left it (root/) and the specs
// it was deployed from (specs/); see its README.md.
const earlierDir = "testdata/earlier"

// TestMigrateEarlierHost is the migration acceptance: planning the specs
// an earlier-syslet host was deployed from recreates nothing, deletes
// nothing, and restarts only the containers whose config mounts move
// (legacy-web; legacy-proxy, whose config dir the earlier tool named and
// mounted with its trailing slash). What the earlier tool overwrote
// (Restart=, WantedBy=, a oneshot's Type=) or ignored (a Network map
// value) is already on the host as syslet renders it: a warning in the
// findings, no restart. A RemovalAllowed=false that the spec's default
// would drop is a warning on that unit.
func TestMigrateEarlierHost(t *testing.T) {
	root := earlierRoot(t)
	before := snapshot(t, root)
	code, stdout, stderr := runCLI(t, "--diff", "--root", root, "--output", "json", filepath.Join(earlierDir, "specs"))
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
		t.Fatalf("--diff changed the root:\n%s", strings.Join(d, "\n"))
	}
	var doc struct {
		Findings []struct{ Path, Rule, Severity string } `json:"findings"`
		Plan     planJSON                                `json:"plan"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, stdout)
	}
	p := doc.Plan
	if len(p.Units) == 0 {
		t.Fatalf("no units in the plan:\n%s", stdout)
	}
	if len(p.Refusals) > 0 {
		t.Errorf("refusals: %v", p.Refusals)
	}
	moves := map[string]string{ // container → the mount whose move restarts it
		"legacy-web":   "config file mount /etc/web/web.conf moves from /etc/containers/config/legacy-web/web.conf-84fc26ea to ",
		"legacy-proxy": "config dir mount /etc/nginx/conf.d moves from /etc/containers/config/legacy-proxy/conf.d-9687b148 to /etc/containers/config/legacy-proxy/etc/nginx/conf.d",
	}
	for _, a := range p.Actions {
		switch a.Op {
		case "delete-volume", "delete-network", "delete-image", "remove-unit":
			t.Errorf("planned %s %s", a.Op, a.Target)
		case "stop", "start", "reload":
			if moves[strings.TrimSuffix(a.Target, ".service")] == "" {
				t.Errorf("planned %s %s: only legacy-web's and legacy-proxy's mounts move", a.Op, a.Target)
			}
		}
	}
	effects := map[string]string{}
	for _, u := range p.Units {
		effects[u.FileName] = u.Effect
		switch u.Effect {
		case "no-op", "metadata-only":
		case "restart":
			move := moves[strings.TrimSuffix(u.FileName, ".container")]
			if move == "" {
				t.Errorf("%s restarts: %q", u.FileName, u.Reasons)
			}
			if !slices.ContainsFunc(u.Reasons, func(r string) bool { return strings.HasPrefix(r, move) }) {
				t.Errorf("%s: restart reasons %q do not say %q", u.FileName, u.Reasons, move)
			}
		default:
			t.Errorf("%s: %s %q", u.FileName, u.Effect, u.Reasons)
		}
	}
	if effects["legacy-web.container"] != "restart" || effects["legacy-proxy.container"] != "restart" || len(effects) != 10 {
		t.Errorf("effects %v", effects)
	}
	// Each lenient form the stack uses is a warning at its JSON path.
	var got []string
	for _, f := range doc.Findings {
		if f.Severity != "warning" {
			t.Errorf("finding %+v is not a warning", f)
		}
		got = append(got, f.Rule+" "+f.Path)
	}
	want := []string{
		"mount-path [6].configDirs[0].mountPath",
		`map-value-ignored [7].unit.Container.Network["legacy-net.network"]`,
		"forced-key [7].unit.Service.Restart",
		"forced-key [7].unit.Install.WantedBy",
		"invalid-value [8].desiredState",
		"forced-key [8].unit.Service.Type",
		"required [9].unit",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(p.Warnings) != 1 || p.Warnings[0].Rule != "removal-allowed-default" || p.Warnings[0].Path != "[9]" ||
		!strings.HasPrefix(p.Warnings[0].Message, "legacy-scratch.volume: ") || effects["legacy-scratch.volume"] != "metadata-only" {
		t.Errorf("plan warnings %+v (legacy-scratch.volume: %s)", p.Warnings, effects["legacy-scratch.volume"])
	}
	// The text plan says it too, under the unit's name.
	_, text, _ := runCLI(t, "--diff", "--root", root, filepath.Join(earlierDir, "specs"))
	if !strings.Contains(text, "Warnings:\n  ! "+filepath.Join(earlierDir, "specs", "stack.json")+": [9]: warning: legacy-scratch.volume: the installed unit says RemovalAllowed=false") {
		t.Errorf("the text plan does not warn about legacy-scratch.volume:\n%s", text)
	}
	// The fixture is what the earlier syslet wrote: every line sorted.
	data, err := os.ReadFile(filepath.Join(root, "etc/containers/systemd/legacy-db.container"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "[Container]\nContainerName=legacy-db\n") {
		t.Errorf("fixture is not in the earlier syslet's sorted form:\n%s", data)
	}
}

// TestMigratedHostConverges: once a host holds what syslet renders for the
// earlier stack, the plan is empty and says so in the earlier syslet's
// words, which scripts around it look for (its CUE tutorial's apply
// command skips its confirmation on "No changes detected.").
func TestMigratedHostConverges(t *testing.T) {
	root := t.TempDir()
	specs := filepath.Join(earlierDir, "specs")
	if code, _, stderr := runCLI(t, "render", specs, "--out", root); code != exitOK {
		t.Fatalf("render: exit %d\n%s", code, stderr)
	}
	code, out, stderr := runCLI(t, "--diff", "--detailed-exitcode", "--root", root, specs)
	if code != exitOK || !strings.Contains(out, "\nNo changes detected. The host matches the specs.\n") {
		t.Errorf("exit %d\n%s%s", code, out, stderr)
	}
}

// TestValidateForNewerPodman: the earlier syslet required podman 6, so
// its users' builds use BuildArg= (podman 5.7). Plain validate checks
// against 5.4 and says to pass --podman; with it, the spec is valid.
func TestValidateForNewerPodman(t *testing.T) {
	f := filepath.Join(earlierDir, "podman6", "build-arg.json")
	code, out, _ := runCLI(t, "validate", f)
	if code != exitInvalid || !strings.Contains(out, "[0].unit.Build.BuildArg[0]: [Build] BuildArg needs podman 5.7 or later; these specs are checked against podman 5.4: if the host runs podman 5.7 or later, say so with --podman (syslet validate --podman 5.7)") {
		t.Errorf("validate: exit %d\n%s", code, out)
	}
	for _, v := range []string{"5.7", "6.0"} {
		if code, out, errOut := runCLI(t, "validate", "--podman", v, f); code != exitOK {
			t.Errorf("validate --podman %s: exit %d\n%s%s", v, code, out, errOut)
		}
	}
}

// TestValidateEarlierDocs: every spec form the earlier syslet's
// documentation shows validates (warnings allowed, never an error), and
// renders with the meaning it had there; --strict refuses what warns.
func TestValidateEarlierDocs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(earlierDir, "docs", "*.json"))
	if err != nil || len(files) < 6 {
		t.Fatalf("docs specs: %v %v", files, err)
	}
	for _, f := range files {
		code, out, stderr := runCLI(t, "validate", f)
		if code != exitOK || stderr != "" || !strings.HasSuffix(out, "are valid\n") {
			t.Errorf("%s: exit %d\n%s%s", f, code, out, stderr)
		}
		warns := strings.Count(out, "warning: ")
		scode, _, _ := runCLI(t, "validate", "--strict", f)
		if (warns > 0) != (scode == exitInvalid) {
			t.Errorf("%s: %d warning(s), but --strict exits %d", f, warns, scode)
		}
	}
	for doc, files := range map[string]map[string][]string{
		"02-cue-export.json": {
			"worker.container": {"ContainerName=worker\n", "Environment=\"OPTS=--fast --quiet\"\n", "Environment=MODE=batch\n"},
			"cache.volume":     {"VolumeName=cache\n"},
			"backend.network":  {"NetworkName=backend\n"},
		},
		// What the earlier syslet overwrote, ignored or cleaned.
		"06-lenient-forms.json": {
			"nginx.container": {"[Service]\nExecReload=/usr/bin/podman exec nginx nginx -s reload\nRestart=always\n\n",
				"[Install]\nWantedBy=multi-user.target default.target\n\n", "Network=frontend.network\n",
				"Volume=/etc/containers/config/nginx/etc/nginx/conf.d:/etc/nginx/conf.d:ro,Z\n"},
			"backup.container": {"[Service]\nType=oneshot\n\n"},
			"frontend.network": {"[Network]\nNetworkName=frontend\n"},
			"html.volume":      {"[Volume]\nVolumeName=html\n", "ReclaimPolicy=Retain\n"},
		},
	} {
		out := t.TempDir()
		if code, _, stderr := runCLI(t, "render", filepath.Join(earlierDir, "docs", doc), "--out", out); code != exitOK {
			t.Fatalf("render %s: exit %d\n%s", doc, code, stderr)
		}
		for file, want := range files {
			data, err := os.ReadFile(filepath.Join(out, "etc/containers/systemd", file))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range want {
				if !strings.Contains(string(data), w) {
					t.Errorf("%s lacks %q:\n%s", file, w, data)
				}
			}
		}
	}
}

// planJSON is the part of `--diff --output json` these tests read.
type planJSON struct {
	Warnings []struct {
		Path    string `json:"path"`
		Rule    string `json:"rule"`
		Message string `json:"message"`
	} `json:"warnings"`
	Units []struct {
		FileName string   `json:"fileName"`
		Effect   string   `json:"effect"`
		Reasons  []string `json:"reasons"`
	} `json:"units"`
	Actions []struct {
		Op     string `json:"op"`
		Target string `json:"target"`
	} `json:"actions"`
	Refusals []any `json:"refusals"`
}

// earlierRoot copies the fixture host into a scratch directory with the
// modes the earlier syslet wrote (0644 files, 0755 directories; git does
// not keep modes, and a checkout under umask 002 would make every file look
// changed).
func earlierRoot(t *testing.T) string {
	t.Helper()
	src, dst := filepath.Join(earlierDir, "root"), t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
