package deploy

import "testing"

// TestMentions: a staging message is blamed on the unit it names as a
// whole word, never on one whose name ends the same.
func TestMentions(t *testing.T) {
	for _, tt := range []struct {
		msg, name string
		want      bool
	}{
		{"web.container: unsupported key 'Foo'", "web.container", true},
		{"ba.container: unsupported key 'Foo'", "a.container", false},
		{"Failed to start web.service.", "web.service", true},
		{"x-web.service failed", "web.service", false},
		{"see /etc/containers/systemd/web.container", "web.container", true},
		{"a.container and ba.container", "ba.container", true},
	} {
		if got := mentions(tt.msg, tt.name); got != tt.want {
			t.Errorf("mentions(%q, %q) = %v, want %v", tt.msg, tt.name, got, tt.want)
		}
	}
}
