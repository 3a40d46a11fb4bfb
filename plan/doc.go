// Package plan compares what render produced with what the host has and
// decides what an apply must do. Build is pure: it takes the rendered
// output and an Observed value (files on disk, systemd unit states,
// podman's secret and image stores) and returns a Plan, with no I/O and no
// interface calls. Observe gathers the Observed value through the small
// reader interfaces this package declares, each fact read once.
//
// A Plan is a value: it prints as text for people (Format), serialises to
// JSON for machines, and the executor runs exactly its Actions, in the
// order of their Step. Reasons in a plan explain; they never steer the
// executor.
//
// Build is the list of planning's stages (build.go), each a function of
// the inputs and of what the stages before it found, returning what it
// found: the inputs indexed once and read-only from then on (inputs:
// the rendered set, and the host with its installed units, installed.go),
// the podman secrets (secrets.go, which also checks that the external
// ones, which syslet never touches, exist), each desired unit in the order
// of dependence, what no spec declares any more (stale.go), and the order
// of the whole (future.go, which also derives the unit set staging
// checks). A stage's finding is a part of the plan (part.go), and Build
// joins the parts in its order.
//
// A desired unit's plan (units.go) begins with compare (compare.go: its
// file and drop-ins, dropins.go, against the host's; drift.go's check of
// hand edits), adds what its kind's checks find (files.go: config files,
// config dirs and build contexts; images.go; pins.go; updates.go), and
// ends with what happens to its service (resource, or for what runs,
// service). What a unit's plan tells the units after it that depend on
// it (a resource recreated, a template's files changed, a drop-in
// written) is its outcome, which Build records (decided) and passes on.
//
// Observed.Fingerprint stamps what Observe read (digests, modes, states,
// IDs and labels; never content) for a saved plan, and Changes names what
// differs between two stamps (fingerprint.go).
//
// The guardrails live beside it: GuardRemovals refuses mass removals
// (guard.go), a symlink on the way to any managed path is a refusal, a
// managed file (a unit, config or context file, a config-dir file) edited
// by hand is held as drift unless forced, and an unmarked unit that means
// what its spec says is taken over (drift.go); the content of files
// others may not read is never put in a diff (redact.go).
//
// Layer: plan. It may import render and ground packages (never a host
// adapter, executor, pkg/load or pkg/app; purity_test.go and
// pkg/layers_test.go hold it to that). How a plan reads to people is
// pkg/app/view's; the plan keeps its value, its JSON form and its counts.
package plan
