package load

import (
	"testing"

	"github.com/syslet/syslet/pkg/spec"
)

// TestJoinIsStable: the stream an apply stores, or a generation keeps,
// reads back with the digest of the input it came from.
func TestJoinIsStable(t *testing.T) {
	for _, srcs := range [][]spec.Source{
		{{Name: "a.json", Data: []byte(`{"a":1}`)}, {Name: "b.json", Data: []byte("[{\"b\":2}]\n")}},
		{{Name: "stdin", Data: []byte("{\"a\":1}\n{\"b\":2}\n")}},
		{{Name: "empty", Data: nil}},
	} {
		first := Sources(srcs)
		again := Bytes("stored", first.Stream())
		if first.Digest() != again.Digest() || string(first.Stream()) != string(again.Stream()) {
			t.Errorf("%v: digest %s, read back %s", srcs, first.Digest(), again.Digest())
		}
	}
}
