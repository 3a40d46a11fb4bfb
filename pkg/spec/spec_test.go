package spec_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
)

const img = `"Image": "docker.io/library/busybox:1.37"`

// sops is a minimal SOPS document: keys in clear, values ENC[...], and a
// sops: mapping, which is all the validator looks at.
const sops = `db-password: ENC[AES256_GCM,data:abc,iv:x,tag:y,type:str]\nsops:\n    age:\n        - recipient: age1xyz\n          enc: x\n    mac: ENC[AES256_GCM,data:m,iv:i,tag:t,type:str]\n    version: 3.9.0\n`

func vol(name string) string {
	return `{"apiVersion": "v1", "type": "volume", "name": "` + name + `", "unit": {}}`
}

// container returns a container spec with the given [Container] keys
// (besides Image) and extra top-level fields, both as JSON fragments.
func container(name, keys, fields string) string {
	if keys != "" {
		keys = ", " + keys
	}
	if fields != "" {
		fields = ", " + fields
	}
	return `{"apiVersion": "v1", "type": "container", "name": "` + name + `"` + fields +
		`, "unit": {"Container": {` + img + keys + `}}}`
}

func decode(t *testing.T, data string) ([]*spec.Spec, report.Report) {
	t.Helper()
	return spec.Load([]spec.Source{{Name: "in.json", Data: []byte(data)}})
}

// decodeOK decodes data that must give no finding at all.
func decodeOK(t *testing.T, data string) []*spec.Spec {
	t.Helper()
	specs, rep := decode(t, data)
	if len(rep.Findings) > 0 {
		t.Fatalf("unexpected findings:\n%s\ninput:\n%s", rep.String(), data)
	}
	return specs
}

func names(specs []*spec.Spec) (ns, paths []string) {
	for _, s := range specs {
		ns = append(ns, s.Name)
		paths = append(paths, s.Path())
	}
	return ns, paths
}

// TestStreamForms: every way of writing a stream, mixed freely in one
// source, gives the specs in document order, indexed [0].. across the
// whole source.
func TestStreamForms(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
	}{
		{"empty input", "", nil},
		{"whitespace", " \n\t\n", nil},
		{"empty array", "[]", nil},
		{"single object", vol("a"), []string{"a"}},
		{"array", "[" + vol("a") + ", " + vol("b") + "]", []string{"a", "b"}},
		{"ndjson", vol("a") + "\n" + vol("b") + "\n" + vol("c") + "\n", []string{"a", "b", "c"}},
		{"concatenated", vol("a") + vol("b"), []string{"a", "b"}},
		{"empty arrays in between", "[]" + vol("a") + "[]\n[]" + vol("b"), []string{"a", "b"}},
		{"mixed", vol("a") + "\n[" + vol("b") + "," + vol("c") + "]" + vol("d") + "\n" + vol("e") + "[" + vol("f") + "]",
			[]string{"a", "b", "c", "d", "e", "f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs := decodeOK(t, tt.data)
			got, paths := names(specs)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("names %q, want %q", got, tt.want)
			}
			for i, s := range specs {
				if s.Index != i || paths[i] != fmt.Sprintf("[%d]", i) || s.Source != "in.json" {
					t.Errorf("spec %d: index %d, path %s, source %s", i, s.Index, paths[i], s.Source)
				}
			}
		})
	}
}

