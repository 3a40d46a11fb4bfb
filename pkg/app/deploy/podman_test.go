package deploy

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
)

// newerPodman uses [Container] Memory, which podman 5.5 added: units that
// pass for the oldest supported podman (5.4) cannot hold it.
const newerPodman = `{"apiVersion":"v1","type":"container","name":"big","unit":{"Container":{"Image":"registry.example/big:1","Memory":"512m"}}}`

// The converter check is made for the podman the host runs, and podman is
// asked its release only when the verdict depends on it: a converged run
// must not wake podman.service through its socket.
func TestPodmanReleaseCheck(t *testing.T) {
	tests := []struct {
		name       string
		specs      string
		version    string
		versionErr error
		asked      int
		err        error  // errors.Is; nil: the apply succeeds
		msg        string // in the error
		finding    bool   // a key-needs-newer-podman finding
	}{
		{name: "oldest podman's keys only", specs: stack, version: "5.4.2", asked: 0},
		{name: "newer key, newer host", specs: newerPodman, version: "5.6.0", asked: 1},
		{name: "newer key, old host", specs: newerPodman, version: "5.4.2", asked: 1, err: ErrInvalid, msg: "1 error(s)", finding: true},
		{name: "host cannot say", specs: newerPodman, versionErr: errors.New("podman.socket: connection refused"), asked: 1, msg: "connection refused"},
		{name: "host says nonsense", specs: newerPodman, version: "banana", asked: 1, msg: "the host's podman"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t)
			h.version, h.versionErr = tt.version, tt.versionErr
			r := h.run(t, h.request(writeSpecs(t, tt.specs)))
			if h.versionCalls != tt.asked {
				t.Errorf("podman asked its release %d times, want %d", h.versionCalls, tt.asked)
			}
			found := slices.ContainsFunc(r.out.Findings, func(f report.Finding) bool { return f.Rule == spec.RuleNewerPodman })
			if found != tt.finding {
				t.Errorf("newer-podman finding: %v, want %v (findings %v)", found, tt.finding, r.out.Findings)
			}
			if tt.err == nil && tt.msg == "" {
				if r.err != nil {
					t.Fatalf("apply: %v\n%s", r.err, r.stderr)
				}
				if tt.specs == newerPodman && !strings.Contains(h.file(t, layout.UnitPath("big.container")), "Memory=512m") {
					t.Errorf("big.container not written with Memory=")
				}
				return
			}
			if r.err == nil || (tt.err != nil && !errors.Is(r.err, tt.err)) || !strings.Contains(r.err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v containing %q", r.err, tt.err, tt.msg)
			}
			if tt.finding && (!strings.Contains(r.out.Summary, "in the specs for podman 5.4; nothing was changed") || !strings.Contains(r.stderr, "Memory needs podman 5.5 or later")) {
				t.Errorf("summary %q; stderr:\n%s", r.out.Summary, r.stderr)
			}
			if files := h.managedTrees(t); len(files) != 0 || h.exists(layout.Journal) || len(h.Calls()) != 0 {
				t.Errorf("a refused check changed the host: files %q, calls %q", files, h.Calls())
			}
		})
	}
}
