// Command release builds a syslet release into dist/ (go tool task
// release): see package release. It prints every artifact with its size
// and SHA-256.
//
// Layer: release (pkg/layers_test.go), like package release; it is a
// build tool, not part of what a host runs.
package main
