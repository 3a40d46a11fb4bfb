// Command syslet validates spec format v1, renders quadlet units, plans
// them against a host and applies the plan. This package is wiring only:
// it parses flags, builds the real host adapters, runs the pipeline
// (spec → render → plan → executor) and maps results to exit codes.
package main
