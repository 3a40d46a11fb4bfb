package spec

import (
	"fmt"
	"strings"
	"unicode"
)

var maxNameBytes = 128

func (d *decoder) checkName(p, name string) {
	switch {
	case len(name) > maxNameBytes:
		d.errf(p, RuleName, "name is %d bytes long; at most %d are allowed", len(name), maxNameBytes)
	case hasControl(name):
		d.errf(p, RuleControlChar, "name contains a control character")
	case !isWord(name, true):
		d.errf(p, RuleName, "name %q is not valid: use letters, digits, '_', '.' and '-', starting with a letter or digit (it becomes a systemd unit name and a podman resource name)", name)
	case strings.Contains(name, ".."):
		d.errf(p, RuleName, "name %q must not contain \"..\"", name)
	}
}

// maxSecretName is podman's limit on the length of a secret name.
const maxSecretName = 253

// checkSecretName checks the name of an external secret, which is the
// podman secret's own name: podman's rules (1 to 253 bytes, no '=', '/',
// ',' or NUL) and what a quadlet Secret= line can carry literally (the
// line is split on whitespace and unquoted, and systemd expands '%' and
// '$' in the command quadlet generates from it).
func (d *decoder) checkSecretName(p, name string) {
	switch {
	case len(name) > maxSecretName:
		d.errf(p, RuleName, "name is %d bytes long; podman allows at most %d for a secret", len(name), maxSecretName)
	case hasControl(name):
		d.errf(p, RuleControlChar, "name contains a control character")
	case strings.ContainsAny(name, "=/,"):
		d.errf(p, RuleName, "name %q is not a podman secret name: podman refuses '=', '/' and ','", name)
	case strings.ContainsAny(name, "\"'\\%$") || strings.IndexFunc(name, unicode.IsSpace) >= 0:
		d.errf(p, RuleName, "name %q cannot be written in a quadlet Secret= line: no whitespace, quotes, '\\', '%%' or '$'", name)
	}
}

// Host path limits: every name syslet writes must fit the kernel's, or an
// apply would fail half-way through a spec that validated.
const (
	maxComponent = 255  // NAME_MAX
	maxHostPath  = 3800 // well under PATH_MAX (4096) once the host prefix is added
)

// longPath describes why a relative or absolute path cannot be written on
// a host, or returns "".
func longPath(p string) string {
	if len(p) > maxHostPath {
		return fmt.Sprintf("is %d bytes long; at most %d are allowed", len(p), maxHostPath)
	}
	for _, c := range strings.Split(p, "/") {
		if len(c) > maxComponent {
			return fmt.Sprintf("has a component of %d bytes (%.20q…); a file name can have at most %d", len(c), c, maxComponent)
		}
	}
	return ""
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (unicode.IsControl(r)) }) >= 0
}

// isWord reports whether s is a letter or digit followed by letters,
// digits, '_' and '-' (and '.' when dot is set): the shape of spec names
// (^[a-zA-Z0-9][a-zA-Z0-9_.-]*$), section names and keys
// (^[A-Za-z0-9][A-Za-z0-9_-]*$). A loop, not a regexp: it runs for every
// key of every unit.
func isWord(s string, dot bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '_' || c == '-' || dot && c == '.'):
		default:
			return false
		}
	}
	return s != ""
}
