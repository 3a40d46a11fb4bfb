package fleet

import (
	"fmt"
	"strings"
)

// Selector picks hosts by their labels: every requirement must hold.
type Selector []Requirement

// Requirement is one key=value (or key!=value) of a selector.
type Requirement struct {
	Key, Value string
	Not        bool
}

// ParseSelector reads "role=web,site=fra": comma-separated key=value or
// key!=value; every one must hold. A host without the key has neither
// key=value nor, for selecting, key!=value: a host that does not say its
// site is not picked by "outside fra".
func ParseSelector(s string) (Selector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty selector: want key=value[,key=value…] (role=web,site=fra)")
	}
	var sel Selector
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		k, v, ok := strings.Cut(part, "=")
		r := Requirement{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)}
		if strings.HasSuffix(r.Key, "!") {
			r.Key, r.Not = strings.TrimSpace(strings.TrimSuffix(r.Key, "!")), true
		}
		if !ok || r.Key == "" {
			return nil, fmt.Errorf("%q: want key=value or key!=value (role=web,site=fra)", part)
		}
		if err := checkLabel(r.Key, r.Value); err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		if seen[r.Key] {
			return nil, fmt.Errorf("%q: label %s is already required", part, r.Key)
		}
		seen[r.Key] = true
		sel = append(sel, r)
	}
	return sel, nil
}

// Matches reports whether ls satisfies every requirement.
func (sel Selector) Matches(ls Labels) bool {
	for _, r := range sel {
		v, ok := ls[r.Key]
		if !ok || (v == r.Value) == r.Not {
			return false
		}
	}
	return true
}

// PromQL is the selector as PromQL label matchers, without braces. Keys
// and values were checked (no quote or backslash can appear).
func (sel Selector) PromQL() string {
	var parts []string
	for _, r := range sel {
		op := "="
		if r.Not {
			// PromQL's != matches a series without the label too; a host
			// that does not say the key is not selected here either.
			parts = append(parts, fmt.Sprintf("%s!=%q", r.Key, ""))
			op = "!="
		}
		parts = append(parts, fmt.Sprintf("%s%s%q", r.Key, op, r.Value))
	}
	return strings.Join(parts, ",")
}

func (sel Selector) String() string {
	var parts []string
	for _, r := range sel {
		op := "="
		if r.Not {
			op = "!="
		}
		parts = append(parts, r.Key+op+r.Value)
	}
	return strings.Join(parts, ",")
}
