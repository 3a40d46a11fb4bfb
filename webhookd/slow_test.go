package webhookd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/webhookd/queue"
)

// slowClients is how many clients trickle their bodies in these tests.
const slowClients = 200

// slowClient opens a hook request with complete headers and then sends
// its 1000-byte body one byte a second. It returns what the server
// answered ("" when it closed without a word), or "stopped" once stop is
// closed. After 20 s with neither it gives up, so that a server which
// never cuts a slow body off fails the test instead of hanging it.
func slowClient(addr string, stop <-chan struct{}) string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /hooks/infra HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\nX-GitHub-Delivery: slow\r\nContent-Length: 1000\r\n\r\n")
	answered := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(c).ReadString('\n')
		answered <- strings.TrimSpace(line)
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	giveUp := time.After(20 * time.Second)
	for {
		select {
		case a := <-answered:
			return a
		case <-stop:
			return "stopped"
		case <-giveUp:
			return "still open after 20s"
		case <-tick.C:
			if _, err := c.Write([]byte("x")); err != nil {
				return <-answered
			}
		}
	}
}

// startSlowClients starts the clients; each sends its result on the
// channel it returns.
func startSlowClients(addr string, stop <-chan struct{}) <-chan string {
	answers := make(chan string, slowClients)
	for range slowClients {
		go func() { answers <- slowClient(addr, stop) }()
	}
	return answers
}

// serveOn serves the daemon on a loopback port until the test ends.
func serveOn(t *testing.T, d *Daemon) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, ln, func() { close(ready) }) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	<-ready
	return ln.Addr().String()
}

// TestSlowBodiesHoldNoSlot: bodies are read before a request takes one of
// the slots, so two hundred clients trickling theirs a byte a second do
// not keep a forge's delivery out, and each of them is cut off (408).
// Nothing here is timed: the first part holds the slow clients open for
// as long as it needs them, and shows the push answered and deployed while
// all of them are still being read.
func TestSlowBodiesHoldNoSlot(t *testing.T) {
	t.Run("APushIsAnsweredWhileTheyAreRead", func(t *testing.T) {
		f := newFixture(t, &fakeDeployer{}, "")
		f.d.bodyGrace, f.d.bodyTimeout = time.Hour, time.Hour
		a := f.remote.commit(`{"v":"a"}`)
		addr := serveOn(t, f.d)
		stop := make(chan struct{})
		answers := startSlowClients(addr, stop)
		// A body being read holds at least its first 4 KiB buffer: once
		// the daemon holds that much for each, all of them are being read.
		for deadline := time.Now().Add(20 * time.Second); f.d.buffering.Load() < slowClients*4096; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("after 20s, %d bytes held for slow bodies, want %d", f.d.buffering.Load(), slowClients*4096)
			}
		}

		body := withNonce(pushBody("refs/heads/main", a), "real")
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hooks/infra", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-GitHub-Delivery", "real")
		req.Header.Set("X-Hub-Signature-256", "sha256="+sign([]byte(testSecret), body))
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("the real push among the slow clients: %d, want 202", resp.StatusCode)
		}
		f.wait("a applied", func(s queue.RepoStatus) bool { return s.LastApplied == a })
		if n := len(answers); n != 0 {
			t.Errorf("%d slow clients were answered before the push was deployed; want all still being read", n)
		}
		if held := f.d.buffering.Load(); held < slowClients*4096 {
			t.Errorf("%d bytes held for slow bodies after the push, want all %d bodies still being read", held, slowClients)
		}
		close(stop)
		for range slowClients {
			if a := <-answers; a != "stopped" {
				t.Errorf("a slow client got %q before the test ended it", a)
			}
		}
	})

	t.Run("EachIsCutOff", func(t *testing.T) {
		f := newFixture(t, &fakeDeployer{}, "")
		addr := serveOn(t, f.d)
		answers := startSlowClients(addr, nil)
		cut := 0
		for range slowClients {
			if a := <-answers; strings.HasPrefix(a, "HTTP/1.1 408") {
				cut++
			} else {
				t.Errorf("a slow client got %q, want 408", a)
			}
		}
		want := fmt.Sprintf(`webhookd_deliveries_total{outcome=%q,repo="infra"} %d`, OutcomeTooSlow, slowClients)
		if cut != slowClients || !strings.Contains(f.metrics(), want) {
			t.Errorf("%d of %d slow clients cut off with 408; metrics lack %s", cut, slowClients, want)
		}
	})
}
