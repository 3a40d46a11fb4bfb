package redact

import (
	"crypto/sha256"
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
		{"syslet\u00a0--stdin", `syslet\u00a0--stdin`},
		{"ideo\u3000space", `ideo\u3000space`},
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
	h := HiddenSum(0o600, 17, sha256.Sum256([]byte("password=hunter2\n")))
	if !strings.HasPrefix(h, "mode 0600, 17 bytes, sha256 ") || strings.Contains(h, "hunter2") {
		t.Errorf("Hidden = %q", h)
	}
	if Line("x\ty\x1b") != "x\ty\\x1b" {
		t.Errorf("Line = %q", Line("x\ty\x1b"))
	}
}

func TestCredential(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Environment=DB_PASSWORD=hunter2", "Environment=DB_PASSWORD=" + HiddenValue},
		{"db_password=edited", "db_password=" + HiddenValue},
		{"password: s3cret", "password: " + HiddenValue},
		{"  api-key = abc", "  api-key = " + HiddenValue},
		{"ExecStart=/bin/app --token abc --v", "ExecStart=/bin/app --token " + HiddenValue},
		{"X-Auth-Token: abc", "X-Auth-Token: " + HiddenValue},
		{"Label=auth.enabled=true", "Label=auth.enabled=" + HiddenValue},
		{"Secret=db-password,type=env,target=DB_PASSWORD", ""},
		{"Secret=dbpass", ""},
		{"Environment=PASSWORD_FILE=", ""},
		{"Image=busybox", ""},
		{"Image=registry.example/auth-service:v1", ""},
		{"echo my password is here", ""},
		{"PassEnvironment=HOME", ""},
	} {
		got, ok := Credential(tt.in)
		if tt.want == "" {
			if ok || got != tt.in {
				t.Errorf("Credential(%q) = %q, %v; want it shown", tt.in, got, ok)
			}
			continue
		}
		if !ok || got != tt.want {
			t.Errorf("Credential(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	diff := "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n token=old\n-a=1\n+password=new\n"
	want := "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n token=" + HiddenValue + "\n-a=1\n+password=" + HiddenValue + "\n"
	if got := DiffLines(diff); got != want {
		t.Errorf("DiffLines = %q, want %q", got, want)
	}
}

// An answer quoted in an error is one printable line, without the hidden
// values, cut at a rune within its bound.
func TestAnswer(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		hide []string
		want string
	}{
		{"  ", 160, nil, ""},
		{"bad\ncredentials\x1b[31m for tok3n", 160, []string{"tok3n"}, "bad credentials?[31m for (secret)"},
		{"héllo", 2, nil, "h…"},
		{"\xff ok", 160, nil, "? ok"},
	} {
		var hide [][]byte
		for _, h := range c.hide {
			hide = append(hide, []byte(h))
		}
		if got := Answer([]byte(c.in), c.n, hide...); got != c.want {
			t.Errorf("Answer(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
