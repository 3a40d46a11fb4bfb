package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/docpage"
	"github.com/syslet/syslet/pkg/layout"
)

// The man pages syslet(1) and syslet-COMMAND(1) are generated from the
// command table and the flag definitions, like --help; they are committed
// under pkg/release/packaging/man (the package installs them), this test fails when
// they differ or do not lint clean, and `go tool task golden` (-update)
// rewrites them.
const manDir = "../../pkg/release/packaging/man"

// seeAlso are the pages every syslet page points to besides its own kin.
var seeAlso = []string{docpage.Ref("syslet-specs", 5), docpage.Ref("webhookd", 8), docpage.Ref("podman-systemd.unit", 5), docpage.Ref("systemctl", 1)}

// manName is a command's page name: syslet, syslet-validate.
func (c *command) manName() string { return strings.ReplaceAll(c.title(), " ", "-") }

func synopsisLines(c *command) docpage.Lines {
	var ls docpage.Lines
	for _, form := range orNone(c.synopsis) {
		ls = append(ls, strings.TrimSpace("`"+c.title()+"` "+form))
	}
	return ls
}

func optionList(c *command) docpage.List {
	var l docpage.List
	for _, d := range c.flagDocs() {
		term := "`" + strings.Fields(d.Spelling())[0] + "`"
		if d.Arg != "" {
			term += " " + d.Arg
		}
		text := d.Help
		if d.Default != "" {
			text += " (default `" + d.Default + "`)"
		}
		l = append(l, docpage.Item{Term: term, Text: text})
	}
	return append(l, docpage.Item{Term: "`-h`, `--help`", Text: "show the command's help and exit"})
}

func exitList() docpage.List {
	var l docpage.List
	for _, e := range exitStatus {
		l = append(l, docpage.Item{Term: fmt.Sprint(e.code), Text: e.meaning})
	}
	return l
}

func examplesCode(c *command) docpage.Code { return docpage.Code(strings.Join(c.examples, "\n")) }

// files are the host paths syslet(1) names: syslet's own files and the
// trees it manages, all from pkg/layout.
func files() docpage.List {
	return docpage.List{
		{Term: "`" + layout.StoredSpecs + "`", Text: "the specs a plain `syslet` applies; an apply from stdin stores its stream there (0600)"},
		{Term: "`" + layout.Settings + "`", Text: "settings: `sshKeyPath`, `ageIdentityFiles`"},
		{Term: "`" + layout.Journal + "`", Text: "the run journal that `syslet history` reads and an interrupted run resumes from (0600)"},
		{Term: "`" + layout.KeyCache + "`", Text: "the age identities derived from the SSH host keys this host had (0600)"},
		{Term: "`" + layout.LockFile + "`", Text: "the apply lock: one apply at a time"},
		{Term: "`" + layout.UnitDir + "`", Text: "the quadlet units syslet writes (those with an `[X-Syslet]` marker are its own)"},
		{Term: "`" + layout.ConfigRoot + "`", Text: "config files and config directories, one directory per container"},
		{Term: "`" + layout.BuildRoot + "`", Text: "build contexts, one directory per build"},
	}
}

// manPages returns syslet(1) and one page per command, by file name.
func manPages() map[string]docpage.Page {
	pages := map[string]docpage.Page{}
	var cmds docpage.List
	var kin []string
	for _, c := range subcommands() {
		cmds = append(cmds, docpage.Item{Term: "`" + c.name + "`", Text: c.summary + "; see " + docpage.Ref(c.manName(), 1) + "."})
		kin = append(kin, docpage.Ref(c.manName(), 1))
	}
	main := lookup("")
	page := docpage.Page{Name: "syslet", Section: 1, Summary: oneLine, Date: docpage.Date, Source: docpage.Source, Manual: docpage.Manual}
	page.Sections = []docpage.Section{
		{Title: "SYNOPSIS", Blocks: []docpage.Block{synopsisLines(main), docpage.Lines{"`syslet` COMMAND [flags] [ARGUMENT…]"}}},
		{Title: "DESCRIPTION", Blocks: []docpage.Block{
			docpage.Para(description),
			docpage.Para("Without a command, `syslet [PATH]` plans and applies: " + main.summary + "."),
			docpage.Para(main.allNotes()),
		}},
		{Title: "COMMANDS", Blocks: []docpage.Block{cmds}},
		{Title: "OPTIONS", Blocks: []docpage.Block{optionList(main)}},
		{Title: "EXIT STATUS", Blocks: []docpage.Block{exitList()}},
		{Title: "FILES", Blocks: []docpage.Block{files()}},
		{Title: "EXAMPLES", Blocks: []docpage.Block{examplesCode(main)}},
		{Title: "SEE ALSO", Blocks: []docpage.Block{docpage.Para(strings.Join(append(kin, seeAlso...), ", "))}},
	}
	pages["syslet.1"] = page
	for _, c := range subcommands() {
		p := docpage.Page{Name: c.manName(), Section: 1, Summary: c.summary, Date: docpage.Date, Source: docpage.Source, Manual: docpage.Manual}
		desc := []docpage.Block{docpage.Para("`" + c.title() + "`: " + c.summary + ".")}
		if notes := c.allNotes(); notes != "" {
			desc = append(desc, docpage.Para(notes))
		}
		p.Sections = []docpage.Section{
			{Title: "SYNOPSIS", Blocks: []docpage.Block{synopsisLines(c)}},
			{Title: "DESCRIPTION", Blocks: desc},
			{Title: "OPTIONS", Blocks: []docpage.Block{optionList(c)}},
			{Title: "EXIT STATUS", Blocks: []docpage.Block{exitList()}},
		}
		if len(c.examples) > 0 {
			p.Sections = append(p.Sections, docpage.Section{Title: "EXAMPLES", Blocks: []docpage.Block{examplesCode(c)}})
		}
		p.Sections = append(p.Sections, docpage.Section{Title: "SEE ALSO", Blocks: []docpage.Block{docpage.Para(strings.Join(append([]string{docpage.Ref("syslet", 1)}, seeAlso...), ", "))}})
		pages[c.manName()+".1"] = p
	}
	return pages
}

func TestManPagesAreGenerated(t *testing.T) {
	pages := manPages()
	for name, p := range pages {
		path := filepath.Join(manDir, name)
		if err := docpage.CheckFile(path, []byte(p.Roff()), *update); err != nil {
			t.Error(err)
			continue
		}
		if err := docpage.LintMan(path); err != nil {
			t.Error(err)
		}
	}
	// No page of a command that no longer exists.
	old, _ := filepath.Glob(filepath.Join(manDir, "syslet*.1"))
	for _, f := range old {
		if _, ok := pages[filepath.Base(f)]; !ok {
			if *update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s documents no command (go tool task golden removes it)", f)
		}
	}
}

// TestManPagesNameEveryFlag: each command's page lists each of its flags
// and examples, as --help does.
func TestManPagesNameEveryFlag(t *testing.T) {
	pages := manPages()
	for i := range commands {
		c := &commands[i]
		roff := pages[c.manName()+".1"].Roff()
		for _, d := range c.flagDocs() {
			if spelled := strings.ReplaceAll(strings.Fields(d.Spelling())[0], "-", `\-`); !strings.Contains(roff, `\fB`+spelled+`\fR`) {
				t.Errorf("%s(1) misses %s", c.manName(), d.Spelling())
			}
		}
		for _, e := range c.examples {
			if first := strings.ReplaceAll(strings.Fields(e)[0], "-", `\-`); !strings.Contains(roff, first) {
				t.Errorf("%s(1) misses the example %q", c.manName(), e)
			}
		}
	}
}
