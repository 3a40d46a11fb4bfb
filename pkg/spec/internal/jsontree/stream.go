package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// SyntaxError is a JSON stream that could not be read; Line and Col
// locate it (both count from 1).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// MaxDepth is how deeply JSON values may nest. A spec needs six levels
// (stream array, spec, unit, section, key, list); the limit keeps a
// hostile document from exhausting memory or the stack.
const MaxDepth = 64

// DupKey is a key that appears twice in one object: Go's decoder would
// silently keep the last one, which hides mistakes. Path is the JSON path
// of the second occurrence, which is dropped from the tree. The caller
// reports it as a finding; it is not an error that stops the read.
type DupKey struct{ Path, Key string }

// DecodeStream reads every top-level value of data. Objects are specs;
// arrays contribute their items as specs. Indexes count specs across the
// whole source. Duplicate keys are returned as findings, not failures, so
// the rest of the source is still checked. A stream that cannot be read
// gives a *SyntaxError, with the values read before it.
func DecodeStream(data []byte) (specs []*Node, dups []*DupKey, err error) {
	if specs, dups, err := fastDecodeStream(data); err == nil {
		return specs, dups, nil
	}
	return slowDecodeStream(data)
}

// slowDecodeStream is DecodeStream on encoding/json's token reader: it
// reads whatever fastDecodeStream leaves to it and words every error.
func slowDecodeStream(data []byte) (specs []*Node, dups []*DupKey, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &parser{dec: dec}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return specs, p.dups, nil
		}
		if err != nil {
			return specs, p.dups, p.wrap(data, err)
		}
		if d, ok := tok.(json.Delim); ok && d == '[' {
			for dec.More() {
				n, err := p.value(&Node{root: Index("", len(specs))}, 1)
				if err != nil {
					return specs, p.dups, p.wrap(data, err)
				}
				specs = append(specs, n)
			}
			if _, err := dec.Token(); err != nil {
				return specs, p.dups, p.wrap(data, err)
			}
			continue
		}
		n, err := p.fromToken(tok, &Node{root: Index("", len(specs))}, 0)
		if err != nil {
			return specs, p.dups, p.wrap(data, err)
		}
		specs = append(specs, n)
	}
}

type parser struct {
	dec  *json.Decoder
	dups []*DupKey
}

// errTooDeep stops a document nested deeper than MaxDepth.
var errTooDeep = fmt.Errorf("values are nested more than %d levels deep", MaxDepth)

// value reads the next value into n (whose place in the tree is already
// set); depth counts the containers around it.
func (p *parser) value(n *Node, depth int) (*Node, error) {
	tok, err := p.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return p.fromToken(tok, n, depth)
}

func (p *parser) fromToken(tok json.Token, n *Node, depth int) (*Node, error) {
	if _, ok := tok.(json.Delim); ok && depth >= MaxDepth {
		return nil, errTooDeep
	}
	switch t := tok.(type) {
	case nil:
		n.Kind = Null
	case string:
		n.Kind, n.Text = String, t
	case json.Number:
		n.Kind, n.Text = Number, t.String()
	case bool:
		n.Kind, n.Text = Bool, strconv.FormatBool(t)
	case json.Delim:
		switch t {
		case '{':
			n.Kind = Object
			seen := map[string]bool{}
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := p.value(&Node{parent: n, key: k}, depth+1)
				if err != nil {
					return nil, err
				}
				if seen[k] {
					p.dups = append(p.dups, &DupKey{Path: v.Path(), Key: k})
					continue
				}
				seen[k] = true
				n.Keys = append(n.Keys, k)
				n.Vals = append(n.Vals, v)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, err
			}
		case '[':
			n.Kind = Array
			for p.dec.More() {
				v, err := p.value(&Node{parent: n, idx: len(n.Items)}, depth+1)
				if err != nil {
					return nil, err
				}
				n.Items = append(n.Items, v)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, err
			}
		default:
			return nil, errors.New("unexpected delimiter")
		}
	}
	return n, nil
}

// quotedChar is the character encoding/json's syntax errors quote:
// "invalid character 'x' after object key".
var quotedChar = regexp.MustCompile(`invalid character '(?:\\.|[^'\\])+'`)

// wrap turns a decoder error into a SyntaxError with a line and column.
func (p *parser) wrap(data []byte, err error) error {
	off := p.dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	// The decoder quotes the character it stopped at; the message names
	// only where it is. The input may be a file that was never meant as
	// specs (a link, a wrong path): no finding shows its content.
	msg := quotedChar.ReplaceAllString(err.Error(), "invalid character")
	// Inside a value, the decoder reports a plain io.EOF when the input
	// stops (only the top-level loop treats EOF as the clean end), which
	// would print as a bare "EOF".
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		msg = "unexpected end of input"
	}
	// A comma before a closing bracket is the mistake people make most
	// (JavaScript and many editors allow it); the decoder calls it a
	// missing key or value. Name it, at the comma.
	if comma, closing, ok := trailingComma(data, off); ok {
		off = comma
		msg = fmt.Sprintf("trailing comma before '%c': JSON allows none; delete this comma", closing)
	}
	// The other mistake of hand-edited JSON: a member or item added
	// without the comma before it, which the decoder calls an "invalid
	// character after object key:value pair".
	if missingComma(err, data, off) {
		msg = "missing comma: a new value starts here, and the one before it ends without a ','"
	}
	line, col := 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Col: col, Msg: msg}
}

// missingComma reports whether err stopped at the start of a value that
// follows another value with no comma between them.
func missingComma(err error, data []byte, off int64) bool {
	m := err.Error()
	if !strings.Contains(m, "after object key:value pair") && !strings.Contains(m, "after array element") {
		return false
	}
	return off >= 0 && off < int64(len(data)) && strings.IndexByte(`"{[-0123456789tfn`, data[off]) >= 0
}

// trailingComma finds the comma before the closing '}' or ']' a syntax
// error at off stopped at (the decoder reports the offset at the bracket
// or just after it), with JSON whitespace between them.
func trailingComma(data []byte, off int64) (comma int64, closing byte, ok bool) {
	for _, at := range []int64{off - 1, off} {
		if at < 0 || at >= int64(len(data)) || data[at] != '}' && data[at] != ']' {
			continue
		}
		i := at - 1
		for i >= 0 && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
			i--
		}
		if i >= 0 && data[i] == ',' {
			return i, data[at], true
		}
	}
	return 0, 0, false
}
