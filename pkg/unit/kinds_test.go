package unit

import (
	"slices"
	"testing"
)

func TestDefaultService(t *testing.T) {
	for in, want := range map[string]string{
		"web.container":  "web.service",
		"web@.container": "web@.service",
		"data.volume":    "data-volume.service",
		"data@.volume":   "data-volume@.service",
		"net.network":    "net-network.service",
		"app.build":      "app-build.service",
		"x.pod":          "x-pod.service",
		"x.kube":         "x.service",
		"x.image":        "x-image.service",
		"x.artifact":     "x-artifact.service",
	} {
		if got := DefaultService(in); got != want {
			t.Errorf("DefaultService(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKindOf(t *testing.T) {
	for in, want := range map[string]string{
		"web.container": "container", "web@1.container": "container", "a.b.volume": "volume",
		".container": "", "web.conf": "", "web": "", "web.container.d": "",
	} {
		got := ""
		if k := KindOf(in); k != nil {
			got = k.Name
		}
		if got != want {
			t.Errorf("KindOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestKindTable holds every row to the key table: its section is a
// quadlet section, and each key it names is one of that section's (or,
// for the keys others refer to it by, of some section).
func TestKindTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds {
		if seen[k.Name] || KindNamed(k.Name) != k || KindOf("x"+k.Ext()) != k {
			t.Errorf("%s: not found by its name and extension, or listed twice", k.Name)
		}
		seen[k.Name] = true
		if !QuadletSection(k.Section) {
			t.Errorf("%s: section %s is not in the key table", k.Name, k.Section)
		}
		for _, key := range append([]string{k.TypeKey, k.NameKey}, k.ObjectKeys...) {
			if _, ok := KeySince(k.Section, key); key != "" && !ok {
				t.Errorf("%s: [%s] %s is not in the key table", k.Name, k.Section, key)
			}
		}
		for _, key := range k.ReferencedBy {
			if !slices.ContainsFunc(Kinds, func(o *Kind) bool { _, ok := KeySince(o.Section, key); return ok }) {
				t.Errorf("%s: referenced by %s=, which no section has", k.Name, key)
			}
		}
		if k.Runs() != (k.OnChange == ChangeRestart) || (k.HoldsData && k.OnChange != ChangeRecreate) {
			t.Errorf("%s: OnChange %d, HoldsData %t do not fit together", k.Name, k.OnChange, k.HoldsData)
		}
	}
}

func TestObjectName(t *testing.T) {
	f := &File{}
	f.Add(Image, KeyImage, "docker.io/x:1")
	f.Add(Image, KeyImageTag, "")
	if got := KindNamed("image").ObjectName("x", f); got != "docker.io/x:1" {
		t.Errorf("image unit with an empty ImageTag= is known as %q", got)
	}
	f.Add(Image, KeyImageTag, "localhost/x:2")
	if got := KindNamed("image").ObjectName("x", f); got != "localhost/x:2" {
		t.Errorf("image unit with ImageTag= is known as %q", got)
	}
	if got := KindNamed("volume").ObjectName("data", &File{}); got != "systemd-data" {
		t.Errorf("volume without VolumeName= is known as %q", got)
	}
	if got := KindNamed("build").ObjectName("app", &File{}); got != "" {
		t.Errorf("build without ImageTag= is known as %q", got)
	}
	if got := KindNamed("volume").RestartCause("data.volume"); got != "volume data recreated" {
		t.Errorf("RestartCause = %q", got)
	}
}

func TestBaseAndBuilds(t *testing.T) {
	for in, want := range map[string]string{
		"web.container": "web", "web@1.container": "web@1", "app.build": "app", "a.b.volume": "a.b", "web.conf": "web.conf", ".build": ".build",
	} {
		if got := Base(in); got != want {
			t.Errorf("Base(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]bool{"app.build": true, "web.container": false, "x.image": false, "": false, ".build": false} {
		if got := Builds(in); got != want {
			t.Errorf("Builds(%q) = %t, want %t", in, got, want)
		}
	}
}

func TestNameChar(t *testing.T) {
	for _, r := range "aZ09-_.@\\" {
		if !NameChar(r) {
			t.Errorf("NameChar(%q) = false", r)
		}
	}
	for _, r := range ":/ =,;\"'\x00é" {
		if NameChar(r) {
			t.Errorf("NameChar(%q) = true", r)
		}
	}
}
