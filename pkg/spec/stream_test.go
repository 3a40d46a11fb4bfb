package spec_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/spec"
)

// A named stream reads back into the files it was joined from, and they
// join to the stream without its first line; a stream without that line is
// stdin, as before; a line that does not match what follows is refused.
func TestNamedStream(t *testing.T) {
	srcs := []spec.Source{
		{Name: "specs/a.json", Data: []byte(`{"a":1}`)},
		{Name: "specs/b.json", Data: []byte("[{\"b\":2}]\n")},
		{Name: "specs/blank.json", Data: nil},
	}
	named := spec.NamedStream(srcs)
	got, err := spec.ReadSources("-", bytes.NewReader(named))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(srcs) {
		t.Fatalf("read back %d sources: %q", len(got), got)
	}
	for i := range got {
		if got[i].Name != srcs[i].Name {
			t.Errorf("source %d is named %q; want %q", i, got[i].Name, srcs[i].Name)
		}
	}
	if !bytes.Equal(spec.Join(got), spec.Join(srcs)) {
		t.Errorf("the sources read back join to\n%q\nwant\n%q", spec.Join(got), spec.Join(srcs))
	}

	for _, plain := range []string{"", "{\"a\":1}\n", `{"sources":[]}` + "\n", "{\"apiVersion\":\"v1\",\"sources\":[]}\n{}"} {
		got, err := spec.ReadSources("-", strings.NewReader(plain))
		if err != nil || len(got) != 1 || got[0].Name != spec.StdinName || string(got[0].Data) != plain {
			t.Errorf("%q read as %q, %v; want it as one source, stdin", plain, got, err)
		}
	}

	header, body, _ := bytes.Cut(named, []byte("\n"))
	for name, bad := range map[string][]byte{
		"cut":     named[:len(named)-2],
		"longer":  append(bytes.Clone(named), "{}\n"...),
		"no name": append([]byte(strings.Replace(string(header), `"specs/a.json"`, `""`, 1)+"\n"), body...),
	} {
		_, err := spec.ReadSources("-", bytes.NewReader(bad))
		var ie *spec.InputError
		if !errors.As(err, &ie) || ie.Source != spec.StdinName || !strings.Contains(ie.Msg, "cut or edited") {
			t.Errorf("%s: %v; want an input error naming stdin", name, err)
		}
	}
	if spec.NamedStream(nil) != nil {
		t.Error("no sources make a stream")
	}
}
