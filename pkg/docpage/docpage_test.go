package docpage

import (
	"strings"
	"testing"
)

func TestRoffEscapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain words", "plain words\n"},
		{"use `--diff` now", `use \fB\-\-diff\fR now` + "\n"},
		{".starts with a dot", `\&.starts with a dot` + "\n"},
		{"'quoted", `\&'quoted` + "\n"},
		{`a \ backslash`, `a \e backslash` + "\n"},
		{"FILE…", `FILE\[u2026]` + "\n"},
		{"an `unpaired quote", "an `unpaired quote\n"},
		{strings.Repeat("word ", 20), strings.TrimSpace(strings.Repeat("word ", 15)) + "\n" + strings.TrimSpace(strings.Repeat("word ", 5)) + "\n"},
	} {
		if got := roffLines(roffInline(tc.in)); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := roffLiteral(".x -y"); got != `\&.x \-y` {
		t.Errorf("literal: %q", got)
	}
}

func TestMarkdownEscapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a *b* `c*d` <e>", "a \\*b\\* `c*d` &lt;e&gt;"},
		{"[x]_y", `\[x\]\_y`},
	} {
		if got := mdInline(tc.in); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPageForms(t *testing.T) {
	p := Page{Name: "x", Section: 1, Summary: "does x", Date: Date, Source: Source, Manual: Manual, Sections: []Section{
		{Title: "OPTIONS", Blocks: []Block{List{{Term: "`--a`", Text: "one\n\ntwo"}}, Para("after")}},
		{Title: "EXAMPLES", Blocks: []Block{Code("x --a\n")}},
		{Title: "TABLE", Blocks: []Block{Table{Header: []string{"k", "v"}, Rows: [][]string{{"a", "b|c"}}}}},
	}}
	roff := p.Roff()
	for _, want := range []string{".TH \"X\" 1 \"" + Date + "\"", ".SH NAME\nx \\- does x\n", ".TP\n\\fB\\-\\-a\\fR\none\n.IP\ntwo\n.PP\nafter\n", ".EX\nx \\-\\-a\n.EE\n"} {
		if !strings.Contains(roff, want) {
			t.Errorf("roff lacks %q:\n%s", want, roff)
		}
	}
	if got := sectionTitle("HTTP API"); got != "HTTP API" {
		t.Errorf("sectionTitle: %q", got)
	}
	if got := sectionTitle("EXIT STATUS"); got != "Exit status" {
		t.Errorf("sectionTitle: %q", got)
	}
	md := p.Markdown(1)
	for _, want := range []string{"# x\n\nDoes x.\n", "## Options\n\n- `--a`: one<br>two\n", "## Table\n", "```\nx --a\n```\n", "| a | b\\|c |\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
