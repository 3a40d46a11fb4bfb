package render

import (
	"encoding/json"
	"strconv"

	"github.com/syslet/syslet/pkg/proxy"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// A start-first container (its spec has a proxy) renders as its two
// slots, NAME-blue.container and NAME-green.container: each a container
// unit of its own, as the spec would render under the slot's name (its
// podman container, its config files under its own config directory,
// its drop-ins), publishing the container's port on the slot's loopback
// port for the proxy and answering to the spec's name on its networks.
// Both are rendered; the plan picks the one the host needs (the live
// slot when nothing changed, else the other), so that rendering knows
// nothing of the host.

// slot is what a slot's unit adds to the container's.
type slot struct {
	site  string // the spec's name
	name  string // blue or green
	route proxy.Route
}

// slots renders the two slots of a start-first container.
func (o *Output) slots(s *spec.Spec) {
	for _, name := range proxy.Slots {
		cp := *s
		cp.Name = proxy.SlotName(s.Name, name)
		o.containerUnit(&cp, &slot{site: s.Name, name: name, route: *s.Proxy})
	}
}

// description is a container's default Description=.
func (sl *slot) description(s *spec.Spec) string {
	if sl == nil {
		return s.Name + " container"
	}
	return sl.site + " container (slot " + sl.name + ")"
}

// lines adds a slot's [Container] lines: the loopback port the proxy
// reaches it on, and the spec's name as its alias on its networks (so
// that other containers reach whichever slot runs by the name they know).
func (sl *slot) lines(u *Unit, b *builder, origin string) {
	if sl == nil {
		return
	}
	u.Slot = &Slot{Site: sl.site, Name: sl.name, Route: sl.route}
	b.add(unit.Container, unit.KeyPublishPort, "127.0.0.1:"+strconv.Itoa(sl.route.Ports.Of(sl.name))+":"+strconv.Itoa(sl.route.Port), origin+".proxy")
	b.add(unit.Container, unit.KeyNetworkAlias, sl.site, origin+".proxy")
}

// marker records the slot and its route in the unit's marker: what the
// plan reads back of an installed slot.
func (sl *slot) marker(b *builder) {
	if sl == nil {
		return
	}
	b.mark(unit.KeySlot, sl.name)
	r, _ := json.Marshal(sl.route) // plain values: it cannot fail
	b.mark(unit.KeyProxy, string(r))
}

// Slot is a start-first container's slot, on its unit.
type Slot struct {
	// Site is the container's spec name: the proxy's frontend and
	// backend, the slots' NetworkAlias=.
	Site string `json:"site"`
	// Name is the slot: blue or green.
	Name  string      `json:"slot"`
	Route proxy.Route `json:"route"`
}

// Other is the unit file of the other slot.
func (s *Slot) Other() string {
	return proxy.SlotName(s.Site, proxy.Other(s.Name)) + spec.Container.Ext()
}

// Key is the unit's name for what outlives a slot (a generation's
// image, a rollback's pin): the container's own unit file name, the one
// it would have without slots (web.container for web-blue.container).
func (u *Unit) Key() string {
	if u.Slot != nil {
		return u.Slot.Site + spec.Container.Ext()
	}
	return u.FileName
}

// proxyFiles renders the proxy's configuration and unit from the slots
// rendered: nil when no container is start-first.
func (o *Output) proxyFiles() {
	var sites []proxy.Site
	for _, u := range o.Units {
		if u.Slot != nil && u.Slot.Name == proxy.Blue {
			sites = append(sites, u.Slot.Route.Site(u.Slot.Site))
		}
	}
	if len(sites) == 0 {
		return
	}
	o.Proxy = &Proxy{Sites: sites, Config: proxy.Config(sites), Unit: proxy.Unit()}
}

// Proxy is what syslet runs for its start-first containers: the
// reverse proxy's sites, configuration and unit (pkg/proxy).
type Proxy struct {
	Sites  []proxy.Site `json:"sites"`
	Config []byte       `json:"-"`
	Unit   []byte       `json:"-"`
}
