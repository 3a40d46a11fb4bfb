package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
)

// command is one syslet command as its --help, the overall usage, the
// CLI reference, the man pages and the completions describe it. Its flags are the ones
// it parses: defineFlags registers them (into throw-away targets when only
// drawn), so no default or meaning is written twice.
type command struct {
	name     string   // "" is the default command (plan and apply)
	synopsis []string // argument forms after "syslet NAME"
	summary  string   // what it does, one sentence
	// defineFlags registers the command's flags; nil for none.
	defineFlags func(f *flags)
	notes       string // printed after the flags
	examples    []string
	// aliases are other words that run it: "apply" for the default
	// command (its last synopsis form shows it), "--version", "-h" and
	// "--help".
	aliases []string
	// asRoot says why the command must run as root on the live host; ""
	// when it never needs root. It is checked before anything is read
	// (root.go) and said in its help.
	asRoot string
	// run carries the command out with the arguments after its name and
	// returns the exit code (main.go's).
	run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// oneLine says what syslet is, for the usage's first line and the NAME
// line of syslet(1); description says it at more length.
const (
	oneLine     = "deploy podman quadlet units from JSON specs"
	description = `syslet deploys containers onto a Linux host as rootful podman quadlet units supervised
by systemd. It validates JSON specs of containers, volumes, networks, image builds, secrets and
config files, renders them as quadlet unit files, compares them with what the host runs, stages
them through podman's quadlet generator and systemd-analyze verify, prints the plan and applies
it in one fixed order: pull, stop, write config, write units, prune, delete, daemon-reload,
reload, start.`
)

// commands is every command, in the order --help lists them; run
// dispatches through it too. It is filled in by init: the commands' own
// code reads it (help lists it, usage names a command), and a package
// variable's initializer may not lead back to the variable.
var commands []command

func init() { commands = commandTable() }

func commandTable() []command {
	return []command{
		{name: "", run: cmdApply, aliases: []string{"apply"}, synopsis: []string{"[--diff] [flags] [PATH | --stdin | -]", "--diff --out FILE [flags] [PATH | --stdin]", "--plan FILE [--diff] [flags] [PATH | --stdin]", "apply [flags] [PATH | --stdin | -]"},
			summary:     "plan and apply (PATH: a spec file or a directory of *.json; default /etc/syslet/config.json)",
			asRoot:      "it plans and applies through the host's systemd and podman (syslet validate needs no root)",
			defineFlags: func(f *flags) { new(applyOptions).define(f) },
			notes: `syslet apply PATH is the same command as syslet PATH, for scripts and people who name the
verb: it applies, and asks first only when stdin and stderr are a terminal (--yes: never).
Secrets are decrypted while planning with the host's age identities (SSH ed25519 host key,
/var/lib/syslet/key.txt, ageIdentityFiles in /etc/syslet/syslet.json). SYSLET_SHOW_SECRETS=true
shows their values in --diff.
A saved plan (--diff --out FILE) holds the plan, its input's digest and the host state it was
made from (file digests, unit states, podman secret IDs and labels, images present, the journal's
last run), never a secret value or a file's content. --plan FILE with the same input applies
exactly its actions, or exits 1 naming each change since it was made and changes nothing.
A first SIGINT/SIGTERM lets the action in progress finish, runs nothing after it and prints what
was not reached and which services it left stopped; a second one aborts at once. The next run resumes (see syslet history).
An apply notifies the targets of "notify" in /etc/syslet/syslet.json (started, then succeeded,
failed or rolled-back) without waiting for them, and after its run waits at most 10s for their
delivery; --diff --metrics-file FILE is a drift check (see syslet notify-test).`,
			examples: []string{"syslet --diff specs/", "syslet specs/", "cat host1/*.json | ssh root@host1 syslet --stdin",
				"syslet --diff --out web1.plan specs/ && syslet --plan web1.plan specs/"}},
		{name: "update", run: cmdUpdate, synopsis: []string{"[--diff] [flags] [PATH | --stdin | -]"},
			asRoot:      "it plans and applies through the host's systemd and podman, as an apply does",
			summary:     "an apply that also pulls each running container's tagged image again when its registry's tag names another digest now, and restarts those containers under the health gate (PATH: default /etc/syslet/config.json, as a plain syslet; the plan's header names it)",
			defineFlags: func(f *flags) { new(applyOptions).define(f) },
			notes: `For each container desired running whose Image= is a tag in a registry (not a digest, not a
.build or .image unit, not localhost/ or a short name), syslet asks the registry for the tag's
digest (one manifest HEAD, with the host's registries.conf and auth file; nothing is pulled to
find out) and compares it with the repository digests of the image the host holds. Each that
differs is pulled in step 1, before anything stops, and the containers that run it restart; the
health gate judges them, and a failure rolls back to the previous generation, pinned to the image
it ran. --diff shows the updates (image, both digests, the containers restarted) and pulls
nothing. A registry that cannot be asked stops the run before anything changes, naming the image.
A plain syslet apply never asks a registry. --out and --plan do not apply. Exit codes as an apply's.`,
			examples: []string{"syslet update --diff", "syslet update", "syslet update specs/"}},
		{name: "validate", run: cmdValidate, synopsis: []string{"[--strict] [--output json] [--podman VERSION] [PATH | -]"},
			summary:     "check specs without touching any host, podman's quadlet converter included",
			defineFlags: func(f *flags) { new(validateOptions).define(f) },
			examples:    []string{"syslet validate specs/", "syslet validate --strict --output json specs/"}},
		{name: "render", run: cmdRender, synopsis: []string{"PATH --out DIR [--podman VERSION]"},
			summary:     "write the files a host would get under DIR",
			defineFlags: func(f *flags) { new(renderOptions).define(f) },
			examples:    []string{"syslet render specs/ --out /tmp/host1", "syslet render --podman 5.8 specs/ --out build/"}},
		{name: "host-key", run: cmdHostKey, synopsis: []string{"[--root DIR]"},
			summary:     "print this host's age recipient (encrypt secrets for it)",
			asRoot:      "it reads the host's SSH host key",
			defineFlags: func(f *flags) { new(hostKeyOptions).define(f) },
			examples:    []string{"ssh root@host1 syslet host-key", `sops encrypt --age "$(ssh root@host1 syslet host-key)" db.yaml > db.enc.yaml`}},
		{name: "adopt", run: cmdAdopt, synopsis: []string{"FILE…"},
			summary:  "print v1 specs for hand-written quadlet files (every quadlet type; a template's instance links; each unit's drop-in directory)",
			examples: []string{"syslet adopt /etc/containers/systemd/*.container > specs/adopted.json", "syslet adopt /etc/containers/systemd/* > specs/adopted.json"}},
		{name: "push", run: cmdPush, synopsis: []string{"[flags] TARGET… PATH", "[flags] --hosts-dir DIR [TARGET…]"},
			summary:     "validate here, then plan/apply on each TARGET ([user@]host[:port]) over SSH; with --hosts-dir each TARGET gets DIR/<host>/ plus DIR/common/ (no TARGET: every host directory)",
			defineFlags: func(f *flags) { new(pushOptions).define(f) },
			notes:       pushNotes,
			examples: []string{"syslet push --diff root@web1 hosts/web1/", "syslet push --hosts-dir hosts/ web1 web2",
				"syslet push --hosts-dir hosts/ --batch 1,25% --pause 2m --parallel 10",
				"syslet push --hosts-dir hosts/ --diff --out plans/ && syslet push --hosts-dir hosts/ --plan plans/"}},
		{name: "ssh-command", run: cmdSSHCommand, synopsis: []string{"[--diff-only]"},
			summary:     `authorized_keys forced command: runs only "syslet --diff --stdin", "syslet --stdin", the saved-plan forms syslet push uses ("syslet --diff --stdin --out -", "syslet --plan - --stdin", "syslet --diff --plan - --stdin") and the two reads of its --pause ("syslet --diff --stdin --detailed-exitcode", "syslet status --stdin --output json"); each but the last also with "--output text+json" after it, as push sends them`,
			defineFlags: func(f *flags) { new(sshCommandOptions).define(f) },
			// lines of /root/.ssh/authorized_keys
			examples: []string{`command="syslet ssh-command",restrict ssh-ed25519 AAAA… ci`, `command="syslet ssh-command --diff-only",restrict ssh-ed25519 AAAA… review`}},
		{name: "status", run: cmdStatus, synopsis: []string{"[--output json] [PATH | --stdin | -]"},
			summary:     "how systemd sees the services the specs run (default /etc/syslet/config.json, which the last apply from stdin or rollback stored; it says so on stderr): state, last result, restarts, InvocationID, and each readiness probe's answer now; read-only, never waits for an apply",
			defineFlags: func(f *flags) { new(statusOptions).define(f) },
			notes: `The services are those of every container the specs want running. Each one that is up
and whose installed unit has a readiness probe is probed once, from the host, as the health
gate probes it: its answer, its latency and where the host reached it are shown. syslet status
exits 0 whenever it could read systemd, whatever the services' states and the probes' answers
(read them in --output json), 1 when it could not, 2 when the specs are invalid.`,
			examples: []string{"syslet status", "syslet status --output json specs/"}},
		{name: "wait-status", run: cmdWaitStatus, synopsis: []string{
			"--forge KIND [--api URL] --repo OWNER/NAME --token-file FILE --context NAME… [flags] COMMIT",
			"--forge KIND [--api URL] --repo OWNER/NAME --token-file FILE --hosts-dir DIR --select SELECTOR [--min-success N|P%] [flags] COMMIT",
			"--prometheus URL --hosts-dir DIR --select SELECTOR [--min-success N|P%] [flags] COMMIT"},
			summary:     "wait until enough hosts of a ring run COMMIT (their statuses on the forge, or their webhookd's metrics in Prometheus), or so many failed that enough cannot: the gate before CI promotes a commit to the next ring",
			defineFlags: func(f *flags) { new(waitStatusOptions).define(f) },
			notes: `wait-status only reads: it changes nothing on the forge, in Prometheus or on any host. The hosts
are the named contexts, or the host directories of --hosts-dir whose labels file (DIR/<host>/labels,
key=value lines) matches --select, each read as its status context syslet/{host} (--context
PATTERN) or, with --prometheus, as its webhookd's series (one PromQL query a read). A host has
succeeded when it runs the commit and it passed its health gate, has failed when it failed or
rolled back on it; a host that says nothing (down, not polling) has not succeeded and is named
as missing. It exits 0 as soon as --min-success of the hosts succeeded (default 100%: every one;
a percentage is rounded up), 1 as soon as so many failed (forge: failure or error, GitLab: failed,
canceled) that it can no longer be met — do not promote it —, 2 when the source refuses the read
(token, repository, URL, query) or the token file is not a private file, 3 when --timeout runs
out first, 64 on a usage error and 130 when interrupted. A read that gets no answer or a 5xx is
tried again at the next interval.`,
			examples: []string{"syslet wait-status --forge gitea --api https://git.example/api/v1 --repo ops/infra --token-file ci.token --context syslet/canary1 --context syslet/canary2 \"$(git rev-parse origin/canary)\"",
				`c=$(git rev-parse origin/canary) && syslet wait-status --forge github --repo ops/infra --token-file gh.token --hosts-dir hosts --select ring=canary --min-success 95% "$c" && git push origin "$c:refs/heads/main"`,
				`syslet wait-status --prometheus http://prometheus:9090 --hosts-dir hosts --select ring=canary,site=fra --min-success 95% "$(git rev-parse origin/canary)"`}},
		{name: "show", run: cmdShow, synopsis: []string{"FILE [--output json]"},
			summary:     "print a plan saved by syslet --diff --out FILE as --diff printed it, with the input and host state it was made from",
			defineFlags: func(f *flags) { new(showOptions).define(f) },
			examples:    []string{"syslet --diff --out web1.plan specs/", "syslet show web1.plan", "syslet --plan web1.plan specs/"}},
		{name: "rollback", run: cmdRollback, synopsis: []string{"[--diff] [flags] [RUN]"},
			summary:     "apply a kept generation again, each container pinned to the image it ran then: the one before the host's current generation, or that of RUN",
			asRoot:      "it applies a generation kept in " + layout.StateHome,
			defineFlags: func(f *flags) { new(applyOptions).defineRollback(f) },
			notes: `syslet rollback never deletes data: no image is deleted, and no volume is deleted or recreated
but to fill a volume of the generation that a later run deleted from the first backup taken of it
after the generation (what the volume holds then is exported first), unless a later import brought
that backup back; what it cannot restore is said. Exit codes as an apply's.`,
			examples: []string{"syslet history", "syslet rollback --diff", "syslet rollback 20261201T1015"}},
		{name: "notify-test", run: cmdNotifyTest, synopsis: []string{"[--event KIND] [--root DIR]"},
			summary:     "send an example event to every notification target of /etc/syslet/syslet.json and print what came of each",
			asRoot:      "the targets are in " + layout.Settings + ", root's alone (--root DIR reads a copy)",
			defineFlags: func(f *flags) { new(notifyTestOptions).define(f) },
			examples:    []string{"syslet notify-test", "syslet notify-test --event failed"}},
		{name: "history", run: cmdHistory, synopsis: []string{"[RUN] [--output json]", "[RUN] --specs"},
			summary:     "recent runs from the run journal, one run's actions, or the specs a kept generation applied (--specs)",
			asRoot:      "the run journal in " + layout.StateHome + " is root's alone (--root DIR reads a copy)",
			defineFlags: func(f *flags) { new(historyOptions).define(f) },
			examples:    []string{"syslet history", "syslet history 20261201T0455", "syslet history -n 0 --output json", "syslet history 20261201T0455 --specs > then.json"}},
		{name: "backups", run: cmdBackups, synopsis: []string{"[VOLUME] [--output json]"},
			asRoot:      "the backups in /var/lib/syslet/backups are root's alone (--root DIR reads a copy)",
			summary:     "the volume backups kept in /var/lib/syslet/backups, oldest first: the export an apply takes of each volume before it deletes or recreates it",
			defineFlags: func(f *flags) { new(backupsOptions).define(f) },
			notes: `A backup is RUN_VOLUME.tar (0600, in a 0700 directory): podman's export of the volume, taken
before step 6 deletes it, unless its spec says "backup": false. Its size and sha256 are in the
run journal (syslet history RUN). An apply whose backups would not fit stops before anything
changes. Anything else found in the directory (a symlink, a FIFO) is named and ignored.`,
			examples: []string{"syslet backups", "syslet backups db-data --output json"}},
		{name: "restore", run: cmdRestore, synopsis: []string{"VOLUME [BACKUP] [flags]"},
			asRoot:      "it stops and starts services and replaces a podman volume",
			summary:     "bring a volume's backup back (the newest, or BACKUP as syslet backups names it), with the services of the containers mounting it stopped around it",
			defineFlags: func(f *flags) { new(restoreOptions).define(f) },
			notes: `Under the apply lock: the services of the containers that mount VOLUME are stopped; what it
holds now is backed up first (nothing a restore replaces is lost either) and the volume removed;
it is created again (by its quadlet service NAME-volume.service when systemd has one) and the
backup imported into it; the services that were running are started again. The plan is shown
before anything changes (--diff shows only it), and the restore runs as an apply does, action by
action in the run journal (syslet history): a restore stopped anywhere is finished by the next
syslet. A run that did not finish is finished first (syslet resumes it).`,
			examples: []string{"syslet backups db-data", "syslet restore --diff db-data", "syslet restore db-data", "syslet restore db-data 20261204T101500Z-a1b2c3_db-data.tar"}},
		{name: "version", run: cmdVersion, aliases: []string{"--version"}, synopsis: []string{"[--output json]"},
			summary:     "the version, commit and build of this syslet",
			defineFlags: func(f *flags) { new(versionOptions).define(f) },
			examples:    []string{"syslet version", "syslet version --output json"}},
		{name: "schema", run: cmdSchema, summary: "print the JSON Schema of spec format v1",
			examples: []string{"syslet schema > spec-v1.schema.json"}},
		{name: "completion", run: cmdCompletion, synopsis: []string{"bash | zsh | fish"},
			summary: "print the shell completion script (the package installs them; for a bare binary, source its output)",
			examples: []string{`source <(syslet completion bash)`, "syslet completion zsh > ~/.zfunc/_syslet",
				"syslet completion fish > ~/.config/fish/completions/syslet.fish"}},
		{name: "help", run: cmdHelp, aliases: []string{"-h", "--help"}, synopsis: []string{"[COMMAND] [--format text|markdown]"},
			summary:  "this overview, one command's help, or the whole command-line reference (--format markdown)",
			examples: []string{"syslet help push", "syslet push --help", "syslet help --format markdown > cli.md"}},
	}
}

// exitStatus is what each exit code means, for the usage, the reference
// and syslet(1); the codes are main.go's and stable.
var exitStatus = []struct {
	code    int
	meaning string
}{
	{exitOK, "success, or nothing to change"},
	{exitError, "an error: host, staging, a refused plan, a stale or edited saved plan (--plan), a failed apply, the lock timed out"},
	{exitInvalid, "invalid specs, or input that is missing, holds no JSON value, is too large or is not a regular file; nothing was touched"},
	{exitPending, "changes are pending (--diff --detailed-exitcode)"},
	{exitRolledBack, "rolled back: a started container failed the health gate, and the last good generation runs again (and passed it)"},
	{exitRollbackBad, "the rollback failed too: a started container failed the health gate, and so did the last good generation; the host needs a person"},
	{exitUsage, "a usage error: a bad flag or argument; nothing was read"},
	{exitInternal, "an internal error (a bug; the stack is printed)"},
	{exitInterrupted, "interrupted by SIGINT or SIGTERM; the summary says what was not reached and which services it left stopped"},
}

// lookup returns the command named name.
func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// dispatch returns the command a first argument names, by its name or an
// alias; nil when it names none (then it is the default command's
// argument: a PATH, a flag).
func dispatch(word string) *command {
	for i := range commands {
		c := &commands[i]
		if c.name != "" && c.name == word || slices.Contains(c.aliases, word) {
			return c
		}
	}
	return nil
}

// title is how a command is named in prose: "syslet push".
func (c *command) title() string { return strings.TrimSpace("syslet " + c.name) }

// allNotes is what the command's help says after its flags: its notes,
// and why it must run as root.
func (c *command) allNotes() string {
	if c.asRoot == "" {
		return c.notes
	}
	root := wrap("Must run as root on the host: "+c.asRoot+".", 96, "")
	if c.notes == "" {
		return root
	}
	return c.notes + "\n" + root
}

// flagDocs lists the command's flags as the docs show them.
func (c *command) flagDocs() []flagDoc {
	if c.defineFlags == nil {
		return nil
	}
	f := newFlags(c.title(), io.Discard)
	c.defineFlags(f)
	return f.docs()
}

// common are the command lines of a day with syslet, in the order of a
// first deploy: what the usage shows first, before the whole reference.
var common = []struct{ line, what string }{
	{"syslet validate specs/", "check the specs: no host needed, nothing touched"},
	{"syslet --diff specs/", "print the plan: what an apply would change; nothing changes"},
	{"syslet specs/", "apply (asks first on a terminal); also spelled syslet apply specs/"},
	{"syslet history", "the recent runs; syslet history RUN shows one run's actions"},
	{"syslet rollback", "apply the previous kept generation again"},
	{"syslet push root@host1 specs/", "plan and apply on another host over SSH"},
	{"syslet help COMMAND", "one command's forms, flags and examples (or: syslet COMMAND -h)"},
}

// usedFlags are the apply's flags of a day with syslet, which the usage
// shows; syslet help apply lists them all.
var usedFlags = []string{"diff", "stdin", "yes", "detailed-exitcode", "allow-removals"}

// writeUsage writes the overall usage, a page: the common command lines,
// what syslet is, each command in a line, the apply's most used flags and
// the exit codes. Each command's forms, flags and notes are its own help
// (writeHelp), and the whole of it is the reference.
func writeUsage(w io.Writer) {
	fmt.Fprintln(w, "syslet — "+oneLine)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Common commands:")
	for _, c := range common {
		writeColumns(w, "  "+c.line, c.what, 34)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, wrap(description, 96, ""))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for i := range commands {
		c := &commands[i]
		name := c.title()
		if c.name == "" {
			name = "syslet [apply]"
		}
		writeColumns(w, "  "+name, brief(c.summary), 22)
	}
	fmt.Fprintln(w, "\nMost used flags of an apply (syslet help apply lists them all):")
	var used []flagDoc
	for _, d := range lookup("").flagDocs() {
		if slices.Contains(usedFlags, d.Name) {
			used = append(used, d)
		}
	}
	writeFlags(w, used)
	fmt.Fprintln(w, "\nExit codes:")
	for _, e := range exitStatus {
		writeColumns(w, fmt.Sprintf("  %d", e.code), e.meaning, 8)
	}
	fmt.Fprintln(w, "\n"+wrap("syslet help COMMAND (or syslet COMMAND --help) shows a command's forms, all its flags, notes "+
		"and examples; man syslet, or syslet help --format markdown, the whole command-line reference.", 96, ""))
}

// brief is a command's summary up to its first parenthesis, semicolon or
// colon: what it does in a line of the usage.
func brief(summary string) string {
	for _, sep := range []string{" (", "; ", ": "} {
		summary, _, _ = strings.Cut(summary, sep)
	}
	return summary
}

// writeHelp writes one command's help: its forms, what it does, its
// flags, notes and examples.
func writeHelp(w io.Writer, c *command) {
	fmt.Fprintln(w, "Usage:")
	forms := c.synopsis
	if len(forms) == 0 {
		forms = []string{""}
	}
	for _, form := range forms {
		fmt.Fprintf(w, "  %s\n", strings.TrimSpace(c.title()+" "+form))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, wrap(c.summary, 96, ""))
	if docs := c.flagDocs(); len(docs) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		writeFlags(w, docs)
	}
	if notes := c.allNotes(); notes != "" {
		fmt.Fprintln(w)
		fmt.Fprintln(w, notes)
	}
	if len(c.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range c.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func writeFlags(w io.Writer, docs []flagDoc) {
	for _, d := range docs {
		help := d.Help
		if d.Default != "" {
			help += " (default " + d.Default + ")"
		}
		writeColumns(w, "  "+d.Spelling(), help, 25)
	}
}

// writeColumns writes left padded to col and right wrapped beside it; a
// left part too wide for the column gets the right part on its next line.
func writeColumns(w io.Writer, left, right string, col int) {
	indent := strings.Repeat(" ", col)
	if right == "" {
		fmt.Fprintln(w, left)
		return
	}
	if len([]rune(left)) >= col-1 {
		fmt.Fprintln(w, left)
		fmt.Fprintln(w, indent+wrap(right, 100-col, indent))
		return
	}
	fmt.Fprintln(w, left+strings.Repeat(" ", col-len([]rune(left)))+wrap(right, 100-col, indent))
}

// wrap breaks s into lines of at most width characters, joined with a
// newline and indent.
func wrap(s string, width int, indent string) string {
	var lines []string
	var line string
	for _, word := range strings.Fields(s) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	lines = append(lines, line)
	return strings.Join(lines, "\n"+indent)
}

// cmdSchema is `syslet schema`: the JSON Schema of spec format v1.
func cmdSchema(_ []string, _ io.Reader, stdout, _ io.Writer) int {
	stdout.Write(spec.Schema)
	return exitOK
}

// cmdHelp is `syslet help [COMMAND] [--format text|markdown]`: the overall
// usage or one command's help, or the whole command-line reference in
// Markdown (what docs/reference/cli.md is made of).
func cmdHelp(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	format := "text"
	var c *command
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--format" && i+1 < len(args):
			format = args[i+1]
			i++
		case strings.HasPrefix(a, "--format="):
			format = strings.TrimPrefix(a, "--format=")
		case dispatch(a) != nil && c == nil:
			c = dispatch(a) // a name or an alias: syslet help apply
		default:
			fmt.Fprintf(stderr, "syslet help: unknown command or argument %q\nsee 'syslet --help'\n", a)
			return exitUsage
		}
	}
	switch {
	case format == "markdown" && c == nil:
		writeReference(stdout)
	case format == "text" && c != nil:
		writeHelp(stdout, c)
	case format == "text":
		writeUsage(stdout)
	default:
		fmt.Fprintf(stderr, "syslet help: --format is text, or markdown for the whole reference; got %q\nsee 'syslet --help'\n", format)
		return exitUsage
	}
	return exitOK
}
