package jsontree

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// streamSeed holds every JSON form specs use: objects, arrays, nested
// maps, escapes, non-ASCII text, numbers, literals, a duplicate key and a
// big object.
const streamSeed = `{"apiVersion":"v1","type":"container","name":"web","configFiles":[{"mountPath":"/etc/a","content":"x\ny \"q\" \u00e9 ü","mode":"0644"}],
 "unit":{"Container":{"Image":"img","Environment":{"A":"1","B":"two words","A":"dup"},"Volume":["a:/a","b:/b"]},"Service":{"Restart":"always"}}}
[ {"apiVersion":"v1","type":"volume","name":"v","n":-1.5e3,"t":true,"f":false,"z":null,"k-1":0,"1k":[], "o":{}} ]
{"big":{"k01":1,"k02":2,"k03":3,"k04":4,"k05":5,"k06":6,"k07":7,"k08":8,"k09":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k05":19,"k20":20}}
[]
`

// TestFastDecodeMatchesTokenReader feeds both readers the seed stream and
// thousands of mutations of it (bytes deleted, duplicated, replaced by
// JSON punctuation): whatever the fast reader accepts, the token-based
// reader must accept with the same nodes and duplicate keys.
func TestFastDecodeMatchesTokenReader(t *testing.T) {
	check := func(data []byte) bool {
		t.Helper()
		fn, fd, ferr := fastDecodeStream(data)
		if ferr != nil {
			return false
		}
		sn, sd, serr := slowDecodeStream(data)
		if serr != nil {
			t.Fatalf("fast reader accepted what the token reader refuses (%v):\n%s", serr, data)
		}
		if !reflect.DeepEqual(fn, sn) || !reflect.DeepEqual(fd, sd) {
			t.Fatalf("readers disagree on:\n%s", data)
		}
		return true
	}
	if !check([]byte(streamSeed)) {
		t.Fatal("fast reader refused the seed stream")
	}
	punct := []byte(`{}[],:" \\0-1eE.tfn`)
	rng := rand.New(rand.NewPCG(3, 4))
	accepted := 0
	for range 5000 {
		b := []byte(streamSeed)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b = append(b[:i], b[i+1:]...)
			case 1:
				b = append(b[:i+1], b[i:]...)
			default:
				b[i] = punct[rng.IntN(len(punct))]
			}
		}
		if check(b) {
			accepted++
		}
	}
	if accepted < 500 {
		t.Errorf("only %d of 5000 mutations were accepted: the test does not exercise the fast reader", accepted)
	}
}
