package docpage

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
)

// A generator documents definitions where they are written: constants
// and struct fields with their comments, read from the Go source, so a
// rule's or a field's meaning has one home (its comment) and the
// reference pages follow it.

// Const is one constant of a Go file.
type Const struct {
	Name  string
	Value string // a string literal's value, else the expression as written
	Doc   string // its doc or line comment, as one line
}

// Consts returns the constants declared in file, in order.
func Consts(file string) ([]Const, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var out []Const
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			doc := comment(v.Doc, v.Comment)
			for i, n := range v.Names {
				c := Const{Name: n.Name, Doc: doc}
				if i < len(v.Values) {
					c.Value = exprString(v.Values[i])
				}
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// Field is one field of a struct type.
type Field struct {
	Name string
	Type string // as written: "string", "*TLSConfig", "[]Repo"
	Key  string // the field's name under the tag key asked for ("" without one)
	Doc  string
}

// Fields returns the fields of the struct type name declared in file, in
// order; key names the struct tag whose name each field is known by
// (yaml, json).
func Fields(file, name, key string) ([]Field, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var out []Field
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != name {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		found = true
		for _, fl := range st.Fields.List {
			var tag string
			if fl.Tag != nil {
				raw, _ := strconv.Unquote(fl.Tag.Value)
				tag, _, _ = strings.Cut(reflect.StructTag(raw).Get(key), ",")
			}
			for _, n := range fl.Names {
				out = append(out, Field{Name: n.Name, Type: exprString(fl.Type), Key: tag, Doc: comment(fl.Doc, fl.Comment)})
			}
		}
		return false
	})
	if !found {
		return nil, fmt.Errorf("%s: no struct type %s", file, name)
	}
	return out, nil
}

// Literals returns, for every composite literal in file that sets all the
// given keys to string literals, those values in the order of keys (the
// Name and Help of each Prometheus metric's options, say).
func Literals(file string, keys ...string) ([][]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		return nil, err
	}
	var out [][]string
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		vals := map[string]string{}
		for _, e := range cl.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			k, ok1 := kv.Key.(*ast.Ident)
			lit, ok2 := kv.Value.(*ast.BasicLit)
			if ok1 && ok2 && lit.Kind == token.STRING {
				vals[k.Name], _ = strconv.Unquote(lit.Value)
			}
		}
		row := make([]string, len(keys))
		for i, k := range keys {
			v, ok := vals[k]
			if !ok {
				return true
			}
			row[i] = v
		}
		out = append(out, row)
		return true
	})
	return out, nil
}

func comment(groups ...*ast.CommentGroup) string {
	var parts []string
	for _, g := range groups {
		if g != nil {
			parts = append(parts, strings.Join(strings.Fields(g.Text()), " "))
		}
	}
	return strings.Join(parts, " ")
}

func exprString(e ast.Expr) string {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, _ := strconv.Unquote(v.Value)
			return s
		}
		return v.Value
	case *ast.Ident:
		return v.Name
	case *ast.SelectorExpr:
		return exprString(v.X) + "." + v.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(v.X)
	case *ast.ArrayType:
		return "[]" + exprString(v.Elt)
	}
	return fmt.Sprintf("%T", e)
}
