package redact

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/etc/containers/config/web/nginx.conf", "/etc/containers/config/web/nginx.conf"},
		{"héllo wörld", "héllo wörld"},
		{"a\nb", `a\x0ab`},
		{"\x1b[2Jboom", `\x1b[2Jboom`},
		{"tab\there", `tab\x09here`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085", `c1\u0085`},
		{"rtl\u202egnp.exe", `rtl\u202egnp.exe`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`back\x1b`, `back\\x1b`}, // a literal backslash cannot forge an escape
	} {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHiddenAndPrivate(t *testing.T) {
	if !Private(0o600) || !Private(0o640) || Private(0o644) || Private(0o604) {
		t.Error("Private: only world-readable modes may be shown")
	}
	h := Hidden(0o600, []byte("password=hunter2\n"))
	if !strings.HasPrefix(h, "mode 0600, 17 bytes, sha256 ") || strings.Contains(h, "hunter2") {
		t.Errorf("Hidden = %q", h)
	}
	if Line("x\ty\x1b") != "x\ty\\x1b" {
		t.Errorf("Line = %q", Line("x\ty\x1b"))
	}
}
