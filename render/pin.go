package render

import (
	"strings"

	"github.com/syslet/syslet/pkg/unit"
)

// Pin is a rollback's hold on a container's image: the image ID it ran in
// the generation being restored (Run), for as long as the host runs that
// generation's input (InputDigest).
type Pin struct {
	ImageID     string `json:"imageId"`
	Run         string `json:"run"`
	InputDigest string `json:"inputDigest"`
	// Digest is the image's manifest digest in its registry, when the
	// generation recorded one: an image a tag no longer names has no
	// repository digests left in podman, and an update compares by it.
	Digest string `json:"digest,omitempty"`
}

// Keys of the pin drop-in's [X-Syslet] section.
const (
	keyPinRun   = "Pin"
	keyPinInput = "InputDigest"
	keyPinImage = "ImageDigest"
)

// PinDropIn renders the drop-in that pins a container to an image by ID:
// quadlet merges it into the unit, Image= by ID and Pull=never, so the
// container runs exactly that image whatever its tag says now.
func PinDropIn(p Pin) []byte {
	f := &unit.File{}
	f.Add(unit.Container, unit.KeyImage, p.ImageID)
	f.Add(unit.Container, unit.KeyPull, "never")
	f.Add(unit.Syslet, keyPinRun, p.Run)
	f.Add(unit.Syslet, keyPinInput, p.InputDigest)
	if p.Digest != "" {
		f.Add(unit.Syslet, keyPinImage, p.Digest)
	}
	return append([]byte("# Written by syslet's rollback to the generation of run "+p.Run+": this container runs the image\n"+
		"# it ran then. The next apply of specs other than that generation's removes this file.\n"), f.Bytes()...)
}

// ParsePin reads a pin drop-in back; ok is false for anything that is not
// one (a drop-in written by someone else is never syslet's to judge).
func ParsePin(data []byte) (Pin, bool) {
	f, err := unit.Parse(data)
	if err != nil {
		return Pin{}, false
	}
	var p Pin
	p.Run, _ = f.Last(unit.Syslet, keyPinRun)
	p.InputDigest, _ = f.Last(unit.Syslet, keyPinInput)
	p.ImageID, _ = f.Last(unit.Container, unit.KeyImage)
	p.Digest, _ = f.Last(unit.Syslet, keyPinImage)
	return p, p.Run != "" && p.ImageID != "" && strings.TrimSpace(p.InputDigest) != ""
}
