package plan

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host"
)

// observed is a small host: a unit file, a config dir's link and version
// directory, a private config file, two units, a secret and two images.
func observed() *Observed {
	return &Observed{
		Files: map[string]host.File{
			"/etc/containers/systemd/web.container":       {Data: []byte("[Container]\nImage=web:1\n"), Mode: 0o644},
			"/etc/containers/config/web":                  {Mode: fs.ModeDir | 0o755},
			"/etc/containers/config/web/etc/web.d/..data": {Mode: fs.ModeSymlink | 0o777, Link: "..v1"},
			"/etc/containers/config/web/etc/db.conf":      {Data: []byte("password=hunter2\n"), Mode: 0o600},
		},
		Units: map[string]host.UnitState{
			"web.service": {Name: "web.service", LoadState: "loaded", ActiveState: "active", SubState: "running"},
			"db.service":  {Name: "db.service", LoadState: "loaded", ActiveState: "active", SubState: "running"},
		},
		Secrets:    map[string]host.Secret{"db-password": {Name: "db-password", ID: "0123456789abcdef01234", Labels: map[string]string{"syslet/hash": "aa"}}},
		Images:     map[string]bool{"web:1": true, "db:1": true},
		UnitsKnown: true, StoreKnown: true,
	}
}

func TestFingerprintHoldsNoContent(t *testing.T) {
	fp := observed().Fingerprint()
	if got := fp.Files["/etc/containers/config/web/etc/db.conf"]; got.Mode != "-rw-------" || !strings.HasPrefix(got.Digest, "sha256:") || strings.Contains(got.Digest, "hunter2") {
		t.Errorf("private file stamped %+v", got)
	}
	if got := fp.Files["/etc/containers/config/web/etc/web.d/..data"]; got.Link != "..v1" || got.Digest != "" || got.Mode != "Lrwxrwxrwx" {
		t.Errorf("link stamped %+v", got)
	}
	if got := fp.Files["/etc/containers/config/web"]; got.Mode != "drwxr-xr-x" || got.Digest != "" {
		t.Errorf("directory stamped %+v", got)
	}
	if got := observed().Fingerprint().Changes(fp, true); len(got) != 0 {
		t.Errorf("the same host differs from itself: %q", got)
	}
}

// Each kind of change is named, with what changed; changes come files
// first, then units, secrets, images, each by name.
func TestFingerprintChanges(t *testing.T) {
	for _, c := range []struct {
		name      string
		change    func(o *Observed)
		sameInput bool
		want      []string
	}{
		{"nothing", func(*Observed) {}, true, nil},
		{"unit file edited", func(o *Observed) {
			o.Files["/etc/containers/systemd/web.container"] = host.File{Data: []byte("[Container]\nImage=web:2\n"), Mode: 0o644}
		}, true, []string{"file /etc/containers/systemd/web.container: content changed ("}},
		{"mode changed", func(o *Observed) {
			f := o.Files["/etc/containers/config/web/etc/db.conf"]
			f.Mode = 0o644
			o.Files["/etc/containers/config/web/etc/db.conf"] = f
		}, true, []string{"file /etc/containers/config/web/etc/db.conf: mode -rw------- → -rw-r--r--"}},
		{"link retargeted", func(o *Observed) {
			o.Files["/etc/containers/config/web/etc/web.d/..data"] = host.File{Mode: fs.ModeSymlink | 0o777, Link: "..v2"}
		}, true, []string{"file /etc/containers/config/web/etc/web.d/..data: link ..v1 → ..v2"}},
		{"file added and removed", func(o *Observed) {
			delete(o.Files, "/etc/containers/config/web/etc/db.conf")
			o.Files["/etc/containers/systemd/hand.container"] = host.File{Data: []byte("x"), Mode: 0o644}
		}, true, []string{"file /etc/containers/config/web/etc/db.conf: removed", "file /etc/containers/systemd/hand.container: added (-rw-r--r--)"}},
		{"container stopped", func(o *Observed) {
			o.Units["db.service"] = host.UnitState{Name: "db.service", LoadState: "loaded", ActiveState: "inactive", SubState: "dead"}
		}, true, []string{"unit db.service: active/running → inactive/dead"}},
		{"unit needs a daemon-reload", func(o *Observed) {
			u := o.Units["web.service"]
			u.NeedDaemonReload = true
			o.Units["web.service"] = u
		}, true, []string{"unit web.service: its file changed since systemd loaded it (active/running)"}},
		{"secret replaced", func(o *Observed) {
			o.Secrets["db-password"] = host.Secret{Name: "db-password", ID: "fedcba9876543210fedcb", Labels: map[string]string{"syslet/hash": "aa"}}
		}, true, []string{"podman secret db-password: replaced (ID 0123456789ab → fedcba987654)"}},
		{"secret relabelled", func(o *Observed) {
			o.Secrets["db-password"] = host.Secret{Name: "db-password", ID: "0123456789abcdef01234"}
		}, true, []string{"podman secret db-password: labels syslet/hash=aa → (none)"}},
		{"secret removed, another created", func(o *Observed) {
			delete(o.Secrets, "db-password")
			o.Secrets["other"] = host.Secret{Name: "other", ID: "1"}
		}, true, []string{"podman secret db-password: removed", "podman secret other: created"}},
		{"image removed", func(o *Observed) { o.Images["db:1"] = false }, true, []string{"image db:1: removed from podman's image store"}},
		{"image pulled", func(o *Observed) { o.Images["new:1"] = true }, true, []string{"image new:1: now in podman's image store"}},
		{"unit no longer read", func(o *Observed) { delete(o.Units, "db.service") }, true, []string{"unit db.service: no longer read (was active/running)"}},
		{"other input: only what both read", func(o *Observed) {
			delete(o.Units, "db.service")
			o.Images["new:1"] = true
			delete(o.Secrets, "db-password")
			o.Units["web.service"] = host.UnitState{Name: "web.service", LoadState: "loaded", ActiveState: "failed", SubState: "failed"}
		}, false, []string{"unit web.service: active/running → failed/failed"}},
		{"systemd not read", func(o *Observed) { o.UnitsKnown = false }, true, []string{"what was read: systemd read, podman read when the plan was made; now systemd not read, podman read"}},
		{"in order", func(o *Observed) {
			o.Images["db:1"] = false
			o.Units["db.service"] = host.UnitState{Name: "db.service", LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}
			delete(o.Files, "/etc/containers/config/web")
		}, true, []string{"file /etc/containers/config/web: removed", "unit db.service: active/running → inactive/dead (not-found)", "image db:1: removed from podman's image store"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			was := observed().Fingerprint()
			o := observed()
			c.change(o)
			got := was.Changes(o.Fingerprint(), c.sameInput)
			if len(got) != len(c.want) {
				t.Fatalf("changes %q, want %q", got, c.want)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("change %d: %q, want %q", i, got[i], w)
				}
			}
			if slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "hunter2") }) {
				t.Errorf("a change shows a file's content: %q", got)
			}
		})
	}
}
