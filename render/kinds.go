package render

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// container renders a .container: its config files and dirs, mounted
// read-only, and its instances when it is a template; a start-first
// container (its spec has a proxy) as its two slots (slot.go).
func (o *Output) container(s *spec.Spec) {
	if s.Proxy != nil {
		o.slots(s)
		return
	}
	o.containerUnit(s, nil)
}

// containerUnit renders a container's unit: the spec's, or one slot's
// (sl, whose spec is named after the slot).
func (o *Output) containerUnit(s *spec.Spec, sl *slot) {
	u, b := o.newUnit(s)
	u.State = s.DesiredState
	u.RemovalAllowed = s.RemovalAllowed
	origin := b.specPath(s)

	if _, ok := s.Last(unit.Unit, unit.KeyDescription); !ok {
		b.add(unit.Unit, unit.KeyDescription, sl.description(s), origin)
	}
	b.section(s, unit.Unit)

	u.Container = s.ContainerName()
	b.section(s, unit.Container)
	sl.lines(u, b, origin)
	for _, f := range s.ConfigFiles {
		host := layout.ConfigPath(s.Name, f.MountPath)
		b.add(unit.Container, unit.KeyVolume, host+":"+f.MountPath+":ro,Z", f.Path+".mountPath")
		u.uses().ConfigFiles = append(u.uses().ConfigFiles, host)
		o.Files = append(o.Files, File{Path: host, Content: []byte(f.Content), Mode: f.Mode, Kind: ConfigFile, Owner: u.FileName})
	}
	for _, d := range s.ConfigDirs {
		host := layout.ConfigPath(s.Name, d.MountPath)
		b.add(unit.Container, unit.KeyVolume, host+":"+d.MountPath+":ro,Z", d.Path+".mountPath")
		u.uses().ConfigDirs = append(u.uses().ConfigDirs, host)
		dir := Dir{Path: host, Owner: u.FileName}
		for _, f := range d.Files {
			dir.Files = append(dir.Files, DirFile{Name: f.Name, Content: []byte(f.Content), Mode: f.Mode})
		}
		slices.SortFunc(dir.Files, func(a, b DirFile) int { return strings.Compare(a.Name, b.Name) })
		o.Dirs = append(o.Dirs, dir)
	}
	// The keys a desiredState sets overwrite the spec's (spec.Owned).
	b.section(s, unit.Service)
	b.section(s, unit.Install)
	b.rest(s, unit.Unit, unit.Container, unit.Service, unit.Install)
	if s.Socket != nil {
		o.socket(s, b)
	}
	b.marker(&s.RemovalAllowed, "")
	if s.Probe != nil {
		b.mark(unit.KeyProbe, s.Probe.Marker())
		u.Probe = s.Probe
	}
	sl.marker(b)
	var instances []*Unit
	for _, inst := range s.Instances {
		b.add(unit.Syslet, unit.KeyInstance, inst.Name, inst.Path)
		instances = append(instances, &Unit{Spec: s, Origin: s.Origin(), Kind: s.Kind, Name: s.Name, FileName: layout.Instance(u.FileName, inst.Name),
			Instance: inst.Name, Link: u.FileName, State: u.State, Container: s.Name + "-" + inst.Name, RemovalAllowed: s.RemovalAllowed, RemovalSet: s.RemovalAllowedSet, Probe: s.Probe,
			DropIns: dropIns(s, layout.Instance(u.FileName, inst.Name), inst.DropIns)})
	}
	u.finish()
	u.DropIns = dropIns(s, u.FileName, s.DropIns)
	sealed := slices.Clone(o.filesOf(u.FileName))
	for _, iu := range append([]*Unit{u}, instances...) {
		for _, d := range iu.DropIns {
			sealed = append(sealed, File{Path: d.Path, Content: d.Content})
		}
	}
	b.seal(sealed)
	u.merge(nil)
	o.Units = append(o.Units, u)
	for _, iu := range instances {
		iu.File = u.File
		if used := u.Used(); used.ConfigFiles != nil || used.ConfigDirs != nil {
			iu.Uses = &Uses{ConfigFiles: used.ConfigFiles, ConfigDirs: used.ConfigDirs}
		}
		iu.Path, iu.Service = layout.UnitPath(iu.FileName), unit.DefaultService(iu.FileName)
		iu.merge(u)
		o.Units = append(o.Units, iu)
	}
}

// build renders a .build: its Containerfile and context files are files
// syslet writes under the build's directory, which File= and
// SetWorkingDirectory= point at (spec.Owned).
func (o *Output) build(s *spec.Spec) {
	u, b := o.plain(s)
	dir := layout.BuildDirOf(s.Name)
	// The image is known by its first tag: that is the name quadlet gives
	// containers that use Image=NAME.build (GetBuiltImageName).
	if tags := u.File.Lookup(unit.Build, unit.KeyImageTag); len(tags) > 0 {
		u.Resource = tags[0]
	}
	o.Files = append(o.Files, File{Path: layout.Containerfile(s.Name), Content: []byte(s.Containerfile), Mode: spec.DefaultMode, Kind: ContextFile, Owner: u.FileName})
	for _, f := range s.ContextFiles {
		o.Files = append(o.Files, File{Path: path.Join(dir, f.Filename), Content: []byte(f.Content), Mode: f.Mode, Kind: ContextFile, Owner: u.FileName})
	}
	b.sealDropIns(o.filesOf(u.FileName))
	o.Units = append(o.Units, u)
}

