package render_test

import (
	"slices"
	"testing"

	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/unit"
)

// TestEarlierSysletMeaning: what the earlier syslet overwrote or ignored
// renders as it rendered it, so the lines a host it deployed carries are
// the lines syslet wants (spec's tests show the warnings): the keys a
// desiredState sets replace the spec's, a Network map value is dropped, a
// config dir's trailing slash is not part of either side of its mount.
func TestEarlierSysletMeaning(t *testing.T) {
	set := load.Bytes("e.json", []byte(`[
		{"apiVersion": "v1", "type": "container", "name": "web",
		 "configDirs": [{"mountPath": "/etc/nginx/conf.d/", "files": [{"name": "a.conf", "content": "a"}]}],
		 "unit": {"Container": {"Image": "busybox", "Network": {"host": "ignored"}},
		          "Service": {"Restart": ["on-failure", "no"], "ExecReload": "/bin/true"},
		          "Install": {"WantedBy": ["multi-user.target", "graphical.target"], "Alias": "www.service"}}},
		{"apiVersion": "v1", "type": "container", "name": "job", "desiredState": "Oneshot",
		 "unit": {"Container": {"Image": "busybox"}, "Service": {"Type": "notify", "TimeoutStartSec": "5min"}, "Install": {"WantedBy": "timers.target"}}},
		{"apiVersion": "v1", "type": "container", "name": "idle", "desiredState": "stopped",
		 "unit": {"Container": {"Image": "busybox"}, "Service": {"Restart": "on-failure"}, "Install": {"WantedBy": "multi-user.target"}}}
	]`))
	if set.Report.HasErrors() {
		t.Fatalf("errors:\n%s", set.Report.String())
	}
	files := map[string]*unit.File{}
	for _, u := range set.Out.Units {
		files[u.Name] = u.Parsed()
	}
	tests := []struct {
		unit, section, key string
		want               []string
	}{
		{"web", unit.Service, unit.KeyRestart, []string{"always"}},
		{"web", unit.Install, unit.KeyWantedBy, []string{"multi-user.target default.target"}},
		{"web", unit.Install, "Alias", []string{"www.service"}},
		{"web", unit.Service, unit.KeyExecReload, []string{"/bin/true"}},
		{"web", unit.Container, "Network", []string{"host"}},
		{"web", unit.Container, unit.KeyVolume, []string{"/etc/containers/config/web/etc/nginx/conf.d:/etc/nginx/conf.d:ro,Z"}},
		{"job", unit.Service, unit.KeyType, []string{"oneshot"}},
		{"job", unit.Service, "TimeoutStartSec", []string{"5min"}},
		{"job", unit.Service, unit.KeyRestart, nil},
		{"job", unit.Install, unit.KeyWantedBy, []string{"timers.target"}},
		// The earlier syslet forced nothing for a stopped container.
		{"idle", unit.Service, unit.KeyRestart, []string{"on-failure"}},
		{"idle", unit.Install, unit.KeyWantedBy, []string{"multi-user.target"}},
	}
	for _, tt := range tests {
		if got := files[tt.unit].Lookup(tt.section, tt.key); !slices.Equal(got, tt.want) {
			t.Errorf("%s [%s] %s = %q, want %q", tt.unit, tt.section, tt.key, got, tt.want)
		}
	}
	if d := set.Out.Dirs; len(d) != 1 || d[0].Path != "/etc/containers/config/web/etc/nginx/conf.d" {
		t.Errorf("config dir %+v", d)
	}
}
