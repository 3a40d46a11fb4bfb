package jsontree

import (
	"encoding/json"
	"strconv"
)

// Node is a JSON value that keeps object keys in document order, so a
// unit's keys render in the order the user wrote them, and that can tell
// its own JSON path for error messages. The path is computed on demand
// from the parent chain: storing each level's full path would cost memory
// quadratic in the nesting depth. The fields are read-only for callers:
// the place in the tree (parent, key, index) is set by the readers alone,
// so Path cannot disagree with where a node was found.
type Node struct {
	Kind  Kind
	Text  string // string value, or the literal of a number / bool
	Keys  []string
	Vals  []*Node // object values, parallel to Keys
	Items []*Node // array items

	parent *Node
	root   string // the path of a top-level value ("[3]")
	key    string // member name in the parent object
	idx    int    // item index in the parent array
}

// Path returns the node's JSON path: ".key", ["key"] or "[i]" steps from
// the top-level value.
func (n *Node) Path() string {
	if n.parent == nil {
		return n.root
	}
	// Built in one buffer from the top down: every key of every unit asks
	// for its path, and joining level by level allocates once per level.
	var stack [MaxDepth + 2]*Node
	depth := 0
	top := n
	for ; top.parent != nil && depth < len(stack); top = top.parent {
		stack[depth] = top
		depth++
	}
	b := make([]byte, 0, 64)
	if top.parent != nil { // deeper than any input the readers accept
		b = append(b, top.Path()...)
	} else {
		b = append(b, top.root...)
	}
	for i := depth - 1; i >= 0; i-- {
		c := stack[i]
		switch {
		case c.parent.Kind != Object:
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

// Kind is the JSON type of a Node. Its String is worded for messages
// ("got a number").
type Kind int

const (
	Null Kind = iota
	String
	Number
	Bool
	Object
	Array
)

func (k Kind) String() string {
	return [...]string{"null", "a string", "a number", "a boolean", "an object", "an array"}[k]
}

// Get returns the value of an object member, or nil. A linear scan:
// objects in specs have a handful of keys, and a map per object would
// cost an allocation each.
func (n *Node) Get(key string) *Node {
	for i, k := range n.Keys {
		if k == key {
			return n.Vals[i]
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

// Child forms the JSON path of an object member: .key, or ["key"] when the
// key is not a plain identifier. It is Path's wording, for a member that
// is missing and so has no node to ask.
func Child(path, key string) string {
	if isIdent(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	q, _ := json.Marshal(key)
	return path + "[" + string(q) + "]"
}

// Index forms the JSON path of an array item: [i].
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
