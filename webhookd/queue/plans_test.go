package queue

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/config"
)

// TestPlansKeepTheLastDeploys: the page's plans stay few, private, and
// only run ids name files.
func TestPlansKeepTheLastDeploys(t *testing.T) {
	s := planStore{dir: filepath.Join(t.TempDir(), "plans", "infra")}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range keepAttempts + 5 {
		id := fmt.Sprintf("%s-%06x", at.Add(time.Duration(i)*time.Second).Format("20060102T150405Z"), i)
		ids = append(ids, id)
		must(t, s.save(id, "plan "+id+"\n"))
	}
	ents, err := os.ReadDir(s.dir)
	must(t, err)
	if len(ents) != keepAttempts {
		t.Fatalf("%d plans kept, want %d", len(ents), keepAttempts)
	}
	for _, e := range ents {
		fi, err := e.Info()
		must(t, err)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %o, want 0600", e.Name(), fi.Mode().Perm())
		}
	}
	if p, err := s.load(ids[0]); err != nil || p != "" {
		t.Errorf("the oldest plan is still there: %q %v", p, err)
	}
	if p, err := s.load(ids[len(ids)-1]); err != nil || p != "plan "+ids[len(ids)-1]+"\n" {
		t.Errorf("the newest plan: %q %v", p, err)
	}
	for _, bad := range []string{"../../status", "run-1", ""} {
		must(t, s.save(bad, "x"))
		if p, err := s.load(bad); err != nil || p != "" {
			t.Errorf("%q names a plan: %q %v", bad, p, err)
		}
	}
}

// TestRecentAttemptsAreBounded: the status keeps the last keepAttempts.
func TestRecentAttemptsAreBounded(t *testing.T) {
	b, _, err := openBoard(&config.Repo{Name: "infra"}, filepath.Join(t.TempDir(), "infra.json"))
	must(t, err)
	for i := range keepAttempts + 3 {
		must(t, b.finished(&Attempt{Commit: fmt.Sprint(i), Verdict: verdict.Applied}))
	}
	p := b.read()
	if len(p.Recent) != keepAttempts || p.Recent[0].Commit != "3" || p.Recent[keepAttempts-1].Commit != fmt.Sprint(keepAttempts+2) {
		t.Errorf("recent: %d attempts, first %s", len(p.Recent), p.Recent[0].Commit)
	}
}
