package quadletcheck_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/load/quadletcheck"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

const corpusDir = "testdata/corpus"

// corpusFile is one quadlet unit of the corpus and what it is there to show.
type corpusFile struct {
	name       string
	kind       spec.Kind
	data       []byte
	podman     unit.Podman // release the unit needs
	rejectPath string      // "## reject": path of the converter's finding
	sysletRule string      // "## syslet-rejects": rule syslet refuses it with
	sysletPath string
	// instanceOf is set on an instance of a template of the corpus
	// (template@instance.container): it is part of the template's spec.
	instanceOf string
}

// newerFeature is what the first value feature (unit.Features) newer than
// the linked converter that a unit file uses does, or "".
func newerFeature(t *testing.T, data []byte) string {
	t.Helper()
	f, err := unit.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, ft := range unit.Features {
		if !quadletcheck.Converter.Less(ft.Since) {
			continue
		}
		for _, s := range f.Sections {
			for _, e := range s.Entries {
				if s.Name == ft.Section && slices.Contains(ft.Keys, e.Key) && ft.Matches(e.Value) {
					if _, has := f.Last(ft.Section, ft.Unless); ft.Unless == "" || !has {
						return ft.What
					}
				}
			}
		}
	}
	return ""
}

func readCorpus(t testing.TB) []corpusFile {
	t.Helper()
	ents, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusFile
	for _, e := range ents {
		kind := spec.KindOfFile(e.Name())
		if kind == "" || e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(corpusDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		f := corpusFile{name: e.Name(), kind: kind, data: data, podman: unit.OldestPodman}
		for _, line := range strings.Split(string(data), "\n") {
			d, ok := strings.CutPrefix(line, "## ")
			if !ok {
				continue
			}
			w := strings.Fields(d)
			switch {
			case w[0] == "podman" && len(w) == 2:
				if f.podman, err = unit.ParsePodman(w[1]); err != nil {
					t.Fatalf("%s: %v", e.Name(), err)
				}
			case w[0] == "reject" && len(w) == 2:
				f.rejectPath = "[0]." + w[1]
			case w[0] == "syslet-rejects" && len(w) == 3:
				f.sysletRule, f.sysletPath = w[1], "[0]."+w[2]
			default:
				t.Fatalf("%s: unknown directive %q", e.Name(), line)
			}
		}
		out = append(out, f)
	}
	for i, f := range out {
		if tmpl, inst, ok := layout.Template(f.name); ok && inst != "" && slices.ContainsFunc(out, func(g corpusFile) bool { return g.name == tmpl }) {
			out[i].instanceOf = tmpl
		}
	}
	return out
}

// toSpec turns a quadlet file into the v1 spec a user would write for it:
// sections and keys in order, a repeated key as a list, and the keys syslet
// sets itself (the resource name, a build's File and context, a kube unit's
// Yaml) left to it. Its drop-in directory (FILE.d/*.conf) becomes dropIns;
// a template (NAME@.KIND) gets the corpus's instances of it (with their
// own drop-ins) and its DefaultInstance= as instances.
func toSpec(t testing.TB, f corpusFile, all []corpusFile) []byte {
	t.Helper()
	uf, err := unit.Parse(f.data)
	if err != nil {
		t.Fatalf("%s: %v", f.name, err)
	}
	name := strings.TrimSuffix(f.name, filepath.Ext(f.name))
	template := strings.HasSuffix(name, "@")
	name = strings.TrimSuffix(name, "@")
	var b bytes.Buffer
	js := func(v any) string { s, _ := json.Marshal(v); return string(s) }
	fmt.Fprintf(&b, `{"apiVersion":"v1","type":%s,"name":%s`, js(string(f.kind)), js(name))
	switch f.kind {
	case spec.Build:
		fmt.Fprintf(&b, `,"containerfile":"FROM docker.io/library/busybox:1.37\n"`)
	case spec.Kube:
		fmt.Fprintf(&b, `,"yaml":"apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n"`, name)
	}
	if v, ok := uf.Last(unit.Service, unit.KeyType); ok && v == "oneshot" && f.kind == spec.Container {
		b.WriteString(`,"desiredState":"oneshot"`)
	}
	if template {
		var insts []string
		for _, g := range all {
			if g.instanceOf != f.name {
				continue
			}
			_, inst, _ := layout.Template(g.name)
			if d := dropInsJSON(t, g.name); d != "" {
				insts = append(insts, fmt.Sprintf(`{"name":%s,"dropIns":%s}`, js(inst), d))
			} else {
				insts = append(insts, js(inst))
			}
		}
		if di, ok := uf.Last(unit.Install, unit.KeyDefaultInstance); ok && !slices.Contains(insts, js(di)) {
			insts = append(insts, js(di))
		}
		b.WriteString(`,"instances":[` + strings.Join(insts, ",") + `]`)
	}
	b.WriteString(`,"unit":` + sectionsJSON(uf))
	if d := dropInsJSON(t, f.name); d != "" {
		b.WriteString(`,"dropIns":` + d)
	}
	b.WriteString("}")
	return b.Bytes()
}

// syslet sets these keys itself: a corpus file's spec leaves them out.
var corpusDrop = map[string]bool{"Container.ContainerName": true, "Volume.VolumeName": true, "Network.NetworkName": true,
	"Build.File": true, "Build.SetWorkingDirectory": true, "Pod.PodName": true, "Kube.Yaml": true}

// sectionsJSON is a unit file as a spec's unit object.
func sectionsJSON(uf *unit.File) string {
	var b bytes.Buffer
	js := func(v any) string { s, _ := json.Marshal(v); return string(s) }
	b.WriteString("{")
	for i, sec := range uf.Sections {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s:{", js(sec.Name))
		var keys []string
		vals := map[string][]string{}
		for _, e := range sec.Entries {
			if corpusDrop[sec.Name+"."+e.Key] {
				continue
			}
			if _, ok := vals[e.Key]; !ok {
				keys = append(keys, e.Key)
			}
			vals[e.Key] = append(vals[e.Key], e.Value)
		}
		for j, k := range keys {
			if j > 0 {
				b.WriteByte(',')
			}
			if len(vals[k]) == 1 {
				fmt.Fprintf(&b, "%s:%s", js(k), js(vals[k][0]))
			} else {
				fmt.Fprintf(&b, "%s:%s", js(k), js(vals[k]))
			}
		}
		b.WriteByte('}')
	}
	b.WriteString("}")
	return b.String()
}

// dropInsJSON is a corpus file's drop-in directory as a dropIns object,
// "" when it has none.
func dropInsJSON(t testing.TB, fileName string) string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(corpusDir, fileName+".d", "*.conf"))
	if len(paths) == 0 {
		return ""
	}
	var parts []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		uf, err := unit.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		n, _ := json.Marshal(filepath.Base(p))
		parts = append(parts, string(n)+":"+sectionsJSON(uf))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// validate runs what `syslet validate --podman p` runs over the corpus as
// one deployment, and returns each source's error findings.
func validate(t testing.TB, files []corpusFile, p unit.Podman) map[string][]report.Finding {
	t.Helper()
	srcs := corpusSources(t, files)
	set := load.Sources(srcs)
	set.CheckPodman(p)
	rep := set.Report
	errs := map[string][]report.Finding{}
	for _, f := range rep.Findings {
		if f.Severity == report.Error {
			errs[f.Source] = append(errs[f.Source], f)
		}
	}
	return errs
}

func corpusSources(t testing.TB, files []corpusFile) []spec.Source {
	secrets, err := os.ReadFile(filepath.Join(corpusDir, "secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	srcs := []spec.Source{{Name: "secrets.json", Data: secrets}}
	for _, f := range files {
		if f.instanceOf == "" {
			srcs = append(srcs, spec.Source{Name: f.name, Data: toSpec(t, f, files)})
		}
	}
	return srcs
}

var converting = regexp.MustCompile(`converting "([^"]+)": (.*)$`)

// oracle runs podman's real generator (cmd/quadlet of the pinned module,
// built here) over the corpus files as they are, and returns the files it
// refuses to convert with its message. It is independent of syslet: its
// own directory loading, ordering and unitsInfoMap.
func oracle(t *testing.T) map[string]string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "quadlet")
	build := exec.Command("go", "build", "-o", bin, "github.com/containers/podman/v5/cmd/quadlet")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building podman's quadlet generator: %v\n%s", err, out)
	}
	abs, err := filepath.Abs(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin, "-dryrun", "-no-kmsg-log")
	run.Env = append(os.Environ(), "QUADLET_UNIT_DIRS="+abs)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	if err := run.Run(); err == nil {
		t.Fatal("the generator accepted the whole corpus; it holds units it must reject")
	}
	rejected := map[string]string{}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if m := converting.FindStringSubmatch(line); m != nil {
			rejected[m[1]] = m[2]
		}
	}
	return rejected
}

