package view

import (
	"encoding/json"
	"io"
)

// WriteJSON writes v as one indented JSON document: the form of every
// `--output json`.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
