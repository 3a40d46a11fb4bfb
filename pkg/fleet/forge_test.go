package fleet

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/forge"
)

const sha = "89abcdef0123456789abcdef0123456789abcdef"

// scripted is a Reader whose answers are given in advance, one per read;
// the last one repeats.
type scripted struct {
	reads   int
	answers []func() (map[string]forge.Status, error)
}

func (s *scripted) Statuses(context.Context, string) (map[string]forge.Status, error) {
	a := s.answers[min(s.reads, len(s.answers)-1)]
	s.reads++
	return a()
}

func states(kv ...string) func() (map[string]forge.Status, error) {
	return func() (map[string]forge.Status, error) {
		m := map[string]forge.Status{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = forge.Status{Context: kv[i], State: stateOf(kv[i+1]), Word: kv[i+1]}
		}
		return m, nil
	}
}

func failing(err error) func() (map[string]forge.Status, error) {
	return func() (map[string]forge.Status, error) { return nil, err }
}

func TestWaitOnTheForge(t *testing.T) {
	watch := Watch{Every: time.Millisecond}
	read := func(r forge.Reader) ForgeReader {
		return ForgeReader{Client: r, Contexts: map[string]string{"c1": "syslet/c1", "c2": "syslet/c2"}}
	}
	hosts := []string{"c1", "c2"}
	bg := context.Background()

	t.Run("SuccessOnceEveryNamedContextIs", func(t *testing.T) {
		r := &scripted{answers: []func() (map[string]forge.Status, error){
			states(),
			states("syslet/c1", "pending", "other", "failure"), // another context's failure is not ours
			failing(&forge.Error{Code: 502}),
			states("syslet/c1", "success", "syslet/c2", "pending"),
			states("syslet/c1", "success", "syslet/c2", "success"),
		}}
		var changes []string
		var retries int
		w := watch
		w.Changed = func(h string, r Report) { changes = append(changes, h+"="+r.Word) }
		w.Retrying = func(error) { retries++ }
		res, err := Wait(bg, read(r), sha, hosts, 2, w)
		if err != nil || res.Verdict != Met || r.reads != 5 || retries != 1 {
			t.Fatalf("%+v %v after %d reads", res, err, r.reads)
		}
		if got := strings.Join(changes, " "); got != "c1=pending c1=success c2=pending c2=success" {
			t.Errorf("changes: %s", got)
		}
	})
	t.Run("FailsFastOnTheFirstFailure", func(t *testing.T) {
		r := &scripted{answers: []func() (map[string]forge.Status, error){
			states("syslet/c2", "error"), // c1 has not even started
		}}
		res, err := Wait(bg, read(r), sha, hosts, 2, watch)
		if err != nil || res.Verdict != Unreachable || strings.Join(res.Failed, ",") != "c2" || r.reads != 1 {
			t.Fatalf("%+v %v", res, err)
		}
	})
	t.Run("UnknownWordsNeverPromote", func(t *testing.T) {
		r := &scripted{answers: []func() (map[string]forge.Status, error){states("syslet/c1", "success", "syslet/c2", "warning")}}
		if res, _ := Wait(bg, read(r), sha, hosts, 2, watch); res.Verdict != Unreachable {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("PermanentErrorsEndIt", func(t *testing.T) {
		r := &scripted{answers: []func() (map[string]forge.Status, error){failing(&forge.Error{Code: 404, Msg: ": Not Found"})}}
		if _, err := Wait(bg, read(r), sha, hosts, 2, watch); err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("StillPendingWhenTimeRunsOut", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
		defer cancel()
		r := &scripted{answers: []func() (map[string]forge.Status, error){states("syslet/c1", "success"), failing(&forge.Error{Code: 503})}}
		res, err := Wait(ctx, read(r), sha, hosts, 2, watch)
		if err != nil || res.Verdict != Undecided || !errors.Is(ctx.Err(), context.DeadlineExceeded) || res.Err == nil {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

// stateOf is the forge's reading of the few words these tests use.
func stateOf(word string) forge.State {
	switch word {
	case "success":
		return forge.Success
	case "pending":
		return forge.Pending
	}
	return forge.Failure
}
