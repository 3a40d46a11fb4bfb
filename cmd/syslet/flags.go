package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// flags registers a command's flags on a flag.FlagSet and remembers their
// order, so that --help, the CLI reference (docs/reference/cli.md), the man pages and the completions list
// them as they are defined — the one home of a flag's name, default and
// meaning. A help text's first `backquoted` word names its argument, as in
// the standard library's flag.UnquoteUsage.
type flags struct {
	*flag.FlagSet
	order []string
}

func newFlags(name string, stderr io.Writer) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &flags{FlagSet: fs}
}

func (f *flags) add(name string) { f.order = append(f.order, name) }

func (f *flags) Bool(p *bool, name string, def bool, help string) {
	f.BoolVar(p, name, def, help)
	f.add(name)
}

func (f *flags) String(p *string, name, def, help string) {
	f.StringVar(p, name, def, help)
	f.add(name)
}

func (f *flags) Int(p *int, name string, def int, help string) {
	f.IntVar(p, name, def, help)
	f.add(name)
}

func (f *flags) Duration(p *time.Duration, name string, def time.Duration, help string) {
	f.Var((*duration)(p), name, help)
	*p = def
	f.Lookup(name).DefValue = (*duration)(p).String()
	f.add(name)
}

func (f *flags) Bytes(p *int64, name string, def int64, help string) {
	*p = def
	f.Var((*byteSize)(p), name, help)
	f.add(name)
}

// Each adds a flag that may be given several times.
func (f *flags) Each(name, help string, fn func(string) error) {
	f.Func(name, help, fn)
	f.add(name)
}

// duration is a time.Duration flag that prints its value the way people
// write it ("5m", not "5m0s").
type duration time.Duration

func (d *duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

func (d *duration) String() string {
	if d == nil {
		return "0s"
	}
	s := time.Duration(*d).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// byteSize is a size in bytes: a number, or a number with KiB, MiB or GiB.
type byteSize int64

func (b *byteSize) Set(s string) error {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return fmt.Errorf("want a number of bytes (or KiB, MiB, GiB), got %q", s)
	}
	*b = byteSize(v * mult)
	return nil
}

func (b *byteSize) String() string {
	if b == nil {
		return "0"
	}
	v := int64(*b)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.mult && v%u.mult == 0 {
			return strconv.FormatInt(v/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(v, 10)
}

// flagDoc is one flag as the docs show it.
type flagDoc struct {
	Name, Arg, Default, Help string
}

// Spelling is how the flag is written: --name, or -x for one letter.
func (d flagDoc) Spelling() string {
	s := "--" + d.Name
	if len(d.Name) == 1 {
		s = "-" + d.Name
	}
	if d.Arg != "" {
		s += " " + d.Arg
	}
	return s
}

// docs lists the flags in definition order with their argument names and
// defaults. A default is shown unless it is the zero value.
func (f *flags) docs() []flagDoc {
	var out []flagDoc
	for _, name := range f.order {
		fl := f.Lookup(name)
		arg, help := flag.UnquoteUsage(fl)
		if arg == "value" {
			arg = "VALUE"
		}
		def := fl.DefValue
		switch def {
		case "", "false", "0", "0s", "[]":
			def = ""
		}
		out = append(out, flagDoc{Name: name, Arg: arg, Default: def, Help: help})
	}
	return out
}
