package adopt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// File is one unit file to adopt. For a .build, Context holds the files of
// its build directory (path relative to it → content and mode); for a
// .kube, Yaml its YAML file. DropIns are the *.conf files of the unit's
// own drop-in directory (NAME.KIND.d), by name. An instance of a
// template given as a link (web@1.container → web@.container) has Link
// set and no Data of its own.
type File struct {
	Path    string
	Data    []byte
	Link    string
	Context map[string]ContextFile
	DropIns map[string][]byte
	Yaml    []byte
}

// ContextFile is one file of a build directory.
type ContextFile struct {
	Data []byte
	Mode uint32
}

// Result is the adoption of a set of files.
type Result struct {
	// Specs is the v1 stream: a JSON array, one spec per adopted file,
	// then one external secret spec per podman secret the containers name
	// in Secret= (sorted by name).
	Specs []byte
	// Notes say, per file, what the first apply of Specs would change and
	// why; an empty list means the rendered units mean exactly what the
	// files say (the next plan is metadata-only at most).
	Notes []string
	// Failed lists files that could not be adopted at all.
	Failed []string
	// ExternalSecrets are the podman secrets declared external in Specs,
	// in name order.
	ExternalSecrets []string
}

// Convert adopts every file. Files that cannot be read as a quadlet unit
// are listed in Failed and left out of Specs. A template's instances (its
// links, or copies of it) become the template spec's instances.
func Convert(files []File) Result {
	var res Result
	var specs []obj
	secrets := map[string]bool{}
	instances := map[string][]File{} // template file name → its instances
	templates := map[string]bool{}
	for _, f := range files {
		if tmpl, inst, ok := layout.Template(path.Base(f.Path)); ok && inst == "" {
			templates[tmpl] = true
		}
	}
	var units []File
	for _, f := range files {
		base := path.Base(f.Path)
		tmpl, inst, ok := layout.Template(base)
		switch {
		case ok && inst != "" && templates[tmpl]:
			instances[tmpl] = append(instances[tmpl], f)
		case ok && inst != "":
			res.Failed = append(res.Failed, fmt.Sprintf("%s: an instance of %s, which is not among the files adopted (adopt the template with its instances)", f.Path, tmpl))
		case f.Link != "":
			res.Failed = append(res.Failed, fmt.Sprintf("%s: a link (to %s), not a unit file; only a template's instances may be links", f.Path, f.Link))
		default:
			units = append(units, f)
		}
	}
	for _, f := range units {
		o, notes, err := convert(f, instances[path.Base(f.Path)])
		if err != nil {
			res.Failed = append(res.Failed, fmt.Sprintf("%s: %v", f.Path, err))
			continue
		}
		specs = append(specs, o)
		for _, n := range notes {
			res.Notes = append(res.Notes, f.Path+": "+n)
		}
		for _, n := range usedSecrets(f) {
			secrets[n] = true
		}
	}
	// Every podman secret the containers use was made by hand, like the
	// units: it is declared external, so syslet checks that it exists and
	// never touches it. One spec per name, in name order.
	res.ExternalSecrets = slices.Sorted(maps.Keys(secrets))
	for _, n := range res.ExternalSecrets {
		specs = append(specs, obj{{"apiVersion", "v1"}, {"type", string(spec.Secret)}, {"name", n}, {"external", true}})
	}
	var b bytes.Buffer
	b.WriteString("[")
	for i, o := range specs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		o.write(&b, "  ")
	}
	b.WriteString("\n]\n")
	res.Specs = b.Bytes()
	// Render the whole stream back and compare with each file: what the
	// specs mean is what the operator gets.
	res.Notes = append(res.Notes, check(files, res.Specs)...)
	return res
}

