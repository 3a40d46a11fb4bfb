//go:build integration

package integration

// Issue 23: the fault suite. Each faults_*_test.go file injects one kind of
// fault a production host meets into a real test host — SIGKILLs at random
// moments of an upgrade, a full disk, a registry that is down, refuses or
// hangs, a stop that hangs, a unit that never comes up, a frozen D-Bus,
// podman's API gone, webhookd killed mid-deploy, a reboot, racing applies
// and a lock file deleted while held — and then proves from the host
// (systemd, podman, what the containers serve, the files on disk) that
// nothing was half-written and that one plain run converges. Every fault
// adds a row to the table TestMain prints at the end (and writes to
// $SYSLET_FAULT_TABLE), the table of integration/README.md.
//
// This file holds what the fault files share: the table, and the check of
// the managed trees for half-written files and leftovers.

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/digest"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// buildFaultproxy compiles integration/faultproxy for the guests
// (linux/amd64, static).
func buildFaultproxy(root, out string) error {
	t0 := time.Now()
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./integration/faultproxy")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./integration/faultproxy: %w", err)
	}
	fmt.Fprintf(os.Stderr, "integration: built %s in %s\n", out, time.Since(t0).Round(time.Millisecond))
	return nil
}

// faultRow is one row of the fault table.
type faultRow struct {
	Fault    string
	Tries    int
	Survived int
	DataLost string // "none", or what was lost
	NextRun  string // what the run after the fault printed (the lines that tell)
}

var faultTable struct {
	sync.Mutex
	rows []faultRow
}

// recordFault adds a row to the fault table; a test that failed counts
// its tries but not as survived.
func recordFault(t *testing.T, r faultRow) {
	t.Helper()
	if t.Failed() {
		r.Survived = 0
	}
	if p := testhost.RecipeOf(t); p != testhost.Recipe() {
		r.Fault = "[" + p + "] " + r.Fault // run by a platform suite
	}
	t.Logf("FAULT %s: %d tried, %d survived, data lost: %s; next run: %s", r.Fault, r.Tries, r.Survived, r.DataLost, r.NextRun)
	faultTable.Lock()
	defer faultTable.Unlock()
	faultTable.rows = append(faultTable.rows, r)
}

// writeFaultTable prints the table of every fault that ran (after the
// tests), and writes it to $SYSLET_FAULT_TABLE when that is set.
func writeFaultTable() {
	faultTable.Lock()
	defer faultTable.Unlock()
	if len(faultTable.rows) == 0 {
		return
	}
	rows := append([]faultRow(nil), faultTable.rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Fault < rows[j].Fault })
	var b strings.Builder
	b.WriteString("| fault | tries | survived | data lost | what the next run printed |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s |\n", r.Fault, r.Tries, r.Survived, r.DataLost, strings.ReplaceAll(r.NextRun, "|", `\|`))
	}
	fmt.Fprintf(os.Stderr, "\nintegration: fault table\n%s", b.String())
	if p := os.Getenv("SYSLET_FAULT_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "integration: writing %s: %v\n", p, err)
		}
	}
}

// nextRun picks from a run's output the lines that say how it took over:
// whether it resumed, what it removed, its summary, the gate, or that
// there was nothing to do.
func nextRun(out string) string {
	var keep []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.Contains(l, "did not finish;"), strings.Contains(l, "failed and put the host back;"), strings.HasPrefix(l, "Summary"),
			strings.HasPrefix(l, "No changes"), strings.HasPrefix(l, "Health gate"), strings.HasPrefix(l, "ROLLED BACK"),
			strings.Contains(l, "temporary file(s) an interrupted run left"):
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, " / ")
}

// treeReport is what checkTrees found in the managed trees of a host.
type treeReport struct {
	units, files int      // unit files and config files checked
	explained    []string // not what the marker records, but what an unfinished run was writing
	bad          []string // neither: half-written, truncated or unparsable
	leftovers    []string // temporary names, config dir versions ..data does not name
	runs         []*runlog.RunInfo
}