// TestReadSourcesDir: a directory gives its *.json files sorted by name;
// other files, hidden files and subdirectories are not read.
func TestReadSourcesDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("20-b.json", vol("b1")+vol("b2"))
	write("10-a.json", "["+vol("a1")+"]")
	write("30-c.json", vol("c1"))
	write("notes.txt", "not json")
	write("40-d.json.bak", vol("bak"))
	write(".hidden.json", vol("hidden"))
	write("sub/50-e.json", vol("sub"))

	srcs, err := spec.ReadSources(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		got = append(got, filepath.Base(s.Name))
	}
	if want := []string{"10-a.json", "20-b.json", "30-c.json"}; !slices.Equal(got, want) {
		t.Fatalf("sources %q, want %q", got, want)
	}
	specs, rep := spec.Load(srcs)
	if len(rep.Findings) > 0 {
		t.Fatal(rep.String())
	}
	var where []string
	for _, s := range specs {
		where = append(where, filepath.Base(s.Source)+s.Path()+"="+s.Name)
	}
	want := []string{"10-a.json[0]=a1", "20-b.json[0]=b1", "20-b.json[1]=b2", "30-c.json[0]=c1"}
	if !slices.Equal(where, want) {
		t.Fatalf("specs %q, want %q (indexes restart per source)", where, want)
	}

	// A single file and stdin are one source each.
	one, err := spec.ReadSources(filepath.Join(dir, "20-b.json"), nil)
	if err != nil || len(one) != 1 || one[0].Name != filepath.Join(dir, "20-b.json") {
		t.Fatalf("single file: %v %v", one, err)
	}
	in, err := spec.ReadSources("-", strings.NewReader(vol("x")))
	if err != nil || len(in) != 1 || in[0].Name != spec.StdinName || string(in[0].Data) != vol("x") {
		t.Fatalf("stdin: %v %v", in, err)
	}
	if _, err := spec.ReadSources(filepath.Join(dir, "missing"), nil); !spec.IsNotExist(err) {
		t.Fatalf("missing path: %v, want a not-exist error", err)
	}
}

// TestDefaults: what a spec gets when it leaves a field out.
func TestDefaults(t *testing.T) {
	specs := decodeOK(t, `[
		{"apiVersion": "v1", "type": "container", "name": "web",
		 "configFiles": [{"mountPath": "/etc/web.conf", "content": "x"}],
		 "configDirs": [{"mountPath": "/etc/web.d", "files": [{"name": "a.conf", "content": "a"}, {"name": "b.conf", "mode": "0600"}]}],
		 "unit": {"Container": {`+img+`}, "Service": {"ExecReload": "/bin/true"}}},
		{"apiVersion": "v1", "type": "container", "name": "job", "desiredState": "oneshot", "removalAllowed": false, "unit": {"Container": {`+img+`}}},
		{"apiVersion": "v1", "type": "volume", "name": "data", "unit": {}},
		{"apiVersion": "v1", "type": "network", "name": "net", "reclaimPolicy": "Retain", "unit": {}},
		{"apiVersion": "v1", "type": "build", "name": "app", "containerfile": "FROM x",
		 "contextFiles": [{"filename": "run.sh", "content": "#!/bin/sh"}, {"filename": "bin/tool", "mode": "0755"}],
		 "unit": {"Build": {"ImageTag": "localhost/app:1"}}},
		{"apiVersion": "v1", "type": "secret", "name": "db", "ciphertext": "`+sops+`"}
	]`)
	if len(specs) != 6 {
		t.Fatalf("%d specs", len(specs))
	}
	web, job, data, net, app, db := specs[0], specs[1], specs[2], specs[3], specs[4], specs[5]
	if web.DesiredState != spec.Running || !web.RemovalAllowed {
		t.Errorf("web: desiredState %q removalAllowed %v, want running true", web.DesiredState, web.RemovalAllowed)
	}
	if job.DesiredState != spec.Oneshot || job.RemovalAllowed {
		t.Errorf("job: desiredState %q removalAllowed %v, want oneshot false", job.DesiredState, job.RemovalAllowed)
	}
	if web.ConfigFiles[0].Mode != 0o644 || web.ConfigDirs[0].Files[0].Mode != 0o644 || web.ConfigDirs[0].Files[1].Mode != 0o600 {
		t.Errorf("config modes %o %o %o, want 644 644 600", web.ConfigFiles[0].Mode, web.ConfigDirs[0].Files[0].Mode, web.ConfigDirs[0].Files[1].Mode)
	}
	if web.ConfigDirs[0].Files[1].Content != "" {
		t.Errorf("missing content should be empty, got %q", web.ConfigDirs[0].Files[1].Content)
	}
	if data.ReclaimPolicy != spec.Delete || !data.RemovalAllowed {
		t.Errorf("volume: reclaimPolicy %q removalAllowed %v, want Delete true", data.ReclaimPolicy, data.RemovalAllowed)
	}
	if net.ReclaimPolicy != spec.Retain || !net.RemovalAllowed {
		t.Errorf("network: reclaimPolicy %q removalAllowed %v, want Retain true", net.ReclaimPolicy, net.RemovalAllowed)
	}
	if app.ReclaimPolicy != spec.Delete || app.ContextFiles[0].Mode != 0o644 || app.ContextFiles[1].Mode != 0o755 {
		t.Errorf("build: reclaimPolicy %q modes %o %o, want Delete 644 755", app.ReclaimPolicy, app.ContextFiles[0].Mode, app.ContextFiles[1].Mode)
	}
	if !slices.Equal(db.SecretKeys, []string{"db-password"}) || db.Ciphertext == "" {
		t.Errorf("secret keys %q", db.SecretKeys)
	}
	if spec.DefaultMode != 0o644 {
		t.Errorf("DefaultMode %o", spec.DefaultMode)
	}
}

