package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// euid is the effective user ID the root check reads (tests set it).
var euid = os.Geteuid

// needsRoot says, before a command reads or touches anything, that it
// must run as root, when it would work on the live host (root "/") and
// this process is not root: one line, with the command line to run
// instead. Without it the first file the command opened answered
// "permission denied" (runs.jsonl.1, config.json), or a warning about
// something else came first. false: go ahead.
func needsRoot(c *command, root string, args []string, stderr io.Writer) bool {
	if c.asRoot == "" || root != "/" || euid() == 0 {
		return false
	}
	line := strings.TrimSpace(c.title() + " " + quoteArgs(args))
	fmt.Fprintf(stderr, "%s: must run as root: %s. Nothing was read or changed; run: sudo %s\n", c.title(), c.asRoot, line)
	return true
}
