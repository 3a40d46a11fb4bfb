// Package quadletcheck runs a complete rendered unit set through podman's
// own quadlet converter — the pkg/systemd/quadlet and pkg/systemd/parser
// packages of the podman module syslet pins — in-process, the way the
// generator on a host would: every unit parsed from its rendered bytes,
// the units' names and resources known to each other (unitsInfoMap),
// volumes, networks and builds converted before the containers that use
// them. Each conversion error becomes a finding carrying the spec's source
// and the JSON path of the key it is about.
//
// It also gates keys by podman release: a key the target release does not
// know yet is an error naming the release that introduced it (the table is
// pkg/unit's). And it checks that what syslet derives about each generated
// unit — service name, podman resource name, the units a container
// requires — is what the converter derives; a difference
// is reported as a syslet bug, so the two can never silently disagree.
//
// No binary, no root, no host: the converter reads nothing but its input
// (it only stats the path of an optional "-/dev/…" AddDevice=, which
// changes its output, never its verdict). The host's own generator and
// systemd-analyze verify remain the last word at staging. The package is
// kept out of render because podman's converter imports os.
//
// Layer: load (the middle, with pkg/load, which runs it). It may import
// render and ground packages, never plan, executor or pkg/app.
package quadletcheck
