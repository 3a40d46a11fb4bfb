package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Class 5: content printed that must stay hidden. One rule on every diff,
// text and JSON: content is described (mode, size, digest), never shown,
// when either side's mode is not world-readable, and a line naming a
// credential is shown only up to the name; a spec is never read through
// a link leaving its directory, and no decode error quotes the input.
func TestHostileRedaction(t *testing.T) { runHostile(t, hostileRedaction()) }

func hostileRedaction() []hostileCase {
	const creds = "/etc/containers/config/web/etc/creds.conf"
	const webUnit = "/etc/containers/systemd/web.container"
	secrets := []string{"SPEC-SECRET", "HAND-SECRET", "hunter2", "OUTSIDE-SECRET"}
	// edit changes a file under the root by hand, keeping or setting its mode.
	edit := func(p, content string, mode os.FileMode, json bool) func(e *hostEnv) []string {
		return func(e *hostEnv) []string {
			e.put(p, content, mode)
			if json {
				return e.diff("--output", "json")
			}
			return e.diff()
		}
	}
	addLine := func(line string, mode os.FileMode, json bool) func(e *hostEnv) []string {
		return func(e *hostEnv) []string {
			return edit(webUnit, strings.Replace(e.read(webUnit), "[Service]\n", "[Service]\n"+line+"\n", 1), mode, json)(e)
		}
	}
	hidden := "(content hidden: mode 0644, 24 bytes, sha256 "
	return []hostileCase{
		{name: "a private config file made 0644 by hand", setup: edit(creds, "db_password=HAND-SECRET\n", 0o644, false), code: exitOK,
			want: []string{hidden, "→ mode 0600, 24 bytes, sha256 "}, not: secrets},
		{name: "a private config file made 0644 by hand, JSON", setup: edit(creds, "db_password=HAND-SECRET\n", 0o644, true), code: exitOK,
			want: []string{`(content hidden: mode 0644, 24 bytes, sha256 `}, not: secrets},
		{name: "a private config file kept 0600 and edited", setup: edit(creds, "db_password=HAND-SECRET\n", 0o600, false), code: exitOK,
			want: []string{"(content hidden: mode 0600, 24 bytes, sha256 "}, not: secrets},
		{name: "a private config file replaced by a FIFO", setup: func(e *hostEnv) []string {
			must(e.t, os.Remove(e.at(creds)))
			must(e.t, syscall.Mkfifo(e.at(creds), 0o644))
			return e.diff()
		}, code: exitOK, want: []string{"(content hidden: a FIFO, mode 0644 → mode 0600, 24 bytes, sha256 "}, not: secrets},
		{name: "a private config file replaced by a FIFO, JSON", setup: func(e *hostEnv) []string {
			must(e.t, os.Remove(e.at(creds)))
			must(e.t, syscall.Mkfifo(e.at(creds), 0o644))
			return e.diff("--output", "json")
		}, code: exitOK, want: []string{"content hidden: a FIFO"}, not: secrets},
		{name: "a private config file removed by hand", setup: func(e *hostEnv) []string {
			must(e.t, os.Remove(e.at(creds)))
			return e.diff()
		}, code: exitOK, want: []string{creds}, not: secrets},
		{name: "a public config file made private by hand", setup: edit("/etc/containers/config/web/etc/app.conf", "token-in-here HAND-SECRET\n", 0o600, false), code: exitOK,
			want: []string{"(content hidden: mode 0600, 26 bytes, sha256 "}, not: secrets},
		{name: "a public config file with a credential line added by hand", setup: edit("/etc/containers/config/web/etc/app.conf", "x\npassword=HAND-SECRET\n", 0o644, false), code: exitOK,
			want: []string{"-password=(hidden: it names a credential)"}, not: secrets},
		{name: "a private unit with a credential line added by hand", setup: addLine("Environment=DB_PASSWORD=hunter2", 0o600, false), code: exitOK,
			want: []string{"(content hidden: mode 0600, "}, not: secrets},
		{name: "a private unit with a credential line added by hand, JSON", setup: addLine("Environment=DB_PASSWORD=hunter2", 0o600, true), code: exitOK,
			want: []string{"content hidden: mode 0600"}, not: secrets},
		{name: "a public unit with a credential line added by hand", setup: addLine("Environment=API_TOKEN=hunter2", 0o644, false), code: exitOK,
			want: []string{"-Environment=API_TOKEN=(hidden: it names a credential)"}, not: secrets},
		{name: "a public unit with a --token argument added by hand", setup: addLine("ExecStartPre=/bin/login --token hunter2", 0o644, false), code: exitOK,
			want: []string{"--token (hidden: it names a credential)"}, not: secrets},
		{name: "a public unit with a credential line, JSON", setup: addLine("Environment=API_TOKEN=hunter2", 0o644, true), code: exitOK,
			want: []string{"API_TOKEN=(hidden: it names a credential)"}, not: secrets},
		{name: "a spec link to a private file outside the directory", setup: func(e *hostEnv) []string {
			must(e.t, os.Symlink(filepath.Join(e.outside, "secret"), filepath.Join(e.dir, "x.json")))
			return []string{"validate", e.dir}
		}, code: exitInvalid, want: []string{"{dir}/x.json: "}, not: secrets},
		{name: "a relative spec link leaving the directory", setup: func(e *hostEnv) []string {
			rel, err := filepath.Rel(e.dir, filepath.Join(e.outside, "secret"))
			must(e.t, err)
			must(e.t, os.Symlink(rel, filepath.Join(e.dir, "x.json")))
			return []string{"validate", e.dir}
		}, code: exitInvalid, want: []string{"{dir}/x.json: "}, not: secrets},
		{name: "a spec link through a linked subdirectory leaving it", setup: func(e *hostEnv) []string {
			must(e.t, os.Symlink(e.outside, filepath.Join(e.dir, "sub")))
			must(e.t, os.Symlink("sub/secret", filepath.Join(e.dir, "x.json")))
			return []string{"validate", e.dir}
		}, code: exitInvalid, want: []string{"{dir}/x.json: "}, not: secrets},
		{name: "a spec link inside the directory is read", setup: func(e *hostEnv) []string {
			e.write("real.txt", `{"apiVersion":"v1","type":"volume","name":"v","unit":{}}`)
			must(e.t, os.Symlink("real.txt", filepath.Join(e.dir, "x.json")))
			return []string{"validate", e.dir}
		}, code: exitOK, want: []string{"3 spec(s) from 2 source(s) are valid"}},
		{name: "a syntax error does not quote the input", setup: func(e *hostEnv) []string {
			return []string{"validate", e.write("x.json", `{"apiVersion":"v1","type":"secret","name":"s","ciphertext": hunter2}`)}
		}, code: exitInvalid, want: []string{"{dir}/x.json: "}, not: secrets},
		{name: "a type error does not quote the value", setup: func(e *hostEnv) []string {
			return []string{"validate", e.write("x.json", `{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":{"hunter2":1}}}}`)}
		}, code: exitInvalid, want: []string{"{dir}/x.json: "}, not: secrets},
		{name: "a secret spec's clear-text value is never echoed", setup: func(e *hostEnv) []string {
			return []string{"validate", e.write("x.json", `{"apiVersion":"v1","type":"secret","name":"s","ciphertext":"password: hunter2\n"}`)}
		}, code: exitInvalid, want: []string{"{dir}/x.json: "}, not: secrets},
	}
}
