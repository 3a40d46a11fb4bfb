package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/app/planfile"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/verdict"
)

// savedHost is a host the stack and a secret were applied to, and the
// change a reviewer is shown: web's image, its private config file and
// the secret's value change, api is untouched.
type savedHost struct {
	*fakeHost
	specs string // the changed specs the plan is made from
	base  string // the specs the host was set up with (applying them changes nothing)
}

// privateConf is the content of web's config file (0600 in the change):
// it must never reach a saved plan.
const privateConf = "password=pl4n-file-secret\n"

func newSavedHost(t *testing.T) *savedHost {
	t.Helper()
	h := newHost(t)
	recipient := hostKey(t, h)
	// The secret's consumer is "shop", beside the stack's web and api.
	withSecret := func(password string) string {
		return stack + strings.Replace(secretStack(t, sopsEncrypt(t, shopDoc(password), recipient)),
			`"name":"web","unit":{"Container":{"Image":"registry.example/web:1"`, `"name":"shop","unit":{"Container":{"Image":"registry.example/shop:1"`, 1)
	}
	base := writeSpecs(t, withSecret(dbPassword))
	h.apply(t, base)
	changed := strings.Replace(withSecret("r0tated-pa55"), "registry.example/web:1", "registry.example/web:2", 1)
	changed = strings.Replace(changed, `"content":"a=1\n"}`, `"content":"password=pl4n-file-secret\n","mode":"0600"}`, 1)
	h.reset()
	return &savedHost{fakeHost: h, specs: writeSpecs(t, changed), base: base}
}

// save runs `syslet --diff --out FILE` and returns the file's path.
func (h *savedHost) save(t *testing.T) (string, ran) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "web1.plan")
	req := h.request(h.specs)
	req.Diff, req.SavePlan, req.Version = true, file, "test"
	r := h.run(t, req)
	if r.err != nil {
		t.Fatalf("--diff --out: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	return file, r
}

// applySaved runs `syslet --plan FILE [--diff] SPECS`.
func (h *savedHost) applySaved(t *testing.T, file, specs string, diff bool) ran {
	t.Helper()
	s, _, err := planfile.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := h.request(specs)
	req.Saved, req.SavedFile, req.Diff, req.Version = s, file, diff, "test"
	return h.run(t, req)
}

// state is everything a refused run must leave as it was: the managed
// trees byte for byte (links by target), the units' states and starts,
// the secret store.
func (h *savedHost) state(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, d := range []string{layout.UnitDir, layout.ConfigRoot, layout.BuildRoot} {
		_ = filepath.WalkDir(layout.Under(h.root, d), func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			fi, _ := os.Lstat(p)
			b.WriteString(p + " " + fi.Mode().String())
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				l, _ := os.Readlink(p)
				b.WriteString(" -> " + l)
			case fi.Mode().IsRegular():
				data, _ := os.ReadFile(p)
				b.Write(data)
			}
			b.WriteString("\n")
			return nil
		})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range []any{h.active, h.secrets, h.starts, h.images, h.loaded} {
		j, _ := json.Marshal(v) // maps encode sorted
		b.Write(j)
	}
	return b.String()
}

// changes are the host calls that change something (staging is not one).
func (h *savedHost) changes() []string {
	return slices.DeleteFunc(h.Calls(), func(c string) bool { return c == "stage" })
}

