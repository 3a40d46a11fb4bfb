// Command syslet validates spec format v1, renders quadlet units, plans
// them against a host and applies the plan. This package is wiring only:
// it parses flags, builds the real host adapters, runs the pipeline
// (spec → render → plan → executor) and maps results to exit codes.
//
// Layer: cmd, the top. It may import pkg/app, pkg/load and ground
// packages, never plan, executor, render or a host adapter directly: what
// it runs is pkg/app/deploy's, what it prints is pkg/app/view's. Its
// commands and flags are defined once (cli.go, flags.go); the dispatch of
// a command line, --help, the command-line reference
// (docs/reference/cli.md), the man pages, the shell completions and the
// usage errors are drawn from them.
package main
