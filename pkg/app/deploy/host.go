package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/host/fsroot"
	hostproxy "github.com/syslet/syslet/pkg/host/proxy"
	"github.com/syslet/syslet/pkg/host/stage"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/secrets"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// hostConn holds the adapters of one run. Without a running system (a
// root other than "/" and no Request.Host) only the files adapter exists.
type hostConn struct {
	files fsroot.Root
	// backups is where the executor keeps the volumes it deletes, the
	// newest keepBackups of each.
	backups     backup.Store
	keepBackups int
	// maxBackupBytes bounds the backups' total size (0: unbounded).
	// Whether a run takes any (--no-backup) is its plan's to say
	// (plan.Plan.NoBackups).
	maxBackupBytes int64
	live           *Live // nil without a running system
}

func openHost(ctx context.Context, req *Request) (*hostConn, error) {
	h := &hostConn{files: fsroot.New(req.Root), backups: backup.For(req.Root), keepBackups: req.KeepBackups,
		maxBackupBytes: req.MaxBackupBytes}
	if req.hostless() {
		return h, nil
	}
	open := req.Host
	if open == nil {
		open = OpenLive
	}
	live, err := open(ctx, req)
	if err != nil {
		return nil, err
	}
	h.live = live
	return h, nil
}

func (h *hostConn) Close() {
	if h.live != nil {
		h.live.Systemd.Close()
	}
}

// checkPodman runs the converter check (pkg/load) for the podman release
// the specs are for and adds its findings to l. Without a running system
// that is req.Podman, or the oldest release syslet supports. On a host it
// is the host's, as podman's API reports it — asked only when the verdict
// depends on it: releases only add keys and features, so units that pass
// for the oldest release pass for every later one. Asking would wake
// podman.service through its socket, which a converged run must not do.
func (h *hostConn) checkPodman(ctx context.Context, req *Request, l *load.Set) (unit.Podman, error) {
	release := req.Podman
	if h.live != nil || release == (unit.Podman{}) {
		release = unit.OldestPodman
	}
	convert := l.Converter
	if h.live != nil {
		convert = l.HostConverter
	}
	rep := convert(release)
	if h.live != nil && slices.ContainsFunc(rep.Findings, func(f report.Finding) bool { return f.Rule == spec.RuleNewerPodman }) {
		var err error
		if release, err = h.podmanRelease(ctx); err != nil {
			return release, fmt.Errorf("the specs use keys newer than podman %s, so syslet asks the host's podman for its release: %w", unit.OldestPodman, err)
		}
		rep = convert(release)
	}
	l.Report.Merge(rep)
	l.Report.Sort()
	return release, nil
}

// podmanRelease reads the host's podman release over its API.
func (h *hostConn) podmanRelease(ctx context.Context) (unit.Podman, error) {
	v, err := h.live.Podman.Version(ctx)
	if err != nil {
		return unit.Podman{}, err
	}
	p, err := unit.ParsePodman(v)
	if err != nil {
		return unit.Podman{}, fmt.Errorf("the host's podman: %w", err)
	}
	return p, nil
}

// podmanCheck is checkPodman running beside the rest of the run. Until
// done is closed the check owns the run's report.
type podmanCheck struct {
	done    chan struct{}
	release unit.Podman
	err     error
}

// startCheck runs checkPodman on its own goroutine; when the check fails
// or finds errors in the specs it calls onInvalid (what the run is waiting
// for is then not worth waiting for). Once it is done the specs are dropped
// (load.Set.DropSpecs): the plan needs neither its specs nor its lines.
func (h *hostConn) startCheck(ctx context.Context, req *Request, l *load.Set, onInvalid func()) *podmanCheck {
	c := &podmanCheck{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		vctx, cancel := context.WithTimeout(ctx, req.ReadTimeout)
		defer cancel()
		c.release, c.err = h.checkPodman(vctx, req, l)
		// The check was the last to read the specs and the units' lines:
		// let them go now, before the host is read (a big set's specs are
		// 45 MB).
		l.DropSpecs()
		if c.err != nil || l.Report.HasErrors() {
			onInvalid()
		}
	}()
	return c
}

