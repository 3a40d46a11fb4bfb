package docpage

import (
	"fmt"
	"strings"
)

// The manual syslet's pages belong to, and its date: the pages are
// generated, so their date is not the day they were written out but this
// one, moved on when the manual's content changes for a release.
const (
	Source = "syslet"
	Manual = "syslet manual"
	Date   = "2026-12-01"
)

// Page is one reference page.
type Page struct {
	Name    string // "syslet-validate"
	Section int    // the manual section: 1, 5 or 8
	Summary string // the NAME line's text after the dash
	Date    string // YYYY-MM-DD, the man page's date
	Source  string // "syslet"
	Manual  string // "syslet manual"
	// Sections in order. A man page starts with NAME (from Name and
	// Summary); Markdown with a title.
	Sections []Section
}

// Section is one titled part of a page.
type Section struct {
	Title  string // "OPTIONS"; Markdown writes it as a heading in title case as given
	Blocks []Block
}

// Block is a paragraph, a definition list or a literal block.
type Block interface{ isBlock() }

// Para is a paragraph of text with `code` spans.
type Para string

// Lines are lines set one per line (a synopsis): text with `code` spans.
type Lines []string

// Code is a literal block, shown as it is.
type Code string

// Item is one entry of a definition list: a term and its text.
type Item struct{ Term, Text string }

// List is a definition list.
type List []Item

// Table is a table with a header row; cells are text with `code` spans.
type Table struct {
	Header []string
	Rows   [][]string
}

func (Para) isBlock()  {}
func (Lines) isBlock() {}
func (Code) isBlock()  {}
func (List) isBlock()  {}
func (Table) isBlock() {}

// Ref is how a page names another page: "syslet-validate(1)".
func Ref(name string, section int) string { return fmt.Sprintf("%s(%d)", name, section) }

// Roff writes the page as a man(7) page, clean under `mandoc -T lint` and
// `groff -ww`.
func (p Page) Roff() string {
	var b strings.Builder
	fmt.Fprintf(&b, ".\\\" Generated; do not edit.\n")
	fmt.Fprintf(&b, ".TH %s %d %s %s %s\n", roffArg(strings.ToUpper(p.Name)), p.Section, `"`+p.Date+`"`, roffArg(p.Source), roffArg(p.Manual))
	b.WriteString(".nh\n") // no hyphenation: names and paths stay whole
	b.WriteString(".SH NAME\n")
	b.WriteString(roffLines(roffText(p.Name) + ` \- ` + roffText(p.Summary)))
	for _, s := range p.Sections {
		fmt.Fprintf(&b, ".SH %s\n", roffArg(strings.ToUpper(s.Title)))
		for i, blk := range s.Blocks {
			_, list := blk.(List)
			_, table := blk.(Table)
			if i > 0 && !list && !table {
				b.WriteString(".PP\n")
			}
			writeRoffBlock(&b, blk)
		}
	}
	return b.String()
}

func writeRoffBlock(b *strings.Builder, blk Block) {
	switch v := blk.(type) {
	case Para:
		b.WriteString(roffLines(roffInline(string(v))))
	case Lines:
		for i, l := range v {
			if i > 0 {
				b.WriteString(".br\n")
			}
			b.WriteString(roffLines(roffInline(l)))
		}
	case Code:
		b.WriteString(".RS 4\n.EX\n")
		for _, l := range strings.Split(strings.TrimRight(string(v), "\n"), "\n") {
			b.WriteString(roffLiteral(l) + "\n")
		}
		b.WriteString(".EE\n.RE\n")
	case List:
		for _, it := range v {
			b.WriteString(".TP\n")
			b.WriteString(roffLines(roffInline(it.Term)))
			for i, para := range strings.Split(it.Text, "\n\n") {
				if i > 0 {
					b.WriteString(".IP\n")
				}
				b.WriteString(roffLines(roffInline(para)))
			}
		}
	case Table:
		// A table reads as a list in a terminal: the first cell is the
		// term, the others its text.
		for _, row := range v.Rows {
			b.WriteString(".TP\n")
			b.WriteString(roffLines(roffInline(row[0])))
			var rest []string
			for i, c := range row[1:] {
				if c == "" {
					continue
				}
				if i+1 < len(v.Header) && len(row) > 2 {
					c = v.Header[i+1] + ": " + c
				}
				rest = append(rest, c)
			}
			b.WriteString(roffLines(roffInline(strings.Join(rest, "; "))))
		}
	}
}

// roffArg quotes a macro argument.
func roffArg(s string) string {
	return `"` + strings.ReplaceAll(roffText(s), `"`, `\(dq`) + `"`
}

