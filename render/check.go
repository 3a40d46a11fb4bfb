package render

import (
	"path"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// Check runs the post-render validation over the whole output: every
// reference resolves to a declared unit of the right kind, a named volume
// is a declared one (checklines.go), every published port is a port, every Secret=
// names a declared secret key or external secret, no two mounts of a
// container share a destination (syslet's config mounts included), and no
// two units or secrets would collide on the host.
func Check(o *Output) report.Report {
	var rep report.Report
	files := checkServices(&rep, o)
	secrets := checkSecrets(&rep, o)
	checkNames(&rep, o)
	vols := declaredVolumes(o)
	for _, u := range o.Units {
		// An instance's lines are its template's, checked there, and its
		// own drop-ins'.
		lines := u.Lines
		if u.Instance != "" {
			lines = nil
			for _, d := range u.DropIns {
				lines = append(lines, d.Lines...)
			}
		}
		checkRefs(&rep, u, lines, files)
		checkPorts(&rep, u, lines)
		checkNamedVolumes(&rep, u, lines, vols)
		if u.Kind == spec.Container {
			checkContainer(&rep, u, lines, secrets)
		}
	}
	return rep
}

// checkServices reports two units that would run as one service, and
// returns the units by file name.
func checkServices(rep *report.Report, o *Output) map[string]*Unit {
	files := map[string]*Unit{}
	services := map[string]*Unit{}
	for _, u := range o.Units {
		files[u.FileName] = u
		if prev, ok := services[u.Service]; ok {
			if prev.FileName == u.FileName {
				continue // the same kind and name: spec.CheckSet reports the duplicate name
			}
			rep.Errorf(u.Spec.Source, u.Spec.Path()+".name", spec.RuleServiceConflict,
				"%s would run as %s, which %s already uses", u.FileName, u.Service, prev.Spec.Ref())
			continue
		}
		services[u.Service] = u
	}
	return files
}

// checkSecrets reports two secret specs that would give one podman
// secret, and returns the spec of each podman secret by name.
func checkSecrets(rep *report.Report, o *Output) map[string]*spec.Spec {
	secrets := map[string]*spec.Spec{}
	for _, s := range o.Secrets {
		for _, k := range s.Keys {
			n := s.PodmanName(k)
			if prev, ok := secrets[n]; ok && prev != s.Spec {
				if prev.Name == s.Spec.Name {
					continue // two secret specs of one name: spec.CheckSet reports it
				}
				rep.Errorf(s.Spec.Source, s.Spec.Path()+".ciphertext", spec.RuleDuplicateSecret,
					"key %q gives podman secret %q, which %s also defines", k, n, prev.Ref())
				continue
			}
			secrets[n] = s.Spec
		}
	}
	for _, s := range o.ExternalSecrets {
		if prev, ok := secrets[s.Name]; ok {
			if prev.Name != s.Name { // the same name: spec.CheckSet reports it
				rep.Errorf(s.Spec.Source, s.Spec.Path()+".name", spec.RuleDuplicateSecret,
					"external secret %q is also a podman secret syslet manages: a key of %s gives that name", s.Name, prev.Ref())
			}
			continue
		}
		secrets[s.Name] = s.Spec
	}
	return secrets
}

// checkNames reports two units that would create one podman object of
// what runs (containers, pods): the kinds that run under a name syslet
// sets. A volume's or network's name is its spec's, which spec.CheckSet
// keeps unique.
func checkNames(rep *report.Report, o *Output) {
	names := map[string]*Unit{}
	for _, u := range o.Units {
		k := u.Kind.Quadlet()
		if !k.Runs() || k.NameKey == "" || u.Template {
			continue // a template's name has %i in it: its instances' are checked
		}
		name := u.Container
		if name == "" {
			name = u.Resource
		}
		n := k.Object + " " + name
		if prev, ok := names[n]; ok && prev.FileName != u.FileName {
			rep.Errorf(u.Spec.Source, u.Spec.Path()+".name", spec.RuleNameConflict,
				"%s would create podman %s %q, which %s (%s) creates too", u.FileName, k.Object, name, prev.FileName, prev.Spec.Ref())
			continue
		}
		names[n] = u
	}
}

// checkRefs reports each reference of a unit's lines to a unit file that
// is no declared unit of a kind the key takes (files: the units by file
// name).
func checkRefs(rep *report.Report, u *Unit, lines []Line, files map[string]*Unit) {
	src := u.Spec.Source
	for _, r := range refsOf(lines) {
		ext := path.Ext(r.Target)
		if _, inst, ok := layout.Template(r.Target); ok && inst == "" && !unit.KindOf(r.Target).Templates {
			rep.Errorf(src, r.Line.Origin, spec.RuleUnsupportedRef, "%s= refers to the template %s, but syslet templates containers only (podman 5.7 and later instantiate a %s template per container instance)", r.Line.Key, r.Target, ext)
			continue
		}
		if want := refKinds[r.Line.Key]; !slices.Contains(want, ext) {
			rep.Errorf(src, r.Line.Origin, spec.RuleUndefinedRef, "%s= refers to %s, but %s= takes a %s", r.Line.Key, r.Target, r.Line.Key, strings.Join(want, " or "))
			continue
		}
		if files[r.Target] == nil {
			rep.Errorf(src, r.Line.Origin, spec.RuleUndefinedRef, "%s= references undefined %s %q", r.Line.Key, strings.TrimPrefix(ext, "."), strings.TrimSuffix(r.Target, ext))
		}
	}
}

// checkContainer reports a container's Secret= naming no declared secret
// (secrets: by podman name) and two of its mounts sharing a destination.
func checkContainer(rep *report.Report, u *Unit, lines []Line, secrets map[string]*spec.Spec) {
	src := u.Spec.Source
	// Config mounts are compared with each other before rendering
	// (duplicate-mount-path); here they only meet the user's mounts.
	configMounts := map[string]bool{}
	for _, f := range u.Spec.ConfigFiles {
		configMounts[f.Path+".mountPath"] = true
	}
	for _, d := range u.Spec.ConfigDirs {
		configMounts[d.Path+".mountPath"] = true
	}
	dests := map[string]string{}
	for _, l := range lines {
		if l.Section != unit.Container {
			continue
		}
		if l.Key == unit.KeySecret {
			for _, n := range SecretNames(l.Value) {
				if secrets[n] != nil {
					continue
				}
				rep.Errorf(src, l.Origin, spec.RuleUndefinedSecret, "Secret= names %q, which no secret spec declares (a secret spec NAME with key KEY gives \"NAME-KEY\"; a podman secret made on the host needs {\"type\": \"secret\", \"name\": %q, \"external\": true})", n, n)
			}
		}
		d := mountDest(l)
		if d == "" {
			continue
		}
		d = path.Clean(d)
		if prev, ok := dests[d]; ok {
			if configMounts[prev] && configMounts[l.Origin] {
				continue
			}
			rep.Errorf(src, l.Origin, spec.RuleDuplicateDest, "mount destination %q is already used by %s", d, prev)
			continue
		}
		dests[d] = l.Origin
	}
}

// refKinds lists, per key, the extensions of the kinds a reference on it
// may name (the kind table's ReferencedBy): quadlet links other kinds on
// these keys either not at all or to something else (Image=x.volume is
// not an image).
var refKinds = func() map[string][]string {
	m := map[string][]string{}
	for _, k := range unit.Kinds {
		for _, key := range k.ReferencedBy {
			m[key] = append(m[key], k.Ext())
		}
	}
	return m
}()