// lines returns the rendered line values of [Container] key of the only
// spec in data, and their JSON paths.
func lines(t *testing.T, keys string) (texts, paths []string) {
	t.Helper()
	specs := decodeOK(t, container("c", keys, ""))
	sec := specs[0].Lookup("Container")
	for _, e := range sec.Entries {
		if e.Key == "Image" {
			continue
		}
		for _, v := range e.Lines {
			texts = append(texts, v.Text)
			paths = append(paths, v.Path)
		}
	}
	return texts, paths
}

// TestValues: how strings, lists, numbers, booleans and maps become lines.
func TestValues(t *testing.T) {
	tests := []struct {
		name, keys string
		want       []string
		paths      []string
	}{
		{"string", `"Exec": "sleep 1"`, []string{"sleep 1"}, []string{"[0].unit.Container.Exec"}},
		{"list", `"PublishPort": ["80:80", "443:443"]`, []string{"80:80", "443:443"},
			[]string{"[0].unit.Container.PublishPort[0]", "[0].unit.Container.PublishPort[1]"}},
		{"empty list", `"PublishPort": []`, nil, nil},
		{"environment sorted", `"Environment": {"B": "2", "A": "1", "C": "3"}`, []string{"A=1", "B=2", "C=3"},
			[]string{"[0].unit.Container.Environment.A", "[0].unit.Container.Environment.B", "[0].unit.Container.Environment.C"}},
		{"environment whitespace quoted", `"Environment": {"OPTS": "--a 1  --b"}`, []string{`"OPTS=--a 1  --b"`}, nil},
		{"environment quotes escaped", `"Environment": {"MSG": "say \"hi\" \\o/"}`, []string{`"MSG=say \"hi\" \\o/"`}, nil},
		{"environment empty keeps =", `"Environment": {"EMPTY": ""}`, []string{"EMPTY="}, nil},
		{"environment string with whitespace quoted", `"Environment": "GREETING=hello world"`, []string{`"GREETING=hello world"`}, nil},
		{"environment list items quoted", `"Environment": ["A=1", "B=x y"]`, []string{"A=1", `"B=x y"`}, nil},
		{"environment already quoted kept", `"Environment": "\"B=x y\""`, []string{`"B=x y"`}, nil},
		{"environment elsewhere untouched", `"Label": "a=x y"`, []string{"a=x y"}, nil},
		{"volume src:dst", `"Volume": {"/srv/b": "/b", "/srv/a": "/a:ro"}`, []string{"/srv/a:/a:ro", "/srv/b:/b"},
			[]string{`[0].unit.Container.Volume["/srv/a"]`, `[0].unit.Container.Volume["/srv/b"]`}},
		{"volume empty is an anonymous volume", `"Volume": {"/scratch": ""}`, []string{"/scratch"}, nil},
		{"secret name,opts", `"Secret": {"db-password": "type=env,target=DB_PASSWORD"}`, []string{"db-password,type=env,target=DB_PASSWORD"},
			[]string{"[0].unit.Container.Secret.db-password"}},
		{"secret empty is bare", `"Secret": {"db-password": ""}`, []string{"db-password"}, nil},
		{"network options as a string", `"Network": "backend.network:alias=db"`, []string{"backend.network:alias=db"},
			[]string{`[0].unit.Container.Network`}},
		{"network empty is bare", `"Network": {"host": ""}`, []string{"host"},
			[]string{`[0].unit.Container.Network.host`}},
		{"mask", `"Mask": {"/proc/a": "/proc/b"}`, []string{"/proc/a:/proc/b"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, paths := lines(t, tt.keys)
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines %q, want %q", got, tt.want)
			}
			if tt.paths != nil && !slices.Equal(paths, tt.paths) {
				t.Errorf("paths %q, want %q", paths, tt.paths)
			}
		})
	}
}

