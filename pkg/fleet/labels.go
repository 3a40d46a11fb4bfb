package fleet

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// LabelsFile is the file of a host's directory (hosts/<host>/labels) that
// holds its labels, one key=value a line. It is not a spec (specs end in
// .json), so neither syslet nor webhookd applies it.
const LabelsFile = "labels"

// Labels are a host's labels, key → value.
type Labels map[string]string

var (
	labelKey   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
	labelValue = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
)

// reserved are the names a label may not take: webhookd's own labels on
// the series that carry host labels, and those Prometheus adds to every
// scraped series.
var reserved = []string{"host", "repo", "commit", "result", "instance", "job"}

// checkLabel says what is wrong with key=value, or nil. Keys are valid
// Prometheus label names and values need no quoting anywhere (a
// selector, a PromQL matcher, a shell), so one label reads the same in
// the repository, the metrics and the command line.
func checkLabel(key, value string) error {
	switch {
	case !labelKey.MatchString(key):
		return fmt.Errorf("label key %q: want a lowercase letter, then lowercase letters, digits or _ (at most 63)", key)
	case slices.Contains(reserved, key):
		return fmt.Errorf("label key %q is reserved (%s are the metrics' own)", key, strings.Join(reserved, ", "))
	case !labelValue.MatchString(value):
		return fmt.Errorf("label %s=%q: want a letter or digit, then letters, digits, '.', '_' or '-' (at most 63)", key, value)
	}
	return nil
}

// ParseLabels reads a labels file: one key=value a line; blank lines and
// lines starting with # are ignored. An error names name and the line.
func ParseLabels(name string, b []byte) (Labels, error) {
	ls := Labels{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return nil, fmt.Errorf("%s:%d: %q: want key=value", name, n, line)
		}
		if err := checkLabel(k, v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if old, dup := ls[k]; dup {
			return nil, fmt.Errorf("%s:%d: label %s given twice (%s, %s)", name, n, k, old, v)
		}
		ls[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ls, nil
}

// maxLabelsFile bounds a labels file: a few lines, never a data file.
const maxLabelsFile = 64 << 10

// ReadLabels reads dir's labels file; a directory without one has no
// labels.
func ReadLabels(dir string) (Labels, error) {
	name := filepath.Join(dir, LabelsFile)
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return Labels{}, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if fi.Size() > maxLabelsFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, maxLabelsFile)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return ParseLabels(name, b)
}

// Keys are the label keys in order.
func (ls Labels) Keys() []string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (ls Labels) String() string {
	var parts []string
	for _, k := range ls.Keys() {
		parts = append(parts, k+"="+ls[k])
	}
	return strings.Join(parts, ",")
}
