package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/verdict"
)

func TestLockTimeoutNamesHolder(t *testing.T) {
	root := t.TempDir()
	first, err := acquire(context.Background(), nil, root, time.Second, Holder{PID: 4242, Since: time.Now(), Source: "git infra@abc"}, newSeenView())
	if err != nil {
		t.Fatal(err)
	}
	defer first.unlock()
	log := newSeenView()
	t0 := time.Now()
	_, err = acquire(context.Background(), nil, root, 300*time.Millisecond, Holder{PID: os.Getpid()}, log)
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("want ErrLockTimeout, got %v", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("timeout took %s", d)
	}
	for _, want := range []string{"pid 4242", "git infra@abc"} {
		if !strings.Contains(err.Error(), want) || !slices.ContainsFunc(log.Calls("Waiting"), func(c string) bool { return strings.Contains(c, want) }) {
			t.Errorf("error %q and the view's wait %q should name %q", err, log.Calls("Waiting"), want)
		}
	}
	if who, busy, _ := held(root); !busy || who.PID != 4242 {
		t.Errorf("held() = %+v %v, want pid 4242", who, busy)
	}
}

func TestLockWaitEndsOnStop(t *testing.T) {
	root := t.TempDir()
	first, err := acquire(context.Background(), nil, root, 0, Holder{PID: 1, Source: "x"}, newSeenView())
	if err != nil {
		t.Fatal(err)
	}
	defer first.unlock()
	stop := make(chan struct{})
	go func() { time.Sleep(200 * time.Millisecond); close(stop) }()
	_, err = acquire(context.Background(), stop, root, 0, Holder{PID: 2}, newSeenView())
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err = acquire(ctx, nil, root, 0, Holder{PID: 2}, newSeenView()); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cancelled context: want ErrInterrupted, got %v", err)
	}
}

func TestLockIsReleased(t *testing.T) {
	root := t.TempDir()
	l, err := acquire(context.Background(), nil, root, time.Second, Holder{PID: 1}, newSeenView())
	if err != nil {
		t.Fatal(err)
	}
	l.unlock()
	if _, busy, _ := held(root); busy {
		t.Fatal("released lock still held")
	}
	l2, err := acquire(context.Background(), nil, root, time.Second, Holder{PID: 2}, newSeenView())
	if err != nil {
		t.Fatal(err)
	}
	l2.unlock()
}

// holdDuring starts an apply of stack on h that stops inside its
// daemon-reload until the returned release is called, and waits until it
// is there (holding the apply lock).
func holdDuring(t *testing.T, h *fakeHost, specs string) (release func() ran) {
	t.Helper()
	inside, proceed := make(chan struct{}), make(chan struct{})
	h.before = func(c string) {
		if c == "daemon-reload" {
			close(inside)
			<-proceed
		}
	}
	done := make(chan ran, 1)
	go func() { done <- h.run(t, h.request(specs)) }()
	select {
	case <-inside:
	case r := <-done:
		t.Fatalf("the first apply ended before its daemon-reload: %v", r.err)
	}
	return func() ran {
		close(proceed)
		return <-done
	}
}

