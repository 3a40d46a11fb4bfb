package drift

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/probe"
)

func unit(name, kind string) notify.DriftUnit {
	return notify.DriftUnit{Unit: name, Kind: kind, Effect: kind}
}

func TestAppeared(t *testing.T) {
	web := unit("web.container", notify.DriftEdited)
	api := unit("api.container", notify.DriftStart)
	for _, tc := range []struct {
		name      string
		last, now []notify.DriftUnit
		want      int
	}{
		{"first drift", nil, []notify.DriftUnit{web}, 1},
		{"still there: old news", []notify.DriftUnit{web}, []notify.DriftUnit{web}, 0},
		{"another unit joins", []notify.DriftUnit{web}, []notify.DriftUnit{web, api}, 1},
		{"the same unit, another kind", []notify.DriftUnit{web}, []notify.DriftUnit{unit("web.container", notify.DriftChange)}, 1},
		{"gone", []notify.DriftUnit{web}, nil, 0},
	} {
		if got := Appeared(tc.last, tc.now); len(got) != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}

// TestStateRemembersBetweenChecks: a drift is news once; after it is
// gone, the same drift is news again; concurrent updates all land.
func TestStateRemembersBetweenChecks(t *testing.T) {
	root := t.TempDir()
	web := unit("web.container", notify.DriftEdited)
	check := func(now []notify.DriftUnit) (news []notify.DriftUnit) {
		t.Helper()
		if warn, err := Update(root, func(st *State) { news = st.Record(now, time.Now()) }); err != nil || warn != "" {
			t.Fatal(err, warn)
		}
		return news
	}
	if n := check([]notify.DriftUnit{web}); len(n) != 1 {
		t.Fatalf("first check: %v", n)
	}
	if n := check([]notify.DriftUnit{web}); len(n) != 0 {
		t.Fatalf("second check: %v", n)
	}
	check(nil)
	if n := check([]notify.DriftUnit{web}); len(n) != 1 {
		t.Fatalf("after the fix, again: %v", n)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Update(root, func(st *State) { st.Count(notify.Result{Target: "ops", Outcome: notify.OutcomeFailed}) })
		}()
	}
	wg.Wait()
	var got State
	Update(root, func(st *State) { got = *st })
	if got.Deliveries["ops"]["failed"] != 20 || len(got.Drift) != 1 || got.Since.IsZero() {
		t.Fatalf("state %+v", got)
	}
	fi, err := os.Stat(filepath.Join(root, layout.NotifyState))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi.Mode(), err)
	}
	// A garbled file is started afresh, with a warning.
	os.WriteFile(filepath.Join(root, layout.NotifyState), []byte("{"), 0o600)
	if warn, err := Update(root, func(*State) {}); err != nil || warn == "" {
		t.Fatalf("garbled: %q %v", warn, err)
	}
}

// TestTextfileParses: what node_exporter reads is Prometheus text that
// Prometheus's own parser reads back, value for value.
func TestTextfileParses(t *testing.T) {
	at := time.Unix(1764590000, 500e6)
	path := filepath.Join(t.TempDir(), "textfile", "syslet.prom")
	units := []notify.DriftUnit{unit("web.container", notify.DriftEdited), unit("api.container", notify.DriftStart), unit("db.container", notify.DriftStart),
		unit("cache.container", notify.DriftProbe)}
	probes := []host.Probed{
		{Service: "cache.service", Answer: &probe.Answer{OK: false, Took: 2 * time.Second}},
		{Service: "web.service", Answer: &probe.Answer{OK: true, Took: 1500 * time.Microsecond}},
		{Service: "api.service"}, // not up: not asked
	}
	if err := WriteTextfile(path, Check{At: at, OK: true, Units: units, Probes: probes, Deliveries: map[string]map[string]int{"ops": {"sent": 3, "failed": 1}}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	byKind := map[string]float64{}
	for _, m := range mfs["syslet_drift_units"].GetMetric() {
		byKind[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
	}
	if byKind["drift"] != 1 || byKind["start"] != 2 || byKind["change"] != 0 || byKind["stale-image"] != 0 || byKind["probe"] != 1 || len(byKind) != 5 {
		t.Errorf("units by kind %v\n%s", byKind, b)
	}
	// A probe per service that was asked: whether it passed, how long it took.
	byService := map[string]string{}
	for _, m := range mfs["syslet_probe_success"].GetMetric() {
		byService[m.GetLabel()[0].GetValue()] += fmt.Sprint(m.GetGauge().GetValue())
	}
	for _, m := range mfs["syslet_probe_duration_seconds"].GetMetric() {
		byService[m.GetLabel()[0].GetValue()] += fmt.Sprintf(" in %gs", m.GetGauge().GetValue())
	}
	if want := map[string]string{"cache.service": "0 in 2s", "web.service": "1 in 0.0015s"}; !maps.Equal(byService, want) {
		t.Errorf("probes %v, want %v\n%s", byService, want, b)
	}
	if v := mfs["syslet_drift_last_check_timestamp_seconds"].GetMetric()[0].GetGauge().GetValue(); v != 1764590000.5 {
		t.Errorf("last check %v", v)
	}
	if v := mfs["syslet_drift_check_success"].GetMetric()[0].GetGauge().GetValue(); v != 1 {
		t.Errorf("success %v", v)
	}
	counts := map[string]float64{}
	for _, m := range mfs["syslet_notifications_total"].GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		counts[l["target"]+"/"+l["result"]] = m.GetCounter().GetValue()
	}
	if counts["ops/sent"] != 3 || counts["ops/failed"] != 1 || counts["ops/dropped"] != 0 {
		t.Errorf("counters %v", counts)
	}

	// A check that could not plan: success 0 and no unit gauges.
	if err := WriteTextfile(path, Check{At: at}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	mfs, err = p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil || mfs["syslet_drift_check_success"].GetMetric()[0].GetGauge().GetValue() != 0 || mfs["syslet_drift_units"] != nil {
		t.Errorf("failed check: %v\n%s", err, b)
	}
}
