package spec

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// mountPath checks a path inside the container: absolute, clean, no "..",
// and nothing that would break the Volume= syntax it ends up in. A config
// dir's path may end in "/" (the earlier syslet's own examples write
// "/etc/nginx/conf.d/"): that is a warning, and the path is read without
// it.
func (d *decoder) mountPath(n *jsontree.Node, dir bool) string {
	p := d.str(n, "mountPath", true)
	v := n.Get("mountPath")
	if v == nil || v.Kind != jsontree.String || p == "" {
		return p
	}
	if trimmed := strings.TrimRight(p, "/"); dir && trimmed != p && trimmed != "" && path.Clean(trimmed) == trimmed &&
		!hasControl(p) && !slices.Contains(strings.Split(p, "/"), "..") {
		d.warnf(v.Path(), RuleMountPath, "mountPath %q is read as %q: a config dir's path needs no trailing slash; remove it", p, trimmed)
		p = trimmed
	}
	switch {
	case hasControl(p):
		d.errf(v.Path(), RuleControlChar, "mountPath contains a control character")
	case !strings.HasPrefix(p, "/"):
		d.errf(v.Path(), RuleMountPath, "mountPath %q must be absolute", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		d.errf(v.Path(), RuleMountPath, "mountPath %q must not contain \"..\"", p)
	case path.Clean(p) != p:
		d.errf(v.Path(), RuleMountPath, "mountPath %q is not clean (did you mean %q?)", p, path.Clean(p))
	case p == "/":
		d.errf(v.Path(), RuleMountPath, "mountPath must not be the container's root")
	case strings.ContainsAny(p, ": \t,\\"):
		d.errf(v.Path(), RuleMountPath, "mountPath %q must not contain ':', ',', '\\' or whitespace (it becomes part of a Volume= line)", p)
	case longPath(p) != "":
		d.errf(v.Path(), RuleMountPath, "mountPath %s", longPath(p))
	default:
		return p
	}
	return ""
}

// ContainerName is the podman name syslet gives the container: the spec
// name, or for a template NAME-%i (one per instance, NAME-1 for
// NAME@1.service).
func (s *Spec) ContainerName() string {
	if s.Template() {
		return s.Name + "-%i"
	}
	return s.Name
}

// isTrue reads a boolean the way quadlet does (LookupBoolean): anything
// else is false.
func isTrue(v string) bool {
	switch strings.ToLower(v) {
	case "1", "yes", "true", "on":
		return true
	}
	return false
}

func (d *decoder) container(n *jsontree.Node, s *Spec) {
	s.DesiredState = d.desiredState(n.Get("desiredState"))
	if v := n.Get("configFiles"); v != nil {
		for _, it := range d.objects(v, "configFiles", "mountPath", "content", "mode") {
			s.ConfigFiles = append(s.ConfigFiles, ConfigFile{
				MountPath: d.mountPath(it, false), Content: d.content(it, "content"), Mode: d.mode(it), Path: it.Path(),
			})
		}
	}
	if v := n.Get("configDirs"); v != nil {
		for _, it := range d.objects(v, "configDirs", "mountPath", "files") {
			s.ConfigDirs = append(s.ConfigDirs, d.configDir(it))
		}
	}
	d.mountPaths(s)
	// After the drop-ins, which may publish the port the probe names, or
	// set the network, and before the route, which needs the probe.
	d.later = append(d.later, func() { d.probe(n, s) }, func() { d.proxyRoute(n, s) })

	if d.missing(s, unit.Container, unit.KeyImage, "Rootfs") {
		d.errf(jsontree.Child(s.Path(), "unit")+".Container", RuleImageRequired, "[Container] Image is required")
	}
	for _, v := range s.Values(unit.Container, unit.KeyImage) {
		if why := checkImageRef(v.Text); why != "" {
			d.errf(v.Path, RuleImageRef, "Image %q is not an image reference podman accepts: %s", v.Text, why)
		}
	}
	d.owned(s, "") // ContainerName=
	if v := n.Get("socket"); v != nil {
		d.socket(v, s)
	}
	if pod, ok := s.Last(unit.Container, unit.KeyPod); ok && s.DesiredState == Stopped {
		// The pod's service starts every container of the pod that does
		// not say otherwise: a stopped one would be started with it.
		if v, ok := s.Last(unit.Container, unit.KeyStartWithPod); !ok || isTrue(v.Text) {
			d.errf(pod.Path, RuleStateConflict, "desiredState \"stopped\" in pod %s needs [Container] StartWithPod=false: the pod starts its containers", pod.Text)
		}
	}
	if di, ok := s.Last(unit.Install, unit.KeyDefaultInstance); ok {
		switch {
		case !s.Template():
			d.errf(di.Path, RuleInstance, "[Install] DefaultInstance= only means something in a template: give the spec instances")
		case !slices.ContainsFunc(s.Instances, func(i Instance) bool { return i.Name == di.Text }):
			d.errf(di.Path, RuleInstance, "[Install] DefaultInstance=%s is not one of the spec's instances: syslet starts, stops and removes the instances it lists, so list %q in instances", di.Text, di.Text)
		}
	}
	d.serviceName(s)
	typ, hasType := s.Last(unit.Service, unit.KeyType)
	restart, hasRestart := s.Last(unit.Service, unit.KeyRestart)
	switch s.DesiredState {
	case Running, Stopped:
		if hasType && typ.Text == "oneshot" {
			d.errf(typ.Path, RuleStateConflict, "[Service] Type=oneshot conflicts with desiredState %q: use desiredState \"oneshot\"", s.DesiredState)
		}
	}
	d.owned(s, s.DesiredState) // Restart=, WantedBy= or Type=
	if s.DesiredState == Oneshot && hasRestart && restart.Text != "no" {
		d.errf(restart.Path, RuleStateConflict, "[Service] Restart=%s conflicts with desiredState \"oneshot\": a oneshot job runs to completion", restart.Text)
	}
	switch {
	case len(s.ConfigDirs) == 0:
	case s.DesiredState == Oneshot:
		// Asking for ExecReload= as well would send the user the wrong way:
		// a oneshot container cannot use config dirs at all.
		d.errf(jsontree.Child(s.Path(), "configDirs"), RuleStateConflict, "configDirs need a running service to reload; a oneshot container cannot use them (use configFiles)")
	case d.missing(s, unit.Service, unit.KeyExecReload) && d.missing(s, unit.Container, unit.KeyReloadCmd, unit.KeyReloadSignal):
		d.errf(jsontree.Child(s.Path(), "configDirs"), RuleExecReload, "configDirs are reloaded in place, so the unit needs [Service] ExecReload= (for example \"/usr/bin/podman kill --signal HUP %s\")", s.Name)
	}
}

// desiredState reads a container's desiredState: running when it is
// absent or wrong (the error is reported).
func (d *decoder) desiredState(v *jsontree.Node) State {
	if v == nil {
		return Running
	}
	if v.Kind != jsontree.String {
		d.errf(v.Path(), RuleFieldType, "desiredState must be a string, got %s", v.Kind)
		return Running
	}
	switch st := State(strings.ToLower(v.Text)); st {
	case Running, Stopped, Oneshot:
		if string(st) != v.Text {
			// The earlier syslet read desiredState in any case.
			d.warnf(v.Path(), RuleEnum, "desiredState %q is read as %q; write it in lower case", v.Text, st)
		}
		return st
	default:
		d.errf(v.Path(), RuleEnum, "desiredState %q is not running, stopped or oneshot", v.Text)
		return Running
	}
}

// configDir reads one entry of configDirs: its mount path and its files,
// each name a plain name and used once.
func (d *decoder) configDir(it *jsontree.Node) ConfigDir {
	cd := ConfigDir{MountPath: d.mountPath(it, true), Path: it.Path()}
	fv := it.Get("files")
	if fv == nil {
		d.errf(jsontree.Child(it.Path(), "files"), RuleRequired, "files is required (it may be an empty list)")
		return cd
	}
	seen := map[string]string{}
	for _, f := range d.objects(fv, "files", "name", "content", "mode") {
		df := DirFile{Name: d.str(f, "name", true), Content: d.content(f, "content"), Mode: d.mode(f), Path: f.Path()}
		np := jsontree.Child(f.Path(), "name")
		switch {
		case df.Name == "":
		case hasControl(df.Name):
			d.errf(np, RuleControlChar, "file name contains a control character")
		case strings.ContainsAny(df.Name, `/\`) || df.Name == "." || strings.HasPrefix(df.Name, ".."):
			d.errf(np, RuleFileName, "file name %q must be a plain name: no '/', not '.', not starting with \"..\" (reserved for the version links)", df.Name)
		case len(df.Name) > maxComponent:
			d.errf(np, RuleFileName, "file name is %d bytes long; a file name can have at most %d", len(df.Name), maxComponent)
		case seen[df.Name] != "":
			d.errf(np, RuleFileDuplicate, "file name %q already appears at %s", df.Name, seen[df.Name])
		default:
			seen[df.Name] = np
		}
		cd.Files = append(cd.Files, df)
	}
	return cd
}

// mountPaths checks config mount paths against each other: no duplicates,
// none under another (the host side mirrors them as nested paths). Every
// conflicting pair is reported once, at the later of the two, in the order
// a pairwise comparison would give. Paths are indexed and only each path's
// ancestors are looked up, so one spec with tens of thousands of config
// files is checked in linear time (mount paths are clean here: invalid
// ones were reported and left out).
func (d *decoder) mountPaths(s *Spec) {
	type mp struct{ p, at string }
	var all []mp
	for _, f := range s.ConfigFiles {
		if f.MountPath != "" {
			all = append(all, mp{f.MountPath, jsontree.Child(f.Path, "mountPath")})
		}
	}
	for _, c := range s.ConfigDirs {
		if c.MountPath != "" {
			all = append(all, mp{c.MountPath, jsontree.Child(c.Path, "mountPath")})
		}
	}
	byPath := make(map[string][]int, len(all))
	for i, m := range all {
		byPath[m.p] = append(byPath[m.p], i)
	}
	const (
		duplicate = iota
		inside    // a is inside b
		contains  // a contains b
	)
	type conflict struct{ a, b, kind int }
	var found []conflict
	for i, m := range all {
		for _, k := range byPath[m.p] {
			if k >= i {
				break
			}
			found = append(found, conflict{i, k, duplicate})
		}
		for p := m.p; ; {
			j := strings.LastIndexByte(p, '/')
			if j <= 0 {
				break
			}
			p = p[:j]
			for _, k := range byPath[p] {
				if k < i {
					found = append(found, conflict{i, k, inside})
				} else {
					found = append(found, conflict{k, i, contains})
				}
			}
		}
	}
	slices.SortFunc(found, func(x, y conflict) int { return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)) })
	for _, c := range found {
		a, b := all[c.a], all[c.b]
		switch c.kind {
		case duplicate:
			d.errf(a.at, RuleMountDuplicate, "mountPath %q is already used at %s", a.p, b.at)
		case inside:
			d.errf(a.at, RuleMountNested, "mountPath %q is inside %q (%s)", a.p, b.p, b.at)
		case contains:
			d.errf(a.at, RuleMountNested, "mountPath %q contains %q (%s)", a.p, b.p, b.at)
		}
	}
}
