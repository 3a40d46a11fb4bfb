package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/syslet/syslet/pkg/spec"
)

// The YAML decoder's own words name Go types ("field secretfile not
// found in type config.Repo", "cannot unmarshal !!int `5` into
// time.Duration"), which an operator never wrote and cannot act on.
// decodeError says the same in the file's terms: the key, the keys it
// may have meant, a duration's unit.

var (
	unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)
	notDuration  = regexp.MustCompile("^line (\\d+): cannot unmarshal !!\\w+ `([^`]*)` into (time\\.Duration|settings\\.Duration)$")
)

// decodeError rewrites each line of a *yaml.TypeError it knows; other
// errors (a YAML syntax error names its line already) are returned as
// they are.
func decodeError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	keys := yamlKeys(reflect.TypeFor[Config]())
	lines := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		if m := unknownField.FindStringSubmatch(e); m != nil {
			msg := fmt.Sprintf("line %s: unknown key %q", m[1], m[2])
			if near := spec.NearMiss(m[2], keys[m[3]]); near != "" {
				msg += fmt.Sprintf(": did you mean %s?", near)
			} else if len(keys[m[3]]) > 0 {
				msg += " (known here: " + strings.Join(keys[m[3]], ", ") + ")"
			}
			lines = append(lines, msg)
			continue
		}
		if m := notDuration.FindStringSubmatch(e); m != nil {
			lines = append(lines, fmt.Sprintf("line %s: %q is not a duration: give it with its unit, e.g. %ss or %sm", m[1], m[2], m[2], m[2]))
			continue
		}
		lines = append(lines, e)
	}
	return errors.New(strings.Join(lines, "\n"))
}

// yamlKeys lists the keys each struct type of the configuration takes,
// by the name the decoder's errors give the type ("config.Repo").
func yamlKeys(t reflect.Type) map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		if _, done := out[t.String()]; done {
			return
		}
		out[t.String()] = nil
		var keys []string
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name != "" {
				keys = append(keys, name)
			}
			walk(f.Type)
		}
		out[t.String()] = keys
	}
	walk(t)
	return out
}
