package unit

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{name: "plain", in: "[Unit]\nDescription=x\n\n[Container]\nImage=a\nVolume=b:/c\nVolume=d:/e\n",
			want: "[Unit]\nDescription=x\n\n[Container]\nImage=a\nVolume=b:/c\nVolume=d:/e\n"},
		{name: "comments, blanks, spaces, CRLF", in: "# top\r\n[Unit]\r\n; note\r\n  Description = x y  \r\n",
			want: "[Unit]\nDescription=x y\n"},
		{name: "continuation joined with a space, comment inside skipped", in: "[Container]\nExec=sh -c \\\n# c\n  'echo hi'\nImage=a\n",
			want: "[Container]\nExec=sh -c    'echo hi'\nImage=a\n"},
		{name: "repeated section merges", in: "[A]\nk=1\n[B]\nk=2\n[A]\nk=3\n", want: "[A]\nk=1\nk=3\n\n[B]\nk=2\n"},
		{name: "value with =", in: "[Container]\nEnvironment=A=b\n", want: "[Container]\nEnvironment=A=b\n"},
		{name: "no final newline", in: "[A]\nk=v", want: "[A]\nk=v\n"},
		{name: "assignment before section", in: "k=v\n", err: "outside of a section"},
		{name: "bad header", in: "[A\nk=v\n", err: "malformed section header"},
		{name: "no equals", in: "[A]\nkv\n", err: "expected Key=Value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(f.Bytes()); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			// Serialising is a fixed point: parse(bytes(f)) == f.
			g, err := Parse(f.Bytes())
			if err != nil || !Equal(f, g) {
				t.Errorf("round trip changed the file: %v\n%s", err, g.Bytes())
			}
		})
	}
}

func TestBuildAndQuery(t *testing.T) {
	f := &File{}
	f.Add(Unit, KeyDescription, "web")
	f.Add(Container, KeyImage, "a")
	f.Add(Container, KeyVolume, "x:/x")
	f.Add(Container, KeyVolume, "y:/y")
	f.Add(Syslet, KeyRemovalAllowed, "true")
	if got := f.Lookup(Container, KeyVolume); strings.Join(got, ",") != "x:/x,y:/y" {
		t.Errorf("Lookup = %q", got)
	}
	if v, ok := f.Last(Container, KeyVolume); !ok || v != "y:/y" {
		t.Errorf("Last = %q %v", v, ok)
	}
	if _, ok := f.Last(Service, KeyRestart); ok {
		t.Error("Last of a missing key reported found")
	}
	g := f.Without(Syslet, Unit+"."+KeyDescription)
	if got := string(g.Bytes()); got != "[Container]\nImage=a\nVolume=x:/x\nVolume=y:/y\n" {
		t.Errorf("Without:\n%s", got)
	}
	if f.Section(Syslet) == nil || g.Section(Syslet) != nil || g.Section(Unit) != nil {
		t.Error("Without must drop the named section and sections it empties, and leave f alone")
	}
}

func TestKeySince(t *testing.T) {
	for _, tc := range []struct {
		section, key string
		want         Podman
		known        bool
	}{
		{Container, "Image", Podman{5, 4}, true},
		{Container, "Memory", Podman{5, 5}, true},
		{Container, "ReloadSignal", Podman{5, 5}, true},
		{Container, "AppArmor", Podman{5, 8}, true},
		{Container, "Bogus", Podman{}, false},
		{Network, "InterfaceName", Podman{5, 6}, true},
		{Volume, "UID", Podman{6, 0}, true},
		{Container, "ImageVolume", Podman{6, 1}, true},
		{Volume, "User", Podman{5, 4}, true},
		{Service, "Anything", OldestPodman, true},
	} {
		got, ok := KeySince(tc.section, tc.key)
		if ok != tc.known || (ok && got != tc.want) {
			t.Errorf("KeySince(%s, %s) = %v %v, want %v %v", tc.section, tc.key, got, ok, tc.want, tc.known)
		}
	}
	if v, ok := KeysSince[Volume]["UID"]; !ok || !(Podman{5, 8}).Less(v) || (Podman{5, 8}).Less(KeysSince[Volume]["User"]) {
		t.Errorf("KeysSince[Volume]: UID since %v, User since %v", v, KeysSince[Volume]["User"])
	}
}

func TestParsePodman(t *testing.T) {
	for in, want := range map[string]Podman{"5.4": {5, 4}, "5.4.2": {5, 4}, "v5.8": {5, 8}, "5.5.0-rc1": {5, 5}, "6.0.0-dev": {6, 0}, "5.10.1\n": {5, 10}} {
		if got, err := ParsePodman(in); err != nil || got != want {
			t.Errorf("ParsePodman(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "5", "five.4", "5.4.2.1", "5.-1"} {
		if _, err := ParsePodman(in); err == nil {
			t.Errorf("ParsePodman(%q) accepted", in)
		}
	}
	if !(Podman{5, 4}).Less(Podman{5, 10}) || (Podman{6, 0}).Less(Podman{5, 9}) || OldestPodman.String() != "5.4" {
		t.Error("Less / String")
	}
}

func TestFeatures(t *testing.T) {
	match := func(what, value string) bool {
		for _, f := range Features {
			if strings.Contains(f.What, what) {
				return f.Matches(value)
			}
		}
		t.Fatalf("no feature %q", what)
		return false
	}
	for _, tc := range []struct {
		what, value string
		want        bool
	}{
		{"dependency", "db.container", true},
		{"dependency", "network-online.target data.volume", true},
		{"dependency", "network-online.target", false},
		{"dependency", ".container", false},
		{"type=", "source=data.volume,destination=/data", true},
		{"type=", "type=volume,source=data.volume,destination=/data", false},
		{"anonymous", "type=volume,destination=/data", true},
		{"anonymous", "destination=/data", true},
		{"anonymous", "type=volume,src=data.volume,dst=/data", false},
		{"anonymous", "type=bind,destination=/data", false},
		{"anonymous", "type=tmpfs,destination=/tmp", false},
		{"without Device", "size=1m", true},
		{"without Device", " ", false},
		{"Environment", "HOME_TZ", true},
		{"Environment", `A=1 "B=two words" C='x y'`, false},
		{"Environment", `"GREETING=hello world"`, false},
		{"Environment", `A=1 B`, true},
		{"Environment", `EMPTY=`, false},
	} {
		if got := match(tc.what, tc.value); got != tc.want {
			t.Errorf("%s %q: %v, want %v", tc.what, tc.value, got, tc.want)
		}
	}
}
