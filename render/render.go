package render

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/parallel"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// Render turns specs into units and files. Specs with an unknown kind or no
// name are skipped: pre-render validation has already reported them.
// Output order is stable: units and secrets sorted by kind order then name.
func Render(specs []*spec.Spec) *Output {
	// Specs render independently: a big set is split over the CPUs, each
	// range into its own Output, joined in spec order before sorting, so
	// the result is the sequential one.
	parts := parallel.Parts(len(specs), 64)
	outs := make([]Output, parts)
	parallel.Run(parts, len(specs), func(part, lo, hi int) {
		outs[part].slab = newSlab(specs[lo:hi])
		for _, s := range specs[lo:hi] {
			outs[part].add(s)
		}
		for _, u := range outs[part].Units {
			u.compact()
		}
		outs[part].slab = nil
	})
	out := &Output{}
	for _, o := range outs {
		out.Units = append(out.Units, o.Units...)
		out.Files = append(out.Files, o.Files...)
		out.Dirs = append(out.Dirs, o.Dirs...)
		out.Secrets = append(out.Secrets, o.Secrets...)
		out.ExternalSecrets = append(out.ExternalSecrets, o.ExternalSecrets...)
	}
	rank := map[spec.Kind]int{}
	for i, k := range spec.Kinds {
		rank[k] = i
	}
	slices.SortStableFunc(out.Units, func(a, b *Unit) int {
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] - rank[b.Kind]
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		// A template before its instances ("web@." sorts before "web@1.").
		return strings.Compare(a.FileName, b.FileName)
	})
	slices.SortStableFunc(out.Secrets, func(a, b *Secret) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(out.ExternalSecrets, func(a, b *ExternalSecret) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(out.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(out.Dirs, func(a, b Dir) int { return strings.Compare(a.Path, b.Path) })
	out.proxyFiles()
	return out
}

// add renders one spec into out.
func (out *Output) add(s *spec.Spec) {
	if s.Name == "" {
		return
	}
	if s.Kind == spec.Secret {
		if s.External {
			out.ExternalSecrets = append(out.ExternalSecrets, &ExternalSecret{Spec: s, Name: s.Name})
			return
		}
		sum := sha256.Sum256([]byte(s.Ciphertext))
		out.Secrets = append(out.Secrets, &Secret{Spec: s, Name: s.Name, Keys: slices.Clone(s.SecretKeys),
			Hash: hex.EncodeToString(sum[:]), Ciphertext: []byte(s.Ciphertext)})
		return
	}
	if s.Kind.Quadlet() == nil {
		return
	}
	if r := renderers[s.Kind]; r != nil {
		r(out, s)
		return
	}
	u, b := out.plain(s)
	b.sealDropIns(nil)
	out.Units = append(out.Units, u)
}

// renderers are the kinds whose units need more than plain renders: the
// files syslet writes for them, or facts the plan reads that only their
// keys tell. Every other kind (volumes, networks, pods, artifacts) is its
// spec's sections with the keys syslet owns.
var renderers = map[spec.Kind]func(*Output, *spec.Spec){
	spec.Container: (*Output).container,
	spec.Build:     (*Output).build,
	spec.Image:     (*Output).image,
	spec.Kube:      (*Output).kube,
}

// plain renders a unit as its spec's sections, with the keys syslet owns
// (spec.Owned) in place of the spec's and syslet's marker, and fills in
// what the kind table and the spec say of it: the podman object's name
// (from the merged unit, once sealed), whether it may be removed, what
// runs. A renderer of its own starts from it.
func (o *Output) plain(s *spec.Spec) (*Unit, *builder) {
	u, b := o.newUnit(s)
	k := s.Kind.Quadlet()
	u.RemovalAllowed = s.RemovalAllowed || !s.Kind.Accepts("removalAllowed")
	u.ReclaimPolicy = s.ReclaimPolicy
	if u.State = s.DesiredState; u.State == "" && k.Runs() {
		u.State = spec.Running // started, restarted and stopped like a running container
	}
	b.sections(s, k.Section)
	var removal *bool
	if s.Kind.Accepts("removalAllowed") {
		removal = &s.RemovalAllowed
	}
	b.marker(removal, s.ReclaimPolicy)
	if s.NoBackup {
		b.mark(unit.KeyBackup, "false")
	}
	u.finish()
	return u, b
}

// builder accumulates a unit's lines with their origins, then produces the
// unit.File in section order.
type builder struct {
	u  *Unit
	at string // the spec's JSON path, once asked for
}

// addsOther is about how many lines syslet adds to a unit of a kind
// that runs something or is not named by syslet (a description, a name,
// the keys a desired state forces), besides the mounts of its files.
const addsOther = 4

// linesOf is about how many lines a spec's unit gets: the spec's own, a
// mount per config file and dir, and the few syslet adds (addsOf). They are
// sized once rather than grown by doubling, and exactly for the resources
// a big set is mostly made of, as every spare line is 64 bytes held for
// the whole run.
func linesOf(s *spec.Spec) int {
	n := addsOf(s.Kind) + len(s.ConfigFiles) + len(s.ConfigDirs)
	for _, sec := range s.Unit {
		for _, e := range sec.Entries {
			n += len(e.Lines)
		}
	}
	return n
}

// addsOf is how many lines syslet adds to a unit of kind k: a kind whose
// service makes a podman object once that syslet names (a volume, a
// network) gets the name key alone.
func addsOf(k spec.Kind) int {
	if q := k.Quadlet(); q != nil && !q.Runs() && q.NameKey != "" {
		return 1
	}
	return addsOther
}

func (o *Output) newUnit(s *spec.Spec) (*Unit, *builder) {
	u, f, lines := o.slab.take(linesOf(s))
	*u = Unit{Spec: s, Origin: s.Origin(), Kind: s.Kind, Name: s.Name, FileName: s.FileName(),
		File: f, Template: s.Template(), Lines: lines, RemovalSet: s.RemovalAllowedSet}
	u.Path, u.Service = layout.UnitPath(u.FileName), unit.DefaultService(u.FileName)
	return u, &builder{u: u}
}

// slab holds the units, files and lines one part of a set renders into,
// as a few large arrays rather than an object each: a big set's units
// live until the run ends, and allocated one by one among the garbage
// rendering makes, they left a fifth of the heap's pages half empty (and
// the collector an object more per unit to trace).
type slab struct {
	units []Unit
	files []unit.File
	lines []Line
}

// newSlab has room for one unit per spec and the lines linesOf says.
func newSlab(specs []*spec.Spec) *slab {
	n := 0
	for _, s := range specs {
		n += linesOf(s)
	}
	return &slab{units: make([]Unit, len(specs)), files: make([]unit.File, len(specs)), lines: make([]Line, n)}
}

// take hands out a unit, its file and room for n lines; past its room (or
// with no slab) each is allocated on its own.
func (sl *slab) take(n int) (*Unit, *unit.File, []Line) {
	if sl == nil || len(sl.units) == 0 || len(sl.lines) < n {
		return &Unit{}, &unit.File{}, make([]Line, 0, n)
	}
	u, f, lines := &sl.units[0], &sl.files[0], sl.lines[:0:n]
	sl.units, sl.files, sl.lines = sl.units[1:], sl.files[1:], sl.lines[n:]
	return u, f, lines
}

func (b *builder) add(section, key, value, origin string) {
	b.u.Lines = append(b.u.Lines, Line{section, key, value, origin})
	b.u.File.Add(section, key, value)
}

// mark adds a line of syslet's own marker to the file only, not to Lines:
// its values come from syslet, not from a line of the spec a finding could
// point at, and no check reads them there (the marker is no quadlet
// section). A volume's three marker lines were three quarters of its
// Lines, held for the whole run.
func (b *builder) mark(key, value string) {
	b.u.File.Add(unit.Syslet, key, value)
}

// section copies the user's entries of one section but for the keys
// syslet owns there (spec.Kind.Owned, for the spec's desiredState), then
// adds those with syslet's values.
func (b *builder) section(s *spec.Spec, section string) {
	owned := s.Kind.Owned()
	ownedHere := func(key string) bool {
		return slices.ContainsFunc(owned, func(o spec.Owned) bool { return o.Section == section && o.Key == key && o.For(s) })
	}
	if sec := s.Lookup(section); sec != nil {
		for _, e := range sec.Entries {
			if ownedHere(e.Key) {
				continue
			}
			for _, v := range e.Lines {
				b.add(section, e.Key, v.Text, v.Path)
			}
		}
	}
	for _, o := range owned {
		if o.Section == section && o.For(s) {
			b.add(section, o.Key, o.Value(s), o.Origin(b.specPath(s)))
		}
	}
}

// specPath is the spec's JSON path, made once per unit (the lines syslet
// adds point at it).
func (b *builder) specPath(s *spec.Spec) string {
	if b.at == "" {
		b.at = s.Path()
	}
	return b.at
}

// sections renders the unit's sections: [Unit], the kind's own, [Service],
// [Install], then the user's X- sections and [Quadlet].
func (b *builder) sections(s *spec.Spec, own string) {
	for _, sec := range []string{unit.Unit, own, unit.Service, unit.Install} {
		b.section(s, sec)
	}
	b.rest(s, unit.Unit, own, unit.Service, unit.Install)
}

// rest copies the user's own X- sections (and [Quadlet]) sorted by name,
// so that the order of sections in the spec's JSON never reaches the file.
func (b *builder) rest(s *spec.Spec, done ...string) {
	var secs []*spec.Section
	for i := range s.Unit {
		if !slices.Contains(done, s.Unit[i].Name) { // done: a handful of names
			secs = append(secs, &s.Unit[i])
		}
	}
	// Copied from the sections themselves, not looked up by name again:
	// a spec may have any number of X- sections.
	slices.SortFunc(secs, func(x, y *spec.Section) int { return strings.Compare(x.Name, y.Name) })
	for _, sec := range secs {
		for _, e := range sec.Entries {
			for _, v := range e.Lines {
				b.add(sec.Name, e.Key, v.Text, v.Path)
			}
		}
	}
}

func (b *builder) marker(removal *bool, policy spec.Policy) {
	if removal != nil {
		b.mark(unit.KeyRemovalAllowed, strconv.FormatBool(*removal))
	}
	if policy != "" {
		b.mark(unit.KeyReclaimPolicy, string(policy))
	}
}

// finish puts the unit's keys in canonical order and names its service
// (ServiceName= included). Keys are sorted within each section (values of
// one key keep their order, which can matter), so generators that reorder
// JSON keys — CUE, jq — produce byte-identical files.
func (u *Unit) finish() {
	u.File.SortKeys()
	u.Service = unit.ServiceOf(u.FileName, u.File)
}

// sealDropIns renders the unit's drop-ins, records their digests with
// those of files in the marker (seal), and derives the planner's facts
// from the merged unit: what it requires, and the podman object it makes
// (unless its renderer named it already).
func (b *builder) sealDropIns(files []File) {
	u := b.u
	u.DropIns = dropIns(u.Spec, u.FileName, u.Spec.DropIns)
	sealed := slices.Clone(files)
	for _, d := range u.DropIns {
		sealed = append(sealed, File{Path: d.Path, Content: d.Content})
	}
	b.seal(sealed)
	u.merge(nil)
	if u.Resource == "" {
		u.Resource = u.Kind.Quadlet().ObjectName(u.Name, u.Merged)
	}
}

// merge sets Merged and Lines from the unit's drop-ins (and, for an
// instance, its template's, which a drop-in of the instance's own of the
// same name replaces, as quadlet reads the more specific directory
// first), then derives the facts the planner reads.
func (u *Unit) merge(template *Unit) {
	base := u
	ds := u.DropIns
	if template != nil {
		base = template
		byName := map[string]DropIn{}
		for _, d := range template.DropIns {
			byName[d.Name] = d
		}
		for _, d := range u.DropIns {
			byName[d.Name] = d
		}
		ds = nil
		for _, n := range slices.Sorted(maps.Keys(byName)) {
			ds = append(ds, byName[n])
		}
		u.Lines = slices.Clone(template.Lines[:template.ownLines])
	}
	u.ownLines = len(u.Lines)
	if len(ds) == 0 {
		u.Merged = base.File
	} else {
		files := make([]*unit.File, len(ds))
		for i, d := range ds {
			files[i] = d.File
			u.Lines = append(u.Lines, d.Lines...)
		}
		u.Merged = unit.Merge(base.File, files...)
	}
	u.derive()
}
