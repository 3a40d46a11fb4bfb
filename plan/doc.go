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
// Build's work is split by what it decides about: installed.go reads the
// installed units and what they say about themselves, units.go plans
// each desired unit (resources, then containers), files.go its config
// files, config dirs and build contexts, secrets.go the podman secrets
// (and checks that the external ones, which syslet never touches, exist),
// stale.go what no spec declares any more, and future.go the unit set
// staging checks and the final action order.
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
