package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// shellNames are the shells `syslet completion` writes a script for.
func shellNames() []string { return []string{"bash", "fish", "zsh"} }

// writeCompletion writes the script for shell, or reports that there is none.
func writeCompletion(w io.Writer, shell string) bool {
	switch shell {
	case "bash":
		writeBash(w)
	case "zsh":
		writeZsh(w)
	case "fish":
		writeFish(w)
	default:
		return false
	}
	return true
}

// cmdCompletion is `syslet completion SHELL`: the completion script, drawn
// from the command table and the flag definitions like --help. The package
// installs the same scripts (pkg/release/packaging/completions, kept equal by a test).
func cmdCompletion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	f := commandFlags("completion")
	err := f.Parse(args)
	if err != nil {
		err = fmt.Errorf("%w: %w", errUsage, err)
	}
	if err == nil && f.NArg() != 1 {
		err = fmt.Errorf("%w: want one shell (%s), got %d arguments", errUsage, strings.Join(shellNames(), ", "), f.NArg())
	}
	if err == nil && !slices.Contains(shellNames(), f.Arg(0)) {
		err = fmt.Errorf("%w: no completion for %q (want %s)", errUsage, f.Arg(0), strings.Join(shellNames(), ", "))
	}
	if err != nil {
		return usage(stdout, stderr, "completion", err)
	}
	writeCompletion(stdout, f.Arg(0))
	return exitOK
}

// completionFlag is one flag as a completion script offers it.
type completionFlag struct {
	spelling string // --name, or -x
	arg      string // the argument's name ("DIR"), "" for a switch
	help     string
}

// completionFlags lists a command's flags with --help last.
func (c *command) completionFlags() []completionFlag {
	var out []completionFlag
	for _, d := range c.flagDocs() {
		out = append(out, completionFlag{spelling: strings.Fields(d.Spelling())[0], arg: d.Arg, help: d.Help})
	}
	return append(out, completionFlag{spelling: "--help", help: "show this command's help"})
}

// operands says what completes the command's operands: words (command
// names, shells), files, or nothing — read from the command's synopsis.
func (c *command) operands() (words []string, files bool) {
	switch c.name {
	case "help":
		for _, o := range commands {
			if o.name != "" {
				words = append(words, o.name)
			}
		}
		return words, false
	case "completion":
		return shellNames(), false
	}
	syn := strings.Join(c.synopsis, " ")
	return nil, strings.Contains(syn, "PATH") || strings.Contains(syn, "FILE")
}

// fileArg reports whether a flag's argument names a file or directory, and
// which ("d" for a directory).
func fileArg(arg string) (bool, string) {
	switch arg {
	case "DIR":
		return true, "d"
	case "FILE", "PATH":
		return true, "f"
	}
	return false, ""
}

// subcommands are the named commands (not the default one).
func subcommands() []*command {
	var out []*command
	for i := range commands {
		if commands[i].name != "" {
			out = append(out, &commands[i])
		}
	}
	return out
}

const completionHeader = "generated from cmd/syslet's command table and flag definitions (syslet completion); do not edit"

func writeBash(w io.Writer) {
	var names []string
	for _, c := range subcommands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, "# bash completion for syslet: %s\n", completionHeader)
	fmt.Fprintf(w, "# shellcheck shell=bash\n")
	fmt.Fprintf(w, "_syslet() {\n")
	fmt.Fprintf(w, "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n")
	fmt.Fprintf(w, "    for ((i = 1; i < COMP_CWORD; i++)); do\n")
	fmt.Fprintf(w, "        case ${COMP_WORDS[i]} in\n")
	fmt.Fprintf(w, "            %s) cmd=${COMP_WORDS[i]}; break ;;\n", strings.Join(names, "|"))
	fmt.Fprintf(w, "        esac\n")
	fmt.Fprintf(w, "    done\n")
	fmt.Fprintf(w, "    local flags= valued= dirs= files= words= operands=\n")
	fmt.Fprintf(w, "    case $cmd in\n")
	for i := range commands {
		c := &commands[i]
		var flags, valued, dirs, files []string
		for _, f := range c.completionFlags() {
			flags = append(flags, f.spelling)
			if f.arg == "" {
				continue
			}
			valued = append(valued, f.spelling)
			if ok, kind := fileArg(f.arg); ok && kind == "d" {
				dirs = append(dirs, f.spelling)
			} else if ok {
				files = append(files, f.spelling)
			}
		}
		words, opFiles := c.operands()
		if c.name == "" {
			words, opFiles = names, true
		}
		label := c.name
		if label == "" {
			label = "''"
		}
		fmt.Fprintf(w, "        %s)\n", label)
		fmt.Fprintf(w, "            flags=%q\n", strings.Join(flags, " "))
		for _, v := range []struct {
			name string
			list []string
		}{{"valued", valued}, {"dirs", dirs}, {"files", files}, {"words", words}} {
			if len(v.list) > 0 {
				fmt.Fprintf(w, "            %s=%q\n", v.name, " "+strings.Join(v.list, " ")+" ")
			}
		}
		if opFiles {
			fmt.Fprintf(w, "            operands=files\n")
		}
		fmt.Fprintf(w, "            ;;\n")
	}
	fmt.Fprintf(w, "    esac\n")
	fmt.Fprintf(w, "    if [[ $dirs == *\" $prev \"* ]]; then COMPREPLY=($(compgen -d -- \"$cur\")); return; fi\n")
	fmt.Fprintf(w, "    if [[ $files == *\" $prev \"* ]]; then COMPREPLY=($(compgen -f -- \"$cur\")); return; fi\n")
	fmt.Fprintf(w, "    if [[ $valued == *\" $prev \"* ]]; then COMPREPLY=(); return; fi\n")
	fmt.Fprintf(w, "    if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\")); return; fi\n")
	fmt.Fprintf(w, "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n")
	fmt.Fprintf(w, "    if [[ $operands == files ]]; then COMPREPLY+=($(compgen -f -- \"$cur\")); fi\n")
	fmt.Fprintf(w, "}\n")
	fmt.Fprintf(w, "complete -o filenames -F _syslet syslet\n")
}

