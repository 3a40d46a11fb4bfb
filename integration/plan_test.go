//go:build integration

package integration

// Issue 25's acceptance on real test hosts: a plan saved with
// `syslet --diff --out FILE` is applied with `syslet --plan FILE` exactly
// (the run journal's actions are the file's), and refused — changing
// nothing — when anything it was derived from changed in between. Every
// claim is checked on the guest: its files, systemd's InvocationIDs,
// podman's stores and the run journal.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/app/planfile"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
)

const (
	planBase    = "/root/base"    // what the host runs
	planChanged = "/root/changed" // the change under review
	planFile    = "/root/web.plan"
)

// planHost is a host running a network, web (an image of its own, a
// private config file, a podman secret) and api, with the reviewed change
// ready beside it: web's image v1 → v2, its config file's content and its
// secret's value changed; api untouched.
type planHost struct {
	*testhost.Host
	t     *testing.T
	units []string
}

// planConf is web's private config file; planToken its secret's value.
// Neither may reach a saved plan.
const (
	planConf  = "password=conf-9b1f33ab\n"
	planToken = "tok-e7c0a5d2"
)

func newPlanHost(t *testing.T) *planHost {
	t.Helper()
	h := &planHost{Host: startWithSyslet(t), t: t, units: []string{"web.service", "api.service", "shared-network.service"}}
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p "+planBase+" "+planChanged)
	for _, v := range []string{"v1", "v2"} {
		if _, err := h.MakeImage("web:"+v, "web-"+v); err != nil {
			t.Fatal(err)
		}
	}
	s := &secretsRun{t: t, h: h.Host}
	recipient := s.recipient()
	web := func(tag, conf string) []byte {
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "web",
			"configFiles": []map[string]string{{"mountPath": "/etc/web.conf", "content": conf, "mode": "0600"}},
			"unit": map[string]any{"Container": map[string]any{"Image": "localhost:5000/web:" + tag, "RunInit": "true", "Exec": "sleep 2147483647",
				"Network": "shared.network", "Secret": map[string]string{"app-token": "type=env,target=TOKEN"}}}})
		return b
	}
	write := func(dir string, files map[string][]byte) {
		for name, data := range files {
			must(t, h.WriteFile(dir+"/"+name, append(data, '\n'), 0o644))
		}
	}
	common := map[string][]byte{"10-net.json": []byte(strings.TrimSpace(sharedNetwork)), "30-api.json": []byte(strings.TrimSpace(sleeper("api")))}
	write(planBase, common)
	write(planBase, map[string][]byte{
		"20-web.json":    web("v1", "password=old\n"),
		"05-secret.json": secretSpec(t, "app", sopsEncryptFor(t, "token: tok-old\n", recipient)),
	})
	write(planChanged, common)
	write(planChanged, map[string][]byte{
		"20-web.json":    web("v2", planConf),
		"05-secret.json": secretSpec(t, "app", sopsEncryptFor(t, "token: "+planToken+"\n", recipient)),
	})
	if r := syslet(h.Host, planBase); !r.OK() {
		t.Fatalf("applying the base specs:\n%s", r)
	}
	return h
}

// state is what an apply could change and a refused one must leave: the
// fingerprint of /etc/containers, every unit's InvocationID, podman's
// secrets (IDs and update times) and images, and the journal's size in
// runs, minus the one line a refusal adds.
func (h *planHost) state() string {
	h.t.Helper()
	var b strings.Builder
	b.WriteString(snapshot(h.t, h.Host))
	for _, u := range h.units {
		fmt.Fprintf(&b, "%s %s %s\n", u, prop(h.t, h.Host, u, "InvocationID"), prop(h.t, h.Host, u, "ActiveState"))
	}
	b.WriteString(h.MustRun(h.t, "curl -fsS --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/secrets/json | jq -c 'map({ID, Name: .Spec.Name, UpdatedAt, Labels: .Spec.Labels}) | sort_by(.Name)'; "+
		"podman images --noheading --format '{{.Repository}}:{{.Tag}} {{.ID}}' | sort"))
	return b.String()
}