// TestUnitOrder: sections and keys keep the order the user wrote them in.
func TestUnitOrder(t *testing.T) {
	specs := decodeOK(t, `{"apiVersion": "v1", "type": "container", "name": "c", "unit": {
		"Service": {"TimeoutStartSec": "60"},
		"Container": {"PublishPort": "80:80", `+img+`, "Exec": "x"},
		"Unit": {"Description": "d"},
		"X-Mine": {"Note": "n"}}}`)
	var got []string
	for _, sec := range specs[0].Unit {
		got = append(got, sec.Name+":"+sec.Path)
		for _, e := range sec.Entries {
			got = append(got, e.Key)
		}
	}
	want := []string{"Service:[0].unit.Service", "TimeoutStartSec", "Container:[0].unit.Container", "PublishPort", "Image", "Exec",
		"Unit:[0].unit.Unit", "Description", "X-Mine:[0].unit.X-Mine", "Note"}
	if !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

// TestPaths: findings name the JSON path of the offending value: members
// as .key, array items as [i], keys that are not identifiers as ["key"],
// and the spec index counts across the whole source.
func TestPaths(t *testing.T) {
	tests := []struct {
		name, data, path, rule string
	}{
		{"list item", container("c", `"Volume": ["/a:/a", "/b:/b\n"]`, ""), "[0].unit.Container.Volume[1]", spec.RuleControlChar},
		{"quoted top-level key", `{"apiVersion": "v1", "type": "volume", "name": "v", "unit": {}, "weird key": 1}`, `[0]["weird key"]`, spec.RuleUnknownField},
		{"quoted map key", container("c", `"Environment": {"weird key": "x"}`, ""), `[0].unit.Container.Environment["weird key"]`, spec.RuleMapKey},
		{"quoted unit key", container("c", `"Bad.Key": "x"`, ""), `[0].unit.Container["Bad.Key"]`, spec.RuleKeyName},
		{"escaped control in key", container("c", `"A\tB": "x"`, ""), `[0].unit.Container["A\tB"]`, spec.RuleControlChar},
		{"index across stream", vol("a") + "[" + vol("b") + "," + vol("c") + "]" + vol("d\\u0000"), "[3].name", spec.RuleControlChar},
		{"nested item", `{"apiVersion": "v1", "type": "container", "name": "c",
			"configDirs": [{"mountPath": "/d", "files": [{"name": "ok"}, {"name": "a/b"}]}],
			"unit": {"Container": {` + img + `}, "Service": {"ExecReload": "/bin/true"}}}`,
			"[0].configDirs[0].files[1].name", spec.RuleFileName},
		{"missing field", `{"apiVersion": "v1", "type": "build", "name": "b", "unit": {"Build": {"ImageTag": "localhost/b:1"}}}`,
			"[0].containerfile", spec.RuleRequired},
		{"whole spec", `[{"apiVersion": "v1", "type": "volume", "name": "v", "unit": {}}, "oops"]`, "[1]", spec.RuleNotObject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rep := decode(t, tt.data)
			if len(rep.Findings) != 1 {
				t.Fatalf("want 1 finding, got:\n%s", rep.String())
			}
			f := rep.Findings[0]
			if f.Path != tt.path || f.Rule != tt.rule || f.Source != "in.json" {
				t.Errorf("got %s %s %s, want in.json %s %s (%s)", f.Source, f.Path, f.Rule, tt.path, tt.rule, f.Message)
			}
		})
	}
}

