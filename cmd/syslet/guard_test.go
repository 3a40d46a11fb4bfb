package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// guardStack has a unit, config file and config dir of a container, and
// a build with a context file in a subdirectory: every tree syslet writes.
const guardStack = `{"apiVersion":"v1","type":"container","name":"web","configFiles":[{"mountPath":"/etc/app.conf","content":"x\n"}],"configDirs":[{"mountPath":"/etc/app.d","files":[{"name":"a.conf","content":"a\n"}]}],"unit":{"Container":{"Image":"busybox"},"Service":{"ExecReload":"/bin/true"}}}
{"apiVersion":"v1","type":"build","name":"app","containerfile":"FROM busybox\n","contextFiles":[{"filename":"sub/run.sh","content":"echo\n"}],"unit":{"Build":{"ImageTag":"localhost/app:v1"}}}
`

func specWith(field string) string {
	return `{"apiVersion":"v1","type":"container","name":"web",` + field + `,"unit":{"Container":{"Image":"busybox"},"Service":{"ExecReload":"/bin/true"}}}`
}

func buildWith(filename string) string {
	return `{"apiVersion":"v1","type":"build","name":"app","containerfile":"FROM x\n","contextFiles":[{"filename":"` + filename + `","content":"x"}],"unit":{"Build":{"ImageTag":"localhost/app:v1"}}}`
}