// save makes the reviewed plan, checks the file, and returns it read back.
func (h *planHost) save() *planfile.File {
	h.t.Helper()
	r := syslet(h.Host, "--diff", "--out", planFile, planChanged)
	if !r.OK() || !strings.Contains(r.Stdout, "Saved the plan to "+planFile+" (0600)") {
		h.t.Fatalf("syslet --diff --out:\n%s", r)
	}
	if mode := strings.TrimSpace(h.MustRun(h.t, "stat -c %a "+planFile)); mode != "600" {
		h.t.Errorf("%s has mode %s, want 600", planFile, mode)
	}
	data, err := h.ReadFile(planFile)
	must(h.t, err)
	for _, v := range []string{planConf, "conf-9b1f33ab", planToken} {
		if bytes.Contains(data, []byte(v)) {
			h.t.Errorf("the saved plan holds %q", v)
		}
	}
	s, _, err := planfile.Read(bytes.NewReader(data))
	if err != nil {
		h.t.Fatalf("the saved plan does not read back: %v", err)
	}
	return s
}

// journalRuns reads the guest's run journal.
func (h *planHost) journalRuns() []*runlog.RunInfo {
	h.t.Helper()
	data, err := h.ReadFile(layout.Journal)
	must(h.t, err)
	byID := map[string]*runlog.RunInfo{}
	var runs []*runlog.RunInfo
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var rec runlog.Record
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch rec.Type {
		case runlog.TypeIntent:
			ri := &runlog.RunInfo{Intent: rec}
			byID[rec.Run] = ri
			runs = append(runs, ri)
		case runlog.TypeAction:
			byID[rec.Run].Actions = append(byID[rec.Run].Actions, rec)
		case runlog.TypeEnd:
			r := rec
			byID[rec.Run].End = &r
		}
	}
	return runs
}

// TestSavedPlanAppliedExactly: saved, an apply that changes nothing in
// between, then applied — the run journal's
// intent holds exactly the file's actions in the file's order, each of
// them landed, and the host shows the change (web runs v2 with its new
// secret value and config file; api was not restarted).
func TestSavedPlanAppliedExactly(t *testing.T) {
	t.Parallel()
	h := newPlanHost(t)
	apiBefore := prop(t, h.Host, "api.service", "InvocationID")
	s := h.save()
	if len(s.Plan.Actions) == 0 {
		t.Fatal("the reviewed change planned no actions")
	}
	t.Logf("saved plan: %d actions, digest %.12s, state: %d files, %d units, %d secrets, %d images, last run %s",
		len(s.Plan.Actions), s.PlanDigest, len(s.State.Files), len(s.State.Units), len(s.State.Secrets), len(s.State.Images), s.State.LastRun)

	show := syslet(h.Host, "show", planFile)
	if !show.OK() || !strings.Contains(show.Stdout, "Saved plan "+planFile+": made ") || !strings.Contains(show.Stdout, s.Summary) {
		t.Errorf("syslet show:\n%s", show)
	}
	// An apply in between that changes nothing (the host runs what its
	// specs say; the journal records "no-changes") leaves the plan holding.
	if r := syslet(h.Host, planBase); !r.OK() || !strings.Contains(r.Stdout, "No changes") {
		t.Fatalf("the converged apply between:\n%s", r)
	}
	if runs := h.journalRuns(); runs[len(runs)-1].Result() != runlog.ResultNoChanges {
		t.Fatalf("the converged apply is journalled as %s", runs[len(runs)-1].Result())
	}
	if r := syslet(h.Host, "--diff", "--plan", planFile, planChanged); !r.OK() || !strings.Contains(r.Stdout, "still holds") {
		t.Errorf("syslet --diff --plan:\n%s", r)
	}

	r := syslet(h.Host, "--plan", planFile, planChanged)
	if !r.OK() {
		t.Fatalf("syslet --plan:\n%s", r)
	}
	runs := h.journalRuns()
	last := runs[len(runs)-1]
	var want []runlog.Action
	for i, a := range s.Plan.Actions {
		want = append(want, runlog.Action{Index: i, Step: int(a.Step), Op: string(a.Op), Target: a.Target, Unit: a.Unit, Digest: a.Data().Digest, Carried: a.Carried})
	}
	if !slices.Equal(last.Intent.Actions, want) || last.Intent.PlanDigest != s.PlanDigest || last.Intent.InputDigest != s.InputDigest {
		t.Errorf("journal intent (digest %.12s):\n%v\nwant the saved plan's (digest %.12s):\n%v", last.Intent.PlanDigest, last.Intent.Actions, s.PlanDigest, want)
	}
	var landed []int
	for _, a := range last.Actions {
		if a.Result != runlog.ResultOK {
			t.Errorf("journal: action %d %s %s: %s %s", *a.Index, a.Op, a.Target, a.Result, a.Error)
		}
		landed = append(landed, *a.Index)
	}
	if last.Result() != runlog.ResultOK || len(landed) != len(want) || !slices.IsSorted(landed) {
		t.Errorf("journal: result %s, actions landed %v; want all %d, in order", last.Result(), landed, len(want))
	}
	t.Logf("journal run %s: %d actions landed, as the file lists them: %v", last.ID(), len(landed), want)

	if img := h.MustRun(t, "podman inspect -f '{{.ImageName}}' web"); strings.TrimSpace(img) != "localhost:5000/web:v2" {
		t.Errorf("web runs %q, want localhost:5000/web:v2", img)
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman exec web sh -c 'echo $TOKEN; cat /etc/web.conf'")); got != planToken+"\n"+strings.TrimSpace(planConf) {
		t.Errorf("web sees %q", got)
	}
	if now := prop(t, h.Host, "api.service", "InvocationID"); now != apiBefore {
		t.Errorf("api.service was restarted (%s → %s); it is not in the plan", apiBefore, now)
	}
	// Applied, the plan is spent.
	if r := syslet(h.Host, "--plan", planFile, planChanged); r.Code != 1 || !strings.Contains(r.Stderr, "another run since the plan was made") {
		t.Errorf("the saved plan applied a second time:\n%s", r)
	}
}

