package push

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/sshcommand"
)

// Check is the read-only look at a host after the pause that followed
// its batch: are its services still up and never restarted since its
// health gate, and does it still match its specs?
type Check struct {
	Started time.Time
	Took    time.Duration
	// Problems are what was found wrong, one sentence each; none means
	// the host held.
	Problems []string
}

// checkHost connects to the host again and runs the strategy's two
// read-only commands with the host's stream: the plan must find nothing
// to change (no drift, no unit down), and the services' health must not
// have moved since baseline (read right after the host's command).
func checkHost(j Job, o Options, s Strategy, baseline []byte) *Check {
	c := &Check{Started: time.Now()}
	defer func() { c.Took = time.Since(c.Started) }()
	client, err := dial(j, o)
	if err != nil {
		c.Problems = []string{fmt.Sprintf("could not connect to look at it again: %v", err)}
		return c
	}
	defer client.Close()

	// The plan's document says whether the host still matches its specs,
	// and what differs; the plan's exit code when it does not
	// (--detailed-exitcode) is no failure of the plan.
	_, errOut, _, err := runBoth(client, s.DiffCommand+" "+strings.Join(sshcommand.Report, " "), j.Stream, o.CommandTimeout, exitPending)
	if err != nil {
		c.Problems = append(c.Problems, fmt.Sprintf("its plan failed: %v", err))
	} else if off := offSpecs(errOut); off != "" {
		c.Problems = append(c.Problems, "it no longer matches its specs: "+off)
	}
	now, _, err := runCaptured(client, s.StatusCommand, j.Stream, o.CommandTimeout)
	if err != nil {
		c.Problems = append(c.Problems, fmt.Sprintf("reading its services failed: %v", err))
		return c
	}
	problems, err := healthMoved(baseline, now)
	if err != nil {
		c.Problems = append(c.Problems, err.Error())
	}
	c.Problems = append(c.Problems, problems...)
	return c
}

// exitPending is what `syslet --diff --detailed-exitcode` exits with when
// the host is off its specs (cmd/syslet's exitPending): the check's plan
// may exit so. Whether the host is off its specs is read from the plan's
// document, not from this code.
const exitPending = 3

// offSpecs says how the host is off its specs by the document its plan
// reported on stderr: the plan's tally when it has actions to take, the
// units edited by hand of a plan with nothing else to do (drift, which an
// apply keeps); "" when the host matches them. A plan that reported no
// tally cannot say the host matches.
func offSpecs(stderr []byte) string {
	var rec recorder
	for _, l := range strings.Split(string(stderr), "\n") {
		rec.keep(l)
	}
	d := rec.document()
	switch {
	case d == nil || d.Counts == nil:
		return "its plan reported no tally (is the host's syslet older than this one?)"
	case d.Counts.Actions > 0:
		return d.plan()
	case d.Counts.Drift > 0:
		return fmt.Sprintf("%d unit(s) edited by hand (drift, which an apply keeps; --force replaces them)", d.Counts.Drift)
	}
	return ""
}

// healthMoved compares two readings of a host's services: every service
// of the first must still be up, with the same InvocationID (no start,
// by hand or by Restart=, in between) and no more restarts.
func healthMoved(before, after []byte) ([]string, error) {
	was, err := decodeHealth(before)
	if err != nil {
		return nil, fmt.Errorf("its services' health right after the change is unreadable: %w", err)
	}
	now, err := decodeHealth(after)
	if err != nil {
		return nil, fmt.Errorf("its services' health after the pause is unreadable: %w", err)
	}
	byName := map[string]host.ServiceHealth{}
	for _, s := range now.Services {
		byName[s.Service] = s
	}
	var problems []string
	for _, w := range was.Services {
		n, ok := byName[w.Service]
		switch {
		case !ok:
			problems = append(problems, w.Service+" is gone")
		case n.NRestarts > w.NRestarts:
			problems = append(problems, fmt.Sprintf("%s was restarted %d time(s) by Restart= (NRestarts %d → %d), now %s", w.Service, n.NRestarts-w.NRestarts, w.NRestarts, n.NRestarts, state(n)))
		case n.InvocationID != w.InvocationID:
			problems = append(problems, fmt.Sprintf("%s was started again (InvocationID changed), now %s", w.Service, state(n)))
		case !n.Up():
			problems = append(problems, fmt.Sprintf("%s is %s", w.Service, state(n)))
		}
	}
	slices.Sort(problems)
	return problems, nil
}

func state(h host.ServiceHealth) string {
	s := h.ActiveState + "/" + h.SubState
	if h.Result != "" && h.Result != "success" {
		s += " (result " + h.Result + ")"
	}
	return s
}

func decodeHealth(data []byte) (host.HealthReport, error) {
	var r host.HealthReport
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("not the JSON of syslet status (is the host's syslet older than this one?): %w", err)
	}
	return r, nil
}