// TestHostileInputs feeds syslet input an attacker or a mistake could
// produce. Each case must fail with its expected error, quickly (a FIFO
// must not hang), and write nothing outside the root — nor, for render,
// anything at all.
func TestHostileInputs(t *testing.T) {
	long := strings.Repeat("x", 256)
	type env struct{ dir, out, outside string }
	file := func(content string) func(t *testing.T, e env) []string {
		return func(t *testing.T, e env) []string {
			p := filepath.Join(e.dir, "in.json")
			os.WriteFile(p, []byte(content), 0o644)
			return []string{"validate", p}
		}
	}
	// renderLink plants a symlink to the outside directory (or file) at
	// rel under the render output, then renders guardStack there.
	renderLink := func(rel string, toFile bool) func(t *testing.T, e env) []string {
		return func(t *testing.T, e env) []string {
			p := filepath.Join(e.out, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			target := e.outside
			if toFile {
				target = filepath.Join(e.outside, "sentinel")
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(e.dir, "stack.json"), []byte(guardStack), 0o644)
			return []string{"render", filepath.Join(e.dir, "stack.json"), "--out", e.out}
		}
	}
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, e env) []string
		code  int
		want  string
	}{
		{"zero bytes", file(""), exitInvalid, "no JSON value"},
		{"whitespace only", file(" \n\t\r\n"), exitInvalid, "no JSON value"},
		{"empty directory", func(t *testing.T, e env) []string { return []string{"validate", e.dir} }, exitInvalid, "no *.json file"},
		{"directory without json", func(t *testing.T, e env) []string {
			os.WriteFile(filepath.Join(e.dir, "notes.txt"), []byte("[]"), 0o644)
			return []string{"validate", e.dir}
		}, exitInvalid, "no *.json file"},
		{"empty stdin apply", func(t *testing.T, e env) []string { return []string{"--diff", "--root", e.out, "-"} }, exitInvalid, "stdin: holds no JSON value"},
		{"FIFO named x.json", func(t *testing.T, e env) []string {
			must(t, syscall.Mkfifo(filepath.Join(e.dir, "x.json"), 0o644))
			return []string{"validate", e.dir}
		}, exitInvalid, "x.json: is a FIFO"},
		{"FIFO given as PATH", func(t *testing.T, e env) []string {
			must(t, syscall.Mkfifo(filepath.Join(e.dir, "p.json"), 0o644))
			return []string{"validate", filepath.Join(e.dir, "p.json")}
		}, exitInvalid, "is a FIFO"},
		{"symlink to /dev/zero", func(t *testing.T, e env) []string {
			must(t, os.Symlink("/dev/zero", filepath.Join(e.dir, "zero.json")))
			return []string{"validate", e.dir}
		}, exitInvalid, "zero.json: is a symlink leading outside its directory"},
		{"socket named s.json", func(t *testing.T, e env) []string {
			l, err := net.Listen("unix", filepath.Join(e.dir, "s.json"))
			must(t, err)
			t.Cleanup(func() { l.Close() })
			return []string{"validate", e.dir}
		}, exitInvalid, "s.json: is a socket"},
		{"directory named d.json", func(t *testing.T, e env) []string {
			os.Mkdir(filepath.Join(e.dir, "d.json"), 0o755)
			return []string{"validate", e.dir}
		}, exitInvalid, "d.json: is a directory"},
		{"arrays nested 100000 deep", file(strings.Repeat("[", 100000)), exitInvalid, "nested more than 64 levels"},
		{"objects nested 100000 deep", file(strings.Repeat(`{"a":`, 100000)), exitInvalid, "nested more than 64 levels"},
		{"input over --max-input", func(t *testing.T, e env) []string {
			p := filepath.Join(e.dir, "big.json")
			os.WriteFile(p, bytes.Repeat([]byte(" "), 2048), 0o644)
			return []string{"validate", "--max-input", "1024", p}
		}, exitInvalid, "larger than the maximum of 1024 bytes"},
		{"mountPath traversal", file(specWith(`"configFiles":[{"mountPath":"/../../etc/shadow","content":"x"}]`)), exitInvalid, "must not contain \"..\""},
		{"mountPath component too long", file(specWith(`"configFiles":[{"mountPath":"/etc/` + long + `","content":"x"}]`)), exitInvalid, "component of 256 bytes"},
		{"mountPath too long", file(specWith(`"configFiles":[{"mountPath":"/` + strings.Repeat("abcdefgh/", 430) + `x","content":"x"}]`)), exitInvalid, "at most 3800"},
		{"context file traversal", file(buildWith("../../etc/cron.d/x")), exitInvalid, "clean relative path"},
		{"context file absolute", file(buildWith("/etc/passwd")), exitInvalid, "clean relative path"},
		{"context file under Containerfile", file(buildWith("Containerfile/x")), exitInvalid, `needs a directory named "Containerfile"`},
		{"context file name too long", file(buildWith("sub/" + long)), exitInvalid, "component of 256 bytes"},
		{"config-dir file traversal", file(specWith(`"configDirs":[{"mountPath":"/d","files":[{"name":"../x","content":"x"}]}]`)), exitInvalid, "must be a plain name"},
		{"config-dir file ..data", file(specWith(`"configDirs":[{"mountPath":"/d","files":[{"name":"..data","content":"x"}]}]`)), exitInvalid, "must be a plain name"},
		{"config-dir file name 256 bytes", file(specWith(`"configDirs":[{"mountPath":"/d","files":[{"name":"` + long + `","content":"x"}]}]`)), exitInvalid, "at most 255"},
		{"name with traversal", file(`{"apiVersion":"v1","type":"volume","name":"../../x"}`), exitInvalid, "is not valid"},
		{"name with escape sequence", file(`{"apiVersion":"v1","type":"volume","name":"a\u001b[2J"}`), exitInvalid, "control character"},
		{"render --out /", func(t *testing.T, e env) []string {
			os.WriteFile(filepath.Join(e.dir, "stack.json"), []byte(guardStack), 0o644)
			return []string{"render", filepath.Join(e.dir, "stack.json"), "--out", "/."}
		}, exitUsage, "is the host's root"},
		{"link at /etc", renderLink("etc", false), exitError, "/etc is a symlink"},
		{"link at /etc/containers", renderLink("etc/containers", false), exitError, "/etc/containers is a symlink"},
		{"link at the unit dir", renderLink("etc/containers/systemd", false), exitError, "/etc/containers/systemd is a symlink"},
		{"link at a unit file", renderLink("etc/containers/systemd/web.container", true), exitError, "/etc/containers/systemd/web.container is a symlink"},
		{"link at the config root", renderLink("etc/containers/config", false), exitError, "/etc/containers/config is a symlink"},
		{"link at a container's config dir", renderLink("etc/containers/config/web", false), exitError, "/etc/containers/config/web is a symlink"},
		{"link inside a config path", renderLink("etc/containers/config/web/etc", false), exitError, "/etc/containers/config/web/etc is a symlink"},
		{"link at a config file", renderLink("etc/containers/config/web/etc/app.conf", true), exitError, "/etc/containers/config/web/etc/app.conf is a symlink"},
		{"link at a config dir", renderLink("etc/containers/config/web/etc/app.d", false), exitError, "/etc/containers/config/web/etc/app.d is a symlink"},
		{"link at the build root", renderLink("etc/containers/builds", false), exitError, "/etc/containers/builds is a symlink"},
		{"link at a build dir", renderLink("etc/containers/builds/app", false), exitError, "/etc/containers/builds/app is a symlink"},
		{"link at a Containerfile", renderLink("etc/containers/builds/app/Containerfile", true), exitError, "/etc/containers/builds/app/Containerfile is a symlink"},
		{"link in a build context", renderLink("etc/containers/builds/app/sub", false), exitError, "/etc/containers/builds/app/sub is a symlink"},
		{"diff --root with a linked config dir", func(t *testing.T, e env) []string {
			os.MkdirAll(filepath.Join(e.out, "etc/containers/config"), 0o755)
			must(t, os.Symlink(e.outside, filepath.Join(e.out, "etc/containers/config/web")))
			os.WriteFile(filepath.Join(e.dir, "stack.json"), []byte(guardStack), 0o644)
			return []string{"--diff", "--root", e.out, filepath.Join(e.dir, "stack.json")}
		}, exitError, "/etc/containers/config/web is a symlink"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := env{dir: t.TempDir(), out: t.TempDir(), outside: t.TempDir()}
			must(t, os.WriteFile(filepath.Join(e.outside, "sentinel"), []byte("untouched"), 0o644))
			args := tt.setup(t, e)
			done := make(chan struct{})
			var code int
			var out, errOut string
			go func() {
				defer close(done)
				code, out, errOut = runCLI(t, args...)
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("syslet %v hangs", args)
			}
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d, want %d with %q:\n%s%s", code, tt.code, tt.want, out, errOut)
			}
			ents, _ := os.ReadDir(e.outside)
			data, _ := os.ReadFile(filepath.Join(e.outside, "sentinel"))
			if len(ents) != 1 || string(data) != "untouched" {
				t.Errorf("something was written outside the root: %v %q", ents, data)
			}
			filepath.Walk(e.out, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.Mode().IsRegular() {
					t.Errorf("a refused run wrote %s", p)
				}
				return nil
			})
		})
	}
}