// zshQuote quotes s for a single-quoted zsh word.
func zshQuote(s string) string { return strings.ReplaceAll(s, "'", `'\''`) }

// zshOptDescr escapes an option's description for _arguments' [...].
func zshOptDescr(s string) string {
	return zshQuote(strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(s))
}

func writeZsh(w io.Writer) {
	fmt.Fprintf(w, "#compdef syslet\n")
	fmt.Fprintf(w, "# zsh completion for syslet: %s\n\n", completionHeader)
	fmt.Fprintf(w, "_syslet_commands() {\n")
	fmt.Fprintf(w, "    local -a cmds\n    cmds=(\n")
	for _, c := range subcommands() {
		fmt.Fprintf(w, "        '%s:%s'\n", c.name, zshQuote(c.summary))
	}
	fmt.Fprintf(w, "    )\n    _describe -t commands 'syslet command' cmds\n}\n\n")
	fmt.Fprintf(w, "_syslet() {\n")
	fmt.Fprintf(w, "    local curcontext=$curcontext cmd= i state line\n")
	fmt.Fprintf(w, "    typeset -A opt_args\n")
	fmt.Fprintf(w, "    for ((i = 2; i < CURRENT; i++)); do\n")
	fmt.Fprintf(w, "        case ${words[i]} in\n")
	var names []string
	for _, c := range subcommands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, "            (%s) cmd=${words[i]}; shift $((i - 1)) words; (( CURRENT -= i - 1 )); break ;;\n", strings.Join(names, "|"))
	fmt.Fprintf(w, "        esac\n    done\n")
	fmt.Fprintf(w, "    case $cmd in\n")
	for i := range commands {
		c := &commands[i]
		label := c.name
		if label == "" {
			label = "''"
		}
		fmt.Fprintf(w, "    (%s)\n", label)
		fmt.Fprintf(w, "        _arguments -S \\\n")
		for _, f := range c.completionFlags() {
			if f.arg != "" {
				action := ""
				if ok, kind := fileArg(f.arg); ok && kind == "d" {
					action = "_files -/"
				} else if ok {
					action = "_files"
				}
				sep := "="
				if len(f.spelling) == 2 { // -x VALUE: the value is the next word
					sep = "+"
				}
				fmt.Fprintf(w, "            '%s%s[%s]:%s:%s' \\\n", f.spelling, sep, zshOptDescr(f.help), f.arg, action)
				continue
			}
			fmt.Fprintf(w, "            '%s[%s]' \\\n", f.spelling, zshOptDescr(f.help))
		}
		words, files := c.operands()
		switch {
		case c.name == "":
			fmt.Fprintf(w, "            '*: :->operand' && return\n")
			fmt.Fprintf(w, "        [[ $state == operand ]] && _alternative 'commands:syslet command:_syslet_commands' 'files:spec file or directory:_files'\n")
		case len(words) > 0:
			fmt.Fprintf(w, "            '*:%s:(%s)'\n", strings.Fields(c.synopsis[0])[0], strings.Join(words, " "))
		case files:
			fmt.Fprintf(w, "            '*:file:_files'\n")
		default:
			fmt.Fprintf(w, "            '*: :'\n")
		}
		fmt.Fprintf(w, "        ;;\n")
	}
	fmt.Fprintf(w, "    esac\n}\n\n")
	fmt.Fprintf(w, "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n    _syslet \"$@\"\nelse\n    compdef _syslet syslet\nfi\n")
}

// fishQuote quotes s for a single-quoted fish word.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func writeFish(w io.Writer) {
	var names []string
	for _, c := range subcommands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, "# fish completion for syslet: %s\n", completionHeader)
	fmt.Fprintf(w, "complete -c syslet -e\n")
	for i := range commands {
		c := &commands[i]
		cond := "__fish_seen_subcommand_from " + c.name
		if c.name == "" {
			cond = "not __fish_seen_subcommand_from " + strings.Join(names, " ")
		}
		words, files := c.operands()
		if c.name == "" {
			for _, s := range subcommands() {
				fmt.Fprintf(w, "complete -c syslet -n '%s' -f -a %s -d %s\n", cond, s.name, fishQuote(s.summary))
			}
			files = true
		}
		for _, word := range words {
			fmt.Fprintf(w, "complete -c syslet -n '%s' -f -a %s\n", cond, word)
		}
		if files {
			fmt.Fprintf(w, "complete -c syslet -n '%s' -F\n", cond)
		}
		for _, f := range c.completionFlags() {
			opt := "-l " + strings.TrimPrefix(f.spelling, "--")
			if len(f.spelling) == 2 {
				opt = "-s " + f.spelling[1:]
			}
			arg := ""
			if f.arg != "" {
				arg = " -r"
				if ok, kind := fileArg(f.arg); ok && kind == "d" {
					arg += " -a '(__fish_complete_directories)'"
				} else if ok {
					arg += " -F"
				} else {
					arg += " -f"
				}
			}
			fmt.Fprintf(w, "complete -c syslet -n '%s' %s%s -d %s\n", cond, opt, arg, fishQuote(f.help))
		}
	}
}
