// Package redact keeps what must not reach a terminal or a log out of
// syslet's output: the content of files that are not world-readable (they
// hold credentials more often than not) and control characters in names
// read from the host, which could rewrite the operator's terminal or forge
// log lines. It is pure and imports only the standard library.
//
// Layer: ground (pkg/). It imports only the standard library, outside
// libraries and other ground packages; never render, plan, executor,
// pkg/load or pkg/app.
package redact
