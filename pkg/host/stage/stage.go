package stage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/unit"
)

// DefaultGenerator is where Debian and Fedora install podman's generator.
const DefaultGenerator = "/usr/libexec/podman/quadlet"

// Stager runs the generator and the verifier.
type Stager struct {
	Generator string // quadlet binary
	Verify    string // systemd-analyze binary; "" skips verification
	// Keep keeps the staging directory of a check that passed too (a
	// failed one is always kept, for troubleshooting).
	Keep bool
	// Dir is where staging directories are made; "" is os.TempDir().
	Dir string
}

// Staging directories are Dir/syslet-stage-*, as the earlier syslet named
// them (its troubleshooting guide tells users to look there). A kept one
// holds KeptNote; at most KeepLast are left, the newest, and one without
// the note that is older than a day was left by a run that was killed.
const (
	Prefix   = "syslet-stage-"
	KeptNote = "KEPT"
	KeepLast = 5
)

// Result is what a check found besides a verdict.
type Result struct {
	// Warnings do not block: the generator's own warnings, and problems
	// the host already had in units this apply does not write.
	Warnings []string
	// Kept is the staging directory left for inspection (a failed check,
	// or Keep), "" when it was removed: units/ holds the unit files as
	// staged, generated/ what the generator made of them.
	Kept string
}

// Error is a staging failure: the tool's own output, line by line.
type Error struct {
	Tool   string   // "quadlet" or "systemd-analyze verify"
	Output []string // the tool's messages, scratch paths removed
}

func (e *Error) Error() string {
	return e.Tool + " rejected the units:\n  " + strings.Join(e.Output, "\n  ")
}

// Check stages the future unit set (file name relative to the unit
// directory → content), runs the generator over it and verifies the
// services generated for the unit files in verify (the ones this apply
// writes). It returns *Error when a tool rejects the set, with messages
// naming the unit files, and warnings that do not block: the generator's
// own warnings, and problems of units this apply does not write that the
// host's current set (before) already has — a unit someone else broke is
// not a reason to refuse this apply, but a unit this apply breaks is.
// The staging directory (0700) is removed, unless the check failed or
// Keep is set: then Result.Kept names it.
func (s Stager) Check(ctx context.Context, future, before map[string][]byte, verify []string) (res Result, err error) {
	tmp, err := os.MkdirTemp(s.Dir, Prefix)
	if err != nil {
		return res, fmt.Errorf("staging: %w", err)
	}
	defer func() { res.Kept = s.finish(tmp, err) }()
	res.Warnings, err = s.check(ctx, tmp, future, before, verify)
	return res, err
}

// finish keeps tmp (failed, or Keep) or removes it, and then removes the
// kept directories beyond the newest KeepLast and those killed runs left.
func (s Stager) finish(tmp string, failed error) (kept string) {
	if failed != nil || s.Keep {
		why := "--keep-stage"
		if failed != nil {
			why = "the staging failed"
		}
		note := fmt.Sprintf("syslet kept this staging directory (%s) at %s.\nunits/: the unit files as staged (run QUADLET_UNIT_DIRS=%s/units %s --dryrun to see the generator's output)\ngenerated/: what the generator made of them\n",
			why, time.Now().UTC().Format(time.RFC3339), tmp, s.Generator)
		if os.WriteFile(filepath.Join(tmp, KeptNote), []byte(note), 0o600) == nil {
			kept = tmp
		}
	}
	if kept == "" {
		os.RemoveAll(tmp)
	}
	s.prune()
	return kept
}

// prune removes kept staging directories beyond the newest KeepLast, and
// unkept ones older than a day (a run killed while staging: a check takes
// milliseconds, so a younger one may be another run's, in progress).
func (s Stager) prune() {
	dir := s.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type keptDir struct {
		path string
		at   time.Time
	}
	var kept []keptDir
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), Prefix) {
			continue // a symlink is never followed, nor removed
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(filepath.Join(p, KeptNote)); err == nil && fi.Mode().IsRegular() {
			kept = append(kept, keptDir{p, fi.ModTime()})
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.RemoveAll(p)
		}
	}
	slices.SortFunc(kept, func(a, b keptDir) int { return b.at.Compare(a.at) })
	for _, k := range kept[min(len(kept), KeepLast):] {
		os.RemoveAll(k.path)
	}
}

