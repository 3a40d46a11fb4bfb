package adopt

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

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