// TestArrayMeansNoSpecsButIsGuarded: [] is valid input, but removing every
// managed unit needs --allow-removals.
func TestArrayMeansNoSpecsButIsGuarded(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	stack := filepath.Join(dir, "stack.json")
	must(t, os.WriteFile(stack, []byte(guardStack), 0o644))
	if code, out, errOut := runCLI(t, "render", stack, "--out", root); code != exitOK {
		t.Fatalf("render: %d\n%s%s", code, out, errOut)
	}
	empty := filepath.Join(dir, "empty.json")
	must(t, os.WriteFile(empty, []byte("[]\n"), 0o644))
	if code, out, _ := runCLI(t, "validate", empty); code != exitOK {
		t.Errorf("[] must be valid: %d %s", code, out)
	}
	code, out, _ := runCLI(t, "--diff", "--root", root, empty)
	if code != exitError || !strings.Contains(out, "removes 2 of the 2 managed units (app.build, web.container)") || !strings.Contains(out, "--allow-removals") {
		t.Errorf("[] removing everything must be refused: %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "--diff", "--allow-removals", "--root", root, empty); code != exitOK || !strings.Contains(out, "2 to remove") {
		t.Errorf("--allow-removals: %d\n%s", code, out)
	}
}

func TestRootSpellingsOfTheLiveHost(t *testing.T) {
	for _, r := range []string{"/", "/.", "//", "/etc/.."} {
		o, err := parseApply([]string{"--diff", "--root", r}, &bytes.Buffer{})
		if err != nil || o.req.Root != "/" {
			t.Errorf("--root %q: root %q (%v); want the live host", r, o.req.Root, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestValidMeansRenderable: names at the validator's limits render, and
// the rendered tree is exactly what a plan expects (no changes).
func TestValidMeansRenderable(t *testing.T) {
	dir, root := t.TempDir(), t.TempDir()
	n255 := strings.Repeat("n", 255)
	stream := specWith(`"configFiles":[{"mountPath":"/etc/`+n255+`","content":"x"}],"configDirs":[{"mountPath":"/etc/d","files":[{"name":"`+n255+`","content":"y"},{"name":"`+strings.Repeat("m", 237)+`","content":"z"}]}]`) + "\n" +
		buildWith("sub/"+n255)
	p := filepath.Join(dir, "limits.json")
	must(t, os.WriteFile(p, []byte(stream), 0o644))
	if code, out, errOut := runCLI(t, "validate", p); code != exitOK {
		t.Fatalf("validate: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "render", p, "--out", root); code != exitOK {
		t.Fatalf("a valid spec must render: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "--diff", "--root", root, p); code != exitOK || !strings.Contains(out+errOut, "No changes") {
		t.Errorf("the rendered tree must be converged: %d\n%s%s", code, out, errOut)
	}
}
