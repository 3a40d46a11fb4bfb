package view

import (
	"encoding/json"
	"io"
)

// JSON writes v as one indented JSON document: the form of every
// `--output json`.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
