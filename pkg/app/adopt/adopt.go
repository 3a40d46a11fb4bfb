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
// its build directory (path relative to it → content and mode).
type File struct {
	Path    string
	Data    []byte
	Context map[string]ContextFile
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
// of the four kinds are listed in Failed and left out of Specs.
func Convert(files []File) Result {
	var res Result
	var specs []obj
	secrets := map[string]bool{}
	for _, f := range files {
		o, notes, err := convert(f)
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

func convert(f File) (obj, []string, error) {
	base := path.Base(f.Path)
	ext := path.Ext(base)
	name := strings.TrimSuffix(base, ext)
	kind := spec.Kind(strings.TrimPrefix(ext, "."))
	switch kind {
	case spec.Container, spec.Volume, spec.Network, spec.Build:
	default:
		return nil, nil, fmt.Errorf("not a .container, .volume, .network or .build file")
	}
	uf, err := unit.Parse(f.Data)
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	o := obj{{"apiVersion", "v1"}, {"type", string(kind)}, {"name", name}}
	// syslet's own marker, if the file has one, carries the policies.
	removal, policy := "", ""
	if v, ok := uf.Last(unit.Syslet, unit.KeyRemovalAllowed); ok {
		removal = v
	}
	if v, ok := uf.Last(unit.Syslet, unit.KeyReclaimPolicy); ok {
		policy = v
	}
	drop := map[string]bool{unit.Syslet: true}
	forced := func(section, key string) {
		v, ok := uf.Last(section, key)
		switch {
		case !ok:
			notes = append(notes, fmt.Sprintf("[%s] %s= is not set; syslet sets %s=%s, so the first apply changes the podman object's name (a new, empty one for a volume)", section, key, key, name))
		case v != name:
			notes = append(notes, fmt.Sprintf("[%s] %s=%s differs from the unit name; syslet sets %s=%s", section, key, v, key, name))
		}
		drop[section+"."+key] = true
	}
	var extra obj
	switch kind {
	case spec.Container:
		forced(unit.Container, unit.KeyContainerName)
		state := "running"
		if t, _ := uf.Last(unit.Service, unit.KeyType); t == "oneshot" {
			state = "oneshot"
		}
		if state != "running" {
			extra = append(extra, kv{"desiredState", state})
		} else {
			// A running container's Restart= and WantedBy= are syslet's
			// (as they were the earlier syslet's): another value cannot
			// be kept in the spec, only in a drop-in of the operator's.
			for _, k := range []struct{ section, key, want, reset string }{
				{unit.Service, unit.KeyRestart, spec.RestartRunning, ""},
				// WantedBy= adds up: an empty one first drops syslet's.
				{unit.Install, unit.KeyWantedBy, spec.WantedByRunning, " after an empty WantedBy="},
			} {
				vs := uf.Lookup(k.section, k.key)
				if len(vs) == 0 || slices.Equal(vs, []string{k.want}) {
					continue
				}
				drop[k.section+"."+k.key] = true
				v := strings.Join(vs, " ")
				notes = append(notes, fmt.Sprintf("[%s] %s=%s cannot be kept in the spec: syslet sets %s=%s for a running container, as the earlier syslet did, so the first apply restarts it with that; to keep yours, write [%s] %s=%s%s in a drop-in, which syslet leaves alone (%s.d/%s.conf)",
					k.section, k.key, v, k.key, k.want, k.section, k.key, v, k.reset, path.Base(f.Path), strings.ToLower(k.key)))
			}
		}
		if removal == "false" {
			extra = append(extra, kv{"removalAllowed", false})
		}
	case spec.Volume:
		forced(unit.Volume, unit.KeyVolumeName)
		extra = policies(removal, policy)
	case spec.Network:
		forced(unit.Network, unit.KeyNetworkName)
		extra = policies(removal, policy)
	case spec.Build:
		drop[unit.Build+"."+unit.KeyFile] = true
		drop[unit.Build+"."+unit.KeySetWorkingDirectory] = true
		cf, ctx, n := buildContext(uf, name, f.Context)
		notes = append(notes, n...)
		extra = append(extra, kv{"containerfile", cf})
		if len(ctx) > 0 {
			extra = append(extra, kv{"contextFiles", ctx})
		}
		if policy != "" {
			extra = append(extra, kv{"reclaimPolicy", policy})
		}
	}
	var u obj
	for _, s := range uf.Sections {
		if drop[s.Name] {
			continue
		}
		var keys obj
		for _, e := range s.Entries {
			if drop[s.Name+"."+e.Key] {
				continue
			}
			keys = keys.add(e.Key, e.Value)
		}
		if len(keys) > 0 {
			u = append(u, kv{s.Name, keys})
		}
	}
	o = append(o, extra...)
	o = append(o, kv{"unit", u})
	return o, notes, nil
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

func policies(removal, policy string) obj {
	var o obj
	if removal == "false" {
		o = append(o, kv{"removalAllowed", false})
	}
	if policy != "" {
		o = append(o, kv{"reclaimPolicy", policy})
	}
	return o
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
		uf, err := unit.Parse(f.Data)
		if err != nil || unit.SameMeaning(uf, u.File) {
			continue
		}
		notes = append(notes, f.Path+": the unit syslet renders from the adopted spec differs in meaning, so the first apply restarts it; it would read:\n"+indent(string(u.File.Without(unit.Syslet).Bytes())))
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
