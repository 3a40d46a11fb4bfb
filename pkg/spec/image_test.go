package spec_test

import (
	"testing"

	"github.com/syslet/syslet/pkg/spec"
)

// An Image= quadlet unquotes is checked as quadlet reads it: podman's own
// quotes.container writes Image="localhost/imagename".
func TestQuotedImageIsCheckedUnquoted(t *testing.T) {
	decodeOK(t, `{"apiVersion": "v1", "type": "container", "name": "web", "unit": {"Container": {"Image": "\"localhost/imagename\""}}}`)
	_, rep := decode(t, `{"apiVersion": "v1", "type": "container", "name": "web", "unit": {"Container": {"Image": "\"localhost/Imagename\""}}}`)
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != spec.RuleImageRef {
		t.Fatalf("an upper-case repository inside the quotes must still be refused, got:\n%s", rep.String())
	}
}