func (s Stager) check(ctx context.Context, tmp string, future, before map[string][]byte, verify []string) (warnings []string, err error) {
	gen := filepath.Join(tmp, "generated")
	future, sockets := splitSockets(future)
	verify = withInstances(verify, future)
	names := scope(future, before, verify)
	warnings, problems, err := s.generate(ctx, within(future, names), filepath.Join(tmp, "units"), gen)
	if err != nil {
		return warnings, err
	}
	if len(problems) > 0 {
		var old []string
		if before != nil {
			_, old, err = s.generate(ctx, within(before, names), filepath.Join(tmp, "before"), filepath.Join(tmp, "before-generated"))
			if err != nil {
				return warnings, err
			}
		}
		problems = slices.DeleteFunc(problems, func(m string) bool {
			if slices.Contains(old, m) && aboutOthers(m, future, verify) {
				warnings = append(warnings, m+" (already so on the host; this apply does not change that unit)")
				return true
			}
			return false
		})
	}
	if len(problems) > 0 {
		return warnings, &Error{Tool: "quadlet", Output: problems}
	}
	if s.Verify == "" || len(verify) == 0 {
		return warnings, nil
	}
	var services []string
	for _, n := range verify {
		if _, inst, ok := layout.Template(n); ok && inst == "" {
			continue // its service is a template: verified through its instances
		}
		name := unit.DefaultService(n)
		if uf, err := unit.Parse(future[n]); err == nil {
			name = unit.ServiceOf(n, uf) // ServiceName=
		}
		svc := filepath.Join(gen, name)
		if _, err := os.Stat(svc); err != nil {
			return warnings, &Error{Tool: "quadlet", Output: []string{fmt.Sprintf("%s: no service was generated", n)}}
		}
		services = append(services, svc)
	}
	if len(services) == 0 {
		return warnings, nil // a template with no instances: the generator judged it
	}
	for _, n := range slices.Sorted(maps.Keys(sockets)) {
		p := filepath.Join(gen, n)
		if err := os.WriteFile(p, sockets[n], 0o644); err != nil {
			return warnings, err
		}
		services = append(services, p)
	}
	// --recursive-errors=no: the units named are checked, and their
	// dependencies loaded and reported on, without verify walking the
	// whole dependency tree of the system (a third of the time).
	args := append([]string{"verify", "--man=no", "--recursive-errors=no"}, services...)
	vc := exec.CommandContext(ctx, s.Verify, args...)
	var vout bytes.Buffer
	vc.Stdout, vc.Stderr = &vout, &vout
	err = vc.Run()
	msgs := clean(vout.String(), tmp)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return warnings, fmt.Errorf("running %s: %w", s.Verify, err)
	}
	// verify exits 0 on unknown keys and bad values and only prints a
	// warning, so any output at all is a failure — except what it says
	// about a unit file of the host outside the staged set (an absolute
	// path: staged files are named relative to the scratch directory),
	// which this apply neither writes nor can fix.
	var fails []string
	for _, m := range msgs {
		if strings.HasPrefix(m, "/") {
			warnings = append(warnings, m+" (a unit of the host that this apply does not write)")
			continue
		}
		fails = append(fails, m)
	}
	if len(fails) > 0 || (err != nil && len(msgs) == 0) {
		return warnings, &Error{Tool: "systemd-analyze verify", Output: fails}
	}
	return warnings, nil
}

// generate writes units under src and runs the generator into out. It
// returns the generator's warnings and problems; err is only for a
// generator that could not be run at all.
func (s Stager) generate(ctx context.Context, units map[string][]byte, src, out string) (warnings, problems []string, err error) {
	names := make([]string, 0, len(units))
	for n := range units {
		names = append(names, n)
	}
	sort.Strings(names)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, nil, fmt.Errorf("staging: %w", err)
	}
	for _, n := range names {
		p := filepath.Join(src, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, nil, fmt.Errorf("staging: %w", err)
		}
		if err := os.WriteFile(p, units[n], 0o644); err != nil {
			return nil, nil, fmt.Errorf("staging: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, s.Generator, "-no-kmsg-log", out)
	cmd.Env = append(os.Environ(), "QUADLET_UNIT_DIRS="+src)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	runErr := cmd.Run()
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		return nil, nil, fmt.Errorf("running %s: %w", s.Generator, runErr)
	}
	for _, m := range clean(output.String(), filepath.Dir(src)) {
		switch {
		case strings.Contains(m, "processing encountered some errors"):
			// The closing summary of the errors reported line by line.
		case strings.Contains(m, "Warning:"):
			warnings = append(warnings, m)
		default:
			// Anything else from the generator means a unit it could not
			// take as written, even when it exits 0.
			problems = append(problems, m)
		}
	}
	if runErr != nil && len(problems) == 0 {
		problems = append(problems, fmt.Sprintf("%s failed: %v", s.Generator, runErr))
	}
	return warnings, problems, nil
}

var generatorPrefix = regexp.MustCompile(`^quadlet-generator\[\d+\]: `)

// clean drops empty lines, the generator's progress chatter and its
// "quadlet-generator[PID]:" prefix, and strips the scratch directories from
// paths, so messages name the unit files and compare across runs.
func clean(out, tmp string) []string {
	var msgs []string
	for _, l := range strings.Split(out, "\n") {
		l = generatorPrefix.ReplaceAllString(strings.TrimSpace(l), "")
		if l == "" || strings.Contains(l, "Loading source unit file") {
			continue
		}
		for _, d := range []string{"units", "generated", "before", "before-generated"} {
			l = strings.ReplaceAll(l, filepath.Join(tmp, d)+"/", "")
		}
		if !slices.Contains(msgs, l) {
			msgs = append(msgs, l)
		}
	}
	return msgs
}

// withInstances adds to verify the instances in future of each template
// it names (a template's service is one only through them), once each, in
// order.
func withInstances(verify []string, future map[string][]byte) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range verify {
		add(n)
		if _, inst, ok := layout.Template(n); ok && inst == "" {
			var insts []string
			for m := range future {
				if t, i, ok := layout.Template(m); ok && i != "" && t == n && !strings.Contains(m, "/") {
					insts = append(insts, m)
				}
			}
			slices.Sort(insts)
			for _, m := range insts {
				add(m)
			}
		}
	}
	return out
}

