package spec_test

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/spec"
)

// A probe with only its way of asking gets every default; what is written
// is read as written.
func TestProbeDefaults(t *testing.T) {
	specs := decodeOK(t, container("web", `"PublishPort": "8080:80"`, `"probe": {"http": {"port": 80}}`)+
		container("db", "", `"probe": {"tcp": {"port": 5432}, "interval": "500ms", "timeout": "1s", "successes": 2, "failures": 5, "deadline": "1m"}`)+
		container("app", "", `"probe": {"exec": ["/app", "check", "--quick"]}`)+
		container("api", "", `"probe": {"http": {"port": 8080, "path": "/up?full=1", "status": 204, "body": "ready", "host": "api.example.com"}}`))
	got := map[string]string{}
	for _, s := range specs {
		got[s.Name] = s.Probe.Marker()
	}
	want := map[string]string{
		"web": `{"http":{"port":80,"path":"/","status":"200-399"},"interval":"1s","timeout":"2s","successes":1,"failures":3,"deadline":"30s"}`,
		"db":  `{"tcp":{"port":5432},"interval":"500ms","timeout":"1s","successes":2,"failures":5,"deadline":"1m0s"}`,
		"app": `{"exec":["/app","check","--quick"],"interval":"1s","timeout":"2s","successes":1,"failures":3,"deadline":"30s"}`,
		"api": `{"http":{"port":8080,"path":"/up?full=1","status":"204","body":"ready","host":"api.example.com"},"interval":"1s","timeout":"2s","successes":1,"failures":3,"deadline":"30s"}`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: marker\n %s\nwant\n %s", name, got[name], w)
		}
		p, err := probe.Parse(got[name])
		if err != nil || p.Marker() != w {
			t.Errorf("%s: the marker does not read back: %v", name, err)
		}
	}
	if s := specs[0].Probe.String(); s != "GET :80/ → 200-399 every 1s" {
		t.Errorf("web's probe reads %q", s)
	}
	if s := specs[1].Probe.String(); s != "TCP :5432 → connects every 500ms, ready after 2 in a row, within 1m0s" {
		t.Errorf("db's probe reads %q", s)
	}
}

// Every wrong probe is an error at its own path, naming what to do.
func TestProbeRefused(t *testing.T) {
	for _, tc := range []struct {
		name, keys, fields string
		path, rule, msg    string
	}{
		{"host side of a published port", `"PublishPort": "127.0.0.1:8080:80"`, `"probe": {"http": {"port": 8080}}`,
			"[0].probe.http.port", spec.RuleProbePort, "port 8080 is the host side of PublishPort=127.0.0.1:8080:80 ([0].unit.Container.PublishPort): a probe names the container's port, and syslet finds where it is published; use 80"},
		{"host side of a published range", `"PublishPort": ["9000-9001:80-81/tcp"]`, `"probe": {"tcp": {"port": 9001}}`,
			"[0].probe.tcp.port", spec.RuleProbePort, "use 81"},
		{"no way to ask", "", `"probe": {"interval": "1s"}`, "[0].probe", spec.RuleProbe, "needs one of http, tcp or exec"},
		{"two ways to ask", "", `"probe": {"http": {"port": 80}, "tcp": {"port": 80}}`, "[0].probe.tcp", spec.RuleProbe, "both http and tcp"},
		{"unknown field", "", `"probe": {"tcp": {"port": 80}, "retries": 3}`, "[0].probe.retries", spec.RuleUnknownField, `unknown field "retries" in probe`},
		{"misspelled field", "", `"probe": {"tcp": {"port": 80}, "intervall": "2s"}`, "[0].probe.intervall", spec.RuleMisspelledField, "did you mean interval?"},
		{"unknown http field", "", `"probe": {"http": {"port": 80, "method": "HEAD"}}`, "[0].probe.http.method", spec.RuleUnknownField, `unknown field "method" in http`},
		{"empty exec", "", `"probe": {"exec": []}`, "[0].probe.exec", spec.RuleProbe, "exec must name a command"},
		{"exec as a shell line", "", `"probe": {"exec": ["pg_isready -q"]}`, "[0].probe.exec[0]", spec.RuleProbe, `no shell splits it; write each argument as an item (["pg_isready", "-q"])`},
		{"deadline under the interval", "", `"probe": {"tcp": {"port": 80}, "interval": "10s", "deadline": "5s"}`, "[0].probe.deadline", spec.RuleProbe, "deadline 5s is shorter than the interval 10s"},
		{"port missing", "", `"probe": {"tcp": {}}`, "[0].probe.tcp.port", spec.RuleRequired, "port is required"},
		{"port out of range", "", `"probe": {"tcp": {"port": 70000}}`, "[0].probe.tcp.port", spec.RuleProbe, "not a port number"},
		{"port as a string", "", `"probe": {"tcp": {"port": "80"}}`, "[0].probe.tcp.port", spec.RuleFieldType, "port must be a number"},
		{"relative path", "", `"probe": {"http": {"port": 80, "path": "up"}}`, "[0].probe.http.path", spec.RuleProbe, `must start with "/"`},
		{"path with a space", "", `"probe": {"http": {"port": 80, "path": "/a b"}}`, "[0].probe.http.path", spec.RuleProbe, "whitespace"},
		{"status out of range", "", `"probe": {"http": {"port": 80, "status": "200-700"}}`, "[0].probe.http.status", spec.RuleProbe, "between 100 and 599"},
		{"status backwards", "", `"probe": {"http": {"port": 80, "status": "399-200"}}`, "[0].probe.http.status", spec.RuleProbe, "not an HTTP status"},
		{"bad duration", "", `"probe": {"tcp": {"port": 80}, "timeout": "2"}`, "[0].probe.timeout", spec.RuleProbe, `timeout "2" is not a duration`},
		{"too short an interval", "", `"probe": {"tcp": {"port": 80}, "interval": "10ms"}`, "[0].probe.interval", spec.RuleProbe, "shorter than 100ms"},
		{"zero successes", "", `"probe": {"tcp": {"port": 80}, "successes": 0}`, "[0].probe.successes", spec.RuleProbe, "from 1 to 100"},
		{"bad host", "", `"probe": {"http": {"port": 80, "host": "http://x/"}}`, "[0].probe.http.host", spec.RuleProbe, "not a host name"},
		{"not an object", "", `"probe": "GET /up"`, "[0].probe", spec.RuleFieldType, "probe must be an object"},
		{"oneshot", "", `"desiredState": "oneshot", "probe": {"tcp": {"port": 80}}`, "[0].probe", spec.RuleStateConflict, "no service to probe"},
	} {
		specs, rep := decode(t, container("web", tc.keys, tc.fields))
		found := false
		for _, f := range rep.Findings {
			if f.Path == tc.path && f.Rule == tc.rule && strings.Contains(f.Message, tc.msg) && f.Source == "in.json" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want %s %s %q, got:\n%s", tc.name, tc.path, tc.rule, tc.msg, rep.String())
		}
		if len(specs) == 1 && specs[0].Probe != nil {
			t.Errorf("%s: a refused probe was kept: %s", tc.name, specs[0].Probe.Marker())
		}
	}
}

