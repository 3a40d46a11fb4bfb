package spec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
)

// structural are the rules the schema expresses. A spec validate refuses
// for one of them must be refused by the schema too; a spec validate
// accepts must be accepted by it. Rules that need the whole stream or
// the spec's own name (references, duplicates, ImageTag prefix, forced
// keys) are validate's alone.
var structural = []string{
	spec.RuleJSON, spec.RuleNotObject, spec.RuleUnknownField, spec.RuleFieldType, spec.RuleRequired,
	spec.RuleAPIVersion, spec.RuleType, spec.RuleName, spec.RuleControlChar, spec.RuleContinuation,
	spec.RuleSection, spec.RuleReservedSection, spec.RuleKeyName, spec.RuleMapNotAllowed, spec.RuleMapValue, spec.RuleMapValueIgnored,
	spec.RuleEnum, spec.RuleMode, spec.RuleImageRequired, spec.RuleSecretExternal,
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec.Schema))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	m, ok := doc.(map[string]any)
	if !ok || m["$id"] != spec.SchemaID || m["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Fatalf("schema $id / $schema: %v %v", m["$id"], m["$schema"])
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(spec.SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(spec.SchemaID)
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return sch
}

// schemaAccepts validates every top-level value of a spec stream.
func schemaAccepts(sch *jsonschema.Schema, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := sch.Validate(v); err != nil {
			return err
		}
	}
}

// TestSchemaAgreesWithValidate checks the embedded schema with a
// maintained validator against every spec of the repository: the
// examples, the earlier syslet's host, and one invalid spec per rule.
func TestSchemaAgreesWithValidate(t *testing.T) {
	sch := compileSchema(t)
	var files []string
	for _, pattern := range []string{"../../examples/*.json", "../../examples/demo-previous/*.json", "../../examples/pod/*.json",
		"../../cmd/syslet/testdata/earlier/specs/*.json", "../../cmd/syslet/testdata/invalid/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 90 {
		t.Fatalf("found only %d spec files", len(files))
	}
	checked := map[string]int{}
	for _, f := range files {
		srcs, err := spec.ReadSources(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, rep := spec.Load(srcs)
		rep.Strict()
		var rules []string
		for _, fd := range rep.Findings {
			if slices.Contains(structural, fd.Rule) {
				rules = append(rules, fd.Rule)
			}
		}
		err = schemaAccepts(sch, srcs[0].Data)
		switch {
		case len(rules) > 0 && err == nil:
			t.Errorf("%s: validate refuses it (%s) but the schema accepts it:\n%s", f, strings.Join(rules, ", "), rep.String())
		case len(rep.Findings) == 0 && err != nil:
			t.Errorf("%s: valid, but the schema refuses it: %v", f, err)
		case len(rules) > 0:
			checked["refused"]++
		case len(rep.Findings) == 0:
			checked["accepted"]++
		}
	}
	t.Logf("%d files: %v", len(files), checked)
	if checked["accepted"] < 10 || checked["refused"] < 30 {
		t.Errorf("too few files judged: %v", checked)
	}
}

// TestSchemaWarningsAreStrict: what the earlier syslet accepted and
// validate only warns about, the schema refuses, as --strict does: editors
// point at it while the spec is being written.
func TestSchemaWarningsAreStrict(t *testing.T) {
	sch := compileSchema(t)
	for _, data := range []string{
		`{"apiVersion": "v1", "type": "Volume", "name": "v", "unit": {}}`,
		`{"apiVersion": "v1", "type": "volume", "name": "v", "enabled": true, "unit": {}}`,
		`{"apiVersion": "v1", "type": "volume", "name": "v"}`,
		`{"apiVersion": "v1", "type": "container", "name": "c", "desiredState": "Running", "unit": {"Container": {"Image": "x"}}}`,
		`{"apiVersion": "v1", "type": "container", "name": "c", "unit": {"Container": {"Image": "x", "Network": {"host": "ignored"}}}}`,
	} {
		_, rep := spec.Load([]spec.Source{{Name: "w.json", Data: []byte(data)}})
		if rep.HasErrors() || len(rep.Findings) == 0 || rep.Findings[0].Severity != report.Warning {
			t.Errorf("%s: want a warning, got %s", data, rep.String())
		}
		if schemaAccepts(sch, []byte(data)) == nil {
			t.Errorf("schema accepts %s", data)
		}
	}
}

// TestSchemaExternalSecret: the schema and validate agree on external
// secrets, whose names follow podman's rules rather than unit names'.
func TestSchemaExternalSecret(t *testing.T) {
	sch := compileSchema(t)
	ext := func(name, extra string) string {
		return `{"apiVersion": "v1", "type": "secret", "name": "` + name + `", "external": true` + extra + `}`
	}
	for _, tt := range []struct {
		data  string
		valid bool
	}{
		{ext("dbpass", ""), true},
		{ext("DB_Pass.v2@prod:1", ""), true},
		{ext(strings.Repeat("s", 253), ""), true},
		{ext(strings.Repeat("s", 254), ""), false},
		{ext("db,type=env", ""), false},
		{ext("db/x", ""), false},
		{ext("db pass", ""), false},
		{ext("db%n", ""), false},
		{ext(`db\u0007`, ""), false},
		{ext("dbpass", `, "ciphertext": "x: ENC[y]"`), false},
		{`{"apiVersion": "v1", "type": "secret", "name": "dbpass", "external": "yes"}`, false},
		{`{"apiVersion": "v1", "type": "secret", "name": "db", "external": false}`, false},
		{`{"apiVersion": "v1", "type": "secret", "name": "db@x", "ciphertext": "x"}`, false},
		{`{"apiVersion": "v1", "type": "volume", "name": "db@x", "unit": {}}`, false},
	} {
		_, rep := spec.Load([]spec.Source{{Name: "x.json", Data: []byte(tt.data)}})
		err := schemaAccepts(sch, []byte(tt.data))
		if tt.valid && (rep.HasErrors() || err != nil) {
			t.Errorf("%s: want valid; validate:\n%s schema: %v", tt.data, rep.String(), err)
		}
		if !tt.valid && (!rep.HasErrors() || err == nil) {
			t.Errorf("%s: want refused by both; validate:\n%s schema: %v", tt.data, rep.String(), err)
		}
	}
}