// wait returns the check's outcome once it is done.
func (c *podmanCheck) wait() (unit.Podman, error) {
	<-c.done
	return c.release, c.err
}

// checked is the converter check's verdict on a run's input: the podman
// release it was checked against and the findings; err when the check
// could not run (ending Failed) or found errors (ending Invalid, with the
// run's summary line).
type checked struct {
	release  unit.Podman
	findings []report.Finding
	err      error
	ending   verdict.Verdict
	summary  string
}

// outcome puts what the check found into the run's Outcome.
func (c checked) outcome(out *view.Outcome) *view.Outcome {
	if c.findings != nil {
		out.Findings = c.findings
	}
	if c.summary != "" {
		out.Summary = c.summary
	}
	return out
}

// verdict awaits the check once, however often it is asked (before the
// host is read, and again before the plan is shown): its findings are
// shown once.
func (c *podmanCheck) verdict(v view.Operation, l *load.Set) func() checked {
	return sync.OnceValue(func() checked {
		release, err := c.wait()
		v.Findings(l.Report)
		if err != nil {
			return checked{release: release, err: err, ending: failed(err)}
		}
		out := checked{release: release, findings: l.Report.Findings}
		if l.Report.HasErrors() {
			out.summary = fmt.Sprintf("%d error(s) in the specs for podman %s; nothing was changed", l.Report.Errors(), release)
			out.err, out.ending = fmt.Errorf("%w: %d error(s)", ErrInvalid, l.Report.Errors()), verdict.Invalid
		}
		return out
	})
}

func (h *hostConn) sources(update bool, only []string) plan.Sources {
	// The proxy's files are read under the root like the managed trees.
	src := plan.Sources{Files: h.files, Proxy: proxyReader{h.files}}
	if h.live != nil {
		src.Units = h.live.Systemd
		src.Store = h.live.Podman
		if update {
			src.Tags, src.UpdateOnly = h.live.Podman, only
		}
	}
	return src
}

// lastStarted reads when systemd last started the given services; nothing
// without a running system.
func (h *hostConn) lastStarted(ctx context.Context, names []string) (map[string]time.Time, error) {
	if h.live == nil || len(names) == 0 {
		return nil, nil
	}
	return h.live.Systemd.LastStarted(ctx, names)
}

// stage checks the future unit set with the host's quadlet generator and
// systemd-analyze verify, when the plan writes unit files: the services
// of the units it writes are verified. Messages name the spec each unit
// file comes from. Without a running system there is no generator to ask.
// kept is the staging directory left for inspection (a failed staging,
// or Request.KeepStage), "" when none was kept.
func (h *hostConn) stage(ctx context.Context, p *plan.Plan, obs *plan.Observed, out *render.Output, v view.Operation) (kept string, err error) {
	if h.live == nil || !p.WritesUnits() || !p.Appliable() {
		return "", nil
	}
	var changed []string
	seen := map[string]bool{}
	for _, a := range p.Actions {
		// The proxy's unit is a plain systemd unit, not quadlet's: HAProxy
		// checks its configuration before every start and reload.
		if (a.Op == plan.OpWriteUnit || a.Op == plan.OpLinkUnit) && !seen[a.Unit] && a.Unit != layout.ProxyService {
			seen[a.Unit] = true
			changed = append(changed, a.Unit)
		}
	}
	current, future := plan.UnitSets(obs, p)
	// The socket units the plan writes are verified beside the services
	// that want them (stage: a NAME.socket in the set).
	for _, a := range p.Actions {
		if a.Op == plan.OpWriteFile && path.Dir(a.Target) == layout.SocketDir {
			future[path.Base(a.Target)] = a.Data().Content
		}
	}
	res, err := h.live.Stager.Check(ctx, future, current, changed)
	for _, w := range res.Warnings {
		v.StagingWarning(attribute(w, out))
	}
	var se *stage.Error
	if errors.As(err, &se) {
		for i, m := range se.Output {
			se.Output[i] = attribute(m, out)
		}
	}
	return res.Kept, err
}