// A saved plan applied: exactly its actions run, in its order, and the
// journal says so; the file holds no secret value and no content of the
// private config file, and is itself private.
func TestSavedPlanAppliedExactly(t *testing.T) {
	h := newSavedHost(t)
	file, r := h.save(t)
	if len(h.changes()) != 0 {
		t.Fatalf("--diff --out changed the host: %q", h.changes())
	}
	if !r.view.has("SavedWritten " + file) {
		t.Errorf("--diff --out does not say where it saved the plan:\n%s", r.stdout)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved plan: %v %v, want a 0600 file", fi, err)
	}
	raw, _ := os.ReadFile(file)
	noPlaintext(t, "the saved plan", string(raw), dbPassword, "r0tated-pa55", apiToken, "pl4n-file-secret")
	s, _, err := planfile.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.PlanDigest != r.out.Digest || len(s.Plan.Actions) == 0 || s.InputDigest == "" || s.Podman != "5.4" || s.Syslet != "test" {
		t.Fatalf("saved plan: digest %s (run's %s), %d actions, input %q, podman %q, syslet %q", s.PlanDigest, r.out.Digest, len(s.Plan.Actions), s.InputDigest, s.Podman, s.Syslet)
	}
	if s.State.LastRun == nil || s.State.LastRun.Result != runlog.ResultOK || len(s.State.Files) == 0 || len(s.State.Units) == 0 || len(s.State.Secrets) != 2 || len(s.State.Images) == 0 {
		t.Fatalf("saved state: last run %v, %d files, %d units, %d secrets, %d images", s.State.LastRun, len(s.State.Files), len(s.State.Units), len(s.State.Secrets), len(s.State.Images))
	}

	r = h.applySaved(t, file, h.specs, false)
	if r.err != nil {
		t.Fatalf("--plan: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	if !r.view.has("SavedHolds " + file) {
		t.Errorf("--plan does not say the plan holds:\n%s", r.stdout)
	}
	last := h.last(t)
	var want []runlog.Action
	for i, a := range s.Plan.Actions {
		want = append(want, runlog.Action{Index: i, Step: int(a.Step), Op: string(a.Op), Target: a.Target, Unit: a.Unit, Digest: a.Data().Digest, Carried: a.Carried})
	}
	if !slices.Equal(last.Intent.Actions, want) || last.Intent.PlanDigest != s.PlanDigest {
		t.Errorf("journal intent %v (digest %.12s)\nwant the saved actions %v (digest %.12s)", last.Intent.Actions, last.Intent.PlanDigest, want, s.PlanDigest)
	}
	var landed []int
	for _, a := range last.Actions {
		if a.Result == runlog.ResultOK {
			landed = append(landed, *a.Index)
		}
	}
	if last.Result() != runlog.ResultOK || len(landed) != len(want) || !slices.IsSorted(landed) {
		t.Errorf("journal: result %s, landed %v of %d actions in order", last.Result(), landed, len(want))
	}
	for _, c := range []string{"pull registry.example/web:2", "secret shop-db-password", "stop web.service", "start web.service"} {
		if !slices.Contains(h.Calls(), c) {
			t.Errorf("applying the saved plan: calls %q lack %q", h.Calls(), c)
		}
	}
	if slices.Contains(h.Calls(), "stop api.service") {
		t.Errorf("api was not in the plan, yet it was stopped: %q", h.Calls())
	}
	if got := h.file(t, "/etc/containers/config/web/etc/web.conf"); got != privateConf {
		t.Errorf("web.conf = %q", got)
	}

	// Applied, the plan is spent: the journal's last run is its own.
	h.reset()
	r = h.applySaved(t, file, h.specs, false)
	if r.out.Verdict != verdict.Refused || !errors.Is(r.err, ErrStale) || !strings.Contains(r.stderr, "another run since the plan was made") || len(h.Calls()) != 0 {
		t.Errorf("a saved plan applied twice: err %v, calls %q\n%s", r.err, h.Calls(), r.stderr)
	}
}

// Every change since the plan was made refuses it, naming the change, and
// nothing on the host changes; the refusal is journalled as refused.
func TestSavedPlanRefusedWhenStale(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, h *savedHost)        // what happens between plan and apply
		specs  func(t *testing.T, h *savedHost) string // the input of the apply (default: the plan's)
		want   []string
	}{
		{"managed unit edited by hand", func(t *testing.T, h *savedHost) {
			p := layout.Under(h.root, layout.UnitPath("api.container"))
			b, _ := os.ReadFile(p)
			must(t, os.WriteFile(p, append(b, "# by hand\n"...), 0o644))
		}, nil, []string{"file /etc/containers/systemd/api.container: content changed ("}},
		{"managed file's mode changed", func(t *testing.T, h *savedHost) {
			must(t, os.Chmod(layout.Under(h.root, "/etc/containers/config/web/etc/web.conf"), 0o666))
		}, nil, []string{"file /etc/containers/config/web/etc/web.conf: mode -rw-r--r-- → -rw-rw-rw-"}},
		{"container stopped", func(t *testing.T, h *savedHost) {
			h.mu.Lock()
			h.active["api.service"] = false
			h.mu.Unlock()
		}, nil, []string{"unit api.service: active/running → inactive/dead"}},
		{"podman secret replaced", func(t *testing.T, h *savedHost) {
			h.mu.Lock()
			s := h.secrets["shop-api-token"]
			s.ID = "replaced-by-hand"
			h.secrets["shop-api-token"] = s
			h.mu.Unlock()
		}, nil, []string{"podman secret shop-api-token: replaced (ID id-shop-api- → replaced-by-)"}},
		{"podman secret removed", func(t *testing.T, h *savedHost) {
			h.mu.Lock()
			delete(h.secrets, "shop-api-token")
			h.mu.Unlock()
		}, nil, []string{"podman secret shop-api-token: removed"}},
		{"image removed", func(t *testing.T, h *savedHost) {
			h.mu.Lock()
			h.images["registry.example/api:1"] = false
			h.mu.Unlock()
		}, nil, []string{"image registry.example/api:1: removed from podman's image store"}},
		{"another apply ran", func(t *testing.T, h *savedHost) {
			h.apply(t, h.specs)
		}, nil, []string{"another run since the plan was made: the journal's last run is ", " (ok), it was ", "file /etc/containers/systemd/web.container: content changed"}},
		{"input changed", nil, func(t *testing.T, h *savedHost) string {
			b, _ := os.ReadFile(h.specs)
			return writeSpecs(t, strings.Replace(string(b), "registry.example/web:2", "registry.example/web:3", 1))
		}, []string{"the input: its digest is ", ", the plan was made from input ", "give the same specs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newSavedHost(t)
			file, _ := h.save(t)
			if c.change != nil {
				c.change(t, h)
			}
			specs := h.specs
			if c.specs != nil {
				specs = c.specs(t, h)
			}
			before, runsBefore := h.state(t), len(h.runs(t))
			h.reset()
			r := h.applySaved(t, file, specs, false)
			if r.out.Verdict != verdict.Refused || !errors.Is(r.err, ErrStale) {
				t.Fatalf("err = %v, want ErrStale\n%s%s", r.err, r.stdout, r.stderr)
			}
			if calls := h.Calls(); len(calls) != 0 {
				t.Errorf("a stale plan changed the host: %q", calls)
			}
			if after := h.state(t); after != before {
				t.Errorf("the host changed:\nbefore %s\nafter  %s", before, after)
			}
			if !strings.HasPrefix(r.stderr, "Saved plan is stale: "+file+" (made ") {
				t.Errorf("stderr does not begin with the refusal:\n%s", r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) || !slices.ContainsFunc(r.out.Stale, func(s string) bool { return strings.Contains(s, w) }) {
					t.Errorf("the refusal does not name %q:\n%s\nstale: %q", w, r.stderr, r.out.Stale)
				}
			}
			if r.view.has("Applying") || !r.view.has("SavedStale") {
				t.Errorf("a stale plan was applied:\n%s", r.stdout)
			}
			runs := h.runs(t)
			if last := runs[len(runs)-1]; len(runs) != runsBefore+1 || last.Result() != runlog.ResultRefused || !strings.HasPrefix(last.End.Error, "saved plan is stale: ") {
				t.Errorf("journal: %d runs (was %d), last %s %q; want one more, refused as stale", len(runs), runsBefore, last.Result(), last.End.Error)
			}

			// --diff --plan says the same, and records nothing.
			h.reset()
			r = h.applySaved(t, file, specs, true)
			if r.out.Verdict != verdict.Refused || !errors.Is(r.err, ErrStale) || len(h.runs(t)) != runsBefore+1 || len(h.Calls()) != 0 {
				t.Errorf("--diff --plan of a stale plan: err %v, %d runs, calls %q", r.err, len(h.runs(t)), h.Calls())
			}
		})
	}
}

