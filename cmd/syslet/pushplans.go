package main

// Saved plans through syslet push: --diff --out DIR keeps each host's plan
// as DIR/<host>.plan; --plan DIR checks each here and sends it before the
// host's specs.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/syslet/syslet/pkg/app/planfile"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/push"
	"github.com/syslet/syslet/pkg/spec"
)

// planFile is where a host's saved plan lives in a plans directory: named
// by the host part of its target, as its specs directory is.
func planFile(dir, target string) string {
	_, alias, _, _ := push.ParseTarget(target)
	return filepath.Join(dir, alias+".plan")
}

// savedPlans reads each target's saved plan from dir and checks it here,
// before any connection: whole and unedited, and made from the specs this
// push sends the host. Any problem stops the whole push, as invalid specs
// do.
func savedPlans(dir string, targets []string, streams map[string][]byte, stderr io.Writer) (map[string][]byte, bool) {
	plans, ok := map[string][]byte{}, true
	for _, t := range targets {
		p := planFile(dir, t)
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "syslet push: %s: no saved plan: %v (push --diff --out %s saves one per host)\n", t, err, dir)
			ok = false
			continue
		}
		s, _, err := planfile.Read(bytes.NewReader(data))
		if err != nil {
			fmt.Fprintf(stderr, "syslet push: %s: %s: %v\n", t, p, err)
			ok = false
			continue
		}
		// The digest the host computes of the stream it reads, read as it
		// reads it (the line naming the files is not part of the input).
		srcs, err := spec.ReadSources("-", bytes.NewReader(streams[t]))
		if err != nil {
			fmt.Fprintf(stderr, "syslet push: %s: %v\n", t, err)
			ok = false
			continue
		}
		in := &load.Set{Sources: srcs}
		if d := in.Digest(); d != s.InputDigest {
			fmt.Fprintf(stderr, "syslet push: %s: %s was made from other specs (input %.12s; the specs given now are %.12s): push the specs the plan was made from, or make a new plan\n", t, p, s.InputDigest, d)
			ok = false
			continue
		}
		plans[t] = data
	}
	return plans, ok
}

// keepPlans writes each host's saved plan, which its syslet printed on
// stdout, to out/<host>.plan, after checking it is one. A host that made
// no plan has its old file removed: a plan left from before would be
// taken for this push's.
func keepPlans(out string, results []push.Result, stderr io.Writer) []string {
	if err := os.MkdirAll(out, 0o700); err != nil {
		fmt.Fprintln(stderr, "syslet push: --out:", err)
		for i := range results {
			results[i].Fail(fmt.Errorf("saving its plan: %w", err))
		}
		return nil
	}
	var saved []string
	for i := range results {
		r := &results[i]
		p := planFile(out, r.Target.Arg)
		if r.OK() {
			s, _, err := planfile.Read(bytes.NewReader(r.Output))
			if err == nil {
				err = s.WriteFile(p)
			}
			if err == nil {
				saved = append(saved, p)
				continue
			}
			r.Fail(fmt.Errorf("saving its plan: %w", err))
		}
		if err := os.Remove(p); err == nil {
			fmt.Fprintf(stderr, "syslet push: %s: removed %s from an earlier push: this one made no plan there\n", r.Target.Arg, p)
		}
	}
	return saved
}
