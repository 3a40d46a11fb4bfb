package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/host/fsroot"
	hostproxy "github.com/syslet/syslet/pkg/host/proxy"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/plan"
)

// proxyReader reads what the host has of syslet's proxy for the plan
// (plan.ProxyReader): its unit, configuration and saved server state, and
// whether HAProxy is installed and the one running.
type proxyReader struct{ files fsroot.Root }

func (r proxyReader) ReadProxy(context.Context) (map[string]host.File, plan.ProxyFacts, error) {
	out := map[string]host.File{}
	for _, p := range []string{layout.ProxyUnit, layout.ProxyConfig, layout.ProxyState} {
		f, ok, err := readOne(r.files.Path(p))
		if err != nil {
			return nil, plan.ProxyFacts{}, err
		}
		if ok {
			out[p] = f
		}
	}
	var facts plan.ProxyFacts
	if fi, err := os.Stat(r.files.Path(layout.ProxyBinary)); err == nil && fi.Mode().IsRegular() {
		facts.Installed = true
	}
	facts.Upgraded = upgraded(r.files.Path(layout.ProxyPID))
	return out, facts, nil
}

// readOne reads one of the proxy's files, never following a symlink
// (a link is reported as one, and the plan refuses to take it as its).
func readOne(p string) (host.File, bool, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return host.File{}, false, nil
	}
	if err != nil {
		return host.File{}, false, err
	}
	f := host.File{Mode: fi.Mode(), ModTime: fi.ModTime().UnixNano()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Link, err = os.Readlink(p)
	case fi.Mode().IsRegular():
		f.Data, err = readBounded(p)
	}
	return f, true, err
}

// maxProxyFile bounds what syslet reads of one of the proxy's files.
const maxProxyFile = 16 << 20

func readBounded(p string) ([]byte, error) {
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxProxyFile+1))
	if err == nil && len(b) > maxProxyFile {
		err = fmt.Errorf("%s is larger than %d bytes", p, maxProxyFile)
	}
	return b, err
}

// upgraded reports whether the HAProxy master named in pidFile runs a
// binary that is no longer installed: a package upgrade replaced the file
// it was started from (the kernel then names it "(deleted)").
func upgraded(pidFile string) bool {
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil || pid <= 0 {
		return false
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	return err == nil && strings.HasSuffix(exe, " (deleted)")
}

// switcher moves start-first containers between their slots through
// HAProxy's runtime API (executor.Switcher), and asks a new slot's probe
// whether it is ready through podman.
type switcher struct {
	api    *hostproxy.Client
	units  plan.UnitReader
	prober interface {
		Probe(ctx context.Context, container string, p *probe.Probe) probe.Answer
	}
}

// AwaitReady runs the new slot's probe, every interval, until it passes
// its successes in a row, within the probe's deadline. A slot whose
// service stopped running is not waited for.
func (s switcher) AwaitReady(ctx context.Context, sw plan.Switch) error {
	p := sw.Probe
	if p == nil {
		return fmt.Errorf("%s has no probe, so nothing can say it is ready; it never took a request", sw.NewService)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(p.Deadline))
	defer cancel()
	oks := 0
	last := "no answer yet"
	for {
		began := time.Now()
		a := s.prober.Probe(ctx, sw.NewContainer, p)
		if a.OK {
			if oks++; oks >= p.Successes {
				return nil
			}
		} else {
			oks, last = 0, a.String()
		}
		if st, err := s.units.UnitStates(ctx, []string{sw.NewService}); err == nil {
			if u, ok := st[sw.NewService]; ok && !u.Active() && u.ActiveState != "activating" {
				return fmt.Errorf("%s is %s before its probe %s said ready (it %s); it never took a request", sw.NewService, u.ActiveState, p.Name(), last)
			}
		}
		t := time.NewTimer(max(0, time.Duration(p.Interval)-time.Since(began)))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s was not ready within %s: its probe %s %s; it never took a request", sw.NewService, p.Deadline, p.Name(), last)
		case <-t.C:
		}
	}
}

// Switch readies the new slot, then drains the old one: for a moment both
// take requests, never neither.
func (s switcher) Switch(ctx context.Context, sw plan.Switch) error {
	if err := s.api.SetState(ctx, sw.Site, sw.New, hostproxy.Ready); err != nil {
		return err
	}
	if sw.Old != "" {
		if err := s.api.SetState(ctx, sw.Site, sw.Old, hostproxy.Drain); err != nil {
			return err
		}
	}
	return s.api.SaveState(ctx, layout.ProxyState)
}

// drainEvery is how often a drain asks whether the old slot's sessions
// have ended.
const drainEvery = 100 * time.Millisecond

// Drain waits until the old slot holds no session, at most sw.Drain, then
// puts it in maintenance (what it still holds then is cut).
func (s switcher) Drain(ctx context.Context, sw plan.Switch) error {
	end := time.Now().Add(time.Duration(sw.Drain))
	for time.Now().Before(end) {
		n, err := s.api.Sessions(ctx, sw.Site)
		if err != nil {
			return err
		}
		if n[sw.Old] == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(drainEvery):
		}
	}
	if err := s.api.SetState(ctx, sw.Site, sw.Old, hostproxy.Maint); err != nil {
		return err
	}
	return s.api.SaveState(ctx, layout.ProxyState)
}
