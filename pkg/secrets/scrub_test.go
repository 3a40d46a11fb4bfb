package secrets

import "testing"

// TestScrub: a decrypted value in text read back from the host (a unit's
// log line) is hidden; values too short to tell from ordinary words are
// not; nothing is scrubbed without opened secrets.
func TestScrub(t *testing.T) {
	o := &Opened{byHash: map[string]map[string][]byte{
		"h1": {"password": []byte("s3cret-hunter2"), "flag": []byte("on")},
		"h2": {"token": []byte("tok-4f9a")},
	}}
	for _, tc := range []struct{ in, want string }{
		{"connecting with s3cret-hunter2 failed", "connecting with (secret) failed"},
		{"tok-4f9a and again tok-4f9a", "(secret) and again (secret)"},
		{"feature on, nothing secret", "feature on, nothing secret"},
		{"", ""},
	} {
		if got := o.Scrub(tc.in); got != tc.want {
			t.Errorf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var none *Opened
	if got := none.Scrub("s3cret-hunter2"); got != "s3cret-hunter2" {
		t.Errorf("nil Opened scrubbed %q", got)
	}
	o.Wipe()
	if got := o.Scrub("s3cret-hunter2"); got != "s3cret-hunter2" {
		t.Errorf("wiped Opened scrubbed %q", got)
	}
}
