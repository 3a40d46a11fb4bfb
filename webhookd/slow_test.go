package webhookd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowClient opens a hook request with complete headers and then sends
// its body one byte a second, until the server ends the request; it
// reports what the server answered ("" when it closed without a word)
// and how long the connection was held.
func slowClient(addr string, length int, out chan<- string, held chan<- time.Duration) {
	t0 := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		out <- "dial: " + err.Error()
		held <- 0
		return
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /hooks/infra HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\nX-GitHub-Delivery: slow\r\nContent-Length: %d\r\n\r\n", length)
	answered := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(c).ReadString('\n')
		answered <- strings.TrimSpace(line)
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for sent := 0; sent < length; sent++ {
		select {
		case a := <-answered:
			out <- a
			held <- time.Since(t0)
			return
		case <-tick.C:
			if _, err := c.Write([]byte("x")); err != nil {
				out <- <-answered
				held <- time.Since(t0)
				return
			}
		case <-time.After(20 * time.Second):
			out <- "still open after 20s"
			held <- time.Since(t0)
			return
		}
	}
	out <- "sent it all"
	held <- time.Since(t0)
}

// TestSlowBodiesHoldNoSlot: two hundred clients that send their headers
// and then a byte a second are cut off (408) soon after bodyGrace, and a
// correctly signed push arriving meanwhile is answered 202 at once and
// deployed — slow bodies are read outside the slots.
func TestSlowBodiesHoldNoSlot(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- f.d.Serve(ctx, ln, func() { close(ready) }) }()
	defer func() {
		cancel()
		<-done
	}()
	<-ready
	addr := ln.Addr().String()

	const clients = 200
	answers, held := make(chan string, clients), make(chan time.Duration, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() { slowClient(addr, 1000, answers, held) })
	}
	time.Sleep(500 * time.Millisecond) // all connected, headers sent, bodies trickling

	body := withNonce(pushBody("refs/heads/main", a), "real")
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/hooks/infra", bytes.NewReader(body))
	req.Header.Set("X-GitHub-Event", "push")
	req.Header.Set("X-GitHub-Delivery", "real")
	req.Header.Set("X-Hub-Signature-256", "sha256="+sign([]byte(testSecret), body))
	t0 := time.Now()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	must(t, err)
	resp.Body.Close()
	if took := time.Since(t0); resp.StatusCode != http.StatusAccepted || took > time.Second {
		t.Fatalf("the real push during the attack: %d after %s, want 202 within 1s", resp.StatusCode, took)
	}
	f.wait("a applied", func(s RepoStatus) bool { return s.LastApplied == a })

	wg.Wait()
	close(answers)
	close(held)
	var longest time.Duration
	for d := range held {
		longest = max(longest, d)
	}
	cut := 0
	for a := range answers {
		if strings.HasPrefix(a, "HTTP/1.1 408") {
			cut++
		} else {
			t.Errorf("a slow client got %q, want 408", a)
		}
	}
	if cut != clients || longest > bodyGrace+4*time.Second {
		t.Errorf("%d of %d slow clients cut off with 408; the longest was held %s (want under %s)", cut, clients, longest, bodyGrace+4*time.Second)
	}
}