func convert(f File, instances []File) (obj, []string, error) {
	base := path.Base(f.Path)
	kind := spec.KindOfFile(base)
	if kind == "" {
		return nil, nil, fmt.Errorf("not a quadlet unit file (%s)", strings.Join(unit.Exts(), ", "))
	}
	name := strings.TrimSuffix(base, kind.Ext())
	tmpl, _, isTemplate := layout.Template(base)
	if isTemplate {
		name = strings.TrimSuffix(name, "@")
		if !kind.Templates() {
			return nil, nil, fmt.Errorf("a template of a %s unit; syslet templates containers only", kind)
		}
	}
	uf, err := unit.Parse(f.Data)
	if err != nil {
		return nil, nil, err
	}
	a := &adoption{file: f, unit: uf, name: name, template: tmpl, instances: instances, drop: map[string]bool{unit.Syslet: true}}
	// The spec this becomes, as far as the keys syslet owns go.
	sp := &spec.Spec{Kind: kind, Name: name}
	if isTemplate {
		sp.Instances = []spec.Instance{}
	}
	if kind.Accepts("desiredState") {
		sp.DesiredState = spec.Running
		if t, _ := uf.Last(unit.Service, unit.KeyType); t == string(spec.Oneshot) {
			sp.DesiredState = spec.Oneshot
		}
	}
	a.state = sp.DesiredState
	for _, o := range kind.Owned() {
		a.owned(o, sp)
	}
	// syslet's own marker, if the file has one, carries the policies.
	removal, _ := uf.Last(unit.Syslet, unit.KeyRemovalAllowed)
	policy, _ := uf.Last(unit.Syslet, unit.KeyReclaimPolicy)
	var pre, post obj
	if ad := adopters[kind]; ad != nil {
		pre, post = ad(a)
	}
	extra := pre
	if kind.Accepts("removalAllowed") && removal == "false" {
		extra = append(extra, kv{"removalAllowed", false})
	}
	if kind.Accepts("reclaimPolicy") && policy != "" {
		extra = append(extra, kv{"reclaimPolicy", policy})
	}
	extra = append(extra, post...)
	var u obj
	for _, s := range uf.Sections {
		if a.drop[s.Name] {
			continue
		}
		var keys obj
		for _, e := range s.Entries {
			if a.drop[s.Name+"."+e.Key] {
				continue
			}
			keys = keys.add(e.Key, e.Value)
		}
		if len(keys) > 0 {
			u = append(u, kv{s.Name, keys})
		}
	}
	o := obj{{"apiVersion", "v1"}, {"type", string(kind)}, {"name", name}}
	o = append(o, extra...)
	o = append(o, kv{"unit", u})
	if d := dropIns(f.DropIns); len(d) > 0 {
		o = append(o, kv{"dropIns", d})
	}
	return o, a.notes, nil
}

// adoption is one unit file being adopted: what its spec leaves out of
// the unit (drop: "Section" or "Section.Key") and the notes on what the
// first apply changes.
type adoption struct {
	file      File
	unit      *unit.File
	name      string
	template  string // its template file name when it is one
	instances []File
	state     spec.State // a container's desiredState, as the unit reads
	drop      map[string]bool
	notes     []string
}

func (a *adoption) note(format string, args ...any) {
	a.notes = append(a.notes, fmt.Sprintf(format, args...))
}

// owned leaves a key syslet owns (spec.Owned) out of the unit adopted as
// sp and notes what the first apply changes for it: the object's name, or
// a desiredState's key the unit sets otherwise. A file's path of syslet's
// is its kind's adopter's to note.
func (a *adoption) owned(o spec.Owned, sp *spec.Spec) {
	switch want := o.Value(sp); {
	case !o.For(sp):
	case o.State != "":
		// A desiredState's keys are syslet's (as they were the earlier
		// syslet's): another value cannot be kept in the spec, only in a
		// drop-in of the operator's, which syslet leaves alone. [Install]
		// keys add up: an empty one first drops syslet's.
		vs := a.unit.Lookup(o.Section, o.Key)
		if len(vs) == 0 || slices.Equal(vs, []string{want}) {
			return
		}
		a.drop[o.Section+"."+o.Key] = true
		reset := ""
		if o.Section == unit.Install {
			reset = " after an empty " + o.Key + "="
		}
		v := strings.Join(vs, " ")
		a.note("[%s] %s=%s cannot be kept in the spec: syslet sets %s=%s for a %s container, as the earlier syslet did, so the first apply restarts it with that; to keep yours, write [%s] %s=%s%s in a drop-in, which syslet leaves alone (%s.d/%s.conf)",
			o.Section, o.Key, v, o.Key, want, sp.DesiredState, o.Section, o.Key, v, reset, path.Base(a.file.Path), strings.ToLower(o.Key))
	case o.Name:
		switch v, ok := a.unit.Last(o.Section, o.Key); {
		case !ok:
			a.note("[%s] %s= is not set; syslet sets %s=%s, so the first apply changes the podman object's name (a new, empty one for a volume)", o.Section, o.Key, o.Key, want)
		case v != want:
			a.note("[%s] %s=%s differs from the unit name; syslet sets %s=%s", o.Section, o.Key, v, o.Key, want)
		}
		a.drop[o.Section+"."+o.Key] = true
	default: // a file of syslet's
		a.drop[o.Section+"."+o.Key] = true
	}
}

