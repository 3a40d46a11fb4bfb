package adopt

import (
	"bytes"
	"encoding/json"
	"slices"
)

// obj is a JSON object that keeps its key order, so the adopted spec reads
// like the file it came from.
type obj []kv

type kv struct {
	k string
	v any
}

// add sets key to value, turning a repeated key into a list.
func (o obj) add(k, v string) obj {
	for i := range o {
		if o[i].k != k {
			continue
		}
		switch cur := o[i].v.(type) {
		case string:
			o[i].v = []string{cur, v}
		case []string:
			o[i].v = append(cur, v)
		}
		return o
	}
	return append(o, kv{k, v})
}

func (o obj) write(b *bytes.Buffer, ind string) {
	b.WriteString("{")
	for i, e := range o {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n" + ind + "  ")
		writeJSON(b, e.k)
		b.WriteString(": ")
		switch v := e.v.(type) {
		case obj:
			v.write(b, ind+"  ")
		case []any:
			// Names inline; with an object among them, one item a line.
			lines := slices.ContainsFunc(v, func(x any) bool { _, ok := x.(obj); return ok })
			b.WriteString("[")
			for j, x := range v {
				if j > 0 {
					b.WriteString(",")
				}
				if lines {
					b.WriteString("\n" + ind + "    ")
				}
				if xo, ok := x.(obj); ok {
					xo.write(b, ind+"    ")
				} else {
					writeJSON(b, x)
				}
			}
			if lines {
				b.WriteString("\n" + ind + "  ")
			}
			b.WriteString("]")
		case []obj:
			b.WriteString("[")
			for j, x := range v {
				if j > 0 {
					b.WriteString(",")
				}
				b.WriteString("\n" + ind + "    ")
				x.write(b, ind+"    ")
			}
			b.WriteString("\n" + ind + "  ]")
		default:
			writeJSON(b, v)
		}
	}
	b.WriteString("\n" + ind + "}")
}

func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	b.Truncate(b.Len() - 1) // Encode's newline
}
