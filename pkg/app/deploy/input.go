package deploy

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/spec"
)

// passKind is which input a pass applies, and so what the pass does
// besides planning and applying it. Its methods are the only place that
// difference is spelled.
type passKind uint8

const (
	// inputPass applies the run's own input: specs from a path, stdin or
	// the stream stored by the last apply from stdin.
	inputPass passKind = iota
	// handRollback applies a kept generation again, asked for by a person
	// (syslet rollback).
	handRollback
	// gateRollback applies the last good generation again after the
	// run's own input failed the health gate.
	gateRollback
)

// rollback: the pass applies a kept generation, each container pinned to
// the image it ran then.
func (k passKind) rollback() bool { return k != inputPass }

// awaitsCheck: the pass's input is the run's, whose converter check is
// awaited before the host is read; the generation a failed gate returns
// to validated when it was applied.
func (k passKind) awaitsCheck() bool { return k != gateRollback }

// guardsRemovals: a plan that removes most managed units is refused
// unless allowed; a rollback returns to what ran.
func (k passKind) guardsRemovals() bool { return k == inputPass }

// updates: `syslet update` asks the registries about the run's own input
// only; the rollback after a failed gate returns to the images it ran.
func (k passKind) updates() bool { return k == inputPass }

// checksSaved: a saved plan is the run's own input's.
func (k passKind) checksSaved() bool { return k == inputPass }

// asks: the person at the terminal confirms the plan, and the run's
// started event is sent; the rollback after a failed gate is neither
// asked nor announced (the run's own event reports it).
func (k passKind) asks() bool { return k != gateRollback }

// rollsBack: a failed health gate leads to a rollback; a rollback that
// fails its gate is a failed rollback.
func (k passKind) rollsBack() bool { return k == inputPass }

// owns: the run's Outcome is this pass's (its gate, its generation); a
// rollback's is reported apart.
func (k passKind) owns() bool { return k == inputPass }

// name is the pass as the AfterStep test hook hears it.
func (k passKind) name() string {
	if k == gateRollback {
		return PassRollback
	}
	return PassApply
}

// passInput is what one pass applies: the loaded specs, with where they
// come from, and the run it is journalled as.
type passInput struct {
	kind   passKind
	set    *load.Set
	source string // what the journal records as the input's origin
	// signer signed the commit the input came from (nil: not checked).
	signer *commitsig.Signer
	runID  string
	// gen is the generation a rollback applies again; of the run whose
	// failed gate a gateRollback follows.
	gen *generation.Generation
	of  string
	// resume carries forward what an unfinished run left undone (not
	// while another apply holds the lock, nor in a rollback after a gate).
	resume bool
	// stored is set when the specs are the stream the last apply from
	// stdin stored (a plain `syslet`): its file and when it was written.
	stored *view.Stored
	// restore are the backups a gateRollback fills their volumes from
	// again, which the failed run deleted or recreated.
	restore []backup.Entry
}

// storedNotCurrent warns when the stored stream a plain `syslet` applies
// is not what the host's current generation (the last run that ended
// well) applied: that run came from elsewhere (a path, webhookd), and this
// one would undo it.
func storedNotCurrent(in passInput, gens *generation.Store, v view.Operation) {
	if in.stored == nil {
		return
	}
	latest, err := gens.Latest()
	if err != nil || latest == nil || latest.InputDigest == in.set.Digest() {
		return
	}
	v.Warning(fmt.Sprintf("%s is not what the host's current generation applied (run %s from %s, %s): applying it undoes that run; "+
		"to keep it, apply the specs it came from (`syslet history %s --specs` prints them)",
		in.stored.Path, latest.Run, latest.Source, latest.Time.UTC().Format("2006-01-02 15:04 UTC"), latest.Run))
}

// namedSources is how many of a stream's files its run's source names.
const namedSources = 3

// stdinSource is the source of a run from stdin: "stdin", and the files
// the stream names when it names them (syslet push sends such a stream),
// so that the history of a host says which files a push applied.
func stdinSource(srcs []spec.Source) string {
	var names []string
	for _, s := range srcs {
		if s.Name != spec.StdinName {
			names = append(names, s.Name)
		}
	}
	switch {
	case len(names) == 0:
		return spec.StdinName
	case len(names) > namedSources:
		return fmt.Sprintf("%s: %s and %d more", spec.StdinName, strings.Join(names[:namedSources], ", "), len(names)-namedSources)
	}
	return spec.StdinName + ": " + strings.Join(names, ", ")
}

// readInput loads the run's input: the specs Path names, or for a
// rollback by hand the kept generation it asks for.
func readInput(req *Request, gens *generation.Store, jr *runlog.Journal) (passInput, error) {
	if req.Generation == "" {
		l, err := load.Path(req.Path, load.Options{Root: req.Root, Stdin: req.Stdin, MaxInput: req.MaxInput})
		if err != nil {
			return passInput{}, err
		}
		in := passInput{kind: inputPass, set: l, source: req.Source, signer: req.Signer}
		if req.Path == "-" && req.Source == spec.StdinName {
			in.source = stdinSource(l.Sources)
		}
		if req.Path == "" {
			p := layout.Under(req.Root, layout.StoredSpecs)
			if fi, err := os.Stat(p); err == nil {
				in.stored = &view.Stored{Path: p, At: fi.ModTime()}
			}
		}
		return in, nil
	}
	gen, err := pickGeneration(gens, jr, req.Generation)
	if err != nil {
		return passInput{}, err
	}
	return passInput{kind: handRollback, set: load.Bytes("generation "+gen.Run, gen.Input), source: "rollback to run " + gen.Run, gen: gen, signer: gen.Signer}, nil
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
