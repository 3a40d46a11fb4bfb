package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/verdict"
)

// flagHelp is the help of one flag in a command's help, its wrapped lines
// joined: from "  --name" to the next flag.
func flagHelp(t *testing.T, help, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(help, "\n  --"+name+" ")
	if !ok {
		t.Fatalf("no --%s in:\n%s", name, help)
	}
	rest, _, _ = strings.Cut(rest, "\n  -")
	return strings.Join(strings.Fields(rest), " ")
}

// TestRollbackHelpSaysWhatEachPolicyDoes: --rollback's help says what the
// policies do (pkg/app/deploy's afterFailedGate): auto applies the newest
// kept generation, pinned, and fills again from their backups the volumes
// the failed run deleted or recreated; with none kept it does what never
// does; and the exit code of each (issue 55: the help had not followed
// the code).
func TestRollbackHelpSaysWhatEachPolicyDoes(t *testing.T) {
	for _, cmd := range []string{"apply", "update", "rollback"} {
		code, out, errs := runCLI(t, "help", cmd)
		if code != 0 {
			t.Fatalf("help %s: exit %d\n%s", cmd, code, errs)
		}
		h := flagHelp(t, out, "rollback")
		for _, want := range []string{
			"auto applies the newest kept generation again",
			"pinned to the image it ran then",
			"each volume the failed run deleted or recreated filled again from its backup",
			fmt.Sprintf("(exit %d; %d when the rollback fails too)", verdict.RolledBack.Exit(), verdict.RollbackFailed.Exit()),
			fmt.Sprintf("with no generation kept, and with never, the host stays as the failed run left it (exit %d)", verdict.GateFailed.Exit()),
		} {
			if !strings.Contains(h, want) {
				t.Errorf("help %s: --rollback does not say %q:\n%s", cmd, want, h)
			}
		}
	}
}