// A probe on the container side of a published port, on a port the spec
// does not publish (reached on its network or in its namespace), or with
// host networking passes; so does one whose port a drop-in publishes.
func TestProbePortAccepted(t *testing.T) {
	decodeOK(t, container("a", `"PublishPort": ["8080:80", "127.0.0.1::443"]`, `"probe": {"http": {"port": 443}}`)+
		container("b", `"PublishPort": "8080:80"`, `"probe": {"tcp": {"port": 9090}}`)+
		container("c", `"Network": "host", "PublishPort": "8080:80"`, `"probe": {"tcp": {"port": 8080}}`)+
		container("d", `"PublishPort": "[::1]:8080:8080"`, `"probe": {"tcp": {"port": 8080}}`))
	_, rep := decode(t, container("e", "", `"probe": {"http": {"port": 8080}}, "dropIns": {"port.conf": {"Container": {"PublishPort": "8080:80"}}}`))
	if !strings.Contains(rep.String(), "use 80") {
		t.Errorf("a drop-in's PublishPort= is not checked: %s", rep.String())
	}
}

// A probe is a container's field: on a volume it is an unknown field.
func TestProbeOnlyOnContainers(t *testing.T) {
	_, rep := decode(t, `{"apiVersion": "v1", "type": "volume", "name": "v", "unit": {}, "probe": {"tcp": {"port": 80}}}`)
	if !strings.Contains(rep.String(), `unknown field "probe" for a volume spec`) {
		t.Errorf("findings: %s", rep.String())
	}
}

// The schema agrees with validate on probes: what validate accepts it
// accepts, and what it refuses for the probe's shape it refuses.
func TestSchemaProbe(t *testing.T) {
	sch := compileSchema(t)
	for _, tt := range []struct {
		fields string
		valid  bool
	}{
		{`"probe": {"http": {"port": 80}}`, true},
		{`"probe": {"http": {"port": 80, "path": "/up?x=1", "status": "200-299", "body": "ok", "host": "a.example:8080"}, "interval": "500ms", "timeout": "1s", "successes": 2, "failures": 5, "deadline": "1m30s"}`, true},
		{`"probe": {"http": {"port": 80, "status": 204}}`, true},
		{`"probe": {"tcp": {"port": 5432}}`, true},
		{`"probe": {"exec": ["/bin/check", "--quick"]}`, true},
		{`"probe": {}`, false},
		{`"probe": {"http": {"port": 80}, "tcp": {"port": 80}}`, false},
		{`"probe": {"tcp": {"port": 80}, "retries": 1}`, false},
		{`"probe": {"tcp": {}}`, false},
		{`"probe": {"tcp": {"port": "80"}}`, false},
		{`"probe": {"tcp": {"port": 0}}`, false},
		{`"probe": {"exec": []}`, false},
		{`"probe": {"exec": [""]}`, false},
		{`"probe": {"http": {"port": 80, "path": "up"}}`, false},
		{`"probe": {"tcp": {"port": 80}, "interval": 1}`, false},
		{`"probe": {"tcp": {"port": 80}, "timeout": "2"}`, false},
		{`"probe": {"tcp": {"port": 80}, "successes": 0}`, false},
		{`"probe": "GET /up"`, false},
	} {
		data := container("web", "", tt.fields)
		_, rep := spec.Load([]spec.Source{{Name: "p.json", Data: []byte(data)}})
		err := schemaAccepts(sch, []byte(data))
		if tt.valid && (rep.HasErrors() || err != nil) {
			t.Errorf("%s: want valid; validate:\n%s schema: %v", tt.fields, rep.String(), err)
		}
		if !tt.valid && (!rep.HasErrors() || err == nil) {
			t.Errorf("%s: want refused by both; validate:\n%s schema: %v", tt.fields, rep.String(), err)
		}
	}
}
