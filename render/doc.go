// Package render is pure: it turns decoded specs into the files a host
// should have — quadlet unit files carrying syslet's [X-Syslet] marker,
// config files, config directories and build contexts — and performs no
// I/O. The same specs always give byte-identical output.
//
// A unit is its spec's sections with the keys syslet owns (spec.Owned) and
// syslet's marker (plain); the facts the plan reads of it — the podman
// object's name, what it requires, what runs — come from pkg/unit's table
// of kinds. Only a kind with files of its own or facts only its keys tell
// has a renderer (renderers, in kinds.go: containers, builds, image units,
// kube units).
//
// Check runs the post-render validation: rules that can only be judged on
// rendered units, such as references between units and mount destinations
// that collide once syslet's own config mounts are added.
//
// Layer: render. It may import ground packages only (never a host
// adapter, plan, executor, pkg/load or pkg/app).
package render