// A second apply while one runs waits for the lock, names the run holding
// it, and gives up after LockTimeout having changed and journalled
// nothing; the first finishes unharmed.
func TestRunWaitsForTheLock(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, stack)
	release := holdDuring(t, h, specs)
	before := len(h.Calls())

	req := h.request(specs)
	req.LockTimeout = 300 * time.Millisecond
	req.Source = "git infra@def"
	t0 := time.Now()
	second := h.run(t, req)
	if !errors.Is(second.err, ErrLockTimeout) {
		t.Fatalf("second apply: err = %v, want ErrLockTimeout", second.err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("the lock wait took %s with a 300ms timeout", d)
	}
	for _, want := range []string{"within 300ms", fmt.Sprintf("held by pid %d", os.Getpid()), "source " + specs} {
		if !strings.Contains(second.err.Error(), want) {
			t.Errorf("error %q lacks %q", second.err, want)
		}
	}
	if !second.view.has("Waiting pid") {
		t.Errorf("the wait was not announced: %q", second.view.Calls())
	}
	if got := h.Calls()[before:]; len(got) != 0 {
		t.Errorf("the waiting apply asked the host %q", got)
	}
	if second.out.Plan != nil || second.out.RunID != "" || second.out.Error == "" {
		t.Errorf("a run that never got the lock has plan %v, run %q", second.out.Plan, second.out.RunID)
	}
	if runs := h.runs(t); len(runs) != 1 || runs[0].End != nil {
		t.Errorf("journal holds %d runs; want only the first, still open", len(runs))
	}

	first := release()
	if first.err != nil || first.out.Summary != "16 applied, 0 failed, 0 not reached" {
		t.Fatalf("first apply: %v (%s)", first.err, first.out.Summary)
	}
	if _, busy, _ := held(h.root); busy {
		t.Error("the lock is held after both runs")
	}
}

// A run waiting for the lock stops waiting once podman's converter finds
// errors in its specs: those errors, not the wait, are the news.
func TestLockWaitEndsOnInvalidSpecs(t *testing.T) {
	h := newHost(t)
	release := holdDuring(t, h, writeSpecs(t, stack))
	defer release()

	req := h.request(writeSpecs(t, newerPodman))
	req.LockTimeout = 0 // for ever: only the verdict can end the wait
	done := make(chan ran, 1)
	go func() { done <- h.run(t, req) }()
	select {
	case r := <-done:
		if r.out.Verdict != verdict.Invalid || !strings.Contains(r.out.Summary, "for podman 5.4") {
			t.Fatalf("err = %v (%s), want ErrInvalid for podman 5.4", r.err, r.out.Summary)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the run kept waiting for the lock with invalid specs")
	}
}

// The lock file deleted by hand while held: a second apply still waits
// (the directory stays locked), names the holder from the kernel's lock
// table, and takes the lock once the first lets go; --diff still sees an
// apply in progress.
func TestLockFileDeletedWhileHeld(t *testing.T) {
	root := t.TempDir()
	first, err := acquire(context.Background(), nil, root, time.Second, Holder{PID: os.Getpid(), Since: time.Now(), Source: "first"}, newSeenView())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(layout.Under(root, layout.LockFile)); err != nil {
		t.Fatal(err)
	}
	log := newSeenView()
	_, err = acquire(context.Background(), nil, root, 300*time.Millisecond, Holder{PID: 2}, log)
	if !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(err.Error(), "deleted") {
		t.Fatalf("a second apply must still wait for the holder: %v", err)
	}
	if who, busy, _ := held(root); !busy || who.PID != os.Getpid() {
		t.Errorf("held() = %+v %v, want busy, pid %d", who, busy, os.Getpid())
	}
	// A run waiting with the new lock file locked does not hide the
	// holder from the next one, nor from --diff.
	waiting := make(chan *lock, 1)
	go func() {
		l, err := acquire(context.Background(), nil, root, 10*time.Second, Holder{PID: 5, Source: "waiter"}, newSeenView())
		if err != nil {
			t.Error(err)
		}
		waiting <- l
	}()
	time.Sleep(300 * time.Millisecond)
	if _, err := acquire(context.Background(), nil, root, 300*time.Millisecond, Holder{PID: 6}, log); !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("behind a waiter: %v", err)
	}
	if who, busy, _ := held(root); !busy || who.PID != os.Getpid() {
		t.Errorf("held() behind a waiter = %+v %v", who, busy)
	}
	first.unlock()
	if l := <-waiting; l != nil {
		l.unlock()
	}
	second, err := acquire(context.Background(), nil, root, time.Second, Holder{PID: 3, Source: "second"}, newSeenView())
	if err != nil {
		t.Fatal(err)
	}
	defer second.unlock()
	if who, busy, _ := held(root); !busy || who.PID != 3 {
		t.Errorf("held() after the new holder took it = %+v %v", who, busy)
	}
}
