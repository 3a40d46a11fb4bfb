package main

import (
	"fmt"
	"strings"
	"testing"
)

// Class 7: input that validated and failed only on the host, or was
// accepted without a word: image references podman's own parser refuses,
// a SOPS ciphertext carrying a second YAML document in clear text, and an
// ssh-command request split on spaces a shell would not split on.
func TestHostileImageSecretAndCommandInputs(t *testing.T) { runHostile(t, hostileInputs()) }

func hostileInputs() []hostileCase {
	validate := func(spec string) func(e *hostEnv) []string {
		return func(e *hostEnv) []string { return []string{"validate", e.write("x.json", spec)} }
	}
	container := func(image string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":%q}}}`, image)
	}
	build := func(tag string) string {
		name := "app"
		if strings.HasPrefix(tag, "localhost/App:") {
			name = "App" // the tag must name the build
		}
		return fmt.Sprintf(`{"apiVersion":"v1","type":"build","name":%q,"containerfile":"FROM x\n","unit":{"Build":{"ImageTag":%q}}}`, name, tag)
	}
	refused := func(field, ref, why string) string {
		return fmt.Sprintf("%s %q is not an image reference podman accepts: invalid reference format%s", field, ref, why)
	}
	lower := ": repository name must be lowercase"
	enc := "ENC[AES256_GCM,data:eHg=,iv:aXZpdml2aXZpdml2aXZpdml2aXY=,tag:dGFndGFndGFndGFndGFnMQ==,type:str]"
	sops := "sops:\n    age:\n        - recipient: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n          enc: x\n"
	secret := func(doc string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","type":"secret","name":"s","ciphertext":%q}`, doc)
	}
	ssh := func(original string) func(e *hostEnv) []string {
		return func(e *hostEnv) []string { return []string{"ssh-command"} }
	}
	sshCase := func(name, original string) hostileCase {
		return hostileCase{name: "ssh-command: " + name, setup: ssh(original), env: map[string]string{"SSH_ORIGINAL_COMMAND": original},
			code: exitError, want: []string{"is not an allowed command"}}
	}
	cases := []hostileCase{
		{name: "Image with an upper-case repository", setup: validate(container("Registry.example/Web:1")), code: exitInvalid,
			want: []string{refused("[0].unit.Container.Image: Image", "Registry.example/Web:1", lower)}},
		{name: "Image with an invalid character", setup: validate(container("busybox:la$t")), code: exitInvalid,
			want: []string{refused("[0].unit.Container.Image: Image", "busybox:la$t", "")}},
		{name: "Image with a 200-character tag", setup: validate(container("busybox:" + strings.Repeat("t", 200))), code: exitInvalid,
			want: []string{refused("[0].unit.Container.Image: Image", "busybox:"+strings.Repeat("t", 200), "")}},
		{name: "Image with a space", setup: validate(container("busy box")), code: exitInvalid,
			want: []string{`[0].unit.Container.Image: Image "busy box" is not an image reference podman accepts`}},
		{name: "Image by digest is accepted", setup: validate(container("busybox@sha256:" + strings.Repeat("a", 64))), code: exitOK,
			want: []string{"1 spec(s) from 1 source(s) are valid"}},
		{name: "Image with a registry port is accepted", setup: validate(container("localhost:5000/web:v1")), code: exitOK,
			want: []string{"1 spec(s) from 1 source(s) are valid"}},
		{name: "ImageTag with an upper-case repository", setup: validate(build("localhost/App:v1")), code: exitInvalid,
			want: []string{refused("[0].unit.Build.ImageTag: ImageTag", "localhost/App:v1", lower)}},
		{name: "ImageTag with an invalid character", setup: validate(build("localhost/app:v1$x")), code: exitInvalid,
			want: []string{refused("[0].unit.Build.ImageTag: ImageTag", "localhost/app:v1$x", "")}},
		{name: "ImageTag with a 200-character tag", setup: validate(build("localhost/app:" + strings.Repeat("t", 200))), code: exitInvalid,
			want: []string{refused("[0].unit.Build.ImageTag: ImageTag", "localhost/app:"+strings.Repeat("t", 200), "")}},
		{name: "ImageTag with a 128-character tag is accepted", setup: validate(build("localhost/app:" + strings.Repeat("t", 128))), code: exitOK,
			want: []string{"1 spec(s) from 1 source(s) are valid"}},
		{name: "a ciphertext with a second document in clear text", setup: validate(secret("k: " + enc + "\n" + sops + "---\npassword: hunter2\n")), code: exitInvalid,
			want: []string{"{dir}/x.json: [0].ciphertext: "}, not: []string{"hunter2"}},
		{name: "a ciphertext with an empty second document", setup: validate(secret("k: " + enc + "\n" + sops + "---\n")), code: exitInvalid,
			want: []string{"{dir}/x.json: [0].ciphertext: ciphertext holds more than one YAML document (a second one starts at line 6): sops encrypts only one; remove everything after the first"}},
		{name: "a ciphertext with a second encrypted document", setup: validate(secret("k: " + enc + "\n" + sops + "---\nk2: " + enc + "\n" + sops)), code: exitInvalid,
			want: []string{"{dir}/x.json: [0].ciphertext: "}},
		{name: "a ciphertext of one document is accepted", setup: validate(secret("k: " + enc + "\n" + sops)), code: exitOK,
			want: []string{"1 spec(s) from 1 source(s) are valid"}},
	}
	for _, c := range []struct{ name, original string }{
		{"a no-break space", "syslet\u00a0--stdin"},
		{"an ideographic space", "syslet\u3000--stdin"},
		{"a next-line character", "syslet\u0085--stdin"},
		{"a line separator", "syslet --stdin\u2028"},
		{"an em space inside a plan", "syslet --diff\u2003--stdin"},
		{"a zero-width space", "syslet\u200b --stdin"},
	} {
		cases = append(cases, sshCase(c.name, c.original))
	}
	return cases
}
