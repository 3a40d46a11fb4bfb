// Package stage stages unit files before they reach the host: it writes
// a complete unit set into a scratch directory, runs the host's own quadlet
// generator over it (QUADLET_UNIT_DIRS) and then `systemd-analyze verify`
// on the generated services. Nothing under /etc or /run is touched.
//
// Layer: adapter (a ground package only pkg/app may import). It imports
// pkg/layout and runs the host's tools; never plan or render.
package stage
