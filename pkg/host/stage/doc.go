// Package stage stages unit files before they reach the host: it writes
// a complete unit set into a scratch directory, runs the host's own quadlet
// generator over it (QUADLET_UNIT_DIRS) and then `systemd-analyze verify`
// on the generated services. Nothing under /etc or /run is touched.
package stage
