package spec

import (
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/unit"
)

// Owned is a key syslet sets in a unit itself, whatever the spec says:
// the podman object's name (the plan finds the object by it), the paths of
// files syslet writes for the unit, the keys a desiredState sets. The one
// list of them is Kind.Owned: spec warns about a spec that sets one,
// render writes them in place of the spec's, adopt leaves them out of
// what it adopts, and a drop-in may not set those every unit of the kind
// has.
type Owned struct {
	Section, Key string
	// State: only a container of that desiredState has the key; "" every
	// unit of the kind.
	State State
	// Name: the value is the spec's name for the podman object (the kind
	// table's NameKey): without a name there is none to compare with.
	Name bool
	// Path: the value is a file of syslet's own, so the spec's value is
	// ignored rather than compared with it.
	Path bool
	// Why tells the user why their value gives way ("" for the podman
	// object's name).
	Why string

	value  func(s *Spec) string // what syslet writes
	origin string               // the rendered line's JSON path, after the spec's
}

// Value is what syslet writes for the key in s's unit.
func (o Owned) Value(s *Spec) string { return o.value(s) }

// Origin is the JSON path the rendered line points at, given the spec's
// own (Spec.Path).
func (o Owned) Origin(specPath string) string { return specPath + o.origin }

// For reports whether s's unit has the key: every unit of its kind, or
// one of s's desiredState.
func (o Owned) For(s *Spec) bool { return o.State == "" || o.State == s.DesiredState }

// Owned lists the keys syslet sets in the units of kind k, in the order
// render writes them: the kind's name key (the kind table's NameKey),
// then the kind's own (its kindSpec's owns). The list is shared: do not
// change it.
func (k Kind) Owned() []Owned { return ownedKeys[k] }

// ownedKeys are Kind.Owned, made once (in init, after kindSpecs).
var ownedKeys map[Kind][]Owned

func ownedOf(ks kindSpec) []Owned {
	var out []Owned
	if k := ks.kind.Quadlet(); k != nil && k.NameKey != "" {
		// A template's container is NAME-%i, one per instance.
		out = append(out, Owned{Section: k.Section, Key: k.NameKey, Name: true, value: (*Spec).ContainerName})
	}
	return append(out, ks.owns...)
}

// The keys a build, a kube unit and a container of a desiredState own.

var buildOwns = []Owned{
	{Section: unit.Build, Key: unit.KeyFile, Path: true, Why: "syslet sets it to its own build context",
		value: func(s *Spec) string { return layout.Containerfile(s.Name) }, origin: ".containerfile"},
	{Section: unit.Build, Key: unit.KeySetWorkingDirectory, Path: true, Why: "syslet sets it to its own build context",
		value: func(s *Spec) string { return layout.BuildDirOf(s.Name) }},
}

var kubeOwns = []Owned{
	{Section: unit.Kube, Key: unit.KeyYaml, Path: true, Why: "syslet writes the yaml field to its own file and points Yaml= at it",
		value: func(s *Spec) string { return layout.KubeYaml(s.Name) }, origin: ".yaml"},
}

// containerOwns are the [Service] and [Install] keys a desiredState sets.
// They overwrite the spec's, as the earlier syslet's did, so a host it
// deployed already has these lines and its takeover stays a no-op
// (docs/how-to/migrate.md says where that is unsafe).
var containerOwns = []Owned{
	{Section: unit.Service, Key: unit.KeyRestart, State: Running, Why: `for desiredState "running", as the earlier syslet did`,
		value: func(*Spec) string { return RestartRunning }},
	{Section: unit.Install, Key: unit.KeyWantedBy, State: Running, Why: `for desiredState "running", as the earlier syslet did`,
		value: func(*Spec) string { return WantedByRunning }},
	{Section: unit.Service, Key: unit.KeyType, State: Oneshot, Why: `for desiredState "oneshot", as the earlier syslet did`,
		value: func(*Spec) string { return TypeOneshot }},
}

// dropInOwned are the keys ("Section.Key") every unit of the kind has
// from syslet: a drop-in setting one would override what the plan relies
// on (the podman object's name, where a build's or kube unit's file is).
func dropInOwned(k Kind) []string {
	var out []string
	for _, o := range k.Owned() {
		if o.State == "" {
			out = append(out, o.Section+"."+o.Key)
		}
	}
	return out
}

// owned warns about each key of the spec's that syslet sets itself in a
// unit of the desiredState state (or, for "", in every unit of the kind):
// syslet overwrites it, as the earlier syslet did, so its specs keep
// working. The same value is tolerated silently.
func (d *decoder) owned(s *Spec, state State) {
	for _, o := range s.Kind.Owned() {
		if o.State != state || (o.Name && s.Name == "") { // a missing name is reported already
			continue
		}
		why := ""
		if o.Why != "" {
			why = " " + o.Why
		}
		for _, v := range s.Values(o.Section, o.Key) {
			switch want := o.Value(s); {
			case o.Path:
				d.warnf(v.Path, RuleForcedKey, "[%s] %s is ignored:%s; remove it", o.Section, o.Key, why)
			case v.Text != want:
				d.warnf(v.Path, RuleForcedKey, "[%s] %s=%s is overwritten: syslet sets it to %q%s; remove it", o.Section, o.Key, v.Text, want, why)
			}
		}
	}
}
