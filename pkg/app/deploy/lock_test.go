package deploy

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestLockTimeoutNamesHolder(t *testing.T) {
	root := t.TempDir()
	first, err := acquire(context.Background(), nil, root, time.Second, Holder{PID: 4242, Since: time.Now(), Source: "git infra@abc"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.release()
	var log bytes.Buffer
	t0 := time.Now()
	_, err = acquire(context.Background(), nil, root, 300*time.Millisecond, Holder{PID: os.Getpid()}, &log)
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("want ErrLockTimeout, got %v", err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("timeout took %s", d)
	}
	for _, want := range []string{"pid 4242", "git infra@abc"} {
		if !strings.Contains(err.Error(), want) || !strings.Contains(log.String(), want) {
			t.Errorf("error %q and log %q should name %q", err, log.String(), want)
		}
	}
	if who, busy := held(root); !busy || who.PID != 4242 {
		t.Errorf("held() = %+v %v, want pid 4242", who, busy)
	}
}

func TestLockWaitEndsOnStop(t *testing.T) {
	root := t.TempDir()
	first, err := acquire(context.Background(), nil, root, 0, Holder{PID: 1, Source: "x"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.release()
	stop := make(chan struct{})
	go func() { time.Sleep(200 * time.Millisecond); close(stop) }()
	_, err = acquire(context.Background(), stop, root, 0, Holder{PID: 2}, &bytes.Buffer{})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err = acquire(ctx, nil, root, 0, Holder{PID: 2}, &bytes.Buffer{}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cancelled context: want ErrInterrupted, got %v", err)
	}
}

func TestLockIsReleased(t *testing.T) {
	root := t.TempDir()
	l, err := acquire(context.Background(), nil, root, time.Second, Holder{PID: 1}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	l.release()
	if _, busy := held(root); busy {
		t.Fatal("released lock still held")
	}
	l2, err := acquire(context.Background(), nil, root, time.Second, Holder{PID: 2}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	l2.release()
}
