// Package jsontree reads spec input as a tree of JSON values that remember
// where they were found: object keys in document order, each value's JSON
// path ("[2].unit.Container.Volume[1]") on demand, duplicate keys reported
// instead of silently dropped, and nesting bounded by MaxDepth.
//
// It owns the JSON syntax of a spec stream (one value, arrays of values,
// NDJSON or concatenated values) and nothing of what the values mean:
// which fields a spec has, and what is wrong with them, is package spec's.
// DecodeStream tries a fast reader first (node.go's tree, fast.go's
// one-pass scanner slicing strings out of one copy of the input) and falls
// back to encoding/json's token reader (stream.go), which accepts strictly
// more and words every error users see; the two must build identical trees
// for whatever both accept (fast_test.go).
//
// It is internal to pkg/spec so its API can follow spec's needs. It must
// not import anything from syslet (imports_test.go): it is plain JSON
// syntax, the bottom of pkg/spec, and any syslet import would tie the
// reader to what it is read for.
package jsontree