// TestOneFindingPerProblem: a value that is present but refused is
// reported once, for what is wrong with it, and not again by a check that
// would otherwise find the key missing.
func TestOneFindingPerProblem(t *testing.T) {
	build := func(tag string) string {
		return `{"apiVersion": "v1", "type": "build", "name": "b", "containerfile": "FROM x", "unit": {"Build": {"ImageTag": ` + tag + `}}}`
	}
	tests := []struct {
		name, data, path, rule string
	}{
		{"null image", `{"apiVersion": "v1", "type": "container", "name": "c", "unit": {"Container": {"Image": null}}}`,
			"[0].unit.Container.Image", spec.RuleFieldType},
		{"image with newline", `{"apiVersion": "v1", "type": "container", "name": "c", "unit": {"Container": {"Image": "a\nb"}}}`,
			"[0].unit.Container.Image", spec.RuleControlChar},
		{"container section not an object", `{"apiVersion": "v1", "type": "container", "name": "c", "unit": {"Container": "x"}}`,
			"[0].unit.Container", spec.RuleFieldType},
		{"unit not an object", `{"apiVersion": "v1", "type": "container", "name": "c", "unit": []}`,
			"[0].unit", spec.RuleFieldType},
		{"backup not a boolean", `{"apiVersion": "v1", "type": "volume", "name": "v", "backup": "no", "unit": {}}`,
			"[0].backup", spec.RuleFieldType},
		{"image tag with continuation", build(`"localhost/b:1\\"`), "[0].unit.Build.ImageTag", spec.RuleContinuation},
		{"empty image list is missing", `{"apiVersion": "v1", "type": "container", "name": "c", "unit": {"Container": {"Image": []}}}`,
			"[0].unit.Container", spec.RuleImageRequired},
		{"exec reload refused", `{"apiVersion": "v1", "type": "container", "name": "c", "configDirs": [{"mountPath": "/d", "files": []}],
			  "unit": {"Container": {` + img + `}, "Service": {"ExecReload": ["kill\u0001"]}}}`,
			"[0].unit.Service.ExecReload[0]", spec.RuleControlChar},
		{"reload signal is enough", container("c", `"ReloadSignal": "SIGHUP", "Bogus": 1`, `"configDirs": [{"mountPath": "/d", "files": []}]`),
			"[0].unit.Container.Bogus", spec.RuleUnknownKey},
		{"oneshot with config dirs", container("c", "", `"desiredState": "oneshot", "configDirs": [{"mountPath": "/d", "files": []}]`),
			"[0].configDirs", spec.RuleStateConflict},
		{"no name, container name set", `{"apiVersion": "v1", "type": "container", "unit": {"Container": {` + img + `, "ContainerName": "x"}}}`,
			"[0].name", spec.RuleRequired},
		{"no name, build tag set", `{"apiVersion": "v1", "type": "build", "containerfile": "FROM x", "unit": {"Build": {"ImageTag": "localhost/x:1"}}}`,
			"[0].name", spec.RuleRequired},
		{"number value", container("c", `"StopTimeout": 30`, ""), "[0].unit.Container.StopTimeout", spec.RuleFieldType},
		{"boolean value", container("c", `"ReadOnly": true`, ""), "[0].unit.Container.ReadOnly", spec.RuleFieldType},
		{"number in a list", container("c", `"Label": ["a=1", 2]`, ""), "[0].unit.Container.Label[1]", spec.RuleFieldType},
		{"number as a map value", container("c", `"Environment": {"A": 1}`, ""), "[0].unit.Container.Environment.A", spec.RuleFieldType},
		{"empty log option", container("c", `"LogOpt": {"tag": ""}`, ""), "[0].unit.Container.LogOpt.tag", spec.RuleMapValue},
		{"named volume without destination", `{"apiVersion": "v1", "type": "volume", "name": "cache", "unit": {}}
			{"apiVersion": "v1", "type": "container", "name": "c", "unit": {"Container": {` + img + `, "Volume": {"cache.volume": ""}}}}`,
			`[1].unit.Container.Volume["cache.volume"]`, spec.RuleMapValue},
		{"empty mask value", container("c", `"Mask": {"/proc/a": ""}`, ""), `[0].unit.Container.Mask["/proc/a"]`, spec.RuleMapValue},
		{"same volume name tolerated", `{"apiVersion": "v1", "type": "volume", "name": "v", "unit": {"Volume": {"VolumeName": "v", "Bogus": 1}}}`,
			"[0].unit.Volume.Bogus", spec.RuleUnknownKey},
		{"network service name with .service", `{"apiVersion": "v1", "type": "network", "name": "n", "unit": {"Network": {"ServiceName": "n.service"}}}`,
			"[0].unit.Network.ServiceName", spec.RuleServiceName},
		{"secret key twice", `{"apiVersion": "v1", "type": "secret", "name": "s", "ciphertext": "a: ENC[x]\na: ENC[y]\nsops:\n  mac: x\n"}`,
			"[0].ciphertext", spec.RuleSecretFormat},
		{"context file under another", `{"apiVersion": "v1", "type": "build", "name": "b", "containerfile": "FROM x",
			"contextFiles": [{"filename": "etc/a"}, {"filename": "etc/b"}, {"filename": "etc"}, {"filename": "etc/c"}],
			"unit": {"Build": {"ImageTag": "localhost/b:1"}}}`, "[0].contextFiles[2].filename", spec.RuleContextFile},
		{"every image tag prefixed", `{"apiVersion": "v1", "type": "build", "name": "b", "containerfile": "FROM x",
			"unit": {"Build": {"ImageTag": ["localhost/b:1", "quay.io/b:1"]}}}`, "[0].unit.Build.ImageTag[1]", spec.RuleImageTag},
		{"truncated stream", `{"apiVersion": "v1", "type": "volume"`, "", spec.RuleJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rep := decode(t, tt.data)
			// Warnings are not problems.
			errs := slices.DeleteFunc(slices.Clone(rep.Findings), func(f report.Finding) bool { return f.Severity != report.Error })
			if len(errs) != 1 {
				t.Fatalf("want 1 error, got:\n%s", rep.String())
			}
			f := errs[0]
			if f.Path != tt.path || f.Rule != tt.rule {
				t.Errorf("got %s %s, want %s %s (%s)", f.Path, f.Rule, tt.path, tt.rule, f.Message)
			}
			if strings.Contains(f.Message, ": EOF") {
				t.Errorf("message %q hides where the input ended", f.Message)
			}
		})
	}
}

