package plan

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/unit"
)

// MarshalJSON writes the action as encoding/json wrote it when all its
// fields were its own, in the same order, byte for byte: the plan's digest
// (and so every saved plan and journal record) is made of this form, and
// must not change with the struct's layout. Writing it by hand is also
// what keeps a plan of three hundred thousand actions quick to digest.
func (a Action) MarshalJSON() ([]byte, error) {
	// encoding/json escapes <, > and & itself after MarshalJSON when the
	// encoder asks for it (compact), so they are left as they are here.
	return a.appendJSON(nil, false), nil
}

// appendJSON appends the action's JSON object; html escapes <, > and &
// as encoding/json's default does (Plan.Digest hashes that form).
func (a *Action) appendJSON(b []byte, html bool) []byte {
	d := a.Data()
	b = append(b, `{"step":`...)
	b = strconv.AppendInt(b, int64(a.Step), 10)
	b = appendField(b, "op", string(a.Op), html, false)
	b = appendField(b, "target", a.Target, html, false)
	b = appendField(b, "reason", a.Reason, html, true)
	b = appendField(b, "unit", a.Unit, html, true)
	if d.Mode != 0 {
		b = append(b, `,"mode":`...)
		b = strconv.AppendUint(b, uint64(d.Mode), 10)
	}
	b = appendField(b, "link", d.Link, html, true)
	if d.Pull != nil {
		b = appendValue(b, "pull", d.Pull, html)
	}
	if a.Carried {
		b = append(b, `,"carried":true`...)
	}
	if a.Irreversible {
		b = append(b, `,"irreversible":true`...)
	}
	b = appendField(b, "digest", d.Digest, html, true)
	if len(d.Files) > 0 {
		b = appendValue(b, "files", d.Files, html)
	}
	b = appendField(b, "root", d.Root, html, true)
	b = appendField(b, "key", d.Key, html, true)
	if len(d.Labels) > 0 {
		b = appendValue(b, "labels", d.Labels, html)
	}
	if d.NoBackup {
		b = append(b, `,"noBackup":true`...)
	}
	b = appendField(b, "service", d.Service, html, true)
	b = appendField(b, "backup", d.Backup, html, true)
	if d.Switch != nil {
		b = appendValue(b, "switch", d.Switch, html)
	}
	return append(b, '}')
}

// appendField appends ,"name":"value" (nothing for an empty value when
// omitEmpty).
func appendField(b []byte, name, value string, html, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, value, html)
}

// appendString appends s as a JSON string. Plain ASCII, by far the most
// common, is copied as it is; anything else is left to encoding/json, so
// that every escape it makes (control characters, invalid UTF-8, U+2028)
// is made the same way.
func appendString(b []byte, s string, html bool) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || html && (c == '<' || c == '>' || c == '&') {
			plain = false
			break
		}
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return appendEncoded(b, s, html)
}

// appendValue appends ,"name": and v as encoding/json writes it.
func appendValue(b []byte, name string, v any, html bool) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendEncoded(b, v, html)
}

func appendEncoded(b []byte, v any, html bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	// Strings, a map of strings and plain structs of them cannot fail.
	_ = enc.Encode(v)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// MarshalJSON writes the unit change as encoding/json does, with the key
// changes of a removed unit worked out now (see UnitChange.removed).
func (uc UnitChange) MarshalJSON() ([]byte, error) {
	type plain UnitChange // the same fields, without this method
	if uc.Keys == nil && uc.removed != nil {
		if f, err := unit.Parse(uc.removed); err == nil {
			uc.Keys = diffKeys(f, &unit.File{})
			redactKeys(uc.Keys, redact.Private(uc.perm), uc.perm)
		}
	}
	return json.Marshal(plain(uc))
}
