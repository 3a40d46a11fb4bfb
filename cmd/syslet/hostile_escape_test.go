package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Class 4: raw control characters from the host or the input reaching
// the terminal. Every text output escapes what came from outside
// (redact.Escape: \xNN, \uNNNN, a backslash doubled); the JSON forms keep
// the exact value, which encoding/json escapes its own way.
func TestHostileEscapes(t *testing.T) { runHostile(t, hostileEscapes()) }

func hostileEscapes() []hostileCase {
	const esc, osc = "\x1b[2J", "\x1b]0;owned\x07"
	raw := []string{"\x1b", "\x07", "\nFORGED"}
	// stale plants a unit no spec declares, carrying syslet's marker (so
	// the plan removes it and lists its service) or not (left alone).
	stale := func(name string, json bool) func(e *hostEnv) []string {
		return func(e *hostEnv) []string {
			e.put("/etc/containers/systemd/"+name, "[Container]\nImage=busybox\n[X-Syslet]\nManaged=true\n", 0o644)
			if json {
				return e.diff("--output", "json")
			}
			return e.diff()
		}
	}
	// A spec file whose name carries the characters, invalid so that a
	// finding names its source.
	badSpec := func(name string, args func(e *hostEnv, p string) []string) func(e *hostEnv) []string {
		return func(e *hostEnv) []string {
			p := e.write(name, `{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{}}}`)
			return args(e, p)
		}
	}
	validate := func(e *hostEnv, p string) []string { return []string{"validate", p} }
	diff := func(e *hostEnv, p string) []string { return []string{"--diff", "--root", e.root, p} }
	render := func(e *hostEnv, p string) []string { return []string{"render", p, "--out", e.at("/rendered")} }
	const required = ".json: [0].unit.Container: [Container] Image is required"
	journal := func(lines ...string) func(e *hostEnv) []string {
		return func(e *hostEnv) []string {
			e.journal(lines...)
			return []string{"history", "--root", e.root}
		}
	}
	const run = "20261201T000000Z-abcdef"
	intent := `{"type":"intent","run":"` + run + `","time":"2026-12-01T00:00:00Z","source":"s\u001b[31mRED\nFORGED","actions":[{"i":0,"step":9,"op":"start","target":"x\u001b[2J.service"}]}`
	action := `{"type":"action","run":"` + run + `","time":"2026-12-01T00:00:01Z","i":0,"step":9,"op":"start","target":"x\u001b[2J.service","result":"failed","error":"boom\u001b[0m\nFORGED ERROR"}`
	end := `{"type":"end","run":"` + run + `","time":"2026-12-01T00:00:02Z","result":"failed","error":"end\u001b]0;title\u0007"}`
	return []hostileCase{
		{name: "stale unit named with an ESC sequence", setup: stale("x"+esc+"y.container", false), code: exitOK,
			want: []string{`- x\x1b[2Jy.container`, `remove /etc/containers/systemd/x\x1b[2Jy.container`, `x\x1b[2Jy.service`}, not: raw},
		{name: "stale unit named with a newline forging a row", setup: stale("a\nFORGED: no changes.container", false), code: exitOK,
			want: []string{`a\x0aFORGED: no changes.service  inactive  removed  remove`}, not: raw},
		{name: "stale unit named with an OSC title sequence", setup: stale("t"+osc+".container", false), code: exitOK,
			want: []string{`t\x1b]0;owned\x07.container`}, not: raw},
		{name: "stale unit named with a C1 control", setup: stale("c\u009bq.container", false), code: exitOK,
			want: []string{`c\u009bq.container`}, not: []string{"\u009b"}},
		{name: "stale unit named with a line separator", setup: stale("l\u2028m.container", false), code: exitOK,
			want: []string{`l\u2028m.container`}, not: []string{"\u2028"}},
		{name: "stale unit named with a backslash escape already", setup: stale(`b\x1bc.container`, false), code: exitOK,
			want: []string{`b\\x1bc.container`}},
		{name: "stale unit, JSON keeps the exact name", setup: stale("x"+esc+"y.container", true), code: exitOK,
			want: []string{`"x\u001b[2Jy.container"`}, not: []string{"\x1b"}},
		{name: "stale unit with a newline, JSON keeps the exact name", setup: stale("a\nb.container", true), code: exitOK,
			want: []string{`"a\nb.container"`}},
		// The volume's name is the installed unit's VolumeName=, host text
		// reaching the backed-up line as well as the steps.
		{name: "stale volume whose VolumeName holds an ESC sequence", setup: func(e *hostEnv) []string {
			e.put("/etc/containers/systemd/evil.volume", "[Volume]\nVolumeName=evil"+esc+"\x1b[31mFORGED\n[X-Syslet]\nManaged=true\nReclaimPolicy=Delete\nRemovalAllowed=true\n", 0o644)
			return e.diff()
		}, code: exitOK, want: []string{`volume evil\x1b[2J\x1b[31mFORGED  [backed up first]`,
			`Backed up first: volume evil\x1b[2J\x1b[31mFORGED (exported to`}, not: raw},
		{name: "a stale file in a config dir named with ESC", setup: func(e *hostEnv) []string {
			e.put("/etc/containers/config/web/etc/app.d/..data/z"+esc+".conf", "z\n", 0o644)
			must(e.t, os.Symlink("..data/z"+esc+".conf", e.at("/etc/containers/config/web/etc/app.d/z"+esc+".conf")))
			return e.diff()
		}, code: exitOK, want: []string{`z\x1b[2J.conf`}, not: raw},
		{name: "validate: a spec file named with ESC", setup: badSpec("e"+esc+".json", validate), code: exitInvalid,
			want: []string{`e\x1b[2J` + required}, not: raw},
		{name: "validate: a spec file named with a newline", setup: badSpec("n\nFORGED.json", validate), code: exitInvalid,
			want: []string{`n\x0aFORGED` + required}, not: raw},
		{name: "validate --output json keeps the exact file name", setup: badSpec("e"+esc+".json", func(e *hostEnv, p string) []string {
			return []string{"validate", "--output", "json", p}
		}), code: exitInvalid, want: []string{`e\u001b[2J.json`}, not: []string{"\x1b"}},
		{name: "--diff: a spec file named with ESC", setup: badSpec("e"+esc+".json", diff), code: exitInvalid,
			want: []string{`e\x1b[2J` + required}, not: raw},
		{name: "render: a spec file named with ESC", setup: badSpec("e"+esc+".json", render), code: exitInvalid,
			want: []string{`e\x1b[2J` + required}, not: raw},
		{name: "validate: a spec directory entry named with ESC", setup: func(e *hostEnv) []string {
			badSpec("d"+esc+".json", validate)(e)
			return []string{"validate", e.dir}
		}, code: exitInvalid, want: []string{`d\x1b[2J` + required}, not: raw},
		{name: "history: source, error of a run", setup: journal(intent, action, end), code: exitOK,
			want: []string{`s\x1b[31mRED\x0aFORGED`, `end\x1b]0;title\x07`}, not: raw},
		{name: "history RUN: targets and action errors", setup: func(e *hostEnv) []string {
			journal(intent, action, end)(e)
			return []string{"history", "--root", e.root, run}
		}, code: exitOK, want: []string{`x\x1b[2J.service`, `failed: boom\x1b[0m\x0aFORGED ERROR`}, not: raw},
		{name: "history --output json keeps the exact values", setup: func(e *hostEnv) []string {
			journal(intent, action, end)(e)
			return []string{"history", "--root", e.root, "--output", "json"}
		}, code: exitOK, want: []string{`"source": "s\u001b[31mRED\nFORGED"`, `"error": "end\u001b]0;title\u0007"`}, not: []string{"\x1b"}},
		{name: "an unfinished run's forged target, as --diff notes it", setup: func(e *hostEnv) []string {
			e.journal(`{"type":"intent","run":"` + run + `","time":"2026-12-01T00:00:00Z","source":"s","actions":[{"i":0,"step":6,"op":"delete-volume","target":"v\u001b[2J\nFORGED"}]}`)
			return e.diff()
		}, code: exitOK, want: []string{`meant to delete volume v\x1b[2J\x0aFORGED`}, not: raw},
		{name: "adopt: a unit file named with ESC", setup: func(e *hostEnv) []string {
			p := filepath.Join(e.dir, "w"+esc+".container")
			must(e.t, os.WriteFile(p, []byte("[Container]\nImage=busybox\n"), 0o644))
			must(e.t, os.Symlink("/nowhere", filepath.Join(e.dir, "gone"+esc+".container")))
			return []string{"adopt", filepath.Join(e.dir, "gone"+esc+".container")}
		}, code: exitInvalid, want: []string{`gone\x1b[2J.container: a link (to /nowhere), not a unit file`}, not: raw},
	}
}
