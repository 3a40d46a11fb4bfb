package layout

import "testing"

func TestService(t *testing.T) {
	for in, want := range map[string]string{
		"web.container": "web.service",
		"data.volume":   "data-volume.service",
		"net.network":   "net-network.service",
		"app.build":     "app-build.service",
		"x.pod":         "x-pod.service",
	} {
		if got := Service(in); got != want {
			t.Errorf("Service(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		ok   bool
	}{{VersionName(3), 3, true}, {"..v0", 0, false}, {"..data", 0, false}, {"3", 0, false}, {"..vx", 0, false}} {
		if n, ok := Version(tc.name); n != tc.n || ok != tc.ok {
			t.Errorf("Version(%q) = %d, %v", tc.name, n, ok)
		}
	}
}

func TestResolve(t *testing.T) {
	links := map[string]string{
		"/c/d/app.conf": FileLink("app.conf"),
		"/c/d/..data":   VersionName(2),
	}
	readlink := func(p string) (string, bool) { t, ok := links[p]; return t, ok }
	if got := Resolve(readlink, "/c/d", links["/c/d/app.conf"], 8); got != "/c/d/..v2/app.conf" {
		t.Errorf("Resolve = %q", got)
	}
}