// checkTrees copies the host's managed trees and run journal out and
// checks every file syslet manages: each unit file parses and its
// Digest= matches its content; each config file matches the FileDigest=
// its unit records, or the content an unfinished run in the journal was
// writing there (step 3 done, step 4 not yet); each file of a config dir's
// current version matches the version's manifest. It also lists the
// temporary files an interrupted run left.
func checkTrees(t *testing.T, h *testhost.Host) treeReport {
	t.Helper()
	root := t.TempDir()
	must(t, h.CopyOut("/etc/containers", filepath.Join(root, "etc", "containers")))
	if h.Run("test -e " + layout.Journal).OK() {
		must(t, h.CopyOut(layout.Journal, filepath.Join(root, layout.Journal)))
	}
	runs, err := runlog.Open(root).Runs()
	must(t, err)
	writing := map[string]bool{} // path + " " + hex digest an unfinished run was writing
	for _, r := range runs {
		if !r.LeftWorkUndone() {
			continue
		}
		for _, a := range r.Intent.Actions {
			if a.Digest != "" {
				writing[a.Target+" "+a.Digest] = true
			}
		}
	}
	rep := treeReport{runs: runs}
	read := func(p string) ([]byte, bool) {
		b, err := os.ReadFile(layout.Under(root, p))
		return b, err == nil
	}
	// Leftovers, and every config dir (a directory with a ..data link).
	var dirs []string
	for _, top := range []string{layout.UnitDir, layout.ConfigRoot, layout.BuildRoot} {
		base := layout.Under(root, top)
		filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			hp := "/" + strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
			if layout.Leftover(e.Name()) {
				rep.leftovers = append(rep.leftovers, hp)
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if e.Name() == layout.DataLink && e.Type()&fs.ModeSymlink != 0 {
				dirs = append(dirs, path.Dir(hp))
			}
			return nil
		})
	}
	for _, d := range dirs {
		cur, err := os.Readlink(layout.Under(root, d+"/"+layout.DataLink))
		if err != nil {
			rep.bad = append(rep.bad, d+": unreadable ..data link")
			continue
		}
		ents, _ := os.ReadDir(layout.Under(root, d))
		for _, e := range ents {
			if _, ok := layout.Version(e.Name()); ok && e.Name() != cur {
				rep.leftovers = append(rep.leftovers, d+"/"+e.Name())
			}
		}
		manifest, ok := read(d + "/" + cur + "/" + layout.Digests)
		if !ok {
			rep.bad = append(rep.bad, d+": its version "+cur+" has no manifest")
			continue
		}
		for name, want := range render.ParseDirDigests(manifest) {
			rep.files++
			if b, ok := read(d + "/" + name); !ok || render.Digest(b) != want {
				rep.bad = append(rep.bad, fmt.Sprintf("%s/%s: not what version %s's manifest records", d, name, cur))
			}
		}
	}
	// Unit files (and drop-ins), and the config files their markers record.
	unitRoot := layout.Under(root, layout.UnitDir)
	filepath.WalkDir(unitRoot, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || layout.Leftover(e.Name()) || !(unit.IsQuadletFile(e.Name()) || strings.HasSuffix(e.Name(), ".conf")) {
			return nil
		}
		hp := layout.UnitDir + strings.TrimPrefix(p, unitRoot)
		data, _ := os.ReadFile(p)
		rep.units++
		f, err := unit.Parse(data)
		if err != nil {
			rep.bad = append(rep.bad, hp+": does not parse: "+err.Error())
			return nil
		}
		if recorded, ok := markerMatches(data); recorded && !ok {
			if writing[hp+" "+digest.Of(data).Hex()] {
				rep.explained = append(rep.explained, hp)
			} else {
				rep.bad = append(rep.bad, hp+": its content is not what its Digest= records")
			}
		}
		for _, v := range f.Lookup(unit.Syslet, unit.KeyFileDigest) {
			want, fp, ok := strings.Cut(v, " ")
			if !ok {
				continue
			}
			rep.files++
			b, ok := read(fp)
			switch {
			case ok && render.Digest(b) == want:
			case ok && writing[fp+" "+digest.Of(b).Hex()]:
				rep.explained = append(rep.explained, fp)
			case !ok:
				rep.bad = append(rep.bad, fp+": missing, though "+hp+" records it")
			default:
				rep.bad = append(rep.bad, fp+": neither what "+hp+" records nor what an unfinished run was writing")
			}
		}
		return nil
	})
	sort.Strings(rep.leftovers)
	return rep
}

// markerMatches checks a unit file's own Digest=: recorded says it has
// one, ok that the rest of the file (without that line) hashes to it.
func markerMatches(data []byte) (recorded, ok bool) {
	var rest bytes.Buffer
	want, section := "", ""
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			section = l[1 : len(l)-1]
		}
		if k, v, found := strings.Cut(l, "="); found && section == unit.Syslet && strings.TrimSpace(k) == unit.KeyDigest {
			want = strings.TrimSpace(v)
			continue
		}
		rest.Write(line)
	}
	if want == "" {
		return false, false
	}
	return true, render.Digest(rest.Bytes()) == want
}

// sane fails the test when the trees hold a half-written file, and when
// leftovers must be gone and are not.
func sane(t *testing.T, h *testhost.Host, noLeftovers bool) treeReport {
	t.Helper()
	rep := checkTrees(t, h)
	for _, b := range rep.bad {
		t.Errorf("half-written: %s", b)
	}
	if noLeftovers && len(rep.leftovers) > 0 {
		t.Errorf("temporary files left in the managed trees: %v", rep.leftovers)
	}
	return rep
}