// --diff --plan of a plan that holds says so, changes nothing and records
// nothing; the plan is then still good to apply.
func TestSavedPlanCheck(t *testing.T) {
	h := newSavedHost(t)
	file, _ := h.save(t)
	runs := len(h.runs(t))
	r := h.applySaved(t, file, h.specs, true)
	if r.err != nil || len(h.changes()) != 0 || len(h.runs(t)) != runs {
		t.Fatalf("--diff --plan: err %v, calls %q, %d runs (was %d)", r.err, h.changes(), len(h.runs(t)), runs)
	}
	if !strings.Contains(r.stdout, "still holds: the host and the input are as they were; `syslet --plan` would apply exactly its") || !r.out.Pending() {
		t.Errorf("--diff --plan output:\n%s", r.stdout)
	}
	if r := h.applySaved(t, file, h.specs, false); r.err != nil {
		t.Fatalf("--plan after --diff --plan: %v", r.err)
	}
}

// A saved plan's options are applied with it: a plan made with --force
// overwrites the drifted file it was made to overwrite.
func TestSavedPlanKeepsItsOptions(t *testing.T) {
	h := newSavedHost(t)
	p := layout.Under(h.root, layout.UnitPath("api.container"))
	b, _ := os.ReadFile(p)
	must(t, os.WriteFile(p, bytes.Replace(b, []byte("Image=registry.example/api:1\n"), []byte("Image=registry.example/api:1\nLabel=by=hand\n"), 1), 0o644))
	file := filepath.Join(t.TempDir(), "forced.plan")
	req := h.request(h.specs)
	req.Diff, req.SavePlan, req.Force = true, file, true
	if r := h.run(t, req); r.err != nil {
		t.Fatal(r.err)
	}
	r := h.applySaved(t, file, h.specs, false)
	if r.err != nil {
		t.Fatalf("--plan of a --force plan: %v\n%s", r.err, r.stderr)
	}
	if strings.Contains(h.file(t, layout.UnitPath("api.container")), "by=hand") || !slices.Contains(h.changes(), "stop api.service") {
		t.Error("the forced plan left the hand edit")
	}
}

