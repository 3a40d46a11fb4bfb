package plan

import (
	"errors"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/render"
)

// Step is one of the nine apply steps. The numeric order is the execution
// order; it never changes, whatever the plan holds.
type Step int

const (
	StepPull         Step = iota + 1 // pull images missing from the store
	StepStop                         // stop changed and removed services
	StepWriteConfig                  // config files, config dirs, build contexts, secrets
	StepWriteUnits                   // quadlet unit files
	StepPrune                        // stale units, config dirs, secrets
	StepDelete                       // volumes, networks, images under reclaimPolicy Delete
	StepDaemonReload                 // one systemctl daemon-reload, only if units changed
	StepReload                       // in-place reload of config-dir-only changes
	StepStart                        // start what should run, restart what a socket holds
)

// Steps lists the steps in execution order.
var Steps = []Step{StepPull, StepStop, StepWriteConfig, StepWriteUnits, StepPrune, StepDelete, StepDaemonReload, StepReload, StepStart}

func (s Step) String() string {
	switch s {
	case StepPull:
		return "pull images"
	case StepStop:
		return "stop"
	case StepWriteConfig:
		return "write config files"
	case StepWriteUnits:
		return "write unit files"
	case StepPrune:
		return "prune"
	case StepDelete:
		return "delete podman resources"
	case StepDaemonReload:
		return "daemon-reload"
	case StepReload:
		return "reload"
	case StepStart:
		return "start"
	}
	return "step?"
}

// Op is one kind of host change. The executor switches on Op alone.
type Op string

const (
	OpPull          Op = "pull-image"
	OpStop          Op = "stop"
	OpWriteFile     Op = "write-file"
	OpWriteDir      Op = "write-config-dir"
	OpCreateSecret  Op = "create-secret"
	OpWriteUnit     Op = "write-unit"
	OpLinkUnit      Op = "link-unit" // an instance: NAME@INSTANCE.KIND → its template
	OpRemoveUnit    Op = "remove-unit"
	OpRemoveFile    Op = "remove-file"
	OpRemoveSecret  Op = "remove-secret"
	OpDeleteVolume  Op = "delete-volume"
	OpDeleteNetwork Op = "delete-network"
	OpDeleteImage   Op = "delete-image"
	OpDaemonReload  Op = "daemon-reload"
	OpReload        Op = "reload"
	// OpCreateVolume and OpImportVolume fill a volume from a backup
	// (fill.go): created again (by starting its unit's service, when
	// Payload.Service names one, else with podman's defaults), then the
	// backup imported into it.
	OpCreateVolume Op = "create-volume"
	OpImportVolume Op = "import-volume"
	OpStart        Op = "start"
	// OpRestart restarts a socket-held container (strategy.go) in step 9,
	// after the daemon-reload, as one systemd job: the old container
	// stops and the new one starts while systemd keeps its socket open.
	OpRestart Op = "restart"
)

// opStep is the single table that places each kind of change in the
// nine-step order.
var opStep = map[Op]Step{
	OpPull:          StepPull,
	OpStop:          StepStop,
	OpWriteFile:     StepWriteConfig,
	OpWriteDir:      StepWriteConfig,
	OpCreateSecret:  StepWriteConfig,
	OpWriteUnit:     StepWriteUnits,
	OpLinkUnit:      StepWriteUnits,
	OpRemoveUnit:    StepPrune,
	OpRemoveFile:    StepPrune,
	OpRemoveSecret:  StepPrune,
	OpDeleteVolume:  StepDelete,
	OpDeleteNetwork: StepDelete,
	OpDeleteImage:   StepDelete,
	OpDaemonReload:  StepDaemonReload,
	OpReload:        StepReload,
	OpCreateVolume:  StepStart,
	OpImportVolume:  StepStart,
	OpStart:         StepStart,
	OpRestart:       StepStart,
	OpAwaitReady:    StepStart,
	OpSwitch:        StepStart,
	OpDrain:         StepStart,
	OpStopSlot:      StepStart,
	OpRemoveSlot:    StepStart,
}

// StepOf returns the step an op belongs to.
func StepOf(op Op) Step { return opStep[op] }

// Fills reports whether op fills a volume from a backup: step 9 runs
// these before its starts, so that what mounts the volume finds its data.
func (op Op) Fills() bool { return op == OpCreateVolume || op == OpImportVolume }

// Action is one host change. Target is a service name, an absolute host
// path, an image reference, or a podman volume / network / secret name.
//
// Its JSON form (json.go) keeps one field order whatever the layout
// of the struct: the plan's digest and the saved plans are made of it.
type Action struct {
	Step   Step   `json:"step"`
	Op     Op     `json:"op"`
	Target string `json:"target"`
	// Reason explains the action to people. It is display text only and
	// never influences how the action is executed.
	Reason string `json:"reason,omitempty"`
	// Unit is the unit file the action serves, for grouping in reports.
	Unit string `json:"unit,omitempty"`
	// Payload is what only some ops carry (content, a link, a secret's
	// key, …); nil for the rest. Most actions of a big plan (stop, start,
	// remove, delete) carry none, and its fields held inline were two
	// thirds of every action: a plan removing a hundred thousand volumes
	// holds three hundred thousand actions. Read its fields through
	// Payload only where the op says it is set.
	*Payload
	// Carried marks an action an earlier, unfinished run planned and that
	// this plan does again.
	Carried bool `json:"carried,omitempty"`
	// Irreversible marks an action no rollback can undo: it deletes a
	// podman volume (its data), network or image.
	Irreversible bool `json:"irreversible,omitempty"`

	// rank orders actions inside a step (resources before containers when
	// starting, after them when stopping); only Build reads it.
	rank int32
}

