package spec

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/syslet/syslet/pkg/proxy"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// CheckSet runs the pre-render checks that need every spec at once: names
// are unique per type. (Checks that need rendered units, such as references
// and mount destinations, belong to render.Check.)
func CheckSet(specs []*Spec) report.Report {
	var rep report.Report
	type key struct {
		k    Kind
		name string
	}
	first := map[key]*Spec{}
	for _, s := range specs {
		if s.Name == "" || s.Kind == "" {
			continue
		}
		k := key{s.Kind, s.Name}
		if f, ok := first[k]; ok {
			rep.Errorf(s.Source, jsontree.Child(s.Path(), "name"), RuleDuplicateName, "%s %q is already defined in %s %s", s.Kind, s.Name, f.Source, f.Path())
			continue
		}
		first[k] = s
	}
	checkProxies(specs, &rep)
	return rep
}

// checkProxies refuses, across the set, what start-first containers
// cannot share (a public address, a slot's loopback port), what another
// container would take from them (a host port they use), and a container
// named as another's slot.
func checkProxies(specs []*Spec, rep *report.Report) {
	type use struct {
		s    *Spec
		host string // "" for every address
		at   string
		what string
	}
	ports := map[int][]use{}
	slots := map[string]*Spec{}
	for _, s := range specs {
		if s.Kind != Container || s.Proxy == nil {
			continue
		}
		r := s.Proxy
		at := jsontree.Child(s.Path(), "proxy")
		i := strings.LastIndexByte(r.Listen, ':')
		ports[listenPortOf(r.Listen)] = append(ports[listenPortOf(r.Listen)], use{s, wildcard(r.Listen[:i]), jsontree.Child(at, "listen"), "the proxy listens on " + r.Listen + " for container " + s.Name})
		for k, slot := range proxy.Slots {
			ports[r.Ports[k]] = append(ports[r.Ports[k]], use{s, "127.0.0.1", jsontree.Child(at, "slotPorts"), "slot " + proxy.SlotName(s.Name, slot) + " publishes 127.0.0.1:" + strconv.Itoa(r.Ports[k])})
			slots[proxy.SlotName(s.Name, slot)] = s
		}
	}
	if len(slots) == 0 {
		return
	}
	for _, s := range specs {
		if s.Kind != Container {
			continue
		}
		if owner := slots[s.Name]; owner != nil {
			rep.Errorf(s.Source, jsontree.Child(s.Path(), "name"), RuleProxy, "container %q is the name of a slot of start-first container %s (%s %s): rename one of them", s.Name, owner.Name, owner.Source, owner.Path())
		}
		if s.Proxy != nil {
			continue
		}
		for _, pv := range containerValues(s, unit.KeyPublishPort) {
			if p, ok := hostPort(pv.Text); ok && p != 0 {
				ports[p] = append(ports[p], use{s, wildcard(publishHost(pv.Text)), pv.Path, "container " + s.Name + " publishes PublishPort=" + pv.Text})
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(ports)) {
		us := ports[p]
		for i := 1; i < len(us); i++ {
			for _, earlier := range us[:i] {
				if us[i].host != "" && earlier.host != "" && us[i].host != earlier.host {
					continue // two addresses of their own
				}
				if us[i].s == earlier.s && strings.HasPrefix(us[i].what, "slot ") && strings.HasPrefix(earlier.what, "slot ") {
					continue // the spec's own two slots (refused when equal while decoding)
				}
				hint := ""
				if strings.HasPrefix(us[i].what, "slot ") || strings.HasPrefix(earlier.what, "slot ") {
					hint = "; name other loopback ports in proxy.slotPorts"
				}
				rep.Errorf(us[i].s.Source, us[i].at, RuleProxy, "port %d is taken twice: %s, and %s (%s %s)%s", p, us[i].what, earlier.what, earlier.s.Source, earlier.at, hint)
				break
			}
		}
	}
}

// wildcard is a listen or publish address as one host: "" for every
// address.
func wildcard(host string) string {
	switch strings.Trim(host, "[]") {
	case "", "0.0.0.0", "::":
		return ""
	}
	return strings.Trim(host, "[]")
}

// publishHost is the address of a PublishPort= value ("" when none).
func publishHost(v string) string {
	v = strings.Trim(v, `"`)
	if strings.HasPrefix(v, "[") {
		h, _, _ := strings.Cut(v, "]:")
		return h + "]"
	}
	if parts := strings.Split(v, ":"); len(parts) == 3 {
		return parts[0]
	}
	return ""
}
