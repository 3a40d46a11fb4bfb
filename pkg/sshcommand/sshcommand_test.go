package sshcommand

import (
	"errors"
	"slices"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		original string
		present  bool
		diffOnly bool
		want     []string // nil: refused
	}{
		{"plan", "syslet --diff --stdin", true, false, []string{"--diff", "--stdin"}},
		{"apply", "syslet --stdin", true, false, []string{"--stdin"}},
		{"extra spaces", "  syslet   --diff\t--stdin  ", true, false, []string{"--diff", "--stdin"}},
		{"plan with diff-only key", "syslet --diff --stdin", true, true, []string{"--diff", "--stdin"}},
		{"apply with diff-only key", "syslet --stdin", true, true, nil},
		{"interactive login", "", false, false, nil},
		{"empty command", "   ", true, false, nil},
		{"other program", "id", true, false, nil},
		{"shell", "/bin/sh -c id", true, false, nil},
		{"chained", "syslet --stdin; rm -rf /", true, false, nil},
		{"chained no space", "syslet --stdin;id", true, false, nil},
		{"and", "syslet --stdin && id", true, false, nil},
		{"pipe", "syslet --diff --stdin | sh", true, false, nil},
		{"substitution", "syslet --stdin $(id)", true, false, nil},
		{"path", "syslet /etc", true, false, nil},
		{"apply default config", "syslet", true, false, nil},
		{"root flag", "syslet --root / --stdin", true, false, nil},
		{"reordered flags", "syslet --stdin --diff", true, false, nil},
		{"dash for stdin", "syslet -", true, false, nil},
		{"subcommand", "syslet validate -", true, false, nil},
		{"nested forced command", "syslet ssh-command", true, false, nil},
		{"absolute program", "/usr/local/bin/syslet --stdin", true, false, nil},
		{"quoted", "'syslet' --stdin", true, false, nil},
		{"sudo", "sudo syslet --stdin", true, false, nil},
		{"newline", "syslet --stdin\nid", true, false, nil},
		{"no-break space", "syslet\u00a0--stdin", true, false, nil},
		{"no-break space inside a plan", "syslet --diff\u00a0--stdin", true, false, nil},
		{"ideographic space", "syslet\u3000--stdin", true, false, nil},
		{"next line", "syslet\u0085--stdin", true, false, nil},
		{"line separator", "syslet --stdin\u2028", true, false, nil},
		{"Unicode spaces only", "\u00a0\u3000", true, false, nil},
		{"vertical tab and form feed", "syslet\v--diff\f--stdin", true, false, []string{"--diff", "--stdin"}},
		// The saved-plan forms of syslet push, and nothing near them.
		{"save plan", "syslet --diff --stdin --out -", true, false, []string{"--diff", "--stdin", "--out", "-"}},
		{"save plan with diff-only key", "syslet --diff --stdin --out -", true, true, []string{"--diff", "--stdin", "--out", "-"}},
		{"apply saved plan", "syslet --plan - --stdin", true, false, []string{"--plan", "-", "--stdin"}},
		{"apply saved plan with diff-only key", "syslet --plan - --stdin", true, true, nil},
		{"check saved plan", "syslet --diff --plan - --stdin", true, false, []string{"--diff", "--plan", "-", "--stdin"}},
		{"check saved plan with diff-only key", "syslet --diff --plan - --stdin", true, true, []string{"--diff", "--plan", "-", "--stdin"}},
		{"save plan to a host file", "syslet --diff --stdin --out /etc/passwd", true, false, nil},
		{"saved plan from a host file", "syslet --plan /tmp/x.plan --stdin", true, false, nil},
		{"saved plan, specs from a host path", "syslet --plan - /etc", true, false, nil},
		{"saved plan with force", "syslet --plan - --stdin --force", true, false, nil},
		{"out without diff", "syslet --stdin --out -", true, false, nil},
		{"saved plan reordered", "syslet --stdin --plan -", true, false, nil},
		// The health read of syslet push --pause: read-only, so a diff-only key may make it.
		{"status", "syslet status --stdin --output json", true, false, []string{"status", "--stdin", "--output", "json"}},
		{"status with diff-only key", "syslet status --stdin --output json", true, true, []string{"status", "--stdin", "--output", "json"}},
		{"status of the stored specs", "syslet status", true, false, nil},
		{"status of a host path", "syslet status --output json /etc", true, false, nil},
		{"status as text", "syslet status --stdin", true, false, nil},
		{"plan with its exit code", "syslet --diff --stdin --detailed-exitcode", true, true, []string{"--diff", "--stdin", "--detailed-exitcode"}},
		{"apply with a plan's exit code", "syslet --stdin --detailed-exitcode", true, false, nil},
		// What syslet push sends: each plan and apply with its report, a
		// record of its document at the end of stderr.
		{"plan reported", "syslet --diff --stdin --output text+json", true, true, []string{"--diff", "--stdin", "--output", "text+json"}},
		{"apply reported", "syslet --stdin --output text+json", true, false, []string{"--stdin", "--output", "text+json"}},
		{"apply reported with diff-only key", "syslet --stdin --output text+json", true, true, nil},
		{"save plan reported", "syslet --diff --stdin --out - --output text+json", true, true, []string{"--diff", "--stdin", "--out", "-", "--output", "text+json"}},
		{"apply saved plan reported", "syslet --plan - --stdin --output text+json", true, false, []string{"--plan", "-", "--stdin", "--output", "text+json"}},
		{"check saved plan reported", "syslet --diff --plan - --stdin --output text+json", true, true, []string{"--diff", "--plan", "-", "--stdin", "--output", "text+json"}},
		{"report before the form", "syslet --output text+json --stdin", true, false, nil},
		{"report twice", "syslet --stdin --output text+json --output text+json", true, false, nil},
		{"report alone", "syslet --output text+json", true, false, nil},
		{"document on stdout", "syslet --stdin --output json", true, false, nil},
		{"status reported", "syslet status --stdin --output json --output text+json", true, false, nil},
		{"pause's plan reported", "syslet --diff --stdin --detailed-exitcode --output text+json", true, true, []string{"--diff", "--stdin", "--detailed-exitcode", "--output", "text+json"}},
		{"report with a host path", "syslet /etc --output text+json", true, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Policy{DiffOnly: tt.diffOnly}.Check(tt.original, tt.present)
			if tt.want == nil {
				if !errors.Is(err, ErrRefused) {
					t.Fatalf("Check(%q) = %v, %v; want refused", tt.original, got, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Check(%q) = %v, %v; want %v", tt.original, got, err, tt.want)
			}
		})
	}
}

func TestAllowed(t *testing.T) {
	plans := []string{"syslet --diff --stdin", "syslet --diff --stdin --out -", "syslet --diff --plan - --stdin", "syslet --diff --stdin --detailed-exitcode", "syslet status --stdin --output json"}
	if got := (Policy{}).Allowed(); !slices.Equal(got, append(slices.Clone(plans), "syslet --stdin", "syslet --plan - --stdin")) {
		t.Errorf("Allowed() = %q", got)
	}
	if got := (Policy{DiffOnly: true}).Allowed(); !slices.Equal(got, plans) {
		t.Errorf("diff-only Allowed() = %q", got)
	}
}
