// Package load is the host-independent half of every syslet command: it
// turns spec sources into checked, rendered units. Read (a file, a
// directory of *.json, stdin or the stream an apply from stdin stored),
// pre-render validation (pkg/spec), render and post-render validation
// (render), and — as a step of its own, because an apply learns the
// host's podman release only after loading — podman's quadlet converter
// (quadletcheck). validate, render, push, adopt, the apply entry point and
// the tests all load through here, so a spec means the same everywhere.
//
// Layer: middle. It may import render and the ground packages of pkg/; it
// must not import plan, executor, pkg/app or any host adapter
// (pkg/host/...): loading never touches systemd, podman or a managed tree.
package load