// image renders a .image: Image= is pulled (by the apply's pull step when
// podman's pull API takes every key the unit sets, else by its service);
// containers with Image=NAME.image run ImageTag=, or Image= when unset
// (its ObjectKeys).
func (o *Output) image(s *spec.Spec) {
	u, b := o.plain(s)
	b.sealDropIns(nil)
	u.Image, _ = u.Merged.Last(unit.Image, unit.KeyImage)
	u.Pull = pullOptions(u.Merged)
	o.Units = append(o.Units, u)
}

// pullByService are the [Image] keys podman's pull API does not take (or
// that would put a credential into the plan): an image unit that sets one
// is pulled by its own service when it starts, not by the pull step.
var pullByService = []string{"CertDir", "Creds", "DecryptionKey", "ContainersConfModule", "GlobalArgs", "PodmanArgs"}

// pullOptions reads an image unit's pull settings, or nil when the pull
// step cannot pull it as the service would.
func pullOptions(f *unit.File) *host.PullOptions {
	// ImageTag= names what an archive source becomes: only the service's
	// own pull gives the image that name.
	for _, k := range append(pullByService, unit.KeyImageTag) {
		if _, ok := f.Last(unit.Image, k); ok {
			return nil
		}
	}
	last := func(k string) string { v, _ := f.Last(unit.Image, k); return v }
	p := &host.PullOptions{Arch: last("Arch"), OS: last("OS"), Variant: last("Variant"), AuthFile: last("AuthFile"),
		Policy: last("Policy"), RetryDelay: last("RetryDelay"), AllTags: truth(last("AllTags"))}
	if v, ok := f.Last(unit.Image, "TLSVerify"); ok {
		t := truth(v)
		p.TLSVerify = &t
	}
	if v, ok := f.Last(unit.Image, "Retry"); ok {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return nil // the service says what it makes of it
		}
		r := uint(n)
		p.Retry = &r
	}
	return p
}

// truth reads a boolean as quadlet does.
func truth(v string) bool {
	switch strings.ToLower(v) {
	case "1", "yes", "true", "on":
		return true
	}
	return false
}

// kube renders a .kube: the spec's YAML is a config file syslet writes
// (layout.KubeYaml) and Yaml= points at (spec.Owned); a change to it
// restarts the unit.
func (o *Output) kube(s *spec.Spec) {
	u, b := o.plain(s)
	u.uses().ConfigFiles = []string{layout.KubeYaml(s.Name)}
	o.Files = append(o.Files, File{Path: layout.KubeYaml(s.Name), Content: []byte(s.Yaml), Mode: spec.DefaultMode, Kind: ConfigFile, Owner: u.FileName})
	b.sealDropIns(o.filesOf(u.FileName))
	o.Units = append(o.Units, u)
}

// dropInHeader opens every drop-in syslet writes, for whoever reads it on
// the host.
func dropInHeader(owner string) string {
	return "# Written by syslet: a drop-in of " + owner + " (the unit's [X-Syslet] marker records its digest).\n"
}

// dropIns renders a unit's drop-ins (owner is its file name), sections in
// the unit's canonical order and keys sorted, as the unit itself.
func dropIns(s *spec.Spec, owner string, ds []spec.DropIn) []DropIn {
	if len(ds) == 0 {
		return nil
	}
	own := s.Kind.Quadlet().Section
	out := make([]DropIn, 0, len(ds))
	for _, d := range ds {
		rd := DropIn{Name: d.Name, Path: layout.DropInPath(owner, d.Name), Owner: owner, File: &unit.File{}}
		var names []string
		for _, sec := range d.Unit {
			names = append(names, sec.Name)
		}
		rank := func(n string) int {
			if i := slices.Index([]string{unit.Unit, own, unit.Service, unit.Install}, n); i >= 0 {
				return i
			}
			return 4
		}
		slices.SortStableFunc(names, func(a, b string) int {
			if rank(a) != rank(b) {
				return rank(a) - rank(b)
			}
			return strings.Compare(a, b)
		})
		for _, n := range names {
			for _, sec := range d.Unit {
				if sec.Name != n {
					continue
				}
				for _, e := range sec.Entries {
					for _, v := range e.Lines {
						rd.File.Add(n, e.Key, v.Text)
						rd.Lines = append(rd.Lines, Line{n, e.Key, v.Text, v.Path})
					}
				}
			}
		}
		rd.File.SortKeys()
		rd.Content = append([]byte(dropInHeader(owner)), rd.File.Bytes()...)
		out = append(out, rd)
	}
	return out
}
