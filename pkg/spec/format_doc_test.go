package spec_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/docpage"
	"github.com/syslet/syslet/pkg/spec"
)

// syslet-specs(5), the reference of spec format v1, is generated from the
// JSON Schema (schema/spec-v1.json: fields, types, values and their
// descriptions) and the rule table (rules.go: each rule's comment), with
// two of the examples as they are. `go tool task golden` (-update)
// rewrites it; this test fails when it differs or does not lint.
var update = flag.Bool("update", false, "rewrite the spec format's reference pages")

const (
	formatMan = "../../packaging/man/syslet-specs.5"
	examples  = "../../examples"
)

type node = map[string]any

func str(n node, k string) string { s, _ := n[k].(string); return s }

// defs are the schema's named definitions.
func defs(t *testing.T) (node, node) {
	t.Helper()
	var root node
	if err := json.Unmarshal(spec.Schema, &root); err != nil {
		t.Fatal(err)
	}
	return root, root["$defs"].(node)
}

// resolve follows a $ref (also one inside a single allOf) to its definition.
func resolve(n node, d node) (node, string) {
	if ref := str(n, "$ref"); ref != "" {
		name := strings.TrimPrefix(ref, "#/$defs/")
		return d[name].(node), name
	}
	if all, ok := n["allOf"].([]any); ok && len(all) == 1 {
		if r, name := resolve(all[0].(node), d); name != "" {
			return r, name
		}
	}
	return n, ""
}

// kind says what a schema node takes, in words.
func docKind(n node, d node) string {
	r, name := resolve(n, d)
	if c, ok := n["const"]; ok {
		b, _ := json.Marshal(c)
		return "`" + string(b) + "`"
	}
	if e, ok := r["enum"].([]any); ok {
		var vs []string
		for _, v := range e {
			vs = append(vs, "`"+v.(string)+"`")
		}
		return "one of " + strings.Join(vs, ", ")
	}
	switch {
	case strings.HasPrefix(name, "unit"):
		return "an object"
	case name == "content":
		return "a string (the file's content)"
	}
	switch str(r, "type") {
	case "array":
		return "a list"
	case "boolean":
		return "`true` or `false`"
	case "string":
		return "a string"
	case "object":
		return "an object"
	}
	return "a value"
}