// scope names the unit files the generator must see to judge the units in
// verify: those units; every unit whose conversion may change with them,
// that is, each unit referring (directly or through others) to one of them
// or to a unit this apply removes; and, added by within, whatever these
// refer to. Generating only those, not the whole set, keeps staging one
// change among hundreds of units as quick as staging a few. Nothing in
// verify means the whole future set.
func scope(future, before map[string][]byte, verify []string) map[string]bool {
	in := map[string]bool{}
	if len(verify) == 0 {
		for n := range future {
			in[n] = true
		}
		return in
	}
	// dependents[x]: the units of future that name x (a drop-in's
	// references are those of the units it applies to).
	dependents := map[string][]string{}
	for n, data := range future {
		owners := []string{n}
		if dir, _, ok := strings.Cut(n, "/"); ok {
			owners = appliesTo(dir, future)
		}
		for _, r := range refsIn(data, n, future, before) {
			dependents[r] = append(dependents[r], owners...)
		}
	}
	queue := slices.Clone(verify)
	for n := range before {
		if _, ok := future[n]; !ok {
			queue = append(queue, n) // removed by this apply
		}
	}
	for len(queue) > 0 {
		n := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if in[n] {
			continue
		}
		in[n] = true
		queue = append(queue, dependents[n]...)
	}
	return in
}

// within is the part of units that names lists, with everything those
// units refer to, transitively, and the drop-ins of each (every directory
// quadlet reads for it): what the generator needs to convert them.
func within(units map[string][]byte, names map[string]bool) map[string][]byte {
	out := map[string][]byte{}
	byDir := map[string][]string{}
	for n := range units {
		if dir, _, ok := strings.Cut(n, "/"); ok {
			byDir[dir] = append(byDir[dir], n)
		}
	}
	var queue []string
	for n := range names {
		queue = append(queue, n)
	}
	for len(queue) > 0 {
		n := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		data, ok := units[n]
		if _, done := out[n]; done || !ok {
			continue
		}
		out[n] = data
		queue = append(queue, refsIn(data, n, units, nil)...)
		if !strings.Contains(n, "/") {
			for _, dir := range layout.DropInDirs(n) {
				queue = append(queue, byDir[dir]...)
			}
		}
	}
	return out
}

// appliesTo lists the unit files of units that quadlet merges the
// drop-ins of dir ("web.container.d") into.
func appliesTo(dir string, units map[string][]byte) []string {
	var out []string
	for n := range units {
		if !strings.Contains(n, "/") && slices.Contains(layout.DropInDirs(n), dir) {
			out = append(out, n)
		}
	}
	return out
}

// refsIn lists the unit files of a or b that data (the unit self) names:
// any word of it that is one of their file names. A superset of the
// references quadlet follows (Volume=, Network=, Image=, Requires=…), which
// is all scope needs.
func refsIn(data []byte, self string, a, b map[string][]byte) []string {
	var refs []string
	word := func(c byte) bool { return unit.NameChar(rune(c)) }
	for i := 0; i < len(data); {
		if !word(data[i]) {
			i++
			continue
		}
		j := i
		for j < len(data) && word(data[j]) {
			j++
		}
		w := data[i:j]
		i = j
		if bytes.IndexByte(w, '.') < 0 {
			continue
		}
		_, inA := a[string(w)]
		_, inB := b[string(w)]
		if (inA || inB) && string(w) != self {
			refs = append(refs, string(w))
		}
	}
	return refs
}

// aboutOthers reports whether a message names unit files, none of which is
// in verify.
func aboutOthers(msg string, units map[string][]byte, verify []string) bool {
	other := false
	for name := range units {
		if !strings.Contains(msg, `"`+name+`"`) && !strings.Contains(msg, " "+name) {
			continue
		}
		if slices.Contains(verify, name) {
			return false
		}
		other = true
	}
	return other
}

// splitSockets takes the socket units (NAME.socket: a container spec's
// socket, a plain systemd unit quadlet does not read) out of a unit set.
// They are verified beside the generated services, where the services
// that want them find them.
func splitSockets(units map[string][]byte) (quadlets, sockets map[string][]byte) {
	for n := range units {
		if strings.HasSuffix(n, ".socket") && !strings.Contains(n, "/") {
			if sockets == nil {
				quadlets, sockets = maps.Clone(units), map[string][]byte{}
			}
			sockets[n] = units[n]
			delete(quadlets, n)
		}
	}
	if sockets == nil {
		return units, nil
	}
	return quadlets, sockets
}