// TestCompatWarnings: specs the earlier syslet accepted still decode, with
// a warning at the JSON path of what it was lenient about, and mean what
// they meant there (type lower-cased, forced keys overwritten by render).
func TestCompatWarnings(t *testing.T) {
	tests := []struct {
		name, data, path, rule string
	}{
		{"capitalised type", `{"apiVersion": "v1", "type": "Volume", "name": "v", "unit": {}}`, "[0].type", spec.RuleType},
		{"unknown top-level field", `{"apiVersion": "v1", "type": "volume", "name": "v", "enabled": true, "unit": {}}`, "[0].enabled", spec.RuleUnknownField},
		{"unknown field in a config file", container("c", "", `"configFiles": [{"mountPath": "/a", "content": "", "owner": "root"}]`), "[0].configFiles[0].owner", spec.RuleUnknownField},
		{"container name overwritten", container("c", `"ContainerName": "other"`, ""), "[0].unit.Container.ContainerName", spec.RuleForcedKey},
		{"volume name overwritten", `{"apiVersion": "v1", "type": "volume", "name": "v", "unit": {"Volume": {"VolumeName": "w"}}}`, "[0].unit.Volume.VolumeName", spec.RuleForcedKey},
		{"network name overwritten", `{"apiVersion": "v1", "type": "network", "name": "n", "unit": {"Network": {"NetworkName": "m"}}}`, "[0].unit.Network.NetworkName", spec.RuleForcedKey},
		{"build file overwritten", `{"apiVersion": "v1", "type": "build", "name": "b", "containerfile": "FROM x", "unit": {"Build": {"ImageTag": "localhost/b:1", "File": "Dockerfile"}}}`, "[0].unit.Build.File", spec.RuleForcedKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, rep := decode(t, tt.data)
			if rep.HasErrors() || len(rep.Findings) != 1 {
				t.Fatalf("want exactly one warning, got:\n%s", rep.String())
			}
			f := rep.Findings[0]
			if f.Severity != report.Warning || f.Path != tt.path || f.Rule != tt.rule {
				t.Errorf("got %s %s %s, want warning %s %s (%s)", f.Severity, f.Path, f.Rule, tt.path, tt.rule, f.Message)
			}
			if len(specs) != 1 || strings.ToLower(string(specs[0].Kind)) != string(specs[0].Kind) {
				t.Errorf("specs %v", specs)
			}
		})
	}
}