// No plan is saved while an apply holds the lock: it would be stale the
// moment that apply ends.
func TestNoSaveDuringAnApply(t *testing.T) {
	h := newSavedHost(t)
	lk, err := acquire(context.Background(), nil, h.root, time.Second, Holder{PID: 4242, Source: "elsewhere"}, newSeenView())
	if err != nil {
		t.Fatal(err)
	}
	defer lk.unlock()
	file := filepath.Join(t.TempDir(), "busy.plan")
	req := h.request(h.specs)
	req.Diff, req.SavePlan = true, file
	r := h.run(t, req)
	if r.err == nil || !strings.Contains(r.err.Error(), "an apply is in progress") {
		t.Errorf("err = %v", r.err)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("a plan was saved during an apply")
	}
}

// --out - hands the saved plan to the caller to print on stdout (the
// CLI draws the human plan on stderr then).
func TestSavePlanToStdout(t *testing.T) {
	h := newSavedHost(t)
	req := h.request(h.specs)
	req.Diff, req.SavePlan = true, "-"
	r := h.run(t, req)
	if r.err != nil {
		t.Fatal(r.err)
	}
	s, rest, err := planfile.Read(bytes.NewReader(r.out.SavedDocument))
	if err != nil {
		t.Fatalf("the document for stdout is not a saved plan: %v\n%s", err, r.out.SavedDocument)
	}
	if b, _ := io.ReadAll(rest); strings.TrimSpace(string(b)) != "" || s.PlanDigest != r.out.Digest {
		t.Errorf("stdout holds more than the plan (%q), or another one (%s)", b, s.PlanDigest)
	}
	if !r.view.has("Plan ") || !r.view.has("SavedWritten -") {
		t.Errorf("the plan was not shown, or not said saved: %q", r.view.Calls())
	}
}

