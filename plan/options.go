package plan

import "github.com/syslet/syslet/render"

// Options tune how a plan is built: the guardrails' switches (drift.go)
// and what a rollback asks for (pins.go).
type Options struct {
	// Force overwrites managed files that were edited by hand.
	Force bool
	// Written holds, by host path, the content digests (Action.Digest)
	// of files an unfinished earlier run was writing: syslet's own
	// content, even where no marker records it yet.
	Written map[string]map[string]bool

	// InputDigest is the digest of the input this plan is made for. A pin
	// an earlier rollback left stays while the input is the one that
	// rollback restored, and goes with any other.
	InputDigest string
	// Pins are the images a rollback runs, by container unit file name.
	Pins map[string]render.Pin
	// Rollback plans a return to an earlier generation: nothing is
	// deleted (volumes, images) and no volume is recreated, since that
	// would delete its data; what is therefore not restored is noted.
	Rollback bool
	// NoBackups: the run exports no volume before it deletes or
	// recreates it (--no-backup), so a recreated volume's data is not
	// carried over either (carry.go).
	NoBackups bool
	// KeepImages are the images (by name) that kept generations need: a
	// stale build's or image unit's image among them is never deleted.
	KeepImages map[string]bool
	// HeldUpdates are the digests whose update failed the health gate and
	// was rolled back, by image reference (the container's Image=): an
	// update does not try a digest again until the tag names another.
	HeldUpdates map[string]HeldUpdate
}

// HeldUpdate is a digest an update does not try again, and the run whose
// health gate it failed.
type HeldUpdate struct {
	Digest string
	Run    string
}
