package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// linkRE finds Markdown links and images: [text](target) and ![alt](target).
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// markdownFiles lists the repository's tracked and new Markdown files,
// relative to its root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*.md").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			files = append(files, f)
		}
	}
	return files
}

// prose returns the file's lines outside fenced code blocks, with inline
// code spans blanked, so a link-like text in code is not checked.
func prose(text string) []string {
	var out []string
	fence := false
	code := regexp.MustCompile("`[^`]*`")
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			out = append(out, "")
			continue
		}
		if fence {
			out = append(out, "")
			continue
		}
		out = append(out, code.ReplaceAllString(l, "``"))
	}
	return out
}

// anchors are the fragment names GitHub gives a file's headings (and
// explicit <a id> / <a name> anchors).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	explicit := regexp.MustCompile(`<a (?:id|name)="([^"]+)"`)
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		for _, m := range explicit.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		slug := slugify(h)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// slugify is GitHub's heading anchor: lower case, punctuation dropped
// except hyphens and underscores, spaces as hyphens.
func slugify(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// TestRelativeLinks: every relative link of every Markdown file points at
// a file or directory that exists, and every #fragment at a heading of
// its target (or of the same file).
func TestRelativeLinks(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := cache[path]; ok {
			return a
		}
		b, _ := os.ReadFile(path)
		cache[path] = anchors(string(b))
		return cache[path]
	}
	files := markdownFiles(t, root)
	if len(files) < 10 {
		t.Fatalf("found only %d Markdown files", len(files))
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for n, l := range prose(string(b)) {
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, frag, _ := strings.Cut(target, "#")
				abs := filepath.Join(root, f)
				if path != "" {
					abs = filepath.Join(filepath.Dir(abs), path)
					if strings.HasPrefix(path, "/") {
						abs = filepath.Join(root, path)
					}
					fi, err := os.Stat(abs)
					if err != nil {
						t.Errorf("%s:%d: link %q: no such file", f, n+1, target)
						continue
					}
					if fi.IsDir() {
						if frag != "" {
							t.Errorf("%s:%d: link %q: a fragment on a directory", f, n+1, target)
						}
						continue
					}
				}
				if frag != "" && strings.HasSuffix(abs, ".md") && !anchorsOf(abs)[frag] {
					t.Errorf("%s:%d: link %q: %s has no heading #%s", f, n+1, target, filepath.Base(abs), frag)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked only %d relative links", checked)
	}
}

func TestSlugify(t *testing.T) {
	for h, want := range map[string]string{
		"Deploy on git push (webhookd)":                     "deploy-on-git-push-webhookd",
		"Taking over hand-written quadlets: `syslet adopt`": "taking-over-hand-written-quadlets-syslet-adopt",
		"Spec format v1":                                    "spec-format-v1",
	} {
		if got := slugify(h); got != want {
			t.Errorf("slugify(%q) = %q, want %q", h, got, want)
		}
	}
}

// sourcePathRE finds inline code naming a file of the repository by a
// relative path that ends in a source file's extension.
var sourcePathRE = regexp.MustCompile("`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.@-]+)+\\.(?:go|sh|yml|service|timer))`")

// TestSourcePathsExist: a source file the prose names in inline code
// (`pkg/release/release.go`) exists, from the repository's root or from
// the Markdown file's folder. Code blocks are left alone: a command may
// name a file the reader makes.
func TestSourcePathsExist(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range markdownFiles(t, root) {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for i, l := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range sourcePathRE.FindAllStringSubmatch(l, -1) {
				_, errRoot := os.Stat(filepath.Join(root, m[1]))
				_, errHere := os.Stat(filepath.Join(root, filepath.Dir(f), m[1]))
				if errRoot != nil && errHere != nil {
					t.Errorf("%s:%d: `%s` names no file of the repository", f, i+1, m[1])
				}
			}
		}
	}
}
