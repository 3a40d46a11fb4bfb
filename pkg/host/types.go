package host

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/syslet/syslet/pkg/digest"
	"github.com/syslet/syslet/pkg/probe"
)

// UnitState is what systemd reports about one unit. A unit systemd has never
// heard of comes back with LoadState "not-found" and ActiveState "inactive".
type UnitState struct {
	Name        string `json:"name"`
	LoadState   string `json:"loadState"`
	ActiveState string `json:"activeState"`
	SubState    string `json:"subState"`
	// NeedDaemonReload is systemd's own word that the unit's files (for a
	// quadlet service: its source file) changed since it loaded them.
	NeedDaemonReload bool `json:"needDaemonReload,omitempty"`
}

// Active reports whether the unit is running (or, for a oneshot with
// RemainAfterExit, has run and is considered up).
func (s UnitState) Active() bool { return s.ActiveState == "active" || s.ActiveState == "reloading" }

// Failed reports whether systemd holds the unit in the failed state.
func (s UnitState) Failed() bool { return s.ActiveState == "failed" }

// UnitHealth is what systemd's own counters say of a service: the health
// gate judges a start by them, since a start job that succeeded only says
// the service got going, not that it stays up.
type UnitHealth struct {
	ActiveState string `json:"activeState"`
	SubState    string `json:"subState"`
	// Result is the service's last result ("success", "exit-code",
	// "signal", "start-limit-hit", …).
	Result string `json:"result"`
	// InvocationID changes with every start of the unit, restarts by
	// Restart= included.
	InvocationID string `json:"invocationId"`
	// NRestarts counts the restarts systemd made by Restart= since the
	// unit was last started by hand.
	NRestarts uint32 `json:"nRestarts"`
	// ExecMainCode (1 exited, 2 killed, 3 dumped) and ExecMainStatus (the
	// exit status or the signal) are how the main process last ended.
	ExecMainCode   int32 `json:"execMainCode"`
	ExecMainStatus int32 `json:"execMainStatus"`
}

// Up reports whether the service is active and running (or, for a oneshot
// that remains after exit, active and exited).
func (h UnitHealth) Up() bool {
	return h.ActiveState == "active" && (h.SubState == "running" || h.SubState == "exited")
}

// ServiceHealth is one service's health under its name, as `syslet
// status --output json` prints it (Container: podman's name for it).
type ServiceHealth struct {
	Service   string `json:"service"`
	Container string `json:"container,omitempty"`
	UnitHealth
}

// HealthReport is the document `syslet status --output json` prints, and
// `syslet push` reads before and after a pause to tell whether a host's
// services fell over or were restarted in between.
type HealthReport struct {
	Services []ServiceHealth `json:"services"`
	// Probes are the readiness probes of the services' containers, each
	// with what it answered when asked.
	Probes []Probed `json:"probes,omitempty"`
}

// Probed is one container's readiness probe as its installed unit's
// marker says it, and what it answered when asked once, from the host,
// between deploys (syslet status, the drift check).
type Probed struct {
	Unit      string `json:"unit"` // web.container, web@1.container
	Service   string `json:"service"`
	Container string `json:"container"`
	// Probe names it as the plan does ("GET :8080/up → 200-399 every
	// 1s"); Name shorter, as verdicts do ("GET :8080/up").
	Probe string `json:"probe"`
	Name  string `json:"name"`
	// Answer is what it answered; nil when it was not asked (the service
	// is not up: that is systemd's news, not the probe's).
	Answer *probe.Answer `json:"answer,omitempty"`
}

// Failing reports whether the probe was asked and did not pass.
func (p Probed) Failing() bool { return p.Answer != nil && !p.Answer.OK }

// Reason says why a failing probe fails, as the gate says it: "probe GET
// :8080/up answered 503 \"db unreachable\"".
func (p Probed) Reason() string {
	if p.Answer == nil {
		return "probe " + p.Name + " not asked: the service is not up"
	}
	return "probe " + p.Name + " " + p.Answer.String()
}

// Container is one podman container as the health gate and a generation
// record read it: the image it runs (by ID and by the name it was started
// with) and its health check's status ("" when it has none; "starting",
// "healthy", "unhealthy").
type Container struct {
	Name    string `json:"name"`
	ImageID string `json:"imageId"`
	Image   string `json:"image"`
	State   string `json:"state"`
	Health  string `json:"health,omitempty"`
}

