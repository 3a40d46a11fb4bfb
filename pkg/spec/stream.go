package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Join concatenates sources into one stream, each ending in a newline
// (one is added where a source lacks it). A stream may mix objects, arrays
// and NDJSON, so joining loses nothing: the joined stream decodes to the
// same specs (with one source name), and joining it again changes nothing.
// The stream an apply from stdin stores, the one syslet push sends, a
// generation's input and the input digest all use this one form.
func Join(srcs []Source) []byte {
	n := 0
	for _, s := range srcs {
		n += len(s.Data) + 1
	}
	out := make([]byte, 0, n)
	for _, s := range srcs {
		out = appendSource(out, s)
	}
	return out
}

func appendSource(out []byte, s Source) []byte {
	out = append(out, s.Data...)
	if len(s.Data) == 0 || s.Data[len(s.Data)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}

// A stream that syslet push sends over SSH begins with a line naming the
// files it was joined from and how many bytes of the joined stream each
// one is:
//
//	{"sources":[{"name":"hosts/web1/50-app.json","bytes":412},…]}
//
// The host reads it back into those sources (ReadSources "-"), so what it
// says about a spec names the file the operator wrote and the spec's
// index in it ("hosts/common/70-secrets.json [0]"), not "stdin [8]". The
// line is gone once read: the sources join to the stream without it, so
// the input digest, the stored stream and a generation's input are those
// of the files themselves. No spec has a lone "sources" field (every spec
// has apiVersion and type), so the line cannot be taken for one.
type streamHeader struct {
	Sources []headerSource `json:"sources"`
}

type headerSource struct {
	Name  string `json:"name"`
	Bytes int    `json:"bytes"`
}

// NamedStream is Join with the line that names each source first: the
// stream syslet push sends. With no sources it is empty.
func NamedStream(srcs []Source) []byte {
	if len(srcs) == 0 {
		return nil
	}
	h := streamHeader{Sources: make([]headerSource, len(srcs))}
	var body []byte
	for i, s := range srcs {
		n := len(body)
		body = appendSource(body, s)
		h.Sources[i] = headerSource{Name: s.Name, Bytes: len(body) - n}
	}
	line, _ := json.Marshal(h) // strings and ints: it cannot fail
	return append(append(line, '\n'), body...)
}

// splitNamed reads a stream from stdin back into the sources NamedStream
// joined; a stream without the line is one source, named StdinName. A
// line whose byte counts do not add up to what follows it is an
// InputError: the stream was cut or edited on its way.
func splitNamed(data []byte) ([]Source, error) {
	line, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || !bytes.HasPrefix(bytes.TrimSpace(line), []byte(`{"sources":`)) {
		return []Source{{Name: StdinName, Data: data}}, nil
	}
	var h streamHeader
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || len(h.Sources) == 0 {
		return []Source{{Name: StdinName, Data: data}}, nil
	}
	bad := func(format string, args ...any) error {
		return &InputError{Source: StdinName, Rule: RuleSource,
			Msg: "its first line names the files it was joined from (syslet push sends it so), but " + fmt.Sprintf(format, args...) + ": the stream was cut or edited on its way"}
	}
	srcs := make([]Source, 0, len(h.Sources))
	for _, s := range h.Sources {
		switch {
		case s.Name == "":
			return nil, bad("a file has no name")
		case s.Bytes <= 0 || s.Bytes > len(rest):
			return nil, bad("%s is said to be %d bytes and %d follow", s.Name, s.Bytes, len(rest))
		}
		srcs = append(srcs, Source{Name: s.Name, Data: rest[:s.Bytes]})
		rest = rest[s.Bytes:]
	}
	if len(rest) > 0 {
		return nil, bad("%d bytes follow the last file it names", len(rest))
	}
	return srcs, nil
}