// roffText escapes plain text: backslashes, and hyphens as \- so they
// stay hyphens (options, paths) rather than typographic ones.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	return roffASCII(s)
}

// roffASCII spells every non-ASCII character as a roff escape, which
// groff reads without a preprocessor and mandoc alike.
func roffASCII(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\[u%04X]`, r)
	}
	return b.String()
}

// roffInline escapes text and sets `code` spans in bold.
func roffInline(s string) string {
	var b strings.Builder
	parts := strings.Split(s, "`")
	for i, part := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString(`\fB` + roffText(part) + `\fR`)
			continue
		}
		if i%2 == 1 { // an unpaired backquote
			b.WriteString("`")
		}
		b.WriteString(roffText(part))
	}
	return b.String()
}

// roffLines makes text input lines: its words joined by single spaces
// and broken before 80 bytes (no blank line, no leading space, which roff
// reads as breaks), and a line starting with a dot or a quote, which roff
// would read as a request, escaped.
func roffLines(s string) string {
	var b strings.Builder
	line := ""
	flush := func() {
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		b.WriteString(line + "\n")
		line = ""
	}
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > 78 {
			flush()
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	flush()
	return b.String()
}

// roffLiteral escapes a literal line: backslashes, a leading control
// character, and hyphens (so copy and paste gives ASCII).
func roffLiteral(s string) string {
	s = roffText(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	if s == "" {
		return `\&`
	}
	return s
}

// Markdown writes the page as Markdown: its title as a heading of the
// given level, each section one level below.
func (p Page) Markdown(level int) string {
	h := strings.Repeat("#", level)
	return fmt.Sprintf("%s %s\n\n%s\n", h, p.Name, mdInline(capitalise(p.Summary)+".")) + p.MarkdownSections(level+1)
}

// MarkdownSections writes the page's sections alone, as headings of the
// given level, for a hand-written page that carries them.
func (p Page) MarkdownSections(level int) string {
	var b strings.Builder
	h := strings.Repeat("#", level)
	for _, s := range p.Sections {
		fmt.Fprintf(&b, "\n%s %s\n", h, sectionTitle(s.Title))
		for _, blk := range s.Blocks {
			b.WriteString("\n")
			writeMarkdownBlock(&b, blk)
		}
	}
	return b.String()
}

// sectionTitle turns a man page's section title into a heading: "EXIT
// STATUS" → "Exit status", acronyms kept ("HTTP API").
func sectionTitle(t string) string {
	words := strings.Fields(t)
	for i, w := range words {
		switch w {
		case "HTTP", "API", "JSON", "SSH", "CLI":
		default:
			w = strings.ToLower(w)
		}
		if i == 0 {
			w = capitalise(w)
		}
		words[i] = w
	}
	return strings.Join(words, " ")
}

func writeMarkdownBlock(b *strings.Builder, blk Block) {
	switch v := blk.(type) {
	case Para:
		b.WriteString(mdInline(strings.Join(strings.Fields(string(v)), " ")) + "\n")
	case Lines:
		for i, l := range v {
			sep := "<br>"
			if i == len(v)-1 {
				sep = ""
			}
			b.WriteString(mdInline(l) + sep + "\n")
		}
	case Code:
		b.WriteString("```\n" + strings.TrimRight(string(v), "\n") + "\n```\n")
	case List:
		for _, it := range v {
			var paras []string
			for _, para := range strings.Split(it.Text, "\n\n") {
				paras = append(paras, mdInline(strings.Join(strings.Fields(para), " ")))
			}
			fmt.Fprintf(b, "- %s: %s\n", mdInline(it.Term), strings.Join(paras, "<br>"))
		}
	case Table:
		b.WriteString("| " + strings.Join(v.Header, " | ") + " |\n")
		b.WriteString("|" + strings.Repeat("---|", len(v.Header)) + "\n")
		for _, row := range v.Rows {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = strings.ReplaceAll(mdInline(strings.Join(strings.Fields(c), " ")), "|", `\|`)
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
	}
}

// mdInline escapes the characters Markdown would read as markup outside
// `code` spans, which stay as they are.
func mdInline(s string) string {
	var b strings.Builder
	parts := strings.Split(s, "`")
	for i, part := range parts {
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString("`" + part + "`")
			continue
		}
		if i%2 == 1 {
			b.WriteString("\\`")
		}
		r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, `<`, `&lt;`, `>`, `&gt;`, `[`, `\[`, `]`, `\]`)
		b.WriteString(r.Replace(part))
	}
	return b.String()
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