// TestExternalSecret: a secret spec may declare a podman secret syslet does
// not manage. It carries no ciphertext, its name is the podman secret's own
// and follows podman's rules (plus what a Secret= line can carry), and each
// mistake is one finding at its JSON path.
func TestExternalSecret(t *testing.T) {
	ext := func(name, extra string) string {
		return `{"apiVersion": "v1", "type": "secret", "name": "` + name + `", "external": true` + extra + `}`
	}
	specs := decodeOK(t, ext("dbpass", "")+ext("DB_Pass.v2@prod:1", "")+
		`{"apiVersion": "v1", "type": "secret", "name": "db", "external": false, "ciphertext": "`+sops+`"}`)
	for _, s := range specs[:2] {
		if !s.External || s.Ciphertext != "" || len(s.SecretKeys) != 0 {
			t.Errorf("%s: external %v ciphertext %q keys %q", s.Name, s.External, s.Ciphertext, s.SecretKeys)
		}
	}
	if specs[2].External || len(specs[2].SecretKeys) != 1 {
		t.Errorf("external: false is a managed secret: %+v", specs[2])
	}

	for _, tt := range []struct {
		name, data, path, rule string
	}{
		{"with ciphertext", ext("dbpass", `, "ciphertext": "`+sops+`"`), "[0].ciphertext", spec.RuleSecretExternal},
		{"not a boolean", `{"apiVersion": "v1", "type": "secret", "name": "dbpass", "external": "yes"}`, "[0].external", spec.RuleFieldType},
		{"slash", ext("db/pass", ""), "[0].name", spec.RuleName},
		{"comma", ext("db,type=env", ""), "[0].name", spec.RuleName},
		{"equals", ext("db=x", ""), "[0].name", spec.RuleName},
		{"space", ext("db pass", ""), "[0].name", spec.RuleName},
		{"percent", ext("db%n", ""), "[0].name", spec.RuleName},
		{"too long", ext(strings.Repeat("s", 254), ""), "[0].name", spec.RuleName},
		{"control character", ext(`db\u001bx`, ""), "[0].name", spec.RuleControlChar},
		{"managed names stay strict", `{"apiVersion": "v1", "type": "secret", "name": "db@x", "ciphertext": "` + sops + `"}`, "[0].name", spec.RuleName},
		{"managed needs ciphertext", `{"apiVersion": "v1", "type": "secret", "name": "db", "external": false}`, "[0].ciphertext", spec.RuleRequired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, rep := decode(t, tt.data)
			if len(rep.Findings) != 1 || rep.Findings[0].Path != tt.path || rep.Findings[0].Rule != tt.rule {
				t.Fatalf("want one %s at %s, got:\n%s", tt.rule, tt.path, rep.String())
			}
			if !strings.Contains(rep.String(), "in.json") {
				t.Errorf("the finding does not name its source: %s", rep.String())
			}
		})
	}
	// A 253-byte name is podman's limit, and allowed.
	decodeOK(t, ext(strings.Repeat("s", 253), ""))
}
