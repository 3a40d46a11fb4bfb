package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syslet/syslet/pkg/fleet"
)

// hostInfo is webhookd_host_info: per repository, this host's name and
// the labels its directory of that repository carries (hosts/<host>/labels:
// ring, role, site, …), so that a fleet's Prometheus picks hosts by them
// (syslet wait-status --prometheus --select ring=canary, a dashboard by
// site). Its label names come from the repository, not from the code, so
// it is an unchecked collector: it describes nothing up front.
type hostInfo struct {
	mu     sync.Mutex
	byRepo map[string]hostLabels
}

type hostLabels struct {
	host   string
	labels fleet.Labels
}

// hostInfoOpts names and explains webhookd_host_info (a literal, for the
// generated reference).
var hostInfoOpts = prometheus.GaugeOpts{
	Name: "webhookd_host_info",
	Help: "1 for this host in the repository: its name (host) and, as label pairs, the labels of its directory's labels file (key=value lines: ring, role, site).",
}

func (h *hostInfo) Describe(chan<- *prometheus.Desc) {}

func (h *hostInfo) Collect(ch chan<- prometheus.Metric) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for repo, hl := range h.byRepo {
		names, values := []string{"repo", "host"}, []string{repo, hl.host}
		for _, k := range hl.labels.Keys() {
			names, values = append(names, k), append(values, hl.labels[k])
		}
		desc := prometheus.NewDesc(hostInfoOpts.Name, hostInfoOpts.Help, names, nil)
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, values...)
	}
}

// SetLabels makes ls the repository's labels of this host (host: its
// name, as {hostname} is substituted).
func (m *Set) SetLabels(repo, host string, ls fleet.Labels) {
	m.hostInfo.mu.Lock()
	defer m.hostInfo.mu.Unlock()
	m.hostInfo.byRepo[repo] = hostLabels{host: host, labels: ls}
}

// ReadLabels reads the labels file of the host's directory dir of the
// repository and exports them; an unreadable file leaves the host
// without labels (its specs still deploy: labels only say which hosts a
// selector picks) and is returned.
func (m *Set) ReadLabels(repo, host, dir string) error {
	ls, err := fleet.ReadLabels(dir)
	if err != nil {
		ls = fleet.Labels{}
	}
	m.SetLabels(repo, host, ls)
	return err
}

// SetLastCommit makes commit the repository's one last-attempt series:
// with webhookd_last_deploy_result it says which commit failed or
// rolled back, so a ring's promotion does not read an older commit's
// failure as the new one's.
func (m *Set) SetLastCommit(repo, commit string) {
	m.LastCommit.DeletePartialMatch(prometheus.Labels{"repo": repo})
	m.LastCommit.WithLabelValues(repo, commit).Set(1)
}

// newFleet makes the series of the fleet: the host's labels and the
// commit of the last attempt.
func (m *Set) newFleet() {
	m.hostInfo = &hostInfo{byRepo: map[string]hostLabels{}}
	m.LastCommit = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "webhookd_last_deploy_commit_info",
		Help: "1 for the commit of the repository's last deploy attempt, whatever its result (one series per repository).",
	}, []string{"repo", "commit"})
	m.Reg.MustRegister(m.hostInfo, m.LastCommit)
}
