package secrets

import (
	"crypto/sha512"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/getsops/sops/v3/shamir"
)

// Sentinel errors of Open; callers branch with errors.Is.
var (
	// ErrNoIdentity: none of the host's identities is a recipient of the
	// document.
	ErrNoIdentity = errors.New("no identity of this host can open it")
	// ErrMAC: the document was changed after it was encrypted.
	ErrMAC = errors.New("MAC check failed: the document was changed after it was encrypted")
	// ErrShape: the document is not a flat SOPS map of key → string
	// encrypted for age.
	ErrShape = errors.New("not a flat SOPS document of string values encrypted for age")
)

var keyRe = regexp.MustCompile(`^[a-z0-9-]+$`)

// RecipientError is ErrNoIdentity with what a person needs to fix it: the
// recipients the document is encrypted for and the ones this host holds.
type RecipientError struct {
	For  []string // age recipients in the document's metadata
	Have []string // recipients of the host's identities
}

func (e *RecipientError) Error() string {
	have := "none (no SSH host key, cache or age identity file)"
	if len(e.Have) > 0 {
		have = strings.Join(e.Have, ", ")
	}
	return fmt.Sprintf("%v: it is encrypted for %s; this host holds %s", ErrNoIdentity, strings.Join(e.For, ", "), have)
}

func (e *RecipientError) Unwrap() error { return ErrNoIdentity }

// Open decrypts a whole SOPS document, YAML or JSON, with the given
// identities and returns its top-level keys and values. Key names are
// checked against [a-z0-9-]+ before anything is decrypted; the data key is
// recovered through age only; the MAC is verified; every value must be a
// string. No error from Open contains a value.
func Open(doc []byte, ids []Identity) (map[string][]byte, error) {
	d, err := parseSops(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrShape, err)
	}
	if len(d.docs) != 1 {
		return nil, fmt.Errorf("%w: it holds %d documents, want one", ErrShape, len(d.docs))
	}
	items := d.docs[0]
	if err := checkKeys(items); err != nil {
		return nil, err
	}
	dataKey, err := d.openDataKey(ids)
	if err != nil {
		return nil, err
	}
	defer clear(dataKey)
	out, types, mac, err := d.decryptItems(items, dataKey)
	if err != nil {
		return nil, err
	}
	want, typ, err := decryptValue(d.meta.MAC, dataKey, d.lastModified.Format(time.RFC3339))
	if err != nil || typ != "str" || string(want) != mac {
		wipe(out)
		return nil, ErrMAC
	}
	for _, it := range items {
		if it.isCmt {
			continue
		}
		if t := types[it.key]; t != "str" {
			wipe(out)
			return nil, fmt.Errorf("%w: key %q holds a %s, not a string (quote it before encrypting)", ErrShape, it.key, typeNames[t])
		}
	}
	return out, nil
}

// checkKeys refuses, before anything is decrypted, a key that is not a
// secret's name or a value that is not a single string.
func checkKeys(items []sopsItem) error {
	for _, it := range items {
		if it.isCmt {
			continue
		}
		if !keyRe.MatchString(it.key) {
			return fmt.Errorf("%w: key %q must match [a-z0-9-]+", ErrShape, it.key)
		}
		if _, ok := it.value.(string); !ok || it.nested {
			return fmt.Errorf("%w: key %q must hold a single string, not a nested map or list", ErrShape, it.key)
		}
	}
	return nil
}

// openDataKey recovers the document's data key with the host's
// identities; when none opens it, the error names the recipients the
// document is for and the ones the host holds.
func (d *sopsDoc) openDataKey(ids []Identity) ([]byte, error) {
	var recipients []string
	for _, g := range d.groups {
		for _, k := range g.Age {
			recipients = append(recipients, k.Recipient)
		}
	}
	if len(recipients) == 0 {
		return nil, fmt.Errorf("%w: it has no age recipients", ErrShape)
	}
	var ageIDs []age.Identity
	var have []string
	for _, id := range ids {
		ageIDs = append(ageIDs, id.Identity)
		if id.Recipient != "" {
			have = append(have, id.Recipient)
		}
	}
	dataKey, err := d.dataKey(ageIDs)
	if errors.Is(err, errNoKey) {
		return nil, &RecipientError{For: recipients, Have: have}
	}
	return dataKey, err
}

// decryptItems decrypts the values in document order and computes the
// MAC over them, as SOPS does: the values, the type of each, and the MAC
// in hex. On an error every value decrypted so far is wiped.
func (d *sopsDoc) decryptItems(items []sopsItem, dataKey []byte) (out map[string][]byte, types map[string]string, mac string, err error) {
	m := &d.meta
	hash := sha512.New()
	if m.MACOnlyEncrypted {
		hash.Write(macOnlyEncryptedInit)
	}
	out, types = map[string][]byte{}, map[string]string{}
	var cmts []string
	for _, it := range items {
		if it.isCmt {
			cmts = append(cmts, it.comment)
			continue
		}
		enc := m.encrypted(it.key, cmts)
		cmts = nil
		s := it.value.(string)
		if !enc {
			out[it.key] = []byte(s)
			types[it.key] = "str"
			if !m.MACOnlyEncrypted {
				hash.Write([]byte(s))
			}
			continue
		}
		plain, typ, err := decryptValue(s, dataKey, it.key+":")
		var b []byte
		var isCmt bool
		if err == nil {
			b, isCmt, err = macBytes(plain, typ)
		}
		if err != nil {
			// Never the library's or the parser's message: it can quote a
			// decrypted value.
			clear(plain)
			wipe(out)
			return nil, nil, "", fmt.Errorf("%w (a value does not decrypt or does not match its declared type)", ErrMAC)
		}
		if !isCmt {
			hash.Write(b)
		}
		if typ == "str" && plain == nil {
			plain = []byte{}
		}
		out[it.key], types[it.key] = plain, typ
	}
	return out, types, fmt.Sprintf("%X", hash.Sum(nil)), nil
}

// errNoKey: no age identity given opened a key group's data key.
var errNoKey = errors.New("no identity opened the data key")

// dataKey recovers the document's data key with the host's age
// identities: from its one key group, or, with several groups (Shamir's
// secret sharing), from the parts of at least the threshold's number of
// them. Keys of other kinds (cloud KMS, PGP) are never tried.
func (d *sopsDoc) dataKey(ids []age.Identity) ([]byte, error) {
	var parts [][]byte
	var failed error
	for _, g := range d.groups {
		for _, k := range g.Age {
			if len(ids) == 0 {
				break
			}
			r, err := age.Decrypt(armor.NewReader(strings.NewReader(k.Enc)), ids...)
			if err == nil {
				var key []byte
				if key, err = io.ReadAll(r); err == nil {
					parts = append(parts, key)
					break
				}
			}
			// The first error other than "no identity matched": a matching
			// identity met a damaged stanza.
			var nomatch *age.NoIdentityMatchError
			if !errors.As(err, &nomatch) && failed == nil {
				failed = err
			}
		}
	}
	if len(d.groups) > 1 {
		if len(parts) >= d.meta.ShamirThreshold && len(parts) > 0 {
			key, err := shamir.Combine(parts)
			for _, p := range parts {
				clear(p)
			}
			if err != nil {
				return nil, fmt.Errorf("could not get data key from shamir parts: %w", err)
			}
			return key, nil
		}
	} else if len(parts) == 1 {
		return parts[0], nil
	}
	if failed != nil {
		return nil, fmt.Errorf("recovering the data key with age: %w", failed)
	}
	return nil, errNoKey
}
