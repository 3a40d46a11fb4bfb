package main

import (
	"fmt"
	"io"
	"strings"
)

// writeReference writes the command-line reference in Markdown, for the
// docs/reference/cli.md (between its "cli-reference" markers; a test keeps it in step):
// every command, its forms, and a table of its flags with their defaults.
func writeReference(w io.Writer) {
	fmt.Fprintln(w, "| command | what it does |")
	fmt.Fprintln(w, "|---|---|")
	for i := range commands {
		c := &commands[i]
		var forms []string
		for _, f := range orNone(c.synopsis) {
			forms = append(forms, "`"+mdCell(strings.TrimSpace(c.title()+" "+f))+"`")
		}
		fmt.Fprintf(w, "| %s | %s |\n", strings.Join(forms, "<br>"), mdCell(c.summary))
	}
	for i := range commands {
		c := &commands[i]
		docs := c.flagDocs()
		if len(docs) == 0 {
			continue
		}
		name := c.title()
		if c.name == "" {
			name = "syslet [--diff]"
		}
		fmt.Fprintf(w, "\n**Flags of `%s`**\n\n", name)
		fmt.Fprintln(w, "| flag | default | meaning |")
		fmt.Fprintln(w, "|---|---|---|")
		for _, d := range docs {
			def := ""
			if d.Default != "" {
				def = "`" + d.Default + "`"
			}
			fmt.Fprintf(w, "| `%s` | %s | %s |\n", d.Spelling(), def, mdCell(d.Help))
		}
		if notes := c.allNotes(); notes != "" {
			fmt.Fprintf(w, "\n%s\n", strings.Join(strings.Fields(notes), " "))
		}
	}
	fmt.Fprint(w, "\n**Exit codes**\n\n")
	fmt.Fprintln(w, "| code | meaning |")
	fmt.Fprintln(w, "|---|---|")
	for _, e := range exitStatus {
		fmt.Fprintf(w, "| `%d` | %s |\n", e.code, mdCell(e.meaning))
	}
}

func orNone(forms []string) []string {
	if len(forms) == 0 {
		return []string{""}
	}
	return forms
}

// mdCell makes text safe inside a Markdown table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}
