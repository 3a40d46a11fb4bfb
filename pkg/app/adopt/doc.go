// Package adopt turns hand-written quadlet files (every type: .container,
// .volume, .network, .build, .pod, .image, .kube, .artifact; a template
// with its instance links; each unit's own drop-in directory) into spec
// format v1, so a host that already runs quadlets can be handed to syslet
// without a restart.
//
// Read (read.go) reads the unit files, drop-ins, build contexts and kube
// YAML files from the host, following no link but an instance's; Convert
// (adopt.go) is pure: it returns the specs as ordered JSON (json.go) —
// with one external secret spec for each podman secret a container's
// Secret= names, since those were made by hand too — and, per file, every
// way the units syslet would render differ in meaning from the files (a
// forced ContainerName=, a default Restart=always, …), since each of
// those makes the first apply change something. What a kind's spec has
// besides its unit (a container's instances, a build's context, a kube
// unit's YAML) is kinds.go's. It renders its own output back through
// pkg/load to judge that (check.go).
//
// Layer: app. It may import load, render, the ground packages and the
// fsroot adapter (to read); it must not import plan, executor or deploy.
package adopt
