package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// A rollback applies the last good generation again through the same
// pipeline as any run — plan, journal, staging, the nine steps, the health
// gate — with each container pinned to the image it ran then, so the host
// returns to exactly what served even if a tag has moved since. It never
// deletes data: no volume is deleted or recreated, no image deleted. The
// volumes the failed run deleted or recreated are filled again from the
// backups it took of them before (restores.go), once the rollback's
// changes have landed and before its health gate; what has no backup is
// said to be lost.

// rollbackResult is what the rollback after a failed gate came to: its
// report, the run's summary line, and the run's verdict.
type rollbackResult struct {
	report  *view.RollbackReport
	summary string
	verdict verdict.Verdict
}

// outcome puts the rollback into the failed run's Outcome: the Outcome
// stays the failed run's (its plan, result and gate); the rollback's go
// into its report.
func (rb rollbackResult) outcome(out *view.Outcome) *view.Outcome {
	out.Rollback = rb.report
	if rb.summary != "" {
		out.Summary = rb.summary
	}
	return out
}

// afterFailedGate decides what a failed health gate leads to: a rollback
// to the newest kept generation, unless the policy forbids it or there is
// none to return to. failed is the pass that failed its gate; cause is
// the executor's error when starts failed.
func (r *runner) afterFailedGate(ctx context.Context, failed passResult, cause error) (rollbackResult, error) {
	why := failures(failed.gate)
	// The error wraps the executor's, when starts failed, for callers
	// that read why.
	gateErr := func(format string, args ...any) error {
		err := fmt.Errorf("%w: "+format, append([]any{ErrGate}, args...)...)
		if cause != nil {
			return fmt.Errorf("%w (%w)", err, cause)
		}
		return err
	}
	if r.req.Rollback == RollbackNever {
		r.view.NoRollback(view.PolicyNever)
		return rollbackResult{verdict: verdict.GateFailed}, gateErr("%s", why)
	}
	gen, err := r.gens.Latest()
	if err != nil || gen == nil {
		r.view.NoRollback(view.NoGeneration)
		if err != nil {
			r.view.Warning(err.Error())
		}
		return rollbackResult{verdict: verdict.GateFailed}, gateErr("%s (no earlier generation to roll back to)", why)
	}
	rep := &view.RollbackReport{Run: runlog.NewRunID(time.Now()), Generation: gen.Run, Of: failed.runID, Why: why, NotRestored: lostBy(failed.result)}
	restores := backedUpDeletes(failed.result)
	l := load.Bytes("generation "+gen.Run, gen.Input)
	if l.Report.HasErrors() {
		// The generation validated when it was applied; a newer syslet may
		// judge its specs otherwise.
		r.view.Findings(l.Report)
		rep.Error = fmt.Sprintf("the specs of generation %s no longer validate (%d error(s))", gen.Run, l.Report.Errors())
		return rollbackResult{report: rep, verdict: verdict.RollbackFailed}, fmt.Errorf("%w: %s: %s", ErrRollbackFailed, why, rep.Error)
	}
	// The rollback is a run of its own, under the same lock.
	back, err := r.pass(ctx, passInput{kind: gateRollback, set: l, source: "rollback to run " + gen.Run + " after " + failed.runID,
		runID: rep.Run, gen: gen, of: failed.runID, signer: gen.Signer, restore: restores})
	rep.Result, rep.Gate = back.result, back.gate
	rep.Restored = back.restored
	rep.NotRestored = append(rep.NotRestored, back.notRestored...)
	if back.plan != nil {
		rep.Plan = view.PlanSummary(back.plan)
		rep.NotRestored = append(rep.NotRestored, notRestored(back.plan)...)
	}
	r.view.RolledBack(view.Rollback{Failed: failed.runID, Run: rep.Run, Generation: gen.Run, Why: why, Restored: rep.Restored, NotRestored: rep.NotRestored, Err: err, Untouched: rep.Untouched()})
	if err != nil {
		rep.Error = err.Error()
		if !errors.Is(err, ErrRollbackFailed) {
			err = fmt.Errorf("%w: %w", ErrRollbackFailed, err)
		}
		v := verdict.RollbackFailed
		if errors.Is(err, ErrInterrupted) {
			v = verdict.Interrupted
		}
		return rollbackResult{report: rep, summary: "rollback failed: " + why + "; " + rep.Error, verdict: v}, err
	}
	rep.Passed = true
	return rollbackResult{report: rep, summary: "rolled back to run " + gen.Run + ": " + why, verdict: verdict.RolledBack},
		fmt.Errorf("%w to run %s: %s", ErrRolledBack, gen.Run, why)
}

