// Package render is pure: it turns decoded specs into the files a host
// should have — quadlet unit files carrying syslet's [X-Syslet] marker,
// config files, config directories and build contexts — and performs no
// I/O. The same specs always give byte-identical output.
//
// Check runs the post-render validation: rules that can only be judged on
// rendered units, such as references between units and mount destinations
// that collide once syslet's own config mounts are added.
//
// Layer: render. It may import ground packages only (never a host
// adapter, plan, executor, pkg/load or pkg/app).
package render
