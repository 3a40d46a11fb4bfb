package fleetsim

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Handler serves each host's metrics at /<host>/metrics: its webhookd
// series, and a fixed copy of one Go process's runtime and process series
// (about as many as a real webhookd adds), so that Prometheus scrapes and
// stores about what a fleet of real webhookd gives it. A host that is
// down, or not started yet, answers 503: its scrape fails.
func Handler(hosts []*Host) (http.Handler, error) {
	runtime, err := runtimeFamilies()
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*Host, len(hosts))
	for _, h := range hosts {
		byName[h.Name] = h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/"), "/metrics")
		h := byName[name]
		if !ok || h == nil {
			http.NotFound(w, r)
			return
		}
		m := h.m.Load()
		if h.Down || m == nil {
			http.Error(w, name+" is down", http.StatusServiceUnavailable)
			return
		}
		promhttp.HandlerFor(prometheus.Gatherers{m.Reg, runtime}, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}), nil
}

// runtimeFamilies gathers this process's Go and process series once.
func runtimeFamilies() (prometheus.Gatherer, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	fams, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return fams, nil }), nil
}

// FileSD is Prometheus's file_sd list of the hosts' targets on addr: one
// target a host, its instance label the host's name.
func FileSD(hosts []*Host, addr string) []map[string]any {
	out := make([]map[string]any, len(hosts))
	for i, h := range hosts {
		out[i] = map[string]any{
			"targets": []string{addr},
			"labels":  map[string]string{"instance": h.Name, "__metrics_path__": "/" + h.Name + "/metrics"},
		}
	}
	return out
}

// SeedClone copies the clone template to dst: the pack files hard-linked
// (git never changes a pack; a fetch adds new ones), every other file
// copied (go-git rewrites refs and the index in place).
func SeedClone(template, dst string) error {
	return filepath.WalkDir(template, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(template, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case filepath.Base(filepath.Dir(p)) == "pack":
			return os.Link(p, to)
		case d.Type().IsRegular():
			return copyFile(p, to)
		}
		return fmt.Errorf("%s: not a file or directory", p)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
