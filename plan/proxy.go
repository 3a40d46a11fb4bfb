package plan

import (
	"bytes"
	"context"
	"fmt"
	"path"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/proxy"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// The reverse proxy of the start-first containers (pkg/proxy) is a unit
// of syslet's own, syslet-proxy.service in /etc/systemd/system, with its
// configuration in /etc/syslet/proxy: planned here from what render made
// of the specs (render.Output.Proxy) against what the host has. It is
// never restarted for an app: a configuration changed (a start-first
// container added, removed or moved to another address) is a reload in
// step 8, which HAProxy makes without refusing a connection, and so is
// its own upgrade (the HAProxy it runs is not the one installed now:
// the reload re-executes the installed binary). The last start-first
// container gone, it is stopped in step 2 and its files pruned in step 5.

// ProxyReader reads what the host has of the proxy: its unit,
// configuration and saved server state (by path, for Observed.Files),
// and what runs it (ProxyFacts).
type ProxyReader interface {
	ReadProxy(ctx context.Context) (map[string]host.File, ProxyFacts, error)
}

// ProxyFacts are what the host says of the proxy beyond its files.
type ProxyFacts struct {
	// Installed: HAProxy is installed where the unit runs it from.
	Installed bool `json:"installed"`
	// Upgraded: the HAProxy the proxy's service runs is not the binary
	// installed now (a package upgrade replaced it since it started).
	Upgraded bool `json:"upgraded,omitempty"`
}

// proxyKind is what the proxy's unit change says it is.
const proxyKind spec.Kind = "proxy"

// proxy plans the proxy's unit and configuration; ok is false when the
// host has none and the specs need none.
func (in *inputs) proxy() (unitPlan, bool) {
	want := in.out.Proxy
	unitF, hasUnit := in.obs.Files[layout.ProxyUnit]
	cfgF, hasCfg := in.obs.Files[layout.ProxyConfig]
	_, hasState := in.obs.Files[layout.ProxyState]
	if want == nil && !hasUnit && !hasCfg && !hasState {
		return unitPlan{}, false
	}
	st := in.state(layout.ProxyService, nil)
	if !in.obs.UnitsKnown && hasUnit {
		st.LoadState, st.ActiveState = "loaded", "active"
	}
	up := unitPlan{change: UnitChange{FileName: layout.ProxyService, Path: layout.ProxyUnit, Service: layout.ProxyService, Kind: proxyKind,
		Effect: EffectNone, Before: beforeState(st), After: beforeState(st), needReload: st.NeedDaemonReload}}
	uc := &up.change
	if hasUnit && !ours(unitF) {
		up.refusals = append(up.refusals, Refusal{Unit: layout.ProxyService, Message: fmt.Sprintf(
			"%s exists without syslet's [X-Syslet] marker: it is not syslet's, and syslet will not overwrite or remove it (rename it; syslet runs its own proxy under this name)", layout.ProxyUnit)})
		uc.Effect = EffectIgnore
		return up, true
	}
	if want == nil {
		uc.Effect, uc.After = EffectRemove, "removed"
		uc.Reasons = []string{"no container is start-first any more"}
		if running(st) || st.Failed() {
			up.add(Action{Op: OpStop, Target: layout.ProxyService, Unit: layout.ProxyService, Reason: "no container is start-first any more"}, 0)
		}
		if hasUnit {
			up.add(Action{Op: OpRemoveUnit, Target: layout.ProxyUnit, Unit: layout.ProxyService, Payload: &Payload{Root: path.Dir(layout.ProxyUnit)}, Reason: "no container is start-first any more"}, 0)
		}
		// Their directories go with them when they are left empty.
		for _, p := range []string{layout.ProxyConfig, layout.ProxyState} {
			if _, ok := in.obs.Files[p]; ok {
				up.add(Action{Op: OpRemoveFile, Target: p, Unit: layout.ProxyService, Payload: &Payload{Root: path.Dir(path.Dir(p))}, Reason: "no container is start-first any more"}, 0)
			}
		}
		return up, true
	}
	// Without a running system (a diff against a directory) whether
	// HAProxy is installed is not known, and not refused.
	if !in.obs.Proxy.Installed && in.obs.UnitsKnown {
		up.refusals = append(up.refusals, Refusal{Unit: layout.ProxyService, Message: fmt.Sprintf(
			"start-first containers run behind HAProxy, which is not installed (%s is missing): install it first (apt install haproxy); syslet runs it as %s, never as Debian's haproxy.service", layout.ProxyBinary, layout.ProxyService)})
	}
	uc.After = "active"
	var why []string
	if !hasUnit || !bytes.Equal(unitF.Data, want.Unit) {
		uc.Write = true
		reason := "new unit"
		if hasUnit {
			reason = "unit changed"
			why = append(why, "its unit changed (what it takes from it applies at its next start)")
		}
		up.add(Action{Op: OpWriteUnit, Target: layout.ProxyUnit, Unit: layout.ProxyService, Payload: &Payload{Content: want.Unit, Mode: 0o644}, Reason: reason}, 0)
	}
	if !hasCfg || !cfgF.Holds(want.Config) || cfgF.Link != "" {
		reason := "new configuration"
		if hasCfg {
			reason = "the start-first containers changed"
			why = append(why, "its configuration changed: "+sitesSaid(want.Sites))
		}
		up.files = append(up.files, FileChange{Path: layout.ProxyConfig, Op: map[bool]string{true: "~", false: "+"}[hasCfg], Kind: render.ProxyConfig, Owner: layout.ProxyService, NewMode: 0o644})
		up.add(Action{Op: OpWriteFile, Target: layout.ProxyConfig, Unit: layout.ProxyService, Payload: &Payload{Content: want.Config, Mode: 0o644}, Reason: reason}, 0)
	}
	if in.obs.Proxy.Upgraded {
		why = append(why, "the HAProxy it runs is not the one installed now (upgraded): a reload runs the new one")
	}
	switch {
	case !running(st):
		uc.Effect = EffectStart
		if !hasUnit {
			uc.Effect = EffectCreate
			uc.Reasons = append(uc.Reasons, "a container is start-first: "+sitesSaid(want.Sites))
		} else {
			uc.Reasons = append(uc.Reasons, "not running ("+st.ActiveState+")")
		}
		up.add(Action{Op: OpStart, Target: layout.ProxyService, Unit: layout.ProxyService, Reason: "start-first containers switch through it"}, 0)
	case len(why) > 0:
		uc.Effect = EffectReload
		uc.Reasons = append(uc.Reasons, why...)
		up.add(Action{Op: OpReload, Target: layout.ProxyService, Unit: layout.ProxyService, Reason: "hitless: the listeners pass to the new worker"}, 0)
	}
	return up, true
}

// ours reports whether the proxy unit on the host carries syslet's marker.
func ours(f host.File) bool {
	uf, err := unit.Parse(f.Data)
	if err != nil || f.Link != "" {
		return false
	}
	v, _ := uf.Last(unit.Syslet, proxy.MarkerKey)
	return v != ""
}

// sitesSaid names the sites for a reason: "web on 0.0.0.0:80, db on
// 127.0.0.1:5432".
func sitesSaid(sites []proxy.Site) string {
	var b bytes.Buffer
	for i, s := range sites {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.Name + " on " + s.Listen)
	}
	return b.String()
}
