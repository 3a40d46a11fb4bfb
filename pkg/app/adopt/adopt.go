package adopt

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
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