// Secret is one entry of podman's secret store. Only names and labels are
// ever read back: podman does not return secret data through its list call.
type Secret struct {
	Name   string            `json:"name"`
	ID     string            `json:"id"`
	Labels map[string]string `json:"labels,omitempty"`
}

// File is one regular file read from disk, or the target of a symlink when
// Link is set (Data is then empty). A hundred thousand installed units are
// a hundred thousand of them, so what few files have (a streamed digest)
// is held apart.
type File struct {
	Data []byte      `json:"-"`
	Mode fs.FileMode `json:"mode"`
	Link string      `json:"link,omitempty"`
	// ModTime is the file's modification time in Unix nanoseconds (zero:
	// not known): unit files newer than systemd's last load are the only
	// ones that can need a daemon-reload. Modified reads it as a time.
	ModTime int64 `json:"-"`
	// Streamed is set on a file too large to keep in memory: Data is then
	// empty, and its size and streamed sha256 stand for its content.
	Streamed *Streamed `json:"-"`
}

// Streamed is what is known of a file read through a digest rather than
// kept.
type Streamed struct {
	Size int64
	Sum  digest.Sum
}

// Modified is ModTime as a time (the zero time when not known).
func (f File) Modified() time.Time {
	if f.ModTime == 0 {
		return time.Time{}
	}
	return time.Unix(0, f.ModTime)
}

// Weight is about what the file, read at path p, weighs in memory: its
// content, link and path, and some 96 bytes of map entry and bookkeeping.
// The CLI's collector is told it for every file read (gcpolicy.ExpectHost).
func (f File) Weight(p string) int64 { return int64(96 + len(p) + len(f.Data) + len(f.Link)) }

// Holds reports whether the file's content is exactly data: by bytes, or
// for a streamed file by size and digest.
func (f File) Holds(data []byte) bool {
	if s := f.Streamed; s != nil {
		return s.Size == int64(len(data)) && s.Sum == digest.Of(data)
	}
	return bytes.Equal(f.Data, data)
}

// Digest is the sha256 of the file's content.
func (f File) Digest() digest.Sum {
	if s := f.Streamed; s != nil {
		return s.Sum
	}
	return digest.Of(f.Data)
}

// Length is the size of the file's content.
func (f File) Length() int64 {
	if s := f.Streamed; s != nil {
		return s.Size
	}
	return int64(len(f.Data))
}

// JobError is returned when a systemd job finished with any result other
// than "done" (canceled, timeout, failed, dependency, skipped), or when the
// unit's state after a successful job is not the one the job asked for.
type JobError struct {
	Unit   string // e.g. "web.service"
	Op     string // start, stop, restart, reload
	Result string // the job result, or "state <active>/<sub>" for a bad end state
}

func (e *JobError) Error() string {
	return fmt.Sprintf("%s %s: job %s", e.Op, e.Unit, e.Result)
}

// JobOp is a kind of systemd job the executor queues for many units at
// once.
type JobOp string

const (
	JobStart  JobOp = "start"
	JobStop   JobOp = "stop"
	JobReload JobOp = "reload"
	// JobRestart stops a unit and starts it again as one job: a socket
	// unit's listening socket stays open through it, which a stop and a
	// later start of the service would also keep, but for the daemon-reload
	// between them (a connection then starts the old unit again).
	JobRestart JobOp = "restart"
)

// ErrNotFound is wrapped by adapters when the object to read or remove does
// not exist. Removal treats it as success.
var ErrNotFound = errors.New("not found")

// DirFile is one file of a config directory version.
type DirFile struct {
	Name    string `json:"name"`
	Content []byte `json:"-"`
	Mode    uint32 `json:"mode"`
}

// PullOptions are an image unit's pull settings that podman's pull API
// takes ([Image] Arch=, OS=, Variant=, AllTags=, TLSVerify=, AuthFile=,
// Policy=, Retry=, RetryDelay=), so the apply's pull step pulls what the
// unit's service would.
type PullOptions struct {
	Arch       string `json:"arch,omitempty"`
	OS         string `json:"os,omitempty"`
	Variant    string `json:"variant,omitempty"`
	AllTags    bool   `json:"allTags,omitempty"`
	TLSVerify  *bool  `json:"tlsVerify,omitempty"`
	AuthFile   string `json:"authFile,omitempty"`
	Policy     string `json:"policy,omitempty"`
	Retry      *uint  `json:"retry,omitempty"`
	RetryDelay string `json:"retryDelay,omitempty"`
}
