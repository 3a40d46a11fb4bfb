package render_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/load"
)

// permutations returns every ordering of items.
func permutations(items []string) [][]string {
	if len(items) <= 1 {
		return [][]string{append([]string(nil), items...)}
	}
	var out [][]string
	for i := range items {
		rest := append(append([]string(nil), items[:i]...), items[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{items[i]}, p...))
		}
	}
	return out
}

// object writes a JSON object with its members in the given key order.
func object(members map[string]string, order []string) string {
	var parts []string
	for _, k := range order {
		q, _ := json.Marshal(k)
		parts = append(parts, string(q)+":"+members[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestKeyOrderNeverReachesUnits renders one container spec with its
// [Container] keys, its sections and its Environment map in every order
// and requires byte-identical units: JSON key order carries no meaning,
// and generators (CUE, jq) reorder keys freely.
func TestKeyOrderNeverReachesUnits(t *testing.T) {
	container := map[string]string{
		"Image":       `"registry.example/web:1"`,
		"PublishPort": `["8080:80","8443:443"]`,
		"Environment": `{"B":"2","A":"1 and 2"}`,
		"Volume":      `"data.volume:/data"`,
		"Label":       `"tier=web"`,
	}
	sections := map[string]string{
		"Unit":    `{"After":"db.service","Description":"web"}`,
		"Service": `{"TimeoutStartSec":"30","Restart":"on-failure"}`,
		"X-Mine":  `{"Note":"x"}`,
		"Install": `{"WantedBy":"multi-user.target"}`,
	}
	var want string
	n := 0
	keys := []string{"Image", "PublishPort", "Environment", "Volume", "Label"}
	secOrders := permutations([]string{"Unit", "Container", "Service", "X-Mine", "Install"})
	for i, ko := range permutations(keys) {
		// Every key order, each with a different section order (cycling
		// through all 120 of them) keeps the test fast but complete for
		// both.
		sections["Container"] = object(container, ko)
		so := secOrders[i%len(secOrders)]
		stream := `{"apiVersion":"v1","type":"volume","name":"data","unit":{}}` + "\n" +
			`{"name":"web","unit":` + object(sections, so) + `,"type":"container","apiVersion":"v1"}`
		set := load.Bytes("perm.json", []byte(stream))
		if set.Report.HasErrors() {
			t.Fatalf("%s\n%s", stream, set.Report.String())
		}
		var got strings.Builder
		for _, u := range set.Out.Units {
			got.Write(u.Bytes())
		}
		if n == 0 {
			want = got.String()
		} else if got.String() != want {
			t.Fatalf("key order %v, section order %v changed the units:\n%s\nwant\n%s", ko, so, got.String(), want)
		}
		n++
	}
	if n != 120 {
		t.Fatalf("checked %d orders, want 120", n)
	}
	if !strings.Contains(want, "PublishPort=8080:80\nPublishPort=8443:443\n") {
		t.Errorf("values of one key must keep their order:\n%s", want)
	}
}
