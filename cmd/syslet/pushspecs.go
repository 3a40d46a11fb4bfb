package main

// Each host's specs for syslet push, read and validated here, with the
// same checks as a local apply, before any connection.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/fleet"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/push"
	"github.com/syslet/syslet/pkg/spec"
)

// commonDir is the directory of a hosts dir whose specs every host gets.
const commonDir = "common"

// pushStreams reads and validates each target's specs with the same checks
// as a local apply, and returns the stream each target gets. Any invalid
// or empty set stops the whole push before a connection is made.
func pushStreams(o pushOptions, stdin io.Reader, stderr io.Writer) (map[string][]byte, int) {
	streams := map[string][]byte{}
	if o.path != "" {
		srcs, err := spec.ReadSources(o.path, stdin)
		if err != nil {
			view.Error(stderr, "syslet push", err)
			return nil, exitError
		}
		stream, ok := validStream(o, srcs, o.path, stderr)
		if !ok {
			return nil, exitInvalid
		}
		for _, t := range o.targets {
			streams[t] = stream
		}
		return streams, exitOK
	}
	common, err := readDirIfExists(filepath.Join(o.hostsDir, commonDir))
	if err != nil {
		view.Error(stderr, "syslet push", err)
		return nil, exitError
	}
	code := exitOK
	for _, t := range o.targets {
		_, alias, _, _ := push.ParseTarget(t)
		if alias == commonDir || alias == "." || alias == ".." {
			fmt.Fprintf(stderr, "syslet push: %s: %q cannot be a host directory name\n", t, alias)
			return nil, exitError
		}
		dir := filepath.Join(o.hostsDir, alias)
		own, err := spec.ReadSources(dir, nil)
		if err != nil {
			view.Printf(stderr, "syslet push: %s: %v\n", t, err)
			return nil, exitError
		}
		stream, ok := validStream(o, slices.Concat(common, own), dir+"/ and "+filepath.Join(o.hostsDir, commonDir)+"/", stderr)
		if !ok {
			code = exitInvalid // keep going: report every host's findings at once
			continue
		}
		streams[t] = stream
	}
	return streams, code
}

// validStream checks one set of sources and joins them into one stream
// (a stream may mix objects, arrays and NDJSON, so joining is lossless)
// that names the files it came from, so that what a host says about a
// spec names the operator's file (spec.NamedStream).
func validStream(o pushOptions, srcs []spec.Source, what string, stderr io.Writer) ([]byte, bool) {
	l := load.Sources(srcs)
	view.Findings(stderr, l.Report)
	if l.Report.HasErrors() {
		return nil, false
	}
	if len(l.Specs) == 0 && !o.allowEmpty {
		view.Printf(stderr, "syslet push: no specs in %s (%d file(s)); nothing was sent. An empty set removes every syslet unit whose removal is allowed: pass --allow-empty if that is what you want\n", what, len(srcs))
		return nil, false
	}
	return spec.NamedStream(l.Sources), true
}

func readDirIfExists(dir string) ([]spec.Source, error) {
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return spec.ReadSources(dir, nil)
}

// hostDirs lists the host directories of a hosts dir (all but common/).
func hostDirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--hosts-dir: %w", err)
	}
	var hosts []string
	for _, e := range ents {
		if e.IsDir() && e.Name() != commonDir && !strings.HasPrefix(e.Name(), ".") {
			hosts = append(hosts, e.Name())
		}
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("--hosts-dir %s has no host directories (only %s/ is shared, not a host)", dir, commonDir)
	}
	return hosts, nil
}

// selectHosts keeps the targets whose host directory's labels match sel,
// in order, and says which it kept. None kept is an error: a selector
// that picks nothing is a mistake, not an empty rollout.
func selectHosts(dir string, targets []string, sel fleet.Selector, stderr io.Writer) ([]string, error) {
	var kept []string
	for _, t := range targets {
		_, alias, _, _ := push.ParseTarget(t)
		// A host without a labels file (or a directory) has no labels.
		ls, err := fleet.ReadLabels(filepath.Join(dir, alias))
		if err != nil {
			return nil, fmt.Errorf("--select: %w", err)
		}
		if sel.Matches(ls) {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("--select %s: none of the %d host(s) of %s carries these labels (%s/<host>/%s)", sel, len(targets), dir, dir, fleet.LabelsFile)
	}
	fmt.Fprintf(stderr, "syslet push: --select %s: %d of %d host(s): %s\n", sel, len(kept), len(targets), strings.Join(kept, ", "))
	return kept, nil
}
