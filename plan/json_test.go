package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/render"
)

// flatAction is Action as it was before its payload moved behind a
// pointer: every field its own, in the order encoding/json writes them.
// Its encoding is what Action's must stay, byte for byte.
type flatAction struct {
	Step         Step              `json:"step"`
	Op           Op                `json:"op"`
	Target       string            `json:"target"`
	Reason       string            `json:"reason,omitempty"`
	Unit         string            `json:"unit,omitempty"`
	Content      []byte            `json:"-"`
	Mode         uint32            `json:"mode,omitempty"`
	Link         string            `json:"link,omitempty"`
	Pull         *host.PullOptions `json:"pull,omitempty"`
	Carried      bool              `json:"carried,omitempty"`
	Irreversible bool              `json:"irreversible,omitempty"`
	Digest       string            `json:"digest,omitempty"`
	Files        []render.DirFile  `json:"files,omitempty"`
	Root         string            `json:"root,omitempty"`
	Secret       *render.Secret    `json:"-"`
	Key          string            `json:"key,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	Size         int               `json:"size,omitempty"`
}

func flat(a Action) flatAction {
	d := a.Data()
	return flatAction{Step: a.Step, Op: a.Op, Target: a.Target, Reason: a.Reason, Unit: a.Unit, Content: d.Content, Mode: d.Mode,
		Link: d.Link, Pull: d.Pull, Carried: a.Carried, Irreversible: a.Irreversible, Digest: d.Digest, Files: d.Files,
		Root: d.Root, Secret: d.Secret, Key: d.Key, Labels: d.Labels}
}

// randomAction draws an action whose strings mix the cases encoding/json
// escapes (HTML characters, quotes, control characters, invalid UTF-8,
// U+2028) with plain ones, and whose optional fields are set or not.
func randomAction(r *rand.Rand) Action {
	pieces := []string{"", "web.service", "/etc/containers/systemd/web.container", "a<b>&c", `q"uote\back`, "tab\there\nnl",
		"\x01\x1f", "caf\u00e9", "\u2028\u2029", "bad\xffutf8", "\xe2\x80", "emoji \U0001F600", "ok"}
	s := func() string {
		var b []byte
		for range r.IntN(3) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		return string(b)
	}
	a := Action{Step: Step(r.IntN(10)), Op: Op(s()), Target: s(), Reason: s(), Unit: s(), Carried: r.IntN(2) == 0, Irreversible: r.IntN(2) == 0}
	if r.IntN(3) == 0 {
		return a
	}
	p := &Payload{Link: s(), Digest: s(), Root: s(), Key: s()}
	if r.IntN(2) == 0 {
		p.Mode = uint32(r.IntN(0o1000))
		p.Content = []byte(s())
	}
	if r.IntN(3) == 0 {
		retry := uint(3)
		p.Pull = &host.PullOptions{Arch: s(), Retry: &retry, AuthFile: s()}
	}
	switch r.IntN(3) {
	case 0:
		p.Files = []render.DirFile{{Name: s(), Mode: 0o644}, {Name: s()}}
	case 1:
		p.Files = []render.DirFile{}
	}
	switch r.IntN(3) {
	case 0:
		p.Labels = map[string]string{"syslet/hash": s(), s(): s()}
	case 1:
		p.Labels = map[string]string{}
	}
	a.Payload = p
	return a
}

func TestActionJSONIsTheFlatForm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		a := randomAction(r)
		got, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(flat(a))
		if !bytes.Equal(got, want) {
			t.Fatalf("#%d json.Marshal:\n got %s\nwant %s", i, got, want)
		}
		for _, html := range []bool{true, false} {
			var g, w bytes.Buffer
			ge, we := json.NewEncoder(&g), json.NewEncoder(&w)
			ge.SetEscapeHTML(html)
			we.SetEscapeHTML(html)
			if err := ge.Encode(a); err != nil {
				t.Fatal(err)
			}
			_ = we.Encode(flat(a))
			if !bytes.Equal(g.Bytes(), w.Bytes()) {
				t.Fatalf("#%d Encoder (escape HTML %t):\n got %s\nwant %s", i, html, g.Bytes(), w.Bytes())
			}
		}
		var back Action
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		// (Invalid UTF-8 reads back as U+FFFD, so it is compared with the
		// flat form of what was read, not with the first encoding.)
		again, _ := json.Marshal(back)
		if want, _ := json.Marshal(flat(back)); !bytes.Equal(again, want) {
			t.Fatalf("#%d read back and written again:\n got %s\nwant %s", i, again, want)
		}
	}
}

// The digest is the one json.Encoder made of the flat form, action by
// action: plans saved, journalled and compared before the payload moved
// keep their digests.
func TestDigestIsTheFlatFormsDigest(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p := &Plan{}
	for range 2000 {
		p.Actions = append(p.Actions, randomAction(r))
	}
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, a := range p.Actions {
		_ = enc.Encode(flat(a))
	}
	if got, want := p.Digest(), hex.EncodeToString(h.Sum(nil)); got != want {
		t.Fatalf("digest %s, the flat form's %s", got, want)
	}
}