// The file format: written and read back whole; reformatting is harmless;
// an edit (an action added, the summary changed, a field added, another
// format) is refused with what is wrong; from stdin, the plan comes first
// and the specs after it.
func TestSavedPlanFormat(t *testing.T) {
	h := newSavedHost(t)
	file, _ := h.save(t)
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	must(t, json.Unmarshal(raw, &doc))
	for _, k := range []string{"format", "syslet", "made", "host", "root", "source", "inputDigest", "podman", "options", "plan", "planDigest", "summary", "state", "digest"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("the saved plan has no %q", k)
		}
	}
	state := doc["state"].(map[string]any)
	for _, k := range []string{"lastRun", "files", "units", "secrets", "images"} {
		if _, ok := state[k]; !ok {
			t.Errorf("the saved state has no %q", k)
		}
	}

	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		must(t, json.Unmarshal(raw, &m))
		f(m)
		b, err := json.Marshal(m)
		must(t, err)
		return b
	}
	for _, c := range []struct {
		name string
		data []byte
		want string // "" reads
	}{
		{"as written", raw, ""},
		{"reformatted", edit(func(map[string]any) {}), ""},
		{"action added", edit(func(m map[string]any) {
			p := m["plan"].(map[string]any)
			p["actions"] = append(p["actions"].([]any), map[string]any{"step": 9, "op": "start", "target": "evil.service"})
		}), "its actions do not match its plan digest"},
		{"action added, plan digest updated", edit(func(m map[string]any) {
			p := m["plan"].(map[string]any)
			p["actions"] = p["actions"].([]any)[1:]
			m["planDigest"] = "0000"
		}), "its actions do not match its plan digest (0000 in the file"},
		{"summary changed", edit(func(m map[string]any) { m["summary"] = "No changes detected." }), "its content does not match its digest"},
		{"fingerprint changed", edit(func(m map[string]any) { m["state"].(map[string]any)["images"] = map[string]any{} }), "its content does not match its digest"},
		{"field added", edit(func(m map[string]any) { m["approvedBy"] = "me" }), `unknown field "approvedBy"`},
		{"other format", edit(func(m map[string]any) { m["format"] = 2 }), "format 2; this syslet reads format 1"},
		{"not JSON", []byte("Plan: 1 to create"), "not a valid saved plan"},
		{"empty", nil, "not a valid saved plan: EOF"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _, err := planfile.Read(bytes.NewReader(c.data))
			if c.want == "" {
				if err != nil || s.PlanDigest == "" {
					t.Fatalf("ReadSaved: %v", err)
				}
				return
			}
			if !errors.Is(err, planfile.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadSaved: %v; want %q", err, c.want)
			}
		})
	}

	// From stdin: the plan, then the specs.
	specs, _ := os.ReadFile(h.specs)
	s, rest, err := planfile.Open("-", io.MultiReader(bytes.NewReader(raw), bytes.NewReader(specs)))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(rest); !bytes.Equal(bytes.TrimSpace(b), bytes.TrimSpace(specs)) {
		t.Errorf("the specs after the plan read back as %q", b)
	}
	req := h.request("-")
	s2, rest, _ := planfile.Open("-", io.MultiReader(bytes.NewReader(raw), bytes.NewReader(specs)))
	req.Saved, req.Stdin = s2, rest
	r := h.run(t, req)
	if r.err != nil || s.PlanDigest != h.last(t).Intent.PlanDigest {
		t.Errorf("--plan - --stdin: %v\n%s", r.err, r.stderr)
	}
}

// must fails the test on an error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// An apply that changed nothing since the plan was made (the host as its
// specs say: the journal records "no changes") leaves the plan holding:
// it applies, exactly its actions.
func TestSavedPlanHoldsAfterARunThatChangedNothing(t *testing.T) {
	h := newSavedHost(t)
	file, _ := h.save(t)
	h.reset()
	if r := h.run(t, h.request(h.base)); r.err != nil || !strings.Contains(r.stdout, "No changes") || len(h.changes()) != 0 {
		t.Fatalf("the converged apply: %v, changes %q\n%s", r.err, h.changes(), r.stdout)
	}
	h.reset()
	r := h.applySaved(t, file, h.specs, false)
	if r.err != nil {
		t.Fatalf("the saved plan after a run that changed nothing: %v\n%s", r.err, r.stderr)
	}
	if !slices.Contains(h.Calls(), "pull registry.example/web:2") || !slices.Contains(h.Calls(), "start web.service") {
		t.Errorf("the saved plan did not run its actions: %q", h.Calls())
	}
	// Applied, it is spent as before.
	h.reset()
	if r := h.applySaved(t, file, h.specs, false); r.out.Verdict != verdict.Refused || !errors.Is(r.err, ErrStale) || len(h.Calls()) != 0 {
		t.Errorf("a saved plan applied twice: err %v, calls %q", r.err, h.Calls())
	}
}
