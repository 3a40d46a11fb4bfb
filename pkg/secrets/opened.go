package secrets

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Sealed is one secret spec's ciphertext as the planner hands it over:
// what this package needs to open it and to say which spec it is. The
// package keeps its own type so that it depends on nothing of the
// pipeline (the caller converts its rendered secrets).
type Sealed struct {
	Name       string // the secret spec's name
	Source     string // the file the spec came from
	Path       string // the spec's JSON path in Source
	Keys       []string
	Hash       string // identifies the ciphertext (and its values once opened)
	Ciphertext []byte
}

// SpecError is a secret spec that cannot be opened on this host. Its
// message names the spec and where it is declared.
type SpecError struct {
	Name   string // secret spec name
	Source string // file the spec came from
	Path   string // JSON path of the spec in Source
	Err    error
}

func (e *SpecError) Error() string {
	where := strings.TrimSpace(e.Source + " " + e.Path)
	return fmt.Sprintf("secret %q (%s): %v", e.Name, where, e.Err)
}

func (e *SpecError) Unwrap() error { return e.Err }

// Opened holds the decrypted values of one run's secret specs, keyed by
// the hash of their ciphertext.
// Values live only here and in the copies handed out, until Wipe.
type Opened struct {
	byHash map[string]map[string][]byte
	handed [][]byte
}

// OpenAll decrypts every secret spec with the keyring's identities. Each
// spec that fails gives a *SpecError; all of them are joined in the
// returned error, so one run reports every broken secret at once. On
// error nothing decrypted is kept.
func OpenAll(secs []Sealed, kr *Keyring) (*Opened, error) {
	o := &Opened{byHash: map[string]map[string][]byte{}}
	var errs []error
	for _, s := range secs {
		fail := func(err error) {
			errs = append(errs, &SpecError{Name: s.Name, Source: s.Source, Path: s.Path, Err: err})
		}
		vals, err := Open(s.Ciphertext, kr.Identities())
		if err != nil {
			fail(err)
			continue
		}
		var got []string
		for k := range vals {
			got = append(got, k)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(s.Keys))
		if !slices.Equal(got, want) {
			wipe(vals)
			fail(fmt.Errorf("%w: decrypted keys %v differ from the document's keys %v", ErrShape, got, want))
			continue
		}
		o.byHash[s.Hash] = vals
	}
	if len(errs) > 0 {
		o.Wipe()
		return nil, errors.Join(errs...)
	}
	return o, nil
}

// Decrypt returns a copy of the values of s; the copy is zeroed by Wipe
// too.
func (o *Opened) Decrypt(s Sealed) (map[string][]byte, error) {
	vals, ok := o.byHash[s.Hash]
	if !ok {
		return nil, fmt.Errorf("secret %q was not opened while planning", s.Name)
	}
	out := make(map[string][]byte, len(vals))
	for k, v := range vals {
		c := slices.Clone(v)
		o.handed = append(o.handed, c)
		out[k] = c
	}
	return out, nil
}

// Value returns the value of one key, for SYSLET_SHOW_SECRETS in --diff.
func (o *Opened) Value(s Sealed, key string) ([]byte, bool) {
	v, ok := o.byHash[s.Hash][key]
	return v, ok
}

// Wipe zeroes every value buffer this Opened holds or handed out.
func (o *Opened) Wipe() {
	if o == nil {
		return
	}
	for _, vals := range o.byHash {
		wipe(vals)
	}
	for _, b := range o.handed {
		clear(b)
	}
	o.byHash, o.handed = nil, nil
}

// wipe clears every value of vals in place.
func wipe(vals map[string][]byte) {
	for _, v := range vals {
		clear(v)
	}
}

// MinScrubbed is the shortest value Scrub hides: shorter ones ("1",
// "yes") would hide ordinary words of every log line and protect nothing.
const MinScrubbed = 4

// Scrub replaces every decrypted value of MinScrubbed bytes or more that
// occurs in s with "(secret)": for text read back from the host that a
// container may have filled with its own secrets (a failed unit's last
// log lines) before syslet prints or sends it anywhere.
func (o *Opened) Scrub(s string) string {
	if o == nil {
		return s
	}
	for _, vals := range o.byHash {
		for _, v := range vals {
			if len(v) >= MinScrubbed && strings.Contains(s, string(v)) {
				s = strings.ReplaceAll(s, string(v), "(secret)")
			}
		}
	}
	return s
}
