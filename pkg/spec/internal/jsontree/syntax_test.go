package jsontree

import (
	"strings"
	"testing"
)

// TestSyntaxErrorsQuoteNothing: a syntax error says where the input stops
// being JSON, never what it holds there (the input may be a file that was
// never meant as specs).
func TestSyntaxErrorsQuoteNothing(t *testing.T) {
	for _, in := range []string{
		"root_password=OUTSIDE-SECRET",
		`{"apiVersion":"v1"} OUTSIDE-SECRET`,
		`{"a":"\qSECRET"}`,
		`{"a" SECRET}`,
		`[1, SECRET]`,
		`{"a":1,S}`,
		"\x00SECRET",
	} {
		_, _, err := DecodeStream([]byte(in))
		if err == nil {
			t.Errorf("%q decodes", in)
			continue
		}
		for _, c := range []string{"'S'", "'O'", "'r'", "'q'", `'\x00'`, "SECRET"} {
			if strings.Contains(err.Error(), c) {
				t.Errorf("%q: error %q quotes the input (%s)", in, err, c)
			}
		}
		if !strings.HasPrefix(err.Error(), "line 1, column ") {
			t.Errorf("%q: error %q does not locate the problem", in, err)
		}
	}
}

// TestTrailingComma: a comma before a closing bracket is named as what it
// is, at the comma's line and column.
func TestTrailingComma(t *testing.T) {
	for in, want := range map[string]string{
		"{\"apiVersion\": \"v1\",\n  \"unit\": {},\n}\n": "line 2, column 13: trailing comma before '}': JSON allows none; delete this comma",
		`[{"a": ["x", "y",]}]`:                           "line 1, column 17: trailing comma before ']': JSON allows none; delete this comma",
		"[{\"a\": 1},\n]":                                "line 1, column 10: trailing comma before ']': JSON allows none; delete this comma",
		`{"a": 1,, "b": 2}`:                              "line 1, column 9: invalid character looking for beginning of object key string",
	} {
		_, _, err := DecodeStream([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
}

// TestMissingComma: a member or item added without the comma before it is
// named as what it is, where the new value starts.
func TestMissingComma(t *testing.T) {
	const missing = "missing comma: a new value starts here, and the one before it ends without a ','"
	for in, want := range map[string]string{
		"{\"apiVersion\": \"v1\"\n  \"type\": \"volume\"}": "line 2, column 3: " + missing,
		"[{\"a\": 1}\n {\"b\": 2}]":                        "line 2, column 2: " + missing,
		`{"a": ["x" "y"]}`:                                 "line 1, column 12: " + missing,
		`{"a": 1 }}`:                                       "line 1, column 10: invalid character looking for beginning of value",
	} {
		_, _, err := DecodeStream([]byte(in))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", in, err, want)
		}
	}
}
