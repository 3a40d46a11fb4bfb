package render

import (
	"slices"
	"strconv"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

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
