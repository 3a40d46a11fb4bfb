package view

import (
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/app/gate"
)

// TestGateFailureOfTheGateNamesNoUnit: when the gate could not read the
// units' state, the failure is printed as the gate's, not pinned on the
// first unit it watched.
func TestGateFailureOfTheGateNamesNoUnit(t *testing.T) {
	var b strings.Builder
	Gate(&b, &gate.Report{Units: []string{"side.service", "web.service"}, Took: 4 * time.Second,
		Failures: []gate.Failure{{Reason: "the gated units' state could not be read: the read did not finish within 4s"}}})
	want := "Health gate FAILED after 4s:\n  the gated units' state could not be read: the read did not finish within 4s\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	b.Reset()
	Gate(&b, &gate.Report{Units: []string{"web.service"}, Took: time.Second,
		Failures: []gate.Failure{{Service: "web.service", Reason: "restarted", Log: []string{"web: exit 1"}}}})
	if want := "Health gate FAILED after 1s:\n  web.service: restarted\n      | web: exit 1\n"; b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// TestGatePassedNamesTheUnits: the line of a passed gate names what it
// watched, the first few of many.
func TestGatePassedNamesTheUnits(t *testing.T) {
	var b strings.Builder
	Gate(&b, &gate.Report{Units: []string{"app.service", "web.service"}, Soak: 3 * time.Second, Took: 3041 * time.Millisecond})
	if want := "Health gate: 2 unit(s) up and stayed up for 3s (3.041s): app.service, web.service.\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	var many []string
	for _, c := range "abcdefghij" {
		many = append(many, string(c)+".service")
	}
	Gate(&b, &gate.Report{Units: many, Soak: time.Second, Took: time.Second})
	if !strings.HasSuffix(b.String(), ": a.service, b.service, c.service, d.service, e.service, f.service, g.service, h.service and 2 more.\n") {
		t.Errorf("got %q", b.String())
	}
}