// TestCorpus is issue 14's acceptance: over a corpus of quadlet units
// covering every key podman 5.4 documents, every unit podman's generator
// rejects is a validate finding at the right JSON path, every unit it
// accepts validates, and keys of later releases are gated by --podman.
func TestCorpus(t *testing.T) {
	files := readCorpus(t)
	if len(files) < 100 {
		t.Fatalf("the corpus holds %d unit files, want at least 100", len(files))
	}
	rejected := oracle(t)
	t.Logf("%d unit files; podman's generator rejects %d", len(files), len(rejected))

	// The directives agree with the real generator.
	for _, f := range files {
		msg, refused := rejected[f.name]
		switch {
		case quadletcheck.Converter.Less(f.podman):
			// A key newer than the generator is unsupported there; a value
			// a later release reads differently (unit.Features) it refuses
			// in its own words.
			if !strings.HasPrefix(msg, "unsupported key") && (!refused || newerFeature(t, f.data) == "") {
				t.Errorf("%s needs podman %s, newer than the generator (%s), which should call its key unsupported or refuse its newer feature; it says %q", f.name, f.podman, quadletcheck.Converter, msg)
			}
		case refused != (f.rejectPath != ""):
			t.Errorf("%s: the generator rejects it: %v (%s), but the file says reject=%v", f.name, refused, msg, f.rejectPath != "")
		}
	}

	// Every file judged at the oldest release, and at the release it needs.
	releases := []unit.Podman{unit.OldestPodman}
	for _, f := range files {
		if !slices.Contains(releases, f.podman) {
			releases = append(releases, f.podman)
		}
	}
	for _, p := range releases {
		errs := validate(t, files, p)
		if e := errs["secrets.json"]; len(e) > 0 {
			t.Errorf("secrets.json: %v", e)
		}
		for _, f := range files {
			got := errs[f.name]
			switch {
			case p.Less(f.podman):
				if !hasFinding(got, spec.RuleNewerPodman, "", "podman "+f.podman.String()) {
					t.Errorf("--podman %s, %s: want a key-needs-newer-podman finding naming podman %s, got %v", p, f.name, f.podman, got)
				}
			case f.rejectPath != "":
				if !hasFinding(got, "", f.rejectPath, "") {
					t.Errorf("--podman %s, %s: the generator rejects it (%s); want a finding at %s, got %v", p, f.name, rejected[f.name], f.rejectPath, got)
				}
			case f.sysletRule != "":
				if !hasFinding(got, f.sysletRule, f.sysletPath, "") {
					t.Errorf("--podman %s, %s: want %s at %s, got %v", p, f.name, f.sysletRule, f.sysletPath, got)
				}
			default:
				if len(got) > 0 {
					t.Errorf("--podman %s, %s: the generator accepts it, syslet says %v", p, f.name, got)
				}
			}
		}
	}
}

