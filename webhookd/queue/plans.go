package queue

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/bounded"
)

// The plans of recent deploys, as `syslet --diff` printed them, for the
// status page's page of one deploy. They live beside the status files
// (stateDir/.status/plans/<repo>/<run>.txt), mode 0600 like them, and only
// the last keepAttempts of a repository are kept. A plan holds no secret
// value and no private file's content: the Deployer prints it the way
// --diff does, which shows neither.

// planKind bounds a plan read back: a plan of thousands of units is
// still well under it.
var planKind = bounded.Kind{What: "a deploy's saved plan", Max: 4 << 20}

// runIDRE is the shape of a run journal id (runlog.NewRunID); anything
// else never names a file.
var runIDRE = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$`)

// IsRunID reports whether s has the shape of a run journal id.
func IsRunID(s string) bool { return runIDRE.MatchString(s) }

// Plan is the plan of run, one of the repository's recent deploys, as
// --diff printed it ("" when none is kept).
func (w *Worker) Plan(run string) (string, error) { return w.plans.load(run) }

// planStore is one repository's directory of plans.
type planStore struct{ dir string }

// plansOf is the plans of repo, whose status file is statusFile.
func plansOf(repo, statusFile string) planStore {
	return planStore{dir: filepath.Join(filepath.Dir(statusFile), "plans", repo)}
}

// save keeps run's plan and drops the oldest past keepAttempts. A run
// without an id or a plan saves nothing.
func (s planStore) save(run, plan string) error {
	if plan == "" || !runIDRE.MatchString(run) {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	if err := bounded.WriteState(filepath.Join(s.dir, run+".txt"), []byte(plan), 0o600); err != nil {
		return err
	}
	return s.prune()
}

// prune removes all but the newest keepAttempts plans (run ids sort by time).
func (s planStore) prune() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	var runs []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".txt"); ok && runIDRE.MatchString(name) {
			runs = append(runs, name)
		}
	}
	slices.Sort(runs)
	for len(runs) > keepAttempts {
		if err := os.Remove(filepath.Join(s.dir, runs[0]+".txt")); err != nil {
			return err
		}
		runs = runs[1:]
	}
	return nil
}

// load returns run's plan, or "" when none is kept.
func (s planStore) load(run string) (string, error) {
	if !runIDRE.MatchString(run) {
		return "", nil
	}
	b, err := bounded.ReadFile(filepath.Join(s.dir, run+".txt"), planKind)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return string(b), err
}