// attribute appends the spec a message's unit file comes from.
func attribute(msg string, out *render.Output) string {
	for _, u := range out.Units {
		if mentions(msg, u.FileName) || mentions(msg, u.Service) {
			return msg + "  [spec: " + u.Origin.String() + "]"
		}
	}
	return msg
}

// mentions reports whether msg names the unit file or service name as a
// whole word: "ba.container" does not mention "a.container".
func mentions(msg, name string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], name)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(name)
		// Before the name nothing that could be part of a longer name; after
		// it, punctuation (":", ".") may follow.
		if (at == 0 || !unit.NameChar(rune(msg[at-1]))) && (end == len(msg) || msg[end] == '.' || !unit.NameChar(rune(msg[end]))) {
			return true
		}
		i = at + 1
	}
}

// executor is the host as the executor asks for it to run p, with the
// secret values a pass opened (nil: none); the backups it takes are run's.
func (h *hostConn) executor(opened *secrets.Opened, run string, p *plan.Plan) (executor.Host, error) {
	if h.live == nil {
		return executor.Host{}, errNoHost
	}
	var spared []string
	for _, a := range p.Actions {
		if a.Op == plan.OpImportVolume {
			spared = append(spared, a.Data().Backup)
		}
	}
	eh := executor.Host{Files: preparingFiles{h.files}, Systemd: h.live.Systemd, Podman: h.live.Podman,
		Backups: runBackups{h.backups, run, h.keepBackups, h.maxBackupBytes, spared},
		Proxy:   switcher{api: hostproxy.New(layout.ProxySocket), units: h.live.Systemd, prober: h.live.Podman}}
	if opened != nil {
		eh.Secrets = decrypter{opened}
	}
	return eh, nil
}

// runBackups is the backup store as one run's executor saves into it and
// reads from: each new backup of a volume removes those older than its
// newest keep, then the oldest of other runs while all of them hold more
// than max bytes — but never a backup the run imports (spared).
type runBackups struct {
	backup.Store
	run    string
	keep   int
	max    int64
	spared []string
}

func (b runBackups) Save(volume string, export func(io.Writer) error) (backup.Entry, error) {
	e, err := b.Store.Save(b.run, volume, export)
	if err == nil {
		// The backup is taken; one that could not be let go only takes room
		// until the next.
		_, _ = b.Prune(volume, b.keep, b.spared...)
		_, _ = b.PruneTotal(b.max, b.run, b.spared...)
	}
	return e, err
}

func (b runBackups) Open(file string) (io.ReadCloser, backup.Entry, error) {
	f, e, err := b.Store.Open(file)
	if err != nil {
		return nil, e, err // not a typed nil inside the interface
	}
	return f, e, nil
}

// preparingFiles is the files adapter as the executor asks for it: its
// prepared writes as executor.Prepared.
type preparingFiles struct{ fsroot.Root }

func (f preparingFiles) PrepareFile(p string, data []byte, mode uint32) (executor.Prepared, error) {
	s, err := f.Root.PrepareFile(p, data, mode)
	if err != nil {
		return nil, err // not a typed nil inside the interface
	}
	return s, nil
}

func (f preparingFiles) PrepareDir(p string, files []host.DirFile) (executor.Prepared, error) {
	s, err := f.Root.PrepareDir(p, files)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (f preparingFiles) PrepareLink(p, target string) (executor.Prepared, error) {
	s, err := f.Root.PrepareLink(p, target)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// sweep removes what an interrupted apply left in the managed trees
// (plan.Plan.Leftovers) and says so; under the apply lock, before anything
// is staged. What cannot be removed is left for the next apply, with a
// warning.
func (h *hostConn) sweep(paths []string, v view.Operation) {
	if len(paths) == 0 {
		return
	}
	n := 0
	for _, p := range paths {
		if err := h.files.Remove(p, ""); err != nil {
			v.Warning("leaving a temporary file of an interrupted run: " + err.Error())
			continue
		}
		n++
	}
	v.Swept(n)
}

// stageNote is the file a kept staging directory explains itself in.
const stageNote = stage.KeptNote