// adopters adopt what a kind's spec has besides its unit (its fields):
// the spec fields to put before the shared ones (removalAllowed,
// reclaimPolicy) and after them.
var adopters = map[spec.Kind]func(a *adoption) (pre, post obj){
	spec.Container: adoptContainer,
	spec.Kube:      adoptKube,
	spec.Build:     adoptBuild,
}

// adoptContainer: its desiredState, and a template's instances.
func adoptContainer(a *adoption) (pre, post obj) {
	if a.state != spec.Running {
		pre = append(pre, kv{"desiredState", string(a.state)})
	}
	if a.template == "" {
		return pre, nil
	}
	var insts []any
	for _, i := range a.instances {
		_, inst, _ := layout.Template(path.Base(i.Path))
		n, d := instance(i, inst, a.template, a.unit)
		a.notes = append(a.notes, n...)
		if len(d) == 0 {
			insts = append(insts, inst)
		} else {
			insts = append(insts, obj{{"name", inst}, {"dropIns", d}})
		}
	}
	if insts == nil {
		insts = []any{}
		a.note("a template without instances: syslet enables none (list them in instances)")
	}
	return pre, obj{{"instances", insts}}
}

// adoptKube: the YAML its Yaml= names, read by Read.
func adoptKube(a *adoption) (pre, post obj) {
	if y, _ := a.unit.Last(unit.Kube, unit.KeyYaml); y != layout.KubeYaml(a.name) {
		a.note("[Kube] Yaml=%s: syslet writes the YAML to %s and points Yaml= there, so the first apply restarts the unit", y, layout.KubeYaml(a.name))
	}
	if a.file.Yaml == nil {
		a.note("the YAML file was not read; fill in the yaml field")
	}
	return obj{{"yaml", string(a.file.Yaml)}}, nil
}

// adoptBuild: the Containerfile and the other files of its context.
func adoptBuild(a *adoption) (pre, post obj) {
	cf, ctx, n := buildContext(a.unit, a.name, a.file.Context)
	a.notes = append(a.notes, n...)
	pre = obj{{"containerfile", cf}}
	if len(ctx) > 0 {
		pre = append(pre, kv{"contextFiles", ctx})
	}
	return pre, nil
}

// instance adopts one instance of a template: its drop-ins, and a note
// when it is a copy that says something else than the template (the
// first apply makes it a link to it).
func instance(f File, inst, tmpl string, tf *unit.File) ([]string, obj) {
	var notes []string
	if f.Link == "" {
		if uf, err := unit.Parse(f.Data); err != nil || !unit.SameMeaning(uf, tf) {
			notes = append(notes, fmt.Sprintf("instance %s (%s) is a file that differs from %s; syslet makes it a link to the template, so the first apply restarts it (put what differs in a drop-in of the instance)", inst, f.Path, tmpl))
		}
	} else if f.Link != tmpl {
		notes = append(notes, fmt.Sprintf("instance %s links to %s, not %s; the first apply relinks it", inst, f.Link, tmpl))
	}
	return notes, dropIns(f.DropIns)
}

// dropIns is a unit's drop-in directory as the spec's dropIns object, in
// name order (the pin a rollback writes is syslet's own, never adopted).
func dropIns(files map[string][]byte) obj {
	var o obj
	for _, n := range slices.Sorted(maps.Keys(files)) {
		if n == layout.PinFile {
			continue
		}
		uf, err := unit.Parse(files[n])
		if err != nil {
			continue
		}
		var secs obj
		for _, s := range uf.Sections {
			var keys obj
			for _, e := range s.Entries {
				keys = keys.add(e.Key, e.Value)
			}
			if len(keys) > 0 {
				secs = append(secs, kv{s.Name, keys})
			}
		}
		if len(secs) > 0 {
			o = append(o, kv{n, secs})
		}
	}
	return o
}

// usedSecrets lists the podman secrets a .container file's Secret= lines
// name, as quadlet (and render) read them.
func usedSecrets(f File) []string {
	if path.Ext(f.Path) != spec.Container.Ext() {
		return nil
	}
	uf, err := unit.Parse(f.Data)
	if err != nil {
		return nil
	}
	var names []string
	for _, v := range uf.Lookup(unit.Container, unit.KeySecret) {
		names = append(names, render.SecretNames(v)...)
	}
	return names
}

