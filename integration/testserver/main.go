// Command testserver is the HTTP server of the test images the probe and
// zero-downtime tests deploy: one static binary, alone in a `FROM
// scratch` image (no shell, no curl: what a probe run from the host must
// judge without help from inside). Its behaviour comes from its
// environment, so one binary makes every image a test needs:
//
//	MARKER      what GET / answers (default "testserver")
//	LISTEN      where to listen without systemd's sockets (default ":8080")
//	UP_STATUS   the status of GET /up (default 200), UP_BODY its body ("ok")
//	HANG        "1": GET /up is accepted and never answered
//	DELAY       how long GET / takes (a Go duration; default 0)
//	DRAIN       how long in-flight requests get after SIGTERM (default 10s)
//	DIE         "1": exit 1 at once (a dead image)
//
// With systemd's sockets (LISTEN_FDS, passed through podman) it serves
// on them and opens none of its own: a restart of its service then
// refuses no connection, they wait in the socket's backlog. GET /stats
// answers how many requests each path got (itself not counted), so a
// test can tell that a converged run made no probe request.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if os.Getenv("DIE") == "1" {
		fmt.Fprintln(os.Stderr, "testserver: DIE=1: exiting at once")
		os.Exit(1)
	}
	marker := env("MARKER", "testserver")
	upStatus, err := strconv.Atoi(env("UP_STATUS", "200"))
	if err != nil {
		fatal("UP_STATUS: %v", err)
	}
	delay, err := time.ParseDuration(env("DELAY", "0s"))
	if err != nil {
		fatal("DELAY: %v", err)
	}
	drain, err := time.ParseDuration(env("DRAIN", "10s"))
	if err != nil {
		fatal("DRAIN: %v", err)
	}
	ls, activated, err := listeners()
	if err != nil {
		fatal("%v", err)
	}

	var mu sync.Mutex
	counts := map[string]int{}
	count := func(path string) {
		mu.Lock()
		counts[path]++
		mu.Unlock()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		count("/")
		time.Sleep(delay)
		fmt.Fprintln(w, marker)
	})
	mux.HandleFunc("GET /up", func(w http.ResponseWriter, r *http.Request) {
		count("/up")
		if os.Getenv("HANG") == "1" {
			<-r.Context().Done() // accepted, never answered
			return
		}
		w.WriteHeader(upStatus)
		fmt.Fprintln(w, env("UP_BODY", "ok"))
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_ = json.NewEncoder(w).Encode(counts)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		count("other")
		http.NotFound(w, r)
	})

	// open counts the connections accepted and not yet closed.
	var open atomic.Int64
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				open.Add(1)
			case http.StateClosed, http.StateHijacked:
				open.Add(-1)
			}
		}}
	var stopping atomic.Bool
	var serving sync.WaitGroup
	for _, l := range ls {
		serving.Go(func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) && !stopping.Load() {
				fatal("serving on %s: %v", l.Addr(), err)
			}
		})
	}
	fmt.Printf("testserver %s: serving on %d socket(s) (from systemd: %v)\n", marker, len(ls), activated)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	fmt.Printf("testserver %s: draining for up to %s\n", marker, drain)
	drained := stop(srv, ls, &stopping, &serving, &open, drain)
	mu.Lock()
	served, _ := json.Marshal(counts)
	mu.Unlock()
	// What it served in its life, for a test that must show a container
	// never got a request (its log outlives it).
	fmt.Printf("testserver %s: stopped (drained: %v); served %s\n", marker, drained, served)
}

// stop stops accepting and answers every connection already accepted,
// for at most drain: what a server behind a socket systemd holds must do
// on SIGTERM. Its listeners are closed first (systemd keeps the socket
// open: connections not yet accepted wait in its backlog for the next
// server), then keep-alives are turned off (idle connections close, busy
// ones after their answer), and it waits until every connection closed.
//
// Not http.Server.Shutdown alone: a connection accepted just before it,
// whose request is read after it began, is closed unanswered (net/http
// checks shuttingDown after reading a request and returns), so the client
// reads EOF: one failed request a deploy at a few hundred requests a
// second. Shutdown runs only once nothing is in flight.
func stop(srv *http.Server, ls []net.Listener, stopping *atomic.Bool, serving *sync.WaitGroup, open *atomic.Int64, drain time.Duration) bool {
	stopping.Store(true)
	for _, l := range ls {
		l.Close()
	}
	// Serve returns once its Accept fails, after the connection it
	// accepted last is counted (StateNew comes before the next Accept).
	serving.Wait()
	srv.SetKeepAlivesEnabled(false)
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	for open.Load() > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
	return srv.Shutdown(ctx) == nil
}

// listeners are systemd's sockets when it passed any (LISTEN_FDS, from
// fd 3 on), else one of its own on LISTEN. LISTEN_PID is not checked:
// behind podman and an init it names another process.
func listeners() ([]net.Listener, bool, error) {
	n, _ := strconv.Atoi(os.Getenv("LISTEN_FDS"))
	if n <= 0 {
		l, err := net.Listen("tcp", env("LISTEN", ":8080"))
		return []net.Listener{l}, false, err
	}
	var out []net.Listener
	for fd := 3; fd < 3+n; fd++ {
		syscall.CloseOnExec(fd)
		l, err := net.FileListener(os.NewFile(uintptr(fd), "systemd-socket-"+strconv.Itoa(fd)))
		if err != nil {
			return nil, true, fmt.Errorf("socket fd %d from systemd: %w", fd, err)
		}
		out = append(out, l)
	}
	return out, true, nil
}

func env(k, def string) string {
	if v, ok := os.LookupEnv(k); ok {
		return v
	}
	return def
}

func fatal(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "testserver: "+format+"\n", a...)
	os.Exit(2)
}
