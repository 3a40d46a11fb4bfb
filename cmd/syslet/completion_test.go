package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/docpage"
)

// The completion scripts the package installs are `syslet completion
// SHELL`, committed under pkg/release/packaging/completions; this test fails when they
// differ, `go tool task golden` (-update) rewrites them. The tests below
// load the committed scripts into the real shells and complete with them.
const completionDir = "../../pkg/release/packaging/completions"

// completionFiles are the scripts' file names, by shell: what each shell
// looks up for the command syslet.
var completionFiles = map[string]string{"bash": "syslet", "zsh": "_syslet", "fish": "syslet.fish"}

func TestCompletionScriptsAreGenerated(t *testing.T) {
	for _, sh := range shellNames() {
		var b bytes.Buffer
		if code := run([]string{"completion", sh}, nil, &b, &bytes.Buffer{}); code != exitOK {
			t.Fatalf("syslet completion %s: exit %d", sh, code)
		}
		if err := docpage.CheckFile(filepath.Join(completionDir, completionFiles[sh]), b.Bytes(), *update); err != nil {
			t.Error(err)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"completion", "tcsh"}, nil, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), `no completion for "tcsh"`) {
		t.Errorf("completion tcsh: exit %d, %q", code, errb.String())
	}
}

// completionCases are command lines (the cursor at the end) and words the
// completion must offer, and words it must not.
var completionCases = []struct {
	line      string
	want, not []string
}{
	{"syslet val", []string{"validate"}, nil},
	{"syslet ", []string{"validate", "push", "history", "specs"}, nil},
	{"syslet --di", []string{"--diff", "--dial-timeout"}, nil},
	{"syslet validate --s", []string{"--strict"}, []string{"--stdin"}},
	{"syslet push -", []string{"--hosts-dir", "--accept-new", "-i", "--help"}, []string{"--strict"}},
	{"syslet help pu", []string{"push"}, nil},
	{"syslet completion ", []string{"bash", "fish", "zsh"}, nil},
	{"syslet render specs/ --out sp", []string{"specs"}, []string{"web.json"}},
	{"syslet validate we", []string{"web.json"}, nil},
	{"syslet history --", []string{"--output", "--root"}, []string{"--diff"}},
}

// completionDirFixture is a working directory with a spec directory and a
// spec file, for file completion.
func completionDirFixture(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "web.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func need(t *testing.T, shell, apt string) string {
	t.Helper()
	p, err := exec.LookPath(shell)
	if err != nil {
		t.Fatalf("%s is needed to check its completion script (apt-get install %s): %v", shell, apt, err)
	}
	return p
}

func checkCompletion(t *testing.T, shell, line, out string, want, not []string) {
	t.Helper()
	got := strings.Fields(out)
	for _, w := range want {
		if !contains(got, w) && !contains(got, w+"/") {
			t.Errorf("%s: %q does not offer %q; got %q", shell, line, w, got)
		}
	}
	for _, w := range not {
		if contains(got, w) {
			t.Errorf("%s: %q offers %q; got %q", shell, line, w, got)
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestBashCompletion sources the script into bash and runs its completion
// function as bash's programmable completion would (COMP_WORDS,
// COMP_CWORD), printing COMPREPLY.
func TestBashCompletion(t *testing.T) {
	bash := need(t, "bash", "bash")
	script, _ := filepath.Abs(filepath.Join(completionDir, completionFiles["bash"]))
	dir := completionDirFixture(t)
	for _, tc := range completionCases {
		prog := `source "$1" || exit 1
complete -p syslet >/dev/null || exit 1
read -ra COMP_WORDS <<< "$2"
[[ $2 == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE=$2 COMP_POINT=${#2}
_syslet
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog, "bash", script, tc.line)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		checkCompletion(t, "bash", tc.line, string(out), tc.want, tc.not)
	}
}

// zshCapture drives an interactive zsh on a pseudo-terminal (zsh/zpty):
// compinit with the script's directory first in fpath, the line typed and
// a Tab pressed; every match completion adds is printed, and the first
// completion's end stops the shell. compinit keeps its dump in $3: the
// first case builds it from fpath (a second of scanning every function
// zsh ships), the others load it, as a user's shell does after its first.
const zshCapture = `zmodload zsh/zpty || exit 1
zpty z zsh -f -i
zpty -w z "PROMPT= RPROMPT="
zpty -w z "fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -d $3"
zpty -w z 'compadd () {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  local -a __hits; builtin compadd -A __hits "$@"; local ret=$?
  (( $#__hits )) && print -r -l -- "<M"">"${^__hits}
  builtin compadd "$@"; return ret
}'
zpty -w z 'finish () { print "<EO""C>"; exit }'
zpty -w z 'comppostfuncs=(finish)'
zpty -w z "zstyle ':completion:*' list-prompt ''"
zpty -w -n z "$2"$'\t'
while zpty -r z line; do
  [[ $line == *'<EOC>'* ]] && break
  [[ $line == *'<M>'* ]] && print -r -- "${${line##*<M>}%%$'\r'*}"
done
zpty -d z
`

// TestZshCompletion loads the script through zsh's own completion system
// (compinit, #compdef) and completes each line with a real Tab.
func TestZshCompletion(t *testing.T) {
	zsh := need(t, "zsh", "zsh")
	fpath, _ := filepath.Abs(completionDir)
	dir := completionDirFixture(t)
	dump := filepath.Join(t.TempDir(), "zcompdump") // not in dir: file names there are completed
	for _, tc := range completionCases {
		cmd := exec.Command("timeout", "20", zsh, "-f", "-c", zshCapture, "zsh", fpath, tc.line, dump)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "TERM=dumb")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zsh: %v\n%s", err, out)
		}
		checkCompletion(t, "zsh", tc.line, string(out), tc.want, tc.not)
	}
}

// TestFishCompletion asks fish for its completions of each line
// (complete -C) with the script loaded.
func TestFishCompletion(t *testing.T) {
	fish := need(t, "fish", "fish")
	script, _ := filepath.Abs(filepath.Join(completionDir, completionFiles["fish"]))
	dir := completionDirFixture(t)
	for _, tc := range completionCases {
		cmd := exec.Command(fish, "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, tc.line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("fish: %v\n%s", err, out)
		}
		var words []string
		for _, l := range strings.Split(string(out), "\n") {
			if w, _, _ := strings.Cut(l, "\t"); w != "" {
				words = append(words, w)
			}
		}
		checkCompletion(t, "fish", tc.line, strings.Join(words, " "), tc.want, tc.not)
	}
}
