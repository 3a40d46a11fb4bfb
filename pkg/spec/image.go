package spec

import (
	"regexp"
	"strings"

	"go.podman.io/image/v5/docker/reference"

	"github.com/syslet/syslet/pkg/unit"
)

// Image references are checked with podman's own parser (the container
// image library podman links), so that a reference podman would refuse on
// the host — an upper-case repository, a character no reference has, a
// tag over 128 characters — fails validation instead.

// imageID is an image ID as podman accepts it for Image=: 64 hex digits,
// with or without "sha256:".
var imageID = regexp.MustCompile(`^(sha256:)?[0-9a-f]{64}$`)

// transports are the prefixes of a reference through another transport
// than a registry (podman pulls "docker://…", reads "oci-archive:…"):
// their syntax is the transport's, which only podman on the host knows.
var transports = []string{"docker://", "docker-archive:", "oci-archive:", "oci:", "dir:", "containers-storage:", "docker-daemon:"}

// checkImageRef reports why podman would refuse ref as a [Container]
// Image=, or "" when it would not. A quadlet unit reference (app.build,
// base.image) is the converter's to check. The value is read as quadlet
// reads it: `Image="localhost/app"` names localhost/app (podman's own
// quotes.container).
func checkImageRef(ref string) string {
	ref = unit.Unquoted(ref)
	if unit.IsQuadletFile(ref) || imageID.MatchString(ref) {
		return ""
	}
	for _, t := range transports {
		if strings.HasPrefix(ref, t) {
			return ""
		}
	}
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return err.Error()
	}
	return ""
}

// checkImageTag reports why podman would refuse tag as a [Build]
// ImageTag=, which names and tags the image it builds, or "".
func checkImageTag(tag string) string {
	named, err := reference.ParseNormalizedNamed(tag)
	if err != nil {
		return err.Error()
	}
	if _, ok := named.(reference.NamedTagged); !ok {
		return "it names no tag"
	}
	return ""
}
