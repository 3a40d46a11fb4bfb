package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Class 3: input inside every limit whose shape made a pass quadratic.
// Each now runs in linear time (plan's TestEveryCountScalesLinearly, go tool task bench:scaling,
// doubles each count); here each runs as a person would run it and must
// end, correctly, well within the suite's time guard.
func TestHostileScale(t *testing.T) { runHostile(t, hostileScale()) }

func hostileScale() []hostileCase {
	many := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i))
		}
		return b.String()
	}
	list := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	webUnit := func(e *hostEnv) string { return e.read("/etc/containers/systemd/web.container") }
	return []hostileCase{
		{name: "an installed unit with 150,000 section headers", setup: func(e *hostEnv) []string {
			e.put("/etc/containers/systemd/evil.container", "[Container]\nImage=busybox\n"+many(150000, func(i int) string { return fmt.Sprintf("[X-S%d]\nA=b\n", i) }), 0o644)
			return e.diff()
		}, code: exitOK, want: []string{"? evil.container               not managed"}},
		{name: "a managed unit with 120,000 keys added by hand (no digest)", setup: func(e *hostEnv) []string {
			u := webUnit(e)
			u = strings.Replace(u, "[Service]\n", "[Service]\n"+many(120000, func(i int) string { return fmt.Sprintf("X%d=v\n", i) }), 1)
			u = u[:strings.Index(u, "\nDigest=")+1]
			e.put("/etc/containers/systemd/web.container", u, 0o644)
			return e.diff()
		}, code: exitOK, want: []string{"restart: [X-Syslet] Digest, [Service] X0, [Service] X1 and 119998 more keys changed", "- [Service] X119999=v"}},
		{name: "a managed unit with 120,000 keys added by hand (drift)", setup: func(e *hostEnv) []string {
			e.put("/etc/containers/systemd/web.container", strings.Replace(webUnit(e), "[Service]\n", "[Service]\n"+many(120000, func(i int) string { return fmt.Sprintf("X%d=v\n", i) }), 1), 0o644)
			return e.diff()
		}, code: exitOK, want: []string{"drift: edited by hand since syslet wrote it (/etc/containers/systemd/web.container)", "(content not shown: mode 0644, 1089623 bytes, sha256 "}, not: []string{"X119999=v"}},
		{name: "a spec with 80,000 X- sections", setup: func(e *hostEnv) []string {
			return []string{"validate", e.write("x.json", `{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"busybox"}`+
				many(80000, func(i int) string { return fmt.Sprintf(`,"X-S%d":{"A":"b"}`, i) })+"}}")}
		}, code: exitOK, want: []string{"1 spec(s) from 1 source(s) are valid"}},
		{name: "a secret with 50,000 keys", setup: func(e *hostEnv) []string {
			enc := "ENC[AES256_GCM,data:eHg=,iv:aXZpdml2aXZpdml2aXZpdml2aXY=,tag:dGFndGFndGFndGFndGFnMQ==,type:str]"
			doc := many(50000, func(i int) string { return fmt.Sprintf("k%d: %s\n", i, enc) }) +
				"sops:\n    age:\n        - recipient: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n          enc: x\n"
			return []string{"validate", e.write("s.json", fmt.Sprintf(`{"apiVersion":"v1","type":"secret","name":"s","ciphertext":%q}`, doc))}
		}, code: exitOK, want: []string{"1 spec(s) from 1 source(s) are valid"}},
		{name: "a build with 50,000 context files", setup: func(e *hostEnv) []string {
			return []string{"validate", e.write("b.json", `{"apiVersion":"v1","type":"build","name":"app","containerfile":"FROM x\n","contextFiles":[`+
				list(50000, func(i int) string { return fmt.Sprintf(`{"filename":"d%d/f%d","content":"x"}`, i%100, i) })+`],"unit":{"Build":{"ImageTag":"localhost/app:v1"}}}`)}
		}, code: exitOK, want: []string{"1 spec(s) from 1 source(s) are valid"}},
		{name: "a build with 20,000 context files, the last a directory of the first", setup: func(e *hostEnv) []string {
			return []string{"validate", e.write("b.json", `{"apiVersion":"v1","type":"build","name":"app","containerfile":"FROM x\n","contextFiles":[`+
				list(20000, func(i int) string { return fmt.Sprintf(`{"filename":"d/f%d","content":"x"}`, i) })+`,{"filename":"d/f0/x","content":"x"}],"unit":{"Build":{"ImageTag":"localhost/app:v1"}}}`)}
		}, code: exitInvalid, want: []string{`[0].contextFiles[20000].filename: filename "d/f0/x" and "d/f0" ([0].contextFiles[0].filename) cannot both exist: one is a directory of the other`}},
		{name: "50,000 Secret= references", setup: func(e *hostEnv) []string {
			return []string{"validate", e.write("r.json", many(50000, func(i int) string {
				return fmt.Sprintf(`{"apiVersion":"v1","type":"secret","name":"e%d","external":true}`+"\n", i)
			})+`{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"busybox","Secret":[`+list(50000, func(i int) string { return fmt.Sprintf(`"e%d"`, i) })+`]}}}`)}
		}, code: exitOK, want: []string{"50001 spec(s) from 1 source(s) are valid"}},
		{name: "30,000 Volume= references", setup: func(e *hostEnv) []string {
			return []string{"validate", e.write("v.json", volumes(30000)+`{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"busybox","Volume":[`+list(30000, func(i int) string { return fmt.Sprintf(`"v%d.volume:/m%d"`, i, i) })+`]}}}`)}
		}, code: exitOK, want: []string{"30001 spec(s) from 1 source(s) are valid"}},
		{name: "render --out of 20,000 specs", setup: func(e *hostEnv) []string {
			out := e.write("many.json", volumes(20000))
			must(e.t, os.RemoveAll(e.root))
			return []string{"render", out, "--out", e.root}
		}, writes: true, code: exitOK, want: []string{"rendered 20000 units, 0 files, 0 config dirs under {root}"}},
		// The acceptance's own scale, for its figures only (figuresBin).
		{name: "validate of 100,000 specs", figures: true, setup: func(e *hostEnv) []string {
			return []string{"validate", e.write("many.json", volumes(100000))}
		}, code: exitOK, want: []string{"100000 spec(s) from 1 source(s) are valid"}},
		{name: "render --out of 106,888 specs", figures: true, setup: func(e *hostEnv) []string {
			out := e.write("many.json", volumes(106888))
			must(e.t, os.RemoveAll(e.root))
			return []string{"render", out, "--out", e.root}
		}, writes: true, code: exitOK, want: []string{"rendered 106888 units, 0 files, 0 config dirs under {root}"}},
		{name: "--diff --root of 106,888 specs rendered there", figures: true, setup: func(e *hostEnv) []string {
			out := e.write("many.json", volumes(106888))
			must(e.t, os.RemoveAll(e.root))
			if code, o, errOut := runCLI(e.t, "render", out, "--out", e.root); code != exitOK {
				e.t.Fatalf("render: %d\n%s%s", code, o, errOut)
			}
			return []string{"--diff", "--root", e.root, out}
		}, code: exitOK, want: []string{"No changes detected."}},
		// The same installed tree, and a spec set that lost all but one of
		// its specs: a mass removal, refused, of 106,888 units.
		{name: "--diff --root of one spec against 106,888 installed", figures: true, setup: func(e *hostEnv) []string {
			out := e.write("many.json", volumes(106888))
			must(e.t, os.RemoveAll(e.root))
			if code, o, errOut := runCLI(e.t, "render", out, "--out", e.root); code != exitOK {
				e.t.Fatalf("render: %d\n%s%s", code, o, errOut)
			}
			return []string{"--diff", "--root", e.root, e.write("one.json", volumes(1))}
		}, code: exitError, want: []string{"the plan removes 106887 of the 106888 managed units (v1.volume, v10.volume, v100.volume, v1000.volume, v10000.volume, v100000.volume, v100001.volume, v100002.volume, v100003.volume, v100004.volume and 106877 more)",
			"and 106877 more (each is marked [irreversible] under Steps)."}},
	}
}

// volumes is n volume specs, one a line (NDJSON): the smallest spec
// there is, the shape of the largest sets.
func volumes(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"apiVersion":"v1","type":"volume","name":"v%d","unit":{}}`+"\n", i)
	}
	return b.String()
}
