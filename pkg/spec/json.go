package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// node is a JSON value that keeps object keys in document order, so a
// unit's keys render in the order the user wrote them, and that can tell
// its own JSON path for error messages. The path is computed on demand
// from the parent chain: storing each level's full path would cost memory
// quadratic in the nesting depth.
type node struct {
	kind  nodeKind
	text  string // string value, or the literal of a number / bool
	keys  []string
	vals  []*node // object values, parallel to keys
	items []*node // array items

	parent *node
	root   string // the path of a top-level value ("[3]")
	key    string // member name in the parent object
	idx    int    // item index in the parent array
}

// jpath returns the node's JSON path: ".key", ["key"] or "[i]" steps from
// the top-level value.
func (n *node) jpath() string {
	if n.parent == nil {
		return n.root
	}
	// Built in one buffer from the top down: every key of every unit asks
	// for its path, and joining level by level allocates once per level.
	var stack [MaxDepth + 2]*node
	depth := 0
	top := n
	for ; top.parent != nil && depth < len(stack); top = top.parent {
		stack[depth] = top
		depth++
	}
	b := make([]byte, 0, 64)
	if top.parent != nil { // deeper than any input the readers accept
		b = append(b, top.jpath()...)
	} else {
		b = append(b, top.root...)
	}
	for i := depth - 1; i >= 0; i-- {
		c := stack[i]
		switch {
		case c.parent.kind != jObject:
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(c.idx), 10)
			b = append(b, ']')
		case isIdent(c.key):
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, c.key...)
		default:
			q, _ := json.Marshal(c.key)
			b = append(b, '[')
			b = append(b, q...)
			b = append(b, ']')
		}
	}
	return string(b)
}

type nodeKind int

const (
	jNull nodeKind = iota
	jString
	jNumber
	jBool
	jObject
	jArray
)

func (k nodeKind) String() string {
	return [...]string{"null", "a string", "a number", "a boolean", "an object", "an array"}[k]
}

func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// isIdent reports whether key matches ^[A-Za-z_][A-Za-z0-9_-]*$: a key
// that needs no quoting in a JSON path.
func isIdent(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// child forms the JSON path of an object member: .key, or ["key"] when the
// key is not a plain identifier.
func child(path, key string) string {
	if isIdent(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	q, _ := json.Marshal(key)
	return path + "[" + string(q) + "]"
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// syntaxError is a JSON stream that could not be read; Offset locates it.
type syntaxError struct {
	Line, Col int
	Msg       string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// MaxDepth is how deeply JSON values may nest. A spec needs six levels
// (stream array, spec, unit, section, key, list); the limit keeps a
// hostile document from exhausting memory or the stack.
const MaxDepth = 64

// dupKeyError reports a key that appears twice in one object: Go's decoder
// would silently keep the last one, which hides mistakes.
type dupKeyError struct{ path, key string }

func (e *dupKeyError) Error() string { return fmt.Sprintf("duplicate key %q", e.key) }

// decodeStream reads every top-level value of data. Objects are specs;
// arrays contribute their items as specs. Indexes count specs across the
// whole source. Duplicate keys are returned as findings, not failures, so
// the rest of the source is still checked.
func decodeStream(data []byte) (specs []*node, dups []*dupKeyError, err error) {
	if specs, dups, err := fastDecodeStream(data); err == nil {
		return specs, dups, nil
	}
	return slowDecodeStream(data)
}

// slowDecodeStream is decodeStream on encoding/json's token reader: it
// reads whatever fastDecodeStream leaves to it and words every error.
func slowDecodeStream(data []byte) (specs []*node, dups []*dupKeyError, err error) {
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
				n, err := p.value(&node{root: index("", len(specs))}, 1)
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
		n, err := p.fromToken(tok, &node{root: index("", len(specs))}, 0)
		if err != nil {
			return specs, p.dups, p.wrap(data, err)
		}
		specs = append(specs, n)
	}
}

type parser struct {
	dec  *json.Decoder
	dups []*dupKeyError
}

// errTooDeep stops a document nested deeper than MaxDepth.
var errTooDeep = fmt.Errorf("values are nested more than %d levels deep", MaxDepth)

// value reads the next value into n (whose place in the tree is already
// set); depth counts the containers around it.
func (p *parser) value(n *node, depth int) (*node, error) {
	tok, err := p.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return p.fromToken(tok, n, depth)
}

func (p *parser) fromToken(tok json.Token, n *node, depth int) (*node, error) {
	if _, ok := tok.(json.Delim); ok && depth >= MaxDepth {
		return nil, errTooDeep
	}
	switch t := tok.(type) {
	case nil:
		n.kind = jNull
	case string:
		n.kind, n.text = jString, t
	case json.Number:
		n.kind, n.text = jNumber, t.String()
	case bool:
		n.kind, n.text = jBool, strconv.FormatBool(t)
	case json.Delim:
		switch t {
		case '{':
			n.kind = jObject
			seen := map[string]bool{}
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := p.value(&node{parent: n, key: k}, depth+1)
				if err != nil {
					return nil, err
				}
				if seen[k] {
					p.dups = append(p.dups, &dupKeyError{path: v.jpath(), key: k})
					continue
				}
				seen[k] = true
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, v)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, err
			}
		case '[':
			n.kind = jArray
			for p.dec.More() {
				v, err := p.value(&node{parent: n, idx: len(n.items)}, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unexpected %q", rune(t))
		}
	}
	return n, nil
}

// wrap turns a decoder error into a syntaxError with a line and column.
func (p *parser) wrap(data []byte, err error) error {
	off := p.dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	msg := err.Error()
	// Inside a value, the decoder reports a plain io.EOF when the input
	// stops (only the top-level loop treats EOF as the clean end), which
	// would print as a bare "EOF".
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		msg = "unexpected end of input"
	}
	line, col := 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &syntaxError{Line: line, Col: col, Msg: msg}
}