// describe is a field's text: what it takes, its description and that of
// the definition it refers to, and whether it is required.
func docDescribe(n node, d node, required bool) string {
	r, _ := resolve(n, d)
	var parts []string
	if required {
		parts = append(parts, "Required.")
	}
	parts = append(parts, capital(docKind(n, d))+".")
	for _, s := range []string{str(n, "description"), str(r, "description")} {
		if s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if _, name := resolve(n, d); strings.HasPrefix(name, "unit") {
		// The sections and keys a type cannot do without.
		props, _ := n["properties"].(node)
		for sec := range requiredSet(n) {
			need := "Needs the `[" + sec + "]` section"
			if p, ok := props[sec].(node); ok {
				var keys []string
				for k := range requiredSet(p) {
					keys = append(keys, "`"+k+"=`")
				}
				if alts, ok := p["anyOf"].([]any); ok {
					for _, a := range alts {
						for k := range requiredSet(a.(node)) {
							keys = append(keys, "`"+k+"=`")
						}
					}
				}
				slices.Sort(keys)
				if len(keys) > 0 {
					need += " with " + strings.Join(keys, " or ")
				}
			}
			parts = append(parts, need+".")
		}
	}
	return strings.Join(parts, " ")
}

func capital(s string) string {
	if s == "" || s[0] == '`' {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func requiredSet(n node) map[string]bool {
	out := map[string]bool{}
	if rs, ok := n["required"].([]any); ok {
		for _, r := range rs {
			out[r.(string)] = true
		}
	}
	return out
}

// fields lists the properties of n (with those of list items, as
// field[].sub), in the schema's order.
func docFields(raw []byte, path []string, n node, d node, prefix string) docpage.List {
	req := requiredSet(n)
	props, _ := n["properties"].(node)
	var l docpage.List
	for _, k := range orderedKeys(raw, path, "properties") {
		p := props[k].(node)
		l = append(l, docpage.Item{Term: "`" + prefix + k + "`", Text: docDescribe(p, d, req[k])})
		if items, ok := p["items"].(node); ok && str(items, "type") == "object" {
			l = append(l, docFields(raw, append(append(path, "properties", k), "items"), items, d, prefix+k+"[].")...)
		}
	}
	return l
}

// orderedKeys returns the keys of the object at path under key, in the
// order the schema file lists them (a Go map has none).
func orderedKeys(raw []byte, path []string, key string) []string {
	dec := json.NewDecoder(bytes.NewReader(at(raw, append(path, key))))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	return keys
}

// at returns the raw JSON at path (object keys and array indexes).
func at(raw []byte, path []string) []byte {
	cur := json.RawMessage(raw)
	for _, p := range path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) == nil {
			cur = obj[p]
			continue
		}
		var arr []json.RawMessage
		if i, err := strconv.Atoi(p); err == nil && json.Unmarshal(cur, &arr) == nil && i < len(arr) {
			cur = arr[i]
		}
	}
	return cur
}

// typeSections are the per-type parts of the spec definition: the type
// and the path of its "then" schema.
func typeSections(sp node) map[string]int {
	out := map[string]int{}
	for i, a := range sp["allOf"].([]any) {
		cond := a.(node)["if"].(node)["properties"].(node)["type"].(node)
		if c, ok := cond["const"].(string); ok {
			if _, ok := a.(node)["then"]; ok {
				out[c] = i
			}
		}
	}
	return out
}

func rulesList(t *testing.T) docpage.List {
	t.Helper()
	consts, err := docpage.Consts("rules.go")
	if err != nil {
		t.Fatal(err)
	}
	var l docpage.List
	for _, c := range consts {
		doc := strings.TrimPrefix(strings.TrimPrefix(c.Doc, c.Name+":"), c.Name+" is ")
		doc = strings.TrimSpace(doc)
		if doc == "" {
			t.Errorf("rules.go: %s has no comment to document it", c.Name)
		}
		l = append(l, docpage.Item{Term: "`" + c.Value + "`", Text: doc})
	}
	return l
}

func formatPage(t *testing.T) docpage.Page {
	t.Helper()
	root, d := defs(t)
	sp := d["spec"].(node)
	common := docFields(spec.Schema, []string{"$defs", "spec"}, sp, d, "")
	p := docpage.Page{Name: "syslet-specs", Section: 5, Summary: "spec format v1, the JSON input of syslet", Date: docpage.Date, Source: docpage.Source, Manual: docpage.Manual}
	p.Sections = []docpage.Section{
		{Title: "DESCRIPTION", Blocks: []docpage.Block{
			docpage.Para("syslet reads a stream of specs: a JSON file holding one object, an array, NDJSON or concatenated objects (mixed freely); a directory of `*.json` files, read in name order; or stdin (`--stdin`, also `-`). `[]` is valid and means no specs: every removable resource is pruned. Input holding no JSON value at all is invalid."),
			docpage.Para(str(root, "description")),
			docpage.Para("The JSON Schema is `" + spec.SchemaID + "`; `syslet schema` prints it."),
		}},
		{Title: "COMMON FIELDS", Blocks: []docpage.Block{common}},
	}
	secs := typeSections(sp)
	for _, typ := range []string{"container", "volume", "network", "build", "secret"} {
		i := secs[typ]
		path := []string{"$defs", "spec", "allOf", strconv.Itoa(i), "then"}
		then := sp["allOf"].([]any)[i].(node)["then"].(node)
		p.Sections = append(p.Sections, docpage.Section{Title: strings.ToUpper(typ) + " SPECS", Blocks: []docpage.Block{docFields(spec.Schema, path, then, d, "")}})
	}
	values := docpage.List{}
	for _, name := range []string{"line", "value", "mapValue", "name", "secretName", "mode", "mountPath"} {
		values = append(values, docpage.Item{Term: name, Text: str(d[name].(node), "description")})
	}
	sect := d["section"].(node)["properties"].(node)
	for _, k := range orderedKeys(spec.Schema, []string{"$defs", "section"}, "properties") {
		if desc := str(sect[k].(node), "description"); desc != "" {
			values = append(values, docpage.Item{Term: "`" + k + "`", Text: desc})
		}
	}
	p.Sections = append(p.Sections, docpage.Section{Title: "VALUES", Blocks: []docpage.Block{
		docpage.Para("A unit is `{Section: {Key: value}}` with quadlet's own sections and keys (" + docpage.Ref("podman-systemd.unit", 5) + "). Its values, and the names and paths of the fields above:"),
		values,
	}})
	p.Sections = append(p.Sections, docpage.Section{Title: "RULES", Blocks: []docpage.Block{
		docpage.Para("Every finding of `syslet validate` names its source, the JSON path of the field, and one of these rules (`--output json` prints them; they never change meaning)."),
		rulesList(t),
	}})
	var ex []docpage.Block
	for _, f := range []string{"10-network.json", "50-app.json"} {
		b, err := os.ReadFile(filepath.Join(examples, f))
		if err != nil {
			t.Fatal(err)
		}
		ex = append(ex, docpage.Para("`examples/"+f+"`:"), docpage.Code(string(b)))
	}
	p.Sections = append(p.Sections,
		docpage.Section{Title: "EXAMPLES", Blocks: ex},
		docpage.Section{Title: "SEE ALSO", Blocks: []docpage.Block{docpage.Para(strings.Join([]string{docpage.Ref("syslet", 1), docpage.Ref("syslet-validate", 1), docpage.Ref("syslet-schema", 1), docpage.Ref("podman-systemd.unit", 5)}, ", "))}},
	)
	return p
}

func TestFormatReferenceIsGenerated(t *testing.T) {
	p := formatPage(t)
	if err := docpage.CheckFile(formatMan, []byte(p.Roff()), *update); err != nil {
		t.Fatal(err)
	}
	if err := docpage.LintMan(formatMan); err != nil {
		t.Error(err)
	}
}

// TestFormatReferenceNamesEveryRule: every rule identifier is documented.
func TestFormatReferenceNamesEveryRule(t *testing.T) {
	roff := formatPage(t).Roff()
	consts, err := docpage.Consts("rules.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range consts {
		if !strings.Contains(roff, `\fB`+strings.ReplaceAll(c.Value, "-", `\-`)+`\fR`) {
			t.Errorf("syslet-specs(5) misses rule %s", c.Value)
		}
	}
}
