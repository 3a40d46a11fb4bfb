package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/digest"
)

// Fingerprint is the host state a plan was derived from, as a saved plan
// records it, so that a later apply can tell whether any of it changed:
// every file of the managed trees by digest, mode and link target, the
// state of every unit the plan read, the podman secrets by ID and labels,
// and which images the image store held. It holds no file content and no
// secret value — digests, modes, states, names and labels only — so it
// may be kept where the host's files may not (a CI artifact).
type Fingerprint struct {
	Files   map[string]FileStamp   `json:"files"`
	Units   map[string]UnitStamp   `json:"units"`
	Secrets map[string]SecretStamp `json:"secrets"`
	Images  map[string]bool        `json:"images"`
	// UnitsKnown and StoreKnown say whether systemd and podman were read
	// (Observed's fields of the same names).
	UnitsKnown bool `json:"unitsKnown"`
	StoreKnown bool `json:"storeKnown"`
}

// FileStamp is one path of the managed trees.
type FileStamp struct {
	// Mode is the file's type and permissions as fs.FileMode spells them
	// ("-rw-r--r--", "drwxr-xr-x", "Lrwxrwxrwx").
	Mode string `json:"mode"`
	// Digest is a regular file's content digest (digest.Tagged).
	Digest string `json:"digest,omitempty"`
	// Link is a symlink's target.
	Link string `json:"link,omitempty"`
}

// UnitStamp is one unit's state as systemd reported it.
type UnitStamp struct {
	Load             string `json:"load"`
	Active           string `json:"active"`
	Sub              string `json:"sub"`
	NeedDaemonReload bool   `json:"needDaemonReload,omitempty"`
}

func (u UnitStamp) String() string {
	s := u.Active + "/" + u.Sub
	if u.Load != "loaded" {
		s += " (" + u.Load + ")"
	}
	if u.NeedDaemonReload {
		s += " (its file changed since systemd loaded it)"
	}
	return s
}

// SecretStamp is one podman secret: podman gives a secret a new ID each
// time it is created, so a secret replaced by hand shows as a new ID even
// when its labels were copied.
type SecretStamp struct {
	ID     string            `json:"id"`
	Labels map[string]string `json:"labels,omitempty"`
}

// Fingerprint stamps the observed host. Observe's reads depend on the
// specs only through which units, secrets and images they name, so two
// observations made for the same input read the same facts, and their
// fingerprints differ exactly where the host changed.
func (o *Observed) Fingerprint() Fingerprint {
	fp := Fingerprint{Files: make(map[string]FileStamp, len(o.Files)), Units: make(map[string]UnitStamp, len(o.Units)),
		Secrets: make(map[string]SecretStamp, len(o.Secrets)), Images: maps.Clone(o.Images),
		UnitsKnown: o.UnitsKnown, StoreKnown: o.StoreKnown}
	if fp.Images == nil {
		fp.Images = map[string]bool{}
	}
	for p, f := range o.Files {
		st := FileStamp{Mode: f.Mode.String(), Link: f.Link}
		if f.Mode.IsRegular() {
			st.Digest = digest.Of(f.Data).Tagged()
		}
		fp.Files[p] = st
	}
	for n, u := range o.Units {
		fp.Units[n] = UnitStamp{Load: u.LoadState, Active: u.ActiveState, Sub: u.SubState, NeedDaemonReload: u.NeedDaemonReload}
	}
	for n, s := range o.Secrets {
		st := SecretStamp{ID: s.ID}
		if len(s.Labels) > 0 {
			st.Labels = maps.Clone(s.Labels)
		}
		fp.Secrets[n] = st
	}
	return fp
}

