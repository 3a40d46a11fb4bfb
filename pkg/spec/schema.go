package spec

import _ "embed"

// Schema is the JSON Schema (draft 2020-12) of spec format v1: one spec or
// an array of specs, as one value of a stream. Editors use it to check
// specs as they are typed; `syslet schema` prints it. It holds the
// structural rules (fields, types, enums, name and path syntax) of what
// `syslet validate --strict` accepts; rules that need the whole stream —
// references, duplicate names, mount destinations — are validate's alone.
//
//go:embed schema/spec-v1.json
var Schema []byte

// SchemaID is the schema's $id.
const SchemaID = "https://github.com/syslet/syslet/raw/main/pkg/spec/schema/spec-v1.json"
