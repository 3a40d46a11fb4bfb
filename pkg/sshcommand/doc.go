// Package sshcommand decides what an SSH forced command may run. It is the
// policy half of `syslet ssh-command`: an authorized_keys entry such as
//
//	command="/usr/local/bin/syslet ssh-command",restrict ssh-ed25519 AAAA… ci@example
//
// makes sshd run syslet ssh-command whatever the client asked for, with the
// client's request in SSH_ORIGINAL_COMMAND. Check turns that request into
// syslet's own arguments when, and only when, it is one of the allowed
// invocations; everything else is refused with a reason.
//
// The package is pure: it reads no environment and runs nothing. The caller
// passes SSH_ORIGINAL_COMMAND in and runs the returned arguments in-process,
// so no shell ever sees the client's string.
//
// Layer: ground (pkg/). It imports only the standard library, outside
// libraries and other ground packages; never render, plan, executor,
// pkg/load or pkg/app.
package sshcommand
