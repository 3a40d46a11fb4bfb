package layout

import "testing"

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

// The usual link resolves without path joins; any other shape, or a link
// further on, goes the long way and must land where it always did.
func TestResolveOtherShapes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links map[string]string
		link  string
		want  string
	}{
		{"version dir is a link", map[string]string{"/c/d/..data": "..v2", "/c/d/..v2": "..v3"}, "..data/a", "/c/d/..v3/a"},
		{"version file is a link", map[string]string{"/c/d/..data": "..v2", "/c/d/..v2/a": "../b"}, "..data/a", "/c/d/b"},
		{"data names the parent", map[string]string{"/c/d/..data": ".."}, "..data/a", "/c/a"},
		{"data is absolute (joined below the dir, as ever)", map[string]string{"/c/d/..data": "/x/v1"}, "..data/a", "/c/d/x/v1/a"},
		{"nested name (only the parent is followed)", map[string]string{"/c/d/..data": "..v1"}, "..data/sub/a", "/c/d/..data/sub/a"},
		{"no data link", map[string]string{}, "..data/a", "/c/d/..data/a"},
	} {
		readlink := func(p string) (string, bool) { t, ok := tc.links[p]; return t, ok }
		if got := Resolve(readlink, "/c/d", tc.link, 8); got != tc.want {
			t.Errorf("%s: Resolve = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLeftover(t *testing.T) {
	for name, want := range map[string]bool{
		TempPrefix + "0123456789abcdef":    true,
		BackupPrefix + "0123456789abcdef":  true,
		DirTempPrefix + "0123456789abcdef": true,
		".syslet-0123456789abcdef":         true, // what earlier versions left
		TempPrefix + "0123456789abcde":     false,
		TempPrefix + "0123456789abcdeF":    false,
		".syslet-tmp-notes.txt":            false, // a user's file
		"index.html":                       false,
		"..data":                           false,
		VersionName(2):                     false,
	} {
		if got := Leftover(name); got != want {
			t.Errorf("Leftover(%q) = %v, want %v", name, got, want)
		}
	}
}