func hasFinding(fs []report.Finding, rule, path, text string) bool {
	return slices.ContainsFunc(fs, func(f report.Finding) bool {
		return (rule == "" || f.Rule == rule) && (path == "" || f.Path == path) && strings.Contains(f.Message, text)
	})
}

// TestCorpusCoversKeys: every key podman 5.4 accepts in the four unit
// types syslet renders (and in [Quadlet]) is used by some corpus file of
// that type, and so is every key a later release added.
func TestCorpusCoversKeys(t *testing.T) {
	used := map[string]bool{}
	for _, f := range readCorpus(t) {
		uf, err := unit.Parse(f.data)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range uf.Sections {
			for _, e := range s.Entries {
				used[s.Name+"."+e.Key] = true
			}
		}
	}
	for _, sec := range []string{unit.Container, unit.Volume, unit.Network, unit.Build, unit.Pod, unit.Image, unit.Kube, unit.Artifact, unit.Quadlet} {
		for _, k := range quadletKeys(sec, unit.Podman{Major: 99}) {
			if !used[sec+"."+k] {
				since, _ := unit.KeySince(sec, k)
				t.Errorf("no corpus file uses [%s] %s (podman %s)", sec, k, since)
			}
		}
	}
}

var update = flag.Bool("update", false, "rewrite testdata/corpus.want")

// TestCorpusFindings keeps every finding of the corpus, at podman 5.4, in
// one reviewable file: what a user sees, path by path.
func TestCorpusFindings(t *testing.T) {
	files := readCorpus(t)
	srcs := corpusSources(t, files)
	set := load.Sources(srcs)
	set.CheckPodman(unit.OldestPodman)
	got := set.Report.String()
	const want = "testdata/corpus.want"
	if *update {
		if err := os.WriteFile(want, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(w) != got {
		t.Errorf("findings differ from %s (go tool task golden to accept):\n--- want\n%s--- got\n%s", want, w, got)
	}
}