// TestSavedPlanRefusedWhenStale: between saving and applying, each of a
// hand edit, a stopped container, a replaced secret, a removed image,
// another apply that changed the host and another input refuses the plan
// with exit 1, naming the change, and the host is as it was (its files,
// InvocationIDs, podman's stores). An edited plan file is refused too.
func TestSavedPlanRefusedWhenStale(t *testing.T) {
	t.Parallel()
	h := newPlanHost(t)
	for _, c := range []struct {
		name    string
		setup   string // before the plan is saved
		change  string // between saving and applying
		specs   string // the input of the apply (default: the reviewed change)
		restore string // after the refusal: back to the base host
		want    []string
	}{
		{name: "image removed", setup: "podman pull -q localhost:5000/web:v2", change: "podman rmi localhost:5000/web:v2",
			want: []string{"image localhost:5000/web:v2: removed from podman's image store"}},
		{name: "podman secret replaced", change: `label=$(curl -fsS --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/secrets/app-token/json | jq -r '.Spec.Labels["syslet/hash"]') && printf x | podman secret create --replace --label syslet/hash=$label app-token -`,
			want: []string{"podman secret app-token: replaced (ID "}},
		{name: "managed unit edited by hand", change: "cp -p /etc/containers/systemd/api.container /root/api.container.orig && echo '# edited by hand' >> /etc/containers/systemd/api.container",
			restore: "cp -p /root/api.container.orig /etc/containers/systemd/api.container && syslet " + planBase,
			want:    []string{"file /etc/containers/systemd/api.container: content changed ("}},
		{name: "container stopped", change: "systemctl stop api.service", restore: "syslet " + planBase,
			// A stopped quadlet container ends failed (exit 143), or inactive.
			want: []string{"unit api.service: active/running → "}},
		// Someone applied the change without the plan. (An apply that
		// changes nothing leaves a plan holding: TestSavedPlanAppliedExactly.)
		{name: "another apply ran", change: "syslet " + planChanged, restore: "syslet " + planBase,
			want: []string{"another run since the plan was made: the journal's last run is ", " (ok), it was "}},
		{name: "input changed", change: "cp -a " + planChanged + " /root/other && sed -i 's/sleep 100000/sleep 100001/' /root/other/30-api.json", specs: "/root/other",
			want: []string{"the input: its digest is "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			if c.setup != "" {
				h.MustRun(t, c.setup)
			}
			h.save()
			h.MustRun(t, c.change)
			specs := planChanged
			if c.specs != "" {
				specs = c.specs
			}
			before := h.state()
			r := syslet(h.Host, "--plan", planFile, specs)
			after := h.state()
			if r.Code != 1 || !strings.HasPrefix(r.Stderr, "Saved plan is stale: "+planFile) {
				t.Errorf("syslet --plan of a stale plan: exit %d; want 1 with the refusal:\n%s", r.Code, r)
			}
			for _, w := range c.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("the refusal does not name %q:\n%s", w, r.Stderr)
				}
			}
			if strings.Contains(r.Stdout, "Applying") {
				t.Errorf("a stale plan was applied:\n%s", r)
			}
			if before != after {
				t.Errorf("the host changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			t.Logf("refused (exit %d), host unchanged (/etc/containers %s, %s InvocationIDs equal):\n%s", r.Code, strings.Fields(before)[0][:12], strings.Join(h.units, ", "), r.Stderr)
			runs := h.journalRuns()
			if last := runs[len(runs)-1]; last.Result() != runlog.ResultRefused || !strings.HasPrefix(last.End.Error, "saved plan is stale: ") {
				t.Errorf("journal: the last run is %s %q; want the refusal", last.Result(), last.End.Error)
			}
			if c.restore != "" {
				h.MustRun(t, c.restore)
			}
		})
	}

	t.Run("plan file edited", func(t *testing.T) {
		h.t = t
		h.save()
		h.MustRun(t, `jq '.plan.actions += [{"step": 9, "op": "start", "target": "evil.service"}]' `+planFile+` > /root/edited.plan`)
		before := h.state()
		r := syslet(h.Host, "--plan", "/root/edited.plan", planChanged)
		if r.Code != 1 || !strings.Contains(r.Stderr, "not a valid saved plan: its actions do not match its plan digest") {
			t.Errorf("an edited plan file: exit %d:\n%s", r.Code, r)
		}
		if after := h.state(); before != after {
			t.Errorf("the host changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
		t.Logf("refused: %s", r.Stderr)
		// The file as saved still holds: nothing was recorded or changed.
		if r := syslet(h.Host, "--diff", "--plan", planFile, planChanged); !r.OK() {
			t.Errorf("the unedited plan no longer holds:\n%s", r)
		}
	})
}

// TestPushSavedPlans: `syslet push --diff --out DIR` saves one plan per
// host; one host changes before `syslet push --plan DIR`, which then
// applies the other host's plan and refuses the changed one's there only,
// and the table says which.
func TestPushSavedPlans(t *testing.T) {
	t.Parallel()
	web1, web2 := pushHost(t), pushHost(t)
	e := newPushEnv(t)
	e.addHost("web1", web1.Port())
	e.addHost("web2", web2.Port())
	e.trust(web1, hostKey(t, web1))
	e.trust(web2, hostKey(t, web2))
	e.writeSpecs("hosts/common", map[string]string{"net.json": sharedNetwork})
	e.writeSpecs("hosts/web1", map[string]string{"app.json": sleeper("app1")})
	e.writeSpecs("hosts/web2", map[string]string{"app.json": sleeper("app2")})
	if r := e.push("--hosts-dir", "hosts", "web1", "web2"); r.code != 0 {
		t.Fatalf("first push:\n%s", r)
	}

	// CI's key is held to `syslet ssh-command` on both hosts: the saved-plan
	// forms push uses pass it.
	ciKey, ciSigner := e.newKey("ci")
	for _, h := range []*testhost.Host{web1, web2} {
		h.MustRun(t, "cat >> /root/.ssh/authorized_keys <<'EOF'\ncommand=\"/usr/local/bin/syslet ssh-command\",restrict "+string(ssh.MarshalAuthorizedKey(ciSigner.PublicKey()))+"EOF")
	}

	// The change under review: a container more on every host.
	e.writeSpecs("hosts/common", map[string]string{"extra.json": sleeper("extra")})
	r := e.push("-i", ciKey, "--hosts-dir", "hosts", "--diff", "--out", "plans", "web1", "web2")
	if r.code != 0 {
		t.Fatalf("push --diff --out:\n%s", r)
	}
	mustContain(t, "push --diff --out table", tableRow(t, r.stdout, "web1"), "web1 planned 1 to create")
	mustContain(t, "push --diff --out table", tableRow(t, r.stdout, "web2"), "web2 planned 1 to create")
	mustContain(t, "push --diff --out", r.stdout, "Saved 2 plan(s): plans/web1.plan, plans/web2.plan")
	mustContain(t, "push --diff --out", r.stderr, "web1 | Plan: ", "syslet --diff --stdin --out - on 2 host(s)")
	for _, h := range []string{"web1", "web2"} {
		p := e.dir + "/plans/" + h + ".plan"
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v", p, fi.Mode().Perm())
		}
		s, _, err := planfile.Read(bytes.NewReader(data))
		if err != nil || !strings.Contains(s.Summary, "1 to create") {
			t.Fatalf("%s: %v %+v", p, err, s)
		}
	}
	if web1.Run("test -e /etc/containers/systemd/extra.container").OK() || web2.Run("test -e /etc/containers/systemd/extra.container").OK() {
		t.Fatal("push --diff --out changed a host")
	}

	// web2 changes in between: its container is stopped by hand.
	web2.MustRun(t, "systemctl stop app2.service")
	before := snapshot(t, web2) + prop(t, web2, "app2.service", "InvocationID") + prop(t, web2, "shared-network.service", "InvocationID")
	r = e.push("-i", ciKey, "--hosts-dir", "hosts", "--plan", "plans", "web1", "web2")
	if r.code != 1 {
		t.Fatalf("push --plan with a stale host: exit %d; want 1:\n%s", r.code, r)
	}
	mustContain(t, "web1 row", tableRow(t, r.stdout, "web1"), "web1 applied 1 to create", "applied, 0 failed, 0 not reached")
	mustContain(t, "web2 row", tableRow(t, r.stdout, "web2"), "web2 stale -")
	mustContain(t, "push --plan", r.stdout, "web2: stale: \"syslet --plan - --stdin\" exited 1 (the host refused its saved plan", "2 host(s): 1 applied, 1 stale (refused their saved plan; nothing changed there)")
	mustContain(t, "push --plan", r.stderr, "web2 | Saved plan is stale: ", "web2 |   - unit app2.service: active/running → ", "syslet --plan - --stdin on 2 host(s)")
	if got := strings.TrimSpace(web1.MustRun(t, "systemctl is-active extra.service app1.service")); got != "active\nactive" {
		t.Errorf("web1 after its plan: extra, app1 = %q; want active, active", got)
	}
	after := snapshot(t, web2) + prop(t, web2, "app2.service", "InvocationID") + prop(t, web2, "shared-network.service", "InvocationID")
	if before != after || web2.Run("test -e /etc/containers/systemd/extra.container").OK() {
		t.Errorf("web2 changed although it refused its plan")
	}
	t.Logf("push --plan: web1 applied, web2 refused as stale:\n%s", r.stdout[strings.Index(r.stdout, "\nHOST "):])

	// The forced command runs nothing else near those forms.
	for _, cmd := range []string{"syslet --plan /root/x.plan --stdin", "syslet --diff --stdin --out /etc/passwd", "syslet --plan - /etc"} {
		if res := sshRun(t, web1, ciSigner, cmd); res.code == 0 || !strings.Contains(res.stderr, "is not an allowed command") {
			t.Errorf("CI key, %q: exit %d, stderr %q; want refused", cmd, res.code, res.stderr)
		}
	}
}
