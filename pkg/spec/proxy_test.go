package spec_test

import (
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/proxy"
	"github.com/syslet/syslet/pkg/spec"
)

func TestProxyDefaults(t *testing.T) {
	specs := decodeOK(t, container("web", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 8080}`))
	r := specs[0].Proxy
	want := proxy.Route{Listen: ":80", Port: 8080, Mode: proxy.HTTP, Drain: proxy.Duration(30 * time.Second), Ports: proxy.DefaultPorts("web")}
	if r == nil || *r != want {
		t.Fatalf("route %+v, want %+v", r, want)
	}
	specs = decodeOK(t, container("db", `"Network": "db.network"`, `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": "[::1]:5432", "port": 5432, "mode": "tcp", "drain": "0s", "slotPorts": [30001, 30002]}`)+vol("x"))
	if r := specs[0].Proxy; r.Mode != proxy.TCP || r.Drain != 0 || r.Ports != (proxy.Ports{30001, 30002}) {
		t.Errorf("route %+v", r)
	}
}

// TestProxyRefusals: each refusal names the field, and the spec gets no
// route.
func TestProxyRefusals(t *testing.T) {
	for _, c := range []struct{ name, data, path, rule, words string }{
		{"no listen", container("web", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"port": 8080}`), "[0].proxy.listen", spec.RuleRequired, "listen is required"},
		{"a host name", container("web", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": "example.com:80", "port": 8080}`), "[0].proxy.listen", spec.RuleProxy, "not ADDRESS:PORT"},
		{"no port", container("web", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 0}`), "[0].proxy.port", spec.RuleProxy, "not a port number"},
		{"a mode", container("web", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80, "mode": "udp"}`), "[0].proxy.mode", spec.RuleEnum, "not http or tcp"},
		{"a drain", container("web", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80, "drain": "soon"}`), "[0].proxy.drain", spec.RuleProxy, "not a duration"},
		{"one port twice", container("web", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80, "slotPorts": [30000, 30000]}`), "[0].proxy.slotPorts[1]", spec.RuleProxy, "twice"},
		{"a misspelled field", container("web", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80, "drian": "1s"}`), "[0].proxy.drian", spec.RuleMisspelledField, "did you mean drain"},
		{"no probe", container("web", "", `"proxy": {"listen": ":80", "port": 80}`), "[0].proxy", spec.RuleProxy, "needs a probe"},
		{"a socket too", container("web", "", `"socket": {"Socket": {"ListenStream": "0.0.0.0:8081"}}, "probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80}`), "[0].proxy", spec.RuleProxy, "socket and proxy together"},
		{"host network", container("web", `"Network": "host"`, `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80}`), "[0].unit.Container.Network", spec.RuleProxy, "Network=host with proxy"},
		{"a pod", container("web", `"Pod": "p.pod"`, `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80}`), "[0].unit.Container.Pod", spec.RuleProxy, "Pod= with proxy"},
		{"stopped", container("web", "", `"desiredState": "stopped", "probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80}`), "[0].proxy", spec.RuleStateConflict, "desiredState must be running"},
		{"a template", container("web", "", `"instances": ["1"], "probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80}`), "[0].proxy", spec.RuleProxy, "template"},
		{"the listen port published", container("web", `"PublishPort": "80:8080"`, `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": "0.0.0.0:80", "port": 8080}`), "[0].unit.Container.PublishPort", spec.RuleProxyPort, "where the proxy listens"},
		{"a fixed host port", container("web", `"PublishPort": ["9090:9090", "9100"]`, `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 8080}`), "[0].unit.Container.PublishPort[0]", spec.RuleProxyPort, "both slots run at once"},
		{"two listen on one port", container("a", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80}`) + container("b", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": "127.0.0.1:80", "port": 80}`), "[1].proxy.listen", spec.RuleProxy, "port 80 is taken twice"},
		{"one slot port twice", container("a", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80, "slotPorts": [30000, 30001]}`) + container("b", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":81", "port": 80, "slotPorts": [30002, 30001]}`), "[1].proxy.slotPorts", spec.RuleProxy, "slotPorts"},
		{"another container publishes the listen port", container("a", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80}`) + container("b", `"PublishPort": "80:80"`, ""), "[1].unit.Container.PublishPort", spec.RuleProxy, "port 80 is taken twice"},
		{"a container named as a slot", container("a", "", `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": ":80", "port": 80}`) + container("a-green", "", ""), "[1].name", spec.RuleProxy, "a slot of start-first container a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			specs, rep := decode(t, c.data)
			found := false
			for _, f := range rep.Findings {
				if f.Path == c.path && f.Rule == c.rule && strings.Contains(f.Message, c.words) {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s at %s (%q), got:\n%s", c.rule, c.path, c.words, rep.String())
			}
			if len(specs) > 0 && specs[0].Proxy != nil && !strings.Contains(c.name, "container") && !strings.Contains(c.name, "two") && !strings.Contains(c.name, "twice") {
				t.Errorf("a refused proxy kept its route: %+v", specs[0].Proxy)
			}
		})
	}
	// Podman picking the host port, or another address of its own, is no
	// conflict.
	decodeOK(t, container("web", `"PublishPort": ["9100", "127.0.0.1::9200"]`, `"probe": {"tcp": {"port": 80}}, "proxy": {"listen": "10.0.0.2:81", "port": 8080}`)+
		container("other", `"PublishPort": "10.0.0.1:81:80"`, ""))
}
