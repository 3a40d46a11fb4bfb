package proxy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
)

// header opens both files syslet writes for the proxy.
const header = "# Written by syslet for its start-first containers; it is rewritten from the specs.\n" +
	"# See docs/explanation/zero-downtime.md.\n"

// Config is HAProxy's configuration for sites (in name order, whatever
// the order given): the same sites always give the same bytes.
//
// Both servers of every backend are declared disabled: the saved server
// state (load-server-state-from-file) enables the live one, so a switch
// never changes this file, and a start, a reload or a reboot keeps the
// live slot live. The runtime API socket is root's only, level admin,
// and hands the listeners to the next worker at a reload (expose-fd
// listeners): no connection is refused while it runs.
func Config(sites []Site) []byte {
	sites = slices.Clone(sites)
	slices.SortFunc(sites, func(a, b Site) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	b.WriteString(header)
	fmt.Fprintf(&b, `global
    stats socket %s mode 600 level admin expose-fd listeners
    stats timeout 1m
    pidfile %s
    server-state-file %s

defaults
    timeout connect 5s
    timeout client 1m
    timeout server 1m
    timeout http-request 30s
    timeout http-keep-alive 10s
    # A request whose connection to a slot fails is sent to the other
    # slot when it is ready (during a switch both may be).
    retries 3
    option redispatch
    load-server-state-from-file global
`, layout.ProxySocket, layout.ProxyPID, layout.ProxyState)
	for _, s := range sites {
		mode := s.Mode
		if mode == "" {
			mode = HTTP
		}
		fmt.Fprintf(&b, "\nfrontend %s\n    mode %s\n    bind %s\n", s.Name, mode, s.Listen)
		if mode == HTTP {
			b.WriteString("    option forwardfor\n")
		}
		fmt.Fprintf(&b, "    default_backend %s\n", s.Name)
		fmt.Fprintf(&b, "\nbackend %s\n    mode %s\n", s.Name, mode)
		for _, slot := range Slots {
			fmt.Fprintf(&b, "    server %s %s disabled\n", slot, s.Server(slot))
		}
	}
	return []byte(b.String())
}

// Unit is syslet-proxy.service: HAProxy in master-worker mode (-Ws) with
// systemd's notifications, its configuration checked before every start
// and reload, and a reload that is USR2 to the master (it re-executes the
// installed binary, so a reload also runs an upgraded HAProxy). Its
// [X-Syslet] marker says the file is syslet's (MarkerKey).
func Unit() []byte {
	check := fmt.Sprintf("%s -c -q -f %s", layout.ProxyBinary, layout.ProxyConfig)
	var b strings.Builder
	b.WriteString(header)
	fmt.Fprintf(&b, `[Unit]
Description=syslet's reverse proxy for start-first containers (HAProxy)
After=network-online.target
Wants=network-online.target

[Service]
Type=notify
ExecStartPre=%[1]s
ExecStart=%[2]s -Ws -f %[3]s
ExecReload=%[1]s
ExecReload=/bin/kill -USR2 $MAINPID
KillMode=mixed
Restart=always
SuccessExitStatus=143
RuntimeDirectory=syslet-proxy
RuntimeDirectoryMode=0700

[Install]
WantedBy=multi-user.target
`, check, layout.ProxyBinary, layout.ProxyConfig)
	b.WriteString("\n[X-Syslet]\n" + MarkerKey + "=haproxy\n")
	return []byte(b.String())
}

// MarkerKey is the key of the proxy unit's [X-Syslet] marker.
const MarkerKey = "Proxy"