// buildContext finds the Containerfile and the other context files of a
// build. syslet keeps a build's context in /etc/containers/builds/<name>/;
// a build elsewhere is adopted from its files, and rebuilt once there.
func buildContext(uf *unit.File, name string, files map[string]ContextFile) (string, []obj, []string) {
	var notes []string
	dir := layout.BuildDirOf(name)
	if wd, _ := uf.Last(unit.Build, unit.KeySetWorkingDirectory); wd != dir {
		notes = append(notes, fmt.Sprintf("the build context is not in %s (SetWorkingDirectory=%s); syslet writes it there, so the first apply rebuilds the image", dir, wd))
	}
	cfName := "Containerfile"
	if f, _ := uf.Last(unit.Build, unit.KeyFile); f != "" && f != path.Join(dir, "Containerfile") {
		notes = append(notes, fmt.Sprintf("File=%s is not %s/Containerfile; the first apply rebuilds the image", f, dir))
		if !path.IsAbs(f) {
			cfName = path.Clean(f)
		}
	}
	cf, ok := files[cfName]
	if !ok {
		notes = append(notes, "no Containerfile found in the build context; fill in the containerfile field")
	}
	var names []string
	for n := range files {
		if n != cfName {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var ctx []obj
	for _, n := range names {
		c := obj{{"filename", n}, {"content", string(files[n].Data)}}
		if files[n].Mode != spec.DefaultMode {
			c = append(c, kv{"mode", fmt.Sprintf("%04o", files[n].Mode)})
		}
		ctx = append(ctx, c)
	}
	if ok && cf.Mode != spec.DefaultMode {
		notes = append(notes, fmt.Sprintf("the Containerfile has mode %04o; syslet writes it 0644, so the first apply rebuilds the image", cf.Mode))
	}
	return string(cf.Data), ctx, notes
}

// check renders the adopted stream and compares every unit with the file
// it came from, so the operator learns before the first apply what it
// would change.
func check(files []File, stream []byte) []string {
	set := load.Bytes("adopted", stream)
	out := set.Out
	var notes []string
	for _, f := range set.Report.Findings {
		notes = append(notes, "the adopted specs do not validate yet: "+f.String())
	}
	byName := map[string]*render.Unit{}
	for _, u := range out.Units {
		byName[u.FileName] = u
	}
	for _, f := range files {
		u := byName[path.Base(f.Path)]
		if u == nil {
			continue
		}
		for _, d := range u.DropIns {
			if df, err := unit.Parse(f.DropIns[d.Name]); err != nil || !unit.SameMeaning(df, d.File) {
				notes = append(notes, d.Path+": the drop-in syslet renders from the adopted spec differs in meaning, so the first apply restarts the unit")
			}
		}
		if u.Link != "" {
			continue // an instance: its template is compared
		}
		uf, err := unit.Parse(f.Data)
		if err != nil || unit.SameMeaning(uf, u.Parsed()) {
			continue
		}
		notes = append(notes, f.Path+": the unit syslet renders from the adopted spec differs in meaning, so the first apply restarts it; it would read:\n"+indent(string(u.Parsed().Without(unit.Syslet).Bytes())))
	}
	return notes
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// obj is a JSON object that keeps its key order, so the adopted spec reads
// like the file it came from.
type obj []kv

type kv struct {
	k string
	v any
}

// add sets key to value, turning a repeated key into a list.
func (o obj) add(k, v string) obj {
	for i := range o {
		if o[i].k != k {
			continue
		}
		switch cur := o[i].v.(type) {
		case string:
			o[i].v = []string{cur, v}
		case []string:
			o[i].v = append(cur, v)
		}
		return o
	}
	return append(o, kv{k, v})
}

func (o obj) write(b *bytes.Buffer, ind string) {
	b.WriteString("{")
	for i, e := range o {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + ind + "  ")
		writeJSON(b, e.k)
		b.WriteString(": ")
		switch v := e.v.(type) {
		case obj:
			v.write(b, ind+"  ")
		case []any:
			// Names inline; with an object among them, one item a line.
			lines := slices.ContainsFunc(v, func(x any) bool { _, ok := x.(obj); return ok })
			b.WriteString("[")
			for j, x := range v {
				if j > 0 {
					b.WriteString(",")
				}
				if lines {
					b.WriteString("\n" + ind + "    ")
				}
				if xo, ok := x.(obj); ok {
					xo.write(b, ind+"    ")
				} else {
					writeJSON(b, x)
				}
			}
			if lines {
				b.WriteString("\n" + ind + "  ")
			}
			b.WriteString("]")
		case []obj:
			b.WriteString("[")
			for j, x := range v {
				if j > 0 {
					b.WriteString(",")
				}
				b.WriteString("\n" + ind + "    ")
				x.write(b, ind+"    ")
			}
			b.WriteString("\n" + ind + "  ]")
		default:
			writeJSON(b, v)
		}
	}
	b.WriteString("\n" + ind + "}")
}

func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	b.Truncate(b.Len() - 1) // Encode's newline
}