// pickGeneration resolves `syslet rollback [RUN]`: the generation of that
// run, or with "previous" the one before the host's current generation
// (the newest whose input the host last applied).
func pickGeneration(gens *generation.Store, jr *runlog.Journal, which string) (*generation.Generation, error) {
	if which != "previous" {
		return gens.Find(which)
	}
	list, err := gens.List()
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, errors.New("no generation is kept yet: every run that ends well (its containers pass the health gate) records one")
	}
	current := len(list) - 1
	if runs, err := jr.Runs(); err == nil {
		for i := len(runs) - 1; i >= 0; i-- {
			// A restore (syslet restore) applied no input: it says nothing
			// of the generation the host runs.
			if res := runs[i].Result(); runs[i].Intent.InputDigest != "" && (res == runlog.ResultOK || res == runlog.ResultRolledBack || res == runlog.ResultNoChanges) {
				for k := len(list) - 1; k >= 0; k-- {
					if list[k].InputDigest == runs[i].Intent.InputDigest {
						current = k
						break
					}
				}
				break
			}
		}
	}
	if current == 0 {
		return nil, fmt.Errorf("the host runs the oldest kept generation (run %s); there is none before it", list[0].Run)
	}
	return list[current-1], nil
}

// pins are the images a generation's containers ran, by unit file name:
// for each container that runs another image now (a container the failed
// run did not touch runs the same and is left alone: pinning it would
// restart it), and whose image podman still has.
func (r *runner) pins(ctx context.Context, gen *generation.Generation) map[string]render.Pin {
	pins := map[string]render.Pin{}
	digest := load.Bytes("generation", gen.Input).Digest()
	var now map[string]host.Container
	if r.h.live != nil {
		var err error
		if now, err = r.h.live.Podman.Containers(ctx); err != nil {
			r.view.Warning("pinning every container of the generation: " + err.Error())
		}
	}
	for file, im := range gen.Images {
		if im.ID == "" {
			continue
		}
		if c, ok := now[strings.TrimSuffix(file, ".container")]; ok && c.ImageID == im.ID && !r.pinned(file) {
			continue
		}
		if r.h.live != nil {
			if ok, err := r.h.live.Podman.ImageExists(ctx, im.ID); err == nil && !ok {
				r.view.Warning(fmt.Sprintf("image %s that %s ran in run %s is gone; it runs what its Image= names now", im.ID, file, gen.Run))
				continue
			}
		}
		pins[file] = render.Pin{ImageID: im.ID, Run: gen.Run, InputDigest: digest, Digest: im.Digest}
	}
	return pins
}

// keptImages are the images the kept generations ran, by name and ID:
// syslet deletes none of them.
func keptImages(gens []*generation.Generation) map[string]bool {
	out := generation.ImageIDs(gens)
	for _, g := range gens {
		for _, im := range g.Images {
			if im.Name != "" {
				out[im.Name] = true
			}
		}
	}
	return out
}

// containerImages maps each container of the loaded set to the image
// podman says it runs.
func containerImages(l *load.Set, cs map[string]host.Container) map[string]generation.Image {
	out := map[string]generation.Image{}
	for _, u := range l.Out.Units {
		if u.Kind != spec.Container {
			continue
		}
		if c, ok := cs[u.Container]; ok && c.ImageID != "" && !u.Template { // syslet names the container (NAME, NAME-INSTANCE)
			out[u.FileName] = generation.Image{ID: c.ImageID, Name: c.Image}
		}
	}
	return out
}

