package jsontree

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// errSlowPath makes fastDecodeStream give up: the input is not a plain
// stream of objects and arrays of valid JSON, and DecodeStream's
// token-based reader, whose messages users see, handles it instead.
var errSlowPath = errors.New("not on the fast path")

// fastDecodeStream reads a stream of top-level objects and arrays exactly
// as DecodeStream does (same nodes, paths and duplicate keys), in one pass
// over the bytes with no per-token allocation: encoding/json's Token API
// made decoding the largest part of validating a big spec set. It accepts
// strictly less than DecodeStream (no top-level scalars, strings with
// escapes or non-ASCII bytes are decoded by encoding/json itself) and
// returns errSlowPath for anything else, so every error message still
// comes from the token-based reader.
func fastDecodeStream(data []byte) ([]*Node, []*DupKey, error) {
	p := &fastParser{data: data, src: string(data)}
	var specs []*Node
	for {
		p.ws()
		if p.i == len(data) {
			return specs, p.dups, nil
		}
		switch data[p.i] {
		case '{':
			n, err := p.value(p.node(Node{root: Index("", len(specs))}), 0)
			if err != nil {
				return nil, nil, err
			}
			specs = append(specs, n)
		case '[':
			p.i++
			p.ws()
			if p.peek() == ']' {
				p.i++
				continue
			}
			for {
				n, err := p.value(p.node(Node{root: Index("", len(specs))}), 1)
				if err != nil {
					return nil, nil, err
				}
				specs = append(specs, n)
				p.ws()
				switch p.peek() {
				case ',':
					p.i++
					continue
				case ']':
					p.i++
				default:
					return nil, nil, errSlowPath
				}
				break
			}
		default:
			return nil, nil, errSlowPath
		}
	}
}

type fastParser struct {
	data []byte
	// src is data as one string: plain strings are slices of it, so
	// reading a spec set allocates once for all its keys and values.
	src  string
	i    int
	dups []*DupKey
	// slab hands out nodes from blocks rather than one allocation each:
	// a big spec set has hundreds of thousands of values.
	slab []Node
}

func (p *fastParser) node(n Node) *Node {
	if len(p.slab) == 0 {
		p.slab = make([]Node, 512)
	}
	m := &p.slab[0]
	p.slab = p.slab[1:]
	*m = n
	return m
}

func (p *fastParser) peek() byte {
	if p.i < len(p.data) {
		return p.data[p.i]
	}
	return 0
}

func (p *fastParser) ws() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value reads the next value into n, whose place in the tree is already
// set; depth counts the containers around it. A document nested deeper
// than MaxDepth is left to the token-based reader, which refuses it.
func (p *fastParser) value(n *Node, depth int) (*Node, error) {
	p.ws()
	if p.i == len(p.data) {
		return nil, errSlowPath
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(n, depth)
	case c == '[':
		return p.array(n, depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		n.Kind, n.Text = String, s
		return n, nil
	case c == '-' || c >= '0' && c <= '9':
		s, err := p.number()
		if err != nil {
			return nil, err
		}
		n.Kind, n.Text = Number, s
		return n, nil
	case p.literal("true"):
		n.Kind, n.Text = Bool, "true"
		return n, nil
	case p.literal("false"):
		n.Kind, n.Text = Bool, "false"
		return n, nil
	case p.literal("null"):
		n.Kind = Null
		return n, nil
	}
	return nil, errSlowPath
}

func (p *fastParser) literal(lit string) bool {
	if len(p.data)-p.i >= len(lit) && string(p.data[p.i:p.i+len(lit)]) == lit {
		p.i += len(lit)
		return true
	}
	return false
}

func (p *fastParser) object(n *Node, depth int) (*Node, error) {
	if depth >= MaxDepth {
		return nil, errSlowPath
	}
	p.i++ // {
	n.Kind = Object
	p.ws()
	if p.peek() == '}' {
		p.i++
		return n, nil
	}
	// Duplicate keys: a linear scan while the object is small (objects in
	// specs have a handful of keys), a set once it grows (maps such as
	// Environment), so a large object stays linear as in the token-based
	// reader.
	var seen map[string]bool
	for {
		p.ws()
		if p.peek() != '"' {
			return nil, errSlowPath
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.peek() != ':' {
			return nil, errSlowPath
		}
		p.i++
		v, err := p.value(p.node(Node{parent: n, key: k}), depth+1)
		if err != nil {
			return nil, err
		}
		if seen == nil && len(n.Keys) > 16 {
			seen = make(map[string]bool, 2*len(n.Keys))
			for _, k := range n.Keys {
				seen[k] = true
			}
		}
		var dup bool
		if seen != nil {
			dup = seen[k]
			seen[k] = true
		} else {
			dup = n.Get(k) != nil
		}
		if dup {
			p.dups = append(p.dups, &DupKey{Path: v.Path(), Key: k})
		} else {
			n.Keys = append(n.Keys, k)
			n.Vals = append(n.Vals, v)
		}
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return n, nil
		default:
			return nil, errSlowPath
		}
	}
}

func (p *fastParser) array(n *Node, depth int) (*Node, error) {
	if depth >= MaxDepth {
		return nil, errSlowPath
	}
	p.i++ // [
	n.Kind = Array
	p.ws()
	if p.peek() == ']' {
		p.i++
		return n, nil
	}
	for {
		v, err := p.value(p.node(Node{parent: n, idx: len(n.Items)}), depth+1)
		if err != nil {
			return nil, err
		}
		n.Items = append(n.Items, v)
		p.ws()
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return n, nil
		default:
			return nil, errSlowPath
		}
	}
}

// str reads a string. Plain ASCII without escapes is sliced out as is;
// anything else is decoded by encoding/json, so escapes and invalid UTF-8
// come out exactly as the token-based reader has them.
func (p *fastParser) str() (string, error) {
	start := p.i
	p.i++ // "
	plain := true
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			if plain {
				return p.src[start+1 : p.i-1], nil
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.i], &s); err != nil {
				return "", errSlowPath
			}
			return s, nil
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20:
			return "", errSlowPath
		case c >= utf8.RuneSelf:
			plain = false
			p.i++
		default:
			p.i++
		}
	}
	return "", errSlowPath
}

// number reads a JSON number and returns its literal, as json.Number keeps
// it.
func (p *fastParser) number() (string, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.peek() == '-' {
		p.i++
	}
	switch {
	case p.peek() == '0':
		p.i++
	case digits() == 0:
		return "", errSlowPath
	}
	if p.peek() == '.' {
		p.i++
		if digits() == 0 {
			return "", errSlowPath
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if digits() == 0 {
			return "", errSlowPath
		}
	}
	// A number must end at a delimiter inside an object or array.
	switch p.peek() {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return p.src[start:p.i], nil
	}
	return "", errSlowPath
}
