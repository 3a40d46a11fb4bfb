package metrics

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/syslet/syslet/pkg/drift"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/webhookd/config"
)

// The alert rules and the Grafana dashboard the package ships
// (pkg/release/packaging/monitoring) may name only series that syslet and
// webhookd export: a renamed metric must fail here, not silently empty a
// dashboard panel or leave an alert that never fires.

const monitoringDir = "../../pkg/release/packaging/monitoring"

// prometheusOwn are series Prometheus itself makes for every target.
var prometheusOwn = []string{"up"}

// exportedMetrics is every series name the code defines: webhookd's
// registry (all its collectors, whether or not a series exists yet) and
// the drift textfile syslet writes. A histogram's or summary's name also
// stands for its _bucket, _sum and _count series.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	add := func(n string) {
		names[n] = true
		if !strings.HasSuffix(n, "_total") {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[n+s] = true
			}
		}
	}
	m := New([]config.Repo{{Name: "r"}}, []string{"t"}, []string{"success"})
	descs := make(chan *prometheus.Desc)
	go func() { m.Reg.Describe(descs); close(descs) }()
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		if sm := fq.FindStringSubmatch(d.String()); sm != nil {
			add(sm[1])
		}
	}
	text, err := drift.Textfile(drift.Check{At: time.Unix(0, 0), OK: true,
		Units:      []notify.DriftUnit{{Unit: "a.service", Kind: notify.DriftEdited}},
		Probes:     []host.Probed{{Service: "a.service", Answer: &probe.Answer{OK: true}}},
		Deliveries: map[string]map[string]int{"t": {notify.OutcomeSent: 1}}})
	must(t, err)
	for _, l := range strings.Split(string(text), "\n") {
		if f := strings.Fields(l); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			add(f[2])
		}
	}
	for _, n := range prometheusOwn {
		names[n] = true
	}
	return names
}

var (
	promStrings  = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promVars     = regexp.MustCompile(`\$\{?\w+\}?`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
)

// metricNames returns the series names a PromQL expression selects: what
// is left once strings, label matchers, range and subquery brackets,
// grouping label lists and dashboard variables are taken out, less
// function names (an identifier followed by "("), keywords and the
// exponent or unit letters of a number.
func metricNames(expr string) []string {
	e := promStrings.ReplaceAllString(expr, `""`)
	e = promMatchers.ReplaceAllString(e, " ")
	e = promRanges.ReplaceAllString(e, " ")
	e = promGrouping.ReplaceAllString(e, " ")
	e = promVars.ReplaceAllString(e, " ")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(e, -1) {
		id := e[loc[0]:loc[1]]
		if loc[0] > 0 && strings.ContainsAny(e[loc[0]-1:loc[0]], "0123456789.") {
			continue // 1e3, 5m
		}
		if rest := strings.TrimLeft(e[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") || promKeywords[strings.ToLower(id)] {
			continue
		}
		out = append(out, id)
	}
	return out
}

// shippedQueries returns every PromQL expression of the shipped rules,
// their promtool tests and the dashboard, each with where it is.
func shippedQueries(t *testing.T) map[string]string {
	t.Helper()
	queries := map[string]string{}
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct{ Alert, Record, Expr string }
		}
	}
	readYAML(t, "syslet-alerts.yml", &rules)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			queries["syslet-alerts.yml: "+r.Alert+r.Record] += r.Expr + "\n"
		}
	}
	var tests struct {
		Tests []struct {
			Name        string
			InputSeries []struct{ Series string } `yaml:"input_series"`
		}
	}
	readYAML(t, "syslet-alerts.test.yml", &tests)
	for _, tc := range tests.Tests {
		for _, s := range tc.InputSeries {
			queries["syslet-alerts.test.yml: "+tc.Name] += s.Series + "\n"
		}
	}
	raw, err := os.ReadFile(filepath.Join(monitoringDir, "syslet-fleet.json"))
	must(t, err)
	var dash any
	must(t, json.Unmarshal(raw, &dash))
	labelValues := regexp.MustCompile(`label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)`)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "expr" {
					queries["syslet-fleet.json: "+path] += s + "\n"
				}
				if s, ok := x.(string); ok && (k == "query" || k == "definition") {
					for _, m := range labelValues.FindAllStringSubmatch(s, -1) {
						queries["syslet-fleet.json: "+path+"."+k] += m[1] + "\n"
					}
				}
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(path+"["+strconv.Itoa(i)+"]", x)
			}
		}
	}
	walk("", dash)
	return queries
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(monitoringDir, name))
	must(t, err)
	must(t, yaml.Unmarshal(raw, v))
}

// TestShippedQueriesNameExportedMetrics fails on a rule, a rule test or a
// dashboard query that names a series the code does not export.
func TestShippedQueriesNameExportedMetrics(t *testing.T) {
	known := exportedMetrics(t)
	queries := shippedQueries(t)
	if len(queries) < 10 {
		t.Fatalf("found only %d queries in %s: the files were not read as expected", len(queries), monitoringDir)
	}
	used := 0
	for where, q := range queries {
		for _, n := range metricNames(q) {
			used++
			if !known[n] {
				t.Errorf("%s: %q is not a metric syslet or webhookd exports (query: %s)", where, n, strings.TrimSpace(q))
			}
		}
	}
	if used == 0 {
		t.Fatal("no metric name found in any query")
	}
}

func TestMetricNamesOfPromQL(t *testing.T) {
	for expr, want := range map[string][]string{
		`histogram_quantile(0.9, sum by (le, instance) (rate(a_bucket{x=~"$instance"}[$__rate_interval])))`: {"a_bucket"},
		`(time() - b > 86400) and on (instance, repo) sum by (repo) (increase(c{result=~"f|r"}[1d])) > 0`:   {"b", "c"},
		`count(up{job="w"} == 1) or vector(0)`:                   {"up"},
		`label_replace(d, "dst", "$1", "src", "(.*)") offset 5m`: {"d"},
		`e * 1e3 + f:g[5m:1m]`:                                   {"e", "f:g"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%s) = %q, want %q", expr, got, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