// imageDigests adds to each image pulled from a registry its manifest
// digest there, read from the image's repository digests (one question to
// podman per image): what a generation says a tag named when it ran. An
// image podman cannot say it of is recorded without one.
func (r *runner) imageDigests(ctx context.Context, images map[string]generation.Image) {
	byID := map[string][]string{}
	for file, im := range images {
		repo := plan.TaggedImage(im.Name)
		if repo == "" {
			continue
		}
		digests, ok := byID[im.ID]
		if !ok {
			var err error
			if digests, err = r.h.live.Podman.ImageDigests(ctx, im.ID); err != nil {
				r.view.Warning(fmt.Sprintf("the generation records no digest of image %s: %s", im.Name, err))
			}
			byID[im.ID] = digests
		}
		im.Digest = repoDigest(repo, digests)
		images[file] = im
	}
}

// repoDigest is the digest among an image's repository digests
// ("name@sha256:…") of ref's repository, "" when it has none.
func repoDigest(ref string, digests []string) string {
	name := ref[:strings.LastIndexByte(ref, ':')] // TaggedImage always ends in a tag
	for _, d := range digests {
		if n, dg, ok := strings.Cut(d, "@"); ok && n == name {
			return dg
		}
	}
	return ""
}

// lostBy names what the failed run deleted for good: what it deleted
// without a backup (a volume with one is restored: backedUpDeletes).
func lostBy(res *executor.Result) []string {
	var out []string
	if res == nil {
		return nil
	}
	backedUp := map[string]bool{}
	for _, b := range backedUpDeletes(res) {
		backedUp[b.Volume] = true
	}
	for _, a := range res.Applied {
		if a.Irreversible && !(a.Op == plan.OpDeleteVolume && backedUp[a.Target]) {
			out = append(out, fmt.Sprintf("%s %s (deleted by the failed run; irreversible)", strings.TrimPrefix(string(a.Op), "delete-"), a.Target))
		}
	}
	return out
}

// backedUpDeletes are the backups the failed run took of the volumes it
// then deleted (to recreate them, or because their specs left): what its
// rollback brings back.
func backedUpDeletes(res *executor.Result) []backup.Entry {
	if res == nil {
		return nil
	}
	deleted := map[string]bool{}
	for _, a := range res.Applied {
		if a.Op == plan.OpDeleteVolume {
			deleted[a.Target] = true
		}
	}
	var out []backup.Entry
	for _, b := range res.Backups {
		if deleted[b.Volume] {
			out = append(out, b)
		}
	}
	return out
}

// notRestored names what a rollback plan keeps as the failed run left it.
func notRestored(p *plan.Plan) []string {
	var out []string
	for _, n := range p.Notes {
		if strings.HasPrefix(n.Message, "not restored") || strings.HasPrefix(n.Message, "not deleted") {
			out = append(out, n.Unit+": "+n.Message)
		}
	}
	return out
}

// failures says in one line which units failed the gate and why.
func failures(g *gate.Report) string {
	var parts []string
	for _, f := range g.Failures {
		if f.Service == "" {
			parts = append(parts, f.Reason) // the gate's own
			continue
		}
		parts = append(parts, f.Service+" "+f.Reason)
	}
	return strings.Join(parts, "; ")
}

// gateHost is the running system as the health gate reads it.
type gateHost struct{ live *Live }

func (g gateHost) Health(ctx context.Context, names []string) (map[string]host.UnitHealth, error) {
	return g.live.Systemd.Health(ctx, names)
}

func (g gateHost) LastLog(ctx context.Context, name string, since time.Time, n int) ([]string, error) {
	return g.live.Systemd.LastLog(ctx, name, since, n)
}

func (g gateHost) ContainerHealth(ctx context.Context, name string) (string, error) {
	return g.live.Podman.ContainerHealth(ctx, name)
}

func (g gateHost) Containers(ctx context.Context) (map[string]host.Container, error) {
	return g.live.Podman.Containers(ctx)
}

// pinned reports whether a container carries a rollback pin now: it is
// then pinned again (to this generation's image), not left with the pin
// of another rollback.
func (r *runner) pinned(file string) bool {
	_, err := os.Lstat(layout.Under(r.req.Root, layout.PinPath(file)))
	return err == nil
}
