package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Class 1 and 2: unbounded reads and FIFOs where syslet reads its own
// state or a host tree. Every file is opened without following a link,
// never blocking on a FIFO, and read within its kind's cap and its tree's
// total (pkg/bounded).
func TestHostileReads(t *testing.T) { runHostile(t, hostileReads()) }

const journal = "/var/lib/syslet/runs.jsonl"

func hostileReads() []hostileCase {
	notRegular := func(p, what string) string {
		return p + " is " + what + ", not a regular file: syslet reads it only as a regular file, never through a symlink"
	}
	linkJournal := func(name, target string) func(e *hostEnv) {
		return func(e *hostEnv) {
			must(e.t, os.MkdirAll(filepath.Dir(e.at(name)), 0o755))
			must(e.t, os.Symlink(strings.ReplaceAll(target, "{outside}", e.outside), e.at(name)))
		}
	}
	fifo := func(p string) func(e *hostEnv) {
		return func(e *hostEnv) {
			os.Remove(e.at(p))
			must(e.t, os.MkdirAll(filepath.Dir(e.at(p)), 0o755))
			must(e.t, syscall.Mkfifo(e.at(p), 0o644))
		}
	}
	history := func(plant func(e *hostEnv)) func(e *hostEnv) []string {
		return func(e *hostEnv) []string { plant(e); return []string{"history", "--root", e.root} }
	}
	diff := func(plant func(e *hostEnv)) func(e *hostEnv) []string {
		return func(e *hostEnv) []string { plant(e); return e.diff() }
	}
	jr := "{root}" + journal
	var cases []hostileCase
	// The run journal, as history and a plan read it.
	for _, c := range []struct {
		name, what string
		plant      func(e *hostEnv)
		path       string
	}{
		{"journal linked to /dev/zero", "a symlink", linkJournal(journal, "/dev/zero"), jr},
		{"rotated journal linked to /dev/zero", "a symlink", linkJournal(journal+".1", "/dev/zero"), jr + ".1"},
		{"journal linked to a file outside", "a symlink", linkJournal(journal, "{outside}/secret"), jr},
		{"journal is a FIFO", "a FIFO", fifo(journal), jr},
		{"rotated journal is a FIFO", "a FIFO", fifo(journal + ".1"), jr + ".1"},
		{"journal is a directory", "a directory", func(e *hostEnv) { must(e.t, os.Mkdir(e.at(journal), 0o700)) }, jr},
		{"journal is a socket", "a socket", func(e *hostEnv) { e.socket(journal) }, jr},
	} {
		cases = append(cases,
			hostileCase{name: c.name + ": history", setup: history(c.plant), code: exitError,
				want: []string{"syslet history: reading the run journal: " + notRegular(c.path, c.what)}, not: []string{"OUTSIDE-SECRET"}},
			hostileCase{name: c.name + ": --diff", setup: diff(c.plant), code: exitError,
				want: []string{"syslet: reading the run journal: " + notRegular(c.path, c.what)}, not: []string{"OUTSIDE-SECRET", "Plan:"}})
	}
	cases = append(cases,
		hostileCase{name: "journal a sparse GiB of zeros: history", setup: history(func(e *hostEnv) { e.sparse(journal, 1<<30) }),
			code: exitOK, want: []string{"No runs recorded yet."}},
		hostileCase{name: "journal a sparse GiB of zeros: --diff", setup: diff(func(e *hostEnv) { e.sparse(journal, 1<<30) }),
			code: exitOK, want: []string{"No changes detected."}},
		hostileCase{name: "journal line of 70 MiB before a run: the run still reads", setup: history(func(e *hostEnv) {
			e.put(journal, strings.Repeat("x", 70<<20)+"\n"+
				`{"type":"intent","run":"20261201T000000Z-abcdef","time":"2026-12-01T00:00:00Z","source":"after the giant"}`+"\n"+
				`{"type":"end","run":"20261201T000000Z-abcdef","time":"2026-12-01T00:00:01Z","result":"ok"}`+"\n", 0o600)
		}), code: exitOK, want: []string{"20261201T000000Z-abcdef", "after the giant"}},
	)
	// The apply lock, which a plan probes.
	lock := "/run/syslet/apply.lock"
	for _, c := range []struct {
		name, what string
		plant      func(e *hostEnv)
	}{
		{"apply lock is a FIFO", "a FIFO", fifo(lock)},
		{"apply lock linked to a file outside", "a symlink", linkJournal(lock, "{outside}/secret")},
		{"apply lock is a directory", "a directory", func(e *hostEnv) { must(e.t, os.Mkdir(e.at(lock), 0o700)) }},
	} {
		cases = append(cases, hostileCase{name: c.name + ": --diff", setup: diff(c.plant), code: exitError,
			want: []string{"syslet: reading the apply lock: " + notRegular("{root}"+lock, c.what)}, not: []string{"OUTSIDE-SECRET"}})
	}
	// The managed trees: a cap per file kind, a total per tree.
	cases = append(cases,
		hostileCase{name: "config root of sparse 60 MiB files past its total", setup: diff(func(e *hostEnv) {
			for i := range 9 {
				e.sparse("/etc/containers/config/web/junk"+string(rune('a'+i)), 60<<20)
			}
		}), code: exitError, want: []string{"syslet: reading installed files: /etc/containers/config: larger than 512 MiB of content in total, the cap of a managed tree"}},
		hostileCase{name: "build context of sparse 60 MiB files past its total", setup: diff(func(e *hostEnv) {
			for i := range 9 {
				e.sparse("/etc/containers/builds/app/junk"+string(rune('a'+i)), 60<<20)
			}
		}), code: exitError, want: []string{"syslet: reading installed files: /etc/containers/builds: larger than 512 MiB of content in total, the cap of a managed tree"}},
		hostileCase{name: "unit file past its cap", setup: diff(func(e *hostEnv) { e.sparse("/etc/containers/systemd/huge.container", 17<<20) }),
			code: exitError, want: []string{"syslet: reading installed files: /etc/containers/systemd/huge.container: larger than 16 MiB, the cap of a unit file"}},
		hostileCase{name: "a large config file the spec holds is compared by digest", setup: func(e *hostEnv) []string {
			big := strings.Repeat("y", 2<<20)
			e.stack = e.write("big.json", `{"apiVersion":"v1","type":"container","name":"big","configFiles":[{"mountPath":"/etc/big.conf","content":"`+big+`"}],"unit":{"Container":{"Image":"busybox"}}}`)
			must(e.t, os.RemoveAll(e.root))
			if code, out, errOut := runCLI(e.t, "render", e.stack, "--out", e.root); code != exitOK {
				e.t.Fatalf("render: %s%s", out, errOut)
			}
			return e.diff()
		}, code: exitOK, want: []string{"No changes detected."}},
		hostileCase{name: "a large config file that differs is described, not diffed", setup: func(e *hostEnv) []string {
			big := strings.Repeat("y", 2<<20)
			e.stack = e.write("big.json", `{"apiVersion":"v1","type":"container","name":"big","configFiles":[{"mountPath":"/etc/big.conf","content":"`+big+`"}],"unit":{"Container":{"Image":"busybox"}}}`)
			must(e.t, os.RemoveAll(e.root))
			if code, out, errOut := runCLI(e.t, "render", e.stack, "--out", e.root); code != exitOK {
				e.t.Fatalf("render: %s%s", out, errOut)
			}
			e.put("/etc/containers/config/big/etc/big.conf", big+"z", 0o644)
			return e.diff()
		}, code: exitOK, want: []string{"(content not shown: mode 0644, 2097153 bytes, sha256 "}, not: []string{"yyyyyyyyyy"}},
		hostileCase{name: "a FIFO where a config file was", setup: diff(fifo("/etc/containers/config/web/etc/app.conf")),
			code: exitOK, want: []string{"(not a regular file: a FIFO, mode 0644 → mode 0644, 2 bytes, sha256 "}},
		hostileCase{name: "a socket in a config dir", setup: diff(func(e *hostEnv) {
			e.socket("/etc/containers/config/web/etc/app.d/s.conf")
		}), code: exitOK, want: []string{"drift: edited by hand since syslet wrote it (/etc/containers/config/web/etc/app.d/s.conf)", "(not a regular file: a socket, mode 0755)"}},
	)
	// Generations, which rollback reads.
	gens := "/var/lib/syslet/generations"
	cases = append(cases,
		hostileCase{name: "generations directory is a FIFO: rollback --diff", setup: func(e *hostEnv) []string {
			fifo(gens)(e)
			return []string{"rollback", "--diff", "--root", e.root}
		}, code: exitError, want: []string{"{root}" + gens + " is a FIFO, not a directory: syslet reads it only as a real directory, never through a symlink"}},
		hostileCase{name: "generations directory linked outside: rollback --diff", setup: func(e *hostEnv) []string {
			must(e.t, os.Symlink(e.outside, e.at(gens)))
			return []string{"rollback", "--diff", "--root", e.root}
		}, code: exitError, want: []string{"{root}" + gens + " is a symlink, not a directory"}},
		hostileCase{name: "a generation file that is a FIFO is skipped", setup: func(e *hostEnv) []string {
			must(e.t, os.MkdirAll(e.at(gens), 0o700))
			fifo(gens + "/00000000000000000001-20261201T000000Z-abcdef.json")(e)
			return []string{"rollback", "--diff", "--root", e.root}
		}, code: exitError, want: []string{"no generation"}},
		hostileCase{name: "history with a FIFO for generations still lists runs", setup: history(func(e *hostEnv) {
			fifo(gens)(e)
			e.journal(`{"type":"intent","run":"20261201T000000Z-abcdef","time":"2026-12-01T00:00:00Z","source":"s"}`)
		}), code: exitOK, want: []string{"20261201T000000Z-abcdef"}},
	)
	// syslet's own files and the host's keys, as host-key and a plan with
	// secrets read them.
	for _, c := range []struct {
		name, path, want string
		plant            func(e *hostEnv)
	}{
		{"settings file is a FIFO", "/etc/syslet/syslet.json", "syslet: reading settings: " + notRegular("{root}/etc/syslet/syslet.json", "a FIFO"), fifo("/etc/syslet/syslet.json")},
		{"settings file linked outside", "", "syslet: reading settings: " + notRegular("{root}/etc/syslet/syslet.json", "a symlink"), linkJournal("/etc/syslet/syslet.json", "{outside}/secret")},
		{"identity cache is a FIFO", "", "syslet: reading identity cache: " + notRegular("{root}/var/lib/syslet/key.txt", "a FIFO"), fifo("/var/lib/syslet/key.txt")},
		{"identity cache linked outside", "", "syslet: reading identity cache: " + notRegular("{root}/var/lib/syslet/key.txt", "a symlink"), linkJournal("/var/lib/syslet/key.txt", "{outside}/secret")},
		{"SSH host key is a FIFO", "", "syslet: reading SSH host key: " + notRegular("{root}/etc/ssh/ssh_host_ed25519_key", "a FIFO"), fifo("/etc/ssh/ssh_host_ed25519_key")},
		{"SSH host key linked to /dev/zero", "", "syslet: reading SSH host key: " + notRegular("{root}/etc/ssh/ssh_host_ed25519_key", "a character device"), func(e *hostEnv) {
			must(e.t, os.MkdirAll(e.at("/etc/ssh"), 0o755))
			must(e.t, os.Symlink("/dev/zero", e.at("/etc/ssh/ssh_host_ed25519_key")))
		}},
		{"SSH host key past its cap", "", "syslet: reading SSH host key: {root}/etc/ssh/ssh_host_ed25519_key: larger than 64 KiB, the cap of an SSH host key", func(e *hostEnv) { e.sparse("/etc/ssh/ssh_host_ed25519_key", 1<<20) }},
	} {
		cases = append(cases, hostileCase{name: c.name + ": host-key", setup: func(e *hostEnv) []string {
			c.plant(e)
			return []string{"host-key", "--root", e.root}
		}, code: exitError, want: []string{c.want}, not: []string{"OUTSIDE-SECRET"}})
	}
	// The stored specs (a plain `syslet` reads them) and spec sources.
	stored := "/etc/syslet/config.json"
	cases = append(cases,
		hostileCase{name: "stored specs are a FIFO: plain --diff", setup: func(e *hostEnv) []string {
			fifo(stored)(e)
			return []string{"--diff", "--root", e.root}
		}, code: exitInvalid, want: []string{"{root}" + stored + ": is a FIFO, not a regular file: syslet reads its stored specs only from a regular file, never through a symlink"}},
		hostileCase{name: "stored specs linked to a secret outside: plain --diff", setup: func(e *hostEnv) []string {
			must(e.t, os.MkdirAll(e.at("/etc/syslet"), 0o755))
			must(e.t, os.Symlink(filepath.Join(e.outside, "secret"), e.at(stored)))
			return []string{"--diff", "--root", e.root}
		}, code: exitInvalid, want: []string{"{root}" + stored + ": is a symlink, not a regular file"}, not: []string{"OUTSIDE-SECRET", "hunter2"}},
		hostileCase{name: "a spec link inside the directory to a FIFO there", setup: func(e *hostEnv) []string {
			must(e.t, syscall.Mkfifo(filepath.Join(e.dir, "pipe"), 0o644))
			must(e.t, os.Symlink("pipe", filepath.Join(e.dir, "x.json")))
			return []string{"validate", e.dir}
		}, code: exitInvalid, want: []string{"{dir}/x.json: is a FIFO, not a regular file: syslet reads specs only from regular files"}},
	)
	// adopt's reads: the unit files named, and a build's context.
	cases = append(cases,
		hostileCase{name: "adopt a FIFO", setup: func(e *hostEnv) []string {
			must(e.t, syscall.Mkfifo(filepath.Join(e.dir, "x.container"), 0o644))
			return []string{"adopt", filepath.Join(e.dir, "x.container")}
		}, code: exitError, want: []string{"syslet adopt: " + notRegular("{dir}/x.container", "a FIFO")}},
		hostileCase{name: "adopt a link to a secret outside", setup: func(e *hostEnv) []string {
			must(e.t, os.Symlink(filepath.Join(e.outside, "secret"), filepath.Join(e.dir, "x.container")))
			return []string{"adopt", filepath.Join(e.dir, "x.container")}
		}, code: exitInvalid, want: []string{"syslet adopt: not adopted: {dir}/x.container: a link (to {outside}/secret), not a unit file; only a template's instances may be links"}, not: []string{"OUTSIDE-SECRET"}},
		hostileCase{name: "adopt a unit past its cap", setup: func(e *hostEnv) []string {
			p := filepath.Join(e.dir, "big.container")
			f, err := os.Create(p)
			must(e.t, err)
			must(e.t, f.Truncate(17<<20))
			f.Close()
			return []string{"adopt", p}
		}, code: exitError, want: []string{"syslet adopt: {dir}/big.container: larger than 16 MiB, the cap of a unit file"}},
		hostileCase{name: "adopt a build whose context holds a file past a spec's input", setup: func(e *hostEnv) []string {
			ctx := filepath.Join(e.dir, "ctx")
			must(e.t, os.MkdirAll(ctx, 0o755))
			f, err := os.Create(filepath.Join(ctx, "big"))
			must(e.t, err)
			must(e.t, f.Truncate(17<<20))
			f.Close()
			return []string{"adopt", e.write("app.build", "[Build]\nImageTag=localhost/app:v1\nSetWorkingDirectory="+ctx+"\n")}
		}, code: exitError, want: []string{"syslet adopt: {dir}/ctx/big: larger than 16 MiB, the cap of a file of a build context"}},
		hostileCase{name: "adopt a build whose context totals past a spec's input", setup: func(e *hostEnv) []string {
			ctx := filepath.Join(e.dir, "ctx")
			must(e.t, os.MkdirAll(ctx, 0o755))
			for _, n := range []string{"a", "b"} {
				f, err := os.Create(filepath.Join(ctx, n))
				must(e.t, err)
				must(e.t, f.Truncate(9<<20))
				f.Close()
			}
			return []string{"adopt", e.write("app.build", "[Build]\nImageTag=localhost/app:v1\nSetWorkingDirectory="+ctx+"\n")}
		}, code: exitError, want: []string{"syslet adopt: {dir}/ctx: larger than 16 MiB of content in total, the cap of a build context"}},
		hostileCase{name: "adopt a build whose context is the whole filesystem", setup: func(e *hostEnv) []string {
			return []string{"adopt", e.write("app.build", "[Build]\nImageTag=localhost/app:v1\nSetWorkingDirectory=/\n")}
		}, code: exitError, want: []string{"syslet adopt: {dir}/app.build: SetWorkingDirectory=/ makes the whole filesystem the build context; adopt reads a context only from a directory of its own"}},
		hostileCase{name: "adopt a build whose context is in /proc", setup: func(e *hostEnv) []string {
			return []string{"adopt", e.write("app.build", "[Build]\nImageTag=localhost/app:v1\nSetWorkingDirectory=/proc/self/../1\n")}
		}, code: exitError, want: []string{"syslet adopt: {dir}/app.build: SetWorkingDirectory=/proc/1 is in /proc, a filesystem the kernel makes up, not a build context"}},
	)
	return cases
}
