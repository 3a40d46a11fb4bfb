package planfile

import (
	"fmt"
	"slices"

	"github.com/syslet/syslet/pkg/runlog"
)

// Now is what a saved plan is held against when it is applied: the host,
// the input and the podman release of this run, the host state read
// again, and the journal's recent runs.
type Now struct {
	Host, Root, InputDigest, Podman string
	State                           State
	Runs                            []*runlog.RunInfo
}

// Stale lists what differs between what the saved plan was made from and
// now: the host it was made on, the input, the podman release, the
// journal's last run (unless every run since changed nothing), then the
// host's state item by item. Empty: the plan still holds as far as its
// inputs go (the caller also compares the plan made now with it).
func (f *File) Stale(now Now) []string {
	var out []string
	if f.Host != now.Host {
		out = append(out, fmt.Sprintf("the host: the plan was made on %q, this is %q", f.Host, now.Host))
	}
	if f.Root != now.Root {
		out = append(out, fmt.Sprintf("the managed root: the plan was made for %s, this run manages %s", f.Root, now.Root))
	}
	sameInput := f.InputDigest == now.InputDigest
	if !sameInput {
		out = append(out, fmt.Sprintf("the input: its digest is %.12s, the plan was made from input %.12s (%s): give the same specs", now.InputDigest, f.InputDigest, f.Source))
	}
	if f.Podman != now.Podman {
		out = append(out, fmt.Sprintf("podman: the units were checked against podman %s, now against %s", f.Podman, now.Podman))
	}
	quiet := QuietSince(now.Runs, f.State.LastRun)
	if !quiet && ((f.State.LastRun == nil) != (now.State.LastRun == nil) || f.State.LastRun != nil && *f.State.LastRun != *now.State.LastRun) {
		out = append(out, fmt.Sprintf("another run since the plan was made: the journal's last run is %s, it was %s", now.State.LastRun, f.State.LastRun))
	}
	return append(out, f.State.Changes(now.State.Fingerprint, sameInput)...)
}

// QuietSince reports whether every run of the journal after the one stamp
// names changed nothing on the host: each ended with no changes (an apply
// that found the host as its specs say) or was refused. A saved plan then
// still holds, as far as the journal goes: the host state is checked item
// by item anyway, and the plan made again must have the saved digest. It
// is false when that run is not among the recent runs read, or no longer
// reads as it did (a run in progress that ended since).
func QuietSince(runs []*runlog.RunInfo, stamp *RunStamp) bool {
	from := 0
	if stamp != nil {
		from = slices.IndexFunc(runs, func(ri *runlog.RunInfo) bool { return ri.ID() == stamp.Run }) + 1
		if from == 0 || runs[from-1].Result() != stamp.Result {
			return false
		}
	}
	for _, ri := range runs[from:] {
		if res := ri.Result(); res != runlog.ResultNoChanges && res != runlog.ResultRefused {
			return false
		}
	}
	return true
}