// Payload is the part of an Action only some ops carry.
type Payload struct {
	Content []byte `json:"-"`              // OpWriteFile, OpWriteUnit
	Mode    uint32 `json:"mode,omitempty"` // OpWriteFile, OpWriteUnit
	// Link is what an OpLinkUnit's link points to: the template's file
	// name, beside it.
	Link string `json:"link,omitempty"`
	// Pull is how an OpPull of an image unit's image pulls it (the unit's
	// [Image] settings); nil pulls as podman does by default.
	Pull *host.PullOptions `json:"pull,omitempty"`
	// Digest is the sha256 of Content: what the plan's digest and the run
	// journal record instead of the content itself. On an OpImportVolume
	// it is the backup's.
	Digest string           `json:"digest,omitempty"`
	Files  []render.DirFile `json:"files,omitempty"`
	// Root bounds OpRemoveFile: empty parent directories are removed up to
	// (not including) Root.
	Root string `json:"root,omitempty"`
	// Secret and Key identify the value of an OpCreateSecret; the value
	// itself is decrypted by the executor and never stored in a plan.
	Secret *render.Secret    `json:"-"`
	Key    string            `json:"key,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	// NoBackup marks an OpDeleteVolume whose installed marker says
	// Backup=false: the volume's data goes without an export.
	NoBackup bool `json:"noBackup,omitempty"`
	// Service is the quadlet service whose start creates an
	// OpCreateVolume's volume with its unit's options.
	Service string `json:"service,omitempty"`
	// Backup is the file name, in the backup store, of the backup an
	// OpImportVolume brings back; Digest is then its sha256 when known,
	// which the import checks.
	Backup string `json:"backup,omitempty"`
	// Switch is the start-first switch every action of it serves
	// (slots.go).
	Switch *Switch `json:"switch,omitempty"`
}

// none is the payload of an action that carries none, as Data reads it.
var none Payload

// Data is the action's payload, or an empty one when it carries none:
// what code reading a field of it on any action reads it through (a
// field read through a nil Payload would panic). It must not be changed.
func (a *Action) Data() *Payload {
	if a.Payload == nil {
		return &none
	}
	return a.Payload
}

// Effect is what happens to a unit's service.
type Effect string

const (
	EffectNone     Effect = "no-op"
	EffectCreate   Effect = "create"
	EffectMetadata Effect = "metadata-only"
	EffectReload   Effect = "reload"
	EffectRestart  Effect = "restart"
	EffectRecreate Effect = "recreate" // volume / network removed and created again
	EffectRebuild  Effect = "rebuild"
	EffectPull     Effect = "pull"   // an image unit's image pulled again (its containers restart when the unit changed)
	EffectStart    Effect = "start"  // unchanged, but not running
	EffectStop     Effect = "stop"   // desiredState stopped, but running
	EffectRun      Effect = "run"    // a oneshot runs again
	EffectUpdate   Effect = "update" // stopped container or resource rewritten without a service change
	EffectRemove   Effect = "remove"
	EffectKeep     Effect = "keep" // stale, but its installed marker forbids removal
	EffectIgnore   Effect = "not managed"
	EffectDrift    Effect = "drift" // edited by hand since syslet wrote it: left alone
)

// UnitChange is the plan's verdict on one unit file, desired or installed.
type UnitChange struct {
	FileName string    `json:"fileName"`
	Path     string    `json:"path"`
	Service  string    `json:"service"`
	Kind     spec.Kind `json:"kind"`
	// Template is set on a template (NAME@.container), which has no
	// service of its own; Instance on each of its instances.
	Template bool     `json:"template,omitempty"`
	Instance string   `json:"instance,omitempty"`
	Effect   Effect   `json:"effect"`
	Reasons  []string `json:"reasons,omitempty"`
	// Replacement is how a container that runs is replaced when the plan
	// restarts it (strategy.go); nil for every other change.
	Replacement *Replacement `json:"replacement,omitempty"`
	Source      string       `json:"source,omitempty"` // spec that declares it
	Keys        []KeyChange  `json:"keys,omitempty"`
	Before      string       `json:"before"`         // active state now ("-" when unknown to systemd)
	After       string       `json:"after"`          // intended state after the apply
	Write       bool         `json:"write"`          // the unit file is (re)written
	Diff        string       `json:"diff,omitempty"` // drift: unified diff, installed → desired
	// needReload: systemd has not loaded the unit's current file (its
	// NeedDaemonReload), which makes the plan reload even when it writes
	// no unit. The unit's whole state is not kept: a plan of a hundred
	// thousand units held 7 MB of it for this one bit.
	needReload bool
	// perm and removed are what the key changes of a unit the plan
	// removes are read from when the plan is written as JSON (every key,
	// as "-"), with perm's redaction: the installed unit's mode and
	// content. They are not worked out beforehand: a plan removing a
	// hundred thousand units held 55 MB of them, which the text plan never
	// shows.
	perm    uint32
	removed []byte
}

// KeyChange is one added, removed or changed [Section] Key.
type KeyChange struct {
	Op      string `json:"op"` // "+", "-", "~"
	Section string `json:"section"`
	Key     string `json:"key"`
	Old     string `json:"old,omitempty"`
	New     string `json:"new,omitempty"`
}

// FileChange is one config, config-dir or build-context file that changes.
type FileChange struct {
	Path    string          `json:"path"`
	Op      string          `json:"op"` // "+", "-", "~"
	Kind    render.FileKind `json:"kind"`
	Owner   string          `json:"owner"`
	OldMode uint32          `json:"oldMode,omitempty"`
	NewMode uint32          `json:"newMode,omitempty"`
	Diff    string          `json:"diff,omitempty"` // unified diff
}

// SecretChange is one podman secret that syslet creates, replaces or
// removes. It carries names and hashes only.
type SecretChange struct {
	Name   string `json:"name"`
	Op     string `json:"op"` // "+", "-", "~"
	Secret string `json:"secret"`
	Reason string `json:"reason"`
}

// Refusal is a change the plan will not make, for example recreating a
// volume whose installed marker forbids removal. Any refusal makes the
// whole plan unappliable: nothing on the host changes.
type Refusal struct {
	Unit    string `json:"unit"`
	Source  string `json:"source,omitempty"`
	Message string `json:"message"`
}

// Note is something a reader of the plan should know that changes nothing:
// a unit kept because removal is not allowed, a file that is not syslet's.
type Note struct {
	Unit    string `json:"unit"`
	Message string `json:"message"`
	// Kept marks a podman object the input would have recreated or
	// deleted and the plan keeps as it is: a rollback keeps the volumes
	// and images the failed run left (its report names them as not
	// restored), and an image a kept generation ran stays.
	Kept bool `json:"kept,omitempty"`
}

// Plan is the complete, reviewable result of comparing desired and
// observed state.
type Plan struct {
	Units    []UnitChange   `json:"units"`
	Files    []FileChange   `json:"files"`
	Secrets  []SecretChange `json:"secrets"`
	Actions  []Action       `json:"actions"`
	Refusals []Refusal      `json:"refusals,omitempty"`
	Notes    []Note         `json:"notes,omitempty"`
	// Updates are the images an update pulls again because their tag
	// moved, with the containers each restarts (Observed.Tags).
	Updates []ImageUpdate `json:"updates,omitempty"`
	// StaleImages are the running containers whose image is older than
	// the one their tag names on the host (running.go): not changes (an
	// apply leaves them, an update restarts them), so not actions.
	StaleImages []StaleImage `json:"staleImages,omitempty"`
	// Warnings are what the plan finds worth a look that the specs alone
	// could not show (a protection a takeover drops): findings with a
	// rule, a warning each; they never stop an apply.
	Warnings []report.Finding `json:"warnings,omitempty"`
	// Resume is set when the plan carries forward an unfinished run.
	Resume *Resume `json:"resume,omitempty"`
	// VolumeSizes are how many bytes each volume the plan deletes held
	// when the plan was made, as podman counted them (absent when podman
	// was not asked): the size of the backup an apply exports of it
	// first. Shown, never executed: the digest leaves it out.
	VolumeSizes map[string]int64 `json:"volumeSizes,omitempty"`
	// NoBackups says the run exports no volume before deleting it
	// (--no-backup): their data goes.
	NoBackups bool `json:"noBackups,omitempty"`
	// Leftovers are the temporary files an interrupted apply left
	// (Observed.Leftovers): not changes, so not actions; an apply removes
	// them before it stages anything.
	Leftovers []string `json:"-"`
}

// Empty reports whether the plan changes nothing on the host.
func (p *Plan) Empty() bool { return len(p.Actions) == 0 }

// BackedUp reports whether the apply exports a's volume before it
// deletes it: an OpDeleteVolume, unless the run (NoBackups) or the
// volume's marker (Backup=false) says its data may go.
func (p *Plan) BackedUp(a *Action) bool {
	return a.Op == OpDeleteVolume && !p.NoBackups && !a.Data().NoBackup
}

// Appliable reports whether the executor may run the plan.
func (p *Plan) Appliable() bool { return len(p.Refusals) == 0 }

// ErrRefused is wrapped by every error that stops a plan with refusals
// before anything changes.
var ErrRefused = errors.New("the plan has refusals")

// WritesUnits reports whether the plan writes or removes unit files, which
// is when staging and a daemon-reload are needed.
func (p *Plan) WritesUnits() bool {
	for _, a := range p.Actions {
		if a.Op == OpWriteUnit || a.Op == OpLinkUnit || a.Op == OpRemoveUnit {
			return true
		}
	}
	return false
}