// Changes lists what differs in now from f, one line each that names the
// file, unit, secret or image and how it changed, in a stable order
// (files, units, secrets, images; by name inside each). With sameInput
// false (the plan was made for other specs) units, secrets and images are
// compared only where both read them: other specs name other ones, and
// that difference is the input's, not the host's.
func (f Fingerprint) Changes(now Fingerprint, sameInput bool) []string {
	var out []string
	if f.UnitsKnown != now.UnitsKnown || f.StoreKnown != now.StoreKnown {
		out = append(out, fmt.Sprintf("what was read: systemd %s, podman %s when the plan was made; now systemd %s, podman %s",
			read(f.UnitsKnown), read(f.StoreKnown), read(now.UnitsKnown), read(now.StoreKnown)))
	}
	for _, p := range union(f.Files, now.Files, true) {
		was, wok := f.Files[p]
		is, iok := now.Files[p]
		switch {
		case !iok:
			out = append(out, fmt.Sprintf("file %s: removed", p))
		case !wok:
			out = append(out, fmt.Sprintf("file %s: added (%s)", p, is.Mode))
		default:
			var what []string
			if was.Mode != is.Mode {
				what = append(what, fmt.Sprintf("mode %s → %s", was.Mode, is.Mode))
			}
			if was.Digest != is.Digest {
				what = append(what, fmt.Sprintf("content changed (%s → %s)", short(was.Digest), short(is.Digest)))
			}
			if was.Link != is.Link {
				what = append(what, fmt.Sprintf("link %s → %s", was.Link, is.Link))
			}
			if len(what) > 0 {
				out = append(out, fmt.Sprintf("file %s: %s", p, strings.Join(what, ", ")))
			}
		}
	}
	for _, n := range union(f.Units, now.Units, sameInput) {
		was, wok := f.Units[n]
		is, iok := now.Units[n]
		switch {
		case !iok:
			out = append(out, fmt.Sprintf("unit %s: no longer read (was %s)", n, was))
		case !wok:
			out = append(out, fmt.Sprintf("unit %s: now %s (not read when the plan was made)", n, is))
		case was.Load == is.Load && was.Active == is.Active && was.Sub == is.Sub && was.NeedDaemonReload != is.NeedDaemonReload:
			if is.NeedDaemonReload {
				out = append(out, fmt.Sprintf("unit %s: its file changed since systemd loaded it (%s/%s)", n, is.Active, is.Sub))
			} else {
				out = append(out, fmt.Sprintf("unit %s: systemd loaded its file again (%s/%s)", n, is.Active, is.Sub))
			}
		case was != is:
			out = append(out, fmt.Sprintf("unit %s: %s → %s", n, was, is))
		}
	}
	for _, n := range union(f.Secrets, now.Secrets, sameInput) {
		was, wok := f.Secrets[n]
		is, iok := now.Secrets[n]
		switch {
		case !iok:
			out = append(out, fmt.Sprintf("podman secret %s: removed", n))
		case !wok:
			out = append(out, fmt.Sprintf("podman secret %s: created", n))
		case was.ID != is.ID:
			out = append(out, fmt.Sprintf("podman secret %s: replaced (ID %s → %s)", n, short(was.ID), short(is.ID)))
		case !maps.Equal(was.Labels, is.Labels):
			out = append(out, fmt.Sprintf("podman secret %s: labels %s → %s", n, labels(was.Labels), labels(is.Labels)))
		}
	}
	for _, ref := range union(f.Images, now.Images, sameInput) {
		was, is := f.Images[ref], now.Images[ref]
		switch {
		case was && !is:
			out = append(out, fmt.Sprintf("image %s: removed from podman's image store", ref))
		case !was && is:
			out = append(out, fmt.Sprintf("image %s: now in podman's image store", ref))
		}
	}
	return out
}

// union lists the keys of a and b, sorted; with all false only the keys
// both hold.
func union[V any](a, b map[string]V, all bool) []string {
	var keys []string
	for k := range a {
		if _, ok := b[k]; ok || all {
			keys = append(keys, k)
		}
	}
	if all {
		for k := range b {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

func read(known bool) string {
	if known {
		return "read"
	}
	return "not read"
}

// short is a digest or ID as people compare them: the first 12 hex digits.
func short(d string) string {
	h := strings.TrimPrefix(d, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	if h == "" {
		return "none"
	}
	return h
}

func labels(m map[string]string) string {
	if len(m) == 0 {
		return "(none)"
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+"="+m[k])
	}
	return strings.Join(kv, ",")
}
