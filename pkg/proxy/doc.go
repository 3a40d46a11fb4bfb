// Package proxy is the reverse proxy syslet manages for its start-first
// containers, as values: which containers sit behind it (Site: a
// frontend on the container's public address and a backend of its two
// slots, NAME-blue and NAME-green, each on a loopback port of its own),
// the HAProxy configuration and the systemd unit that run it
// (/etc/syslet/proxy/haproxy.cfg, syslet-proxy.service), and the server
// state file HAProxy reads at every start and reload, which says which
// slot of each site is live. It holds no I/O: render and plan build the
// files from it, and the runtime API client (pkg/host/proxy) switches
// the live slot of a running HAProxy and saves that file.
//
// Why HAProxy, and why so: a switch is two runtime API calls (ready the
// new slot, drain the old one), not a reload; a reload (a site added,
// removed or changed) is hitless (master-worker, the listeners handed
// over); both slots are declared disabled in the configuration, so the
// configuration never says which one is live and does not change when a
// switch happens, and the saved server state enables the live one at
// every start, reload or reboot (docs/explanation/zero-downtime.md).
//
// Layer: ground. It imports only pkg/layout.
package proxy
