// Command loadclient sends HTTP requests at a steady rate from a few
// workers and records every one: when it started, how long it took, and
// how it ended. The zero-downtime tests and benchmarks run it inside a
// test host around a deploy, then read its record (package load) for the
// failed requests, the longest time without an answer and the latency
// during the deploy.
//
//	loadclient -url http://127.0.0.1:8080/ -workers 4 -rate 200 -for 60s -out /run/load.tsv
//
// It runs until -for is over or it receives SIGTERM/SIGINT, then writes
// the record (a line per request) and prints a one-line summary on
// stdout. Each request opens a new connection unless -keepalive: a
// refused connection is then seen as one, not hidden by a pooled
// connection that was opened before the deploy.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/syslet/syslet/integration/loadclient/load"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/", "what to request (GET)")
	workers := flag.Int("workers", 4, "requests in flight at once, at most")
	rate := flag.Float64("rate", 200, "requests per second, all workers together (0: as fast as the workers go)")
	dur := flag.Duration("for", time.Minute, "how long to send requests")
	timeout := flag.Duration("timeout", 5*time.Second, "how long one request may take")
	keepalive := flag.Bool("keepalive", false, "reuse connections between requests")
	out := flag.String("out", "", "where to write the record (a line per request); empty: none")
	ready := flag.String("ready", "", "a file to create once the first request was answered")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *dur)
	defer cancel()

	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: *timeout}).DialContext,
		DisableKeepAlives:   !*keepalive,
		MaxIdleConnsPerHost: *workers,
	}
	client := &http.Client{Transport: tr, Timeout: *timeout,
		// A redirect is an answer: the test judges it by its status.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	ticks := make(chan struct{})
	go pace(ctx, *rate, ticks)
	var (
		mu      sync.Mutex
		records []load.Request
		once    sync.Once
		wg      sync.WaitGroup
	)
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range ticks {
				r := do(client, *url)
				if r.OK() && *ready != "" {
					once.Do(func() { _ = os.WriteFile(*ready, nil, 0o644) })
				}
				mu.Lock()
				records = append(records, r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if *out != "" {
		if err := write(*out, records); err != nil {
			fmt.Fprintln(os.Stderr, "loadclient:", err)
			os.Exit(1)
		}
	}
	fmt.Println(load.Summarize(records, time.Time{}, time.Time{}))
}

// pace sends a tick per request to make, rate a second (or as fast as
// they are taken), until ctx ends; then it closes ticks.
func pace(ctx context.Context, rate float64, ticks chan<- struct{}) {
	defer close(ticks)
	if rate <= 0 {
		for {
			select {
			case ticks <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}
	every := time.Duration(float64(time.Second) / rate)
	next := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		select {
		case ticks <- struct{}{}:
		case <-ctx.Done():
			return
		}
		next = next.Add(every)
		if behind := time.Since(next); behind > time.Second {
			next = time.Now() // the workers were all busy: do not burst to catch up
		}
	}
}

// do makes one request and says how it ended.
func do(client *http.Client, url string) load.Request {
	start := time.Now()
	resp, err := client.Get(url)
	r := load.Request{Start: start}
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		r.Status = resp.StatusCode
	}
	r.Took = time.Since(start)
	if err != nil {
		r.Err = load.Classify(err)
	}
	return r
}

func write(path string, rs []load.Request) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := load.Write(w, rs); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
