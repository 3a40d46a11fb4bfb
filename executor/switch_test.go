package executor_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/plan"
)

// fakeProxy records the switcher's calls on the fake host's list.
type fakeProxy struct {
	f        *fake
	notReady bool
}

func (p fakeProxy) AwaitReady(_ context.Context, sw plan.Switch) error {
	if err := p.f.call("await " + sw.NewService); err != nil || !p.notReady {
		return err
	}
	return errors.New("connection refused")
}
func (p fakeProxy) Switch(_ context.Context, sw plan.Switch) error {
	return p.f.call("switch " + sw.Site + " to " + sw.New)
}
func (p fakeProxy) Drain(_ context.Context, sw plan.Switch) error {
	return p.f.call("drain " + sw.Site + " " + sw.Old)
}

// switchPlan is a start-first replacement of web's blue slot by green.
func switchPlan() *plan.Plan {
	sw := &plan.Switch{Site: "web", New: "green", Old: "blue", NewService: "web-green.service", OldService: "web-blue.service",
		Discard: []string{"/etc/containers/systemd/web-green.container"}}
	p := mk("write-unit /etc/containers/systemd/web-green.container", "daemon-reload x", "start web-green.service")
	for _, a := range []plan.Action{
		{Op: plan.OpAwaitReady, Target: "web-green.service"},
		{Op: plan.OpSwitch, Target: "web"},
		{Op: plan.OpDrain, Target: "web-blue.service"},
		{Op: plan.OpStopSlot, Target: "web-blue.service"},
		{Op: plan.OpRemoveSlot, Target: "/etc/containers/systemd/web-blue.container"},
	} {
		a.Step, a.Payload = plan.StepStart, &plan.Payload{Switch: sw}
		p.Actions = append(p.Actions, a)
	}
	return p
}

func TestStartFirstSwitchesAfterTheStarts(t *testing.T) {
	f := &fake{}
	h := executor.Host{Files: f, Systemd: f, Podman: f, Proxy: fakeProxy{f: f}}
	res, err := executor.Apply(context.Background(), switchPlan(), h, executor.Options{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"write /etc/containers/systemd/web-green.container", "daemon-reload", "start web-green.service",
		"await web-green.service", "switch web to green", "drain web blue", "stop web-blue.service", "remove /etc/containers/systemd/web-blue.container"}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls:\n got %q\nwant %q", f.calls, want)
	}
	if len(res.Replaced) != 0 {
		t.Errorf("replaced = %+v: the plan names no replacement", res.Replaced)
	}
}

func TestStartFirstNotReadyNeverSwitches(t *testing.T) {
	// A new slot never ready is stopped and its file removed; the old slot
	// is never drained or stopped, and the run fails.
	f := &fake{}
	h := executor.Host{Files: f, Systemd: f, Podman: f, Proxy: fakeProxy{f: f, notReady: true}}
	res, err := executor.Apply(context.Background(), switchPlan(), h, executor.Options{Log: zerolog.Nop()})
	if err == nil {
		t.Fatal("want an error")
	}
	want := []string{"write /etc/containers/systemd/web-green.container", "daemon-reload", "start web-green.service",
		"await web-green.service", "stop web-green.service", "remove /etc/containers/systemd/web-green.container"}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls:\n got %q\nwant %q", f.calls, want)
	}
	if len(res.Failed) != 1 || res.Failed[0].Action.Op != plan.OpAwaitReady || len(res.NotReached) != 4 {
		t.Errorf("result: failed %+v, not reached %+v", res.Failed, res.NotReached)
	}
}
