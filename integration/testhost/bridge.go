package testhost

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Guests have no network but their own loopback. A test whose hosts
// must reach one another (a fleet fetching from one forge host) bridges
// them through this process, over each guest's own SSH connection: the
// guest's sshd listens on its loopback (SSH remote forwarding) and every
// connection it takes there is joined to a connection that the other
// guest's sshd opens to an address on its loopback (direct-tcpip). The
// traffic is exactly what the guests send; nothing is proxied above TCP.

// Bridge makes connections to from's loopback address fromAddr reach
// to's loopback address toAddr (both "127.0.0.1:PORT") until t ends.
func Bridge(t testing.TB, from *Host, fromAddr string, to *Host, toAddr string) {
	t.Helper()
	c, err := from.conn()
	if err != nil {
		t.Fatalf("testhost: bridge %s %s: %v", from.name, fromAddr, err)
	}
	ln, err := c.Listen("tcp", fromAddr)
	if err != nil {
		t.Fatalf("testhost: bridge: %s cannot listen on %s (sshd remote forwarding): %v", from.name, fromAddr, err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		open = map[net.Conn]bool{}
	)
	track := func(c net.Conn, on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			open[c] = true
		} else {
			delete(open, c)
		}
	}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				track(in, true)
				defer func() { track(in, false); in.Close() }()
				out, err := to.Dial(toAddr)
				if err != nil {
					return // the guest sees its connection closed
				}
				track(out, true)
				defer func() { track(out, false); out.Close() }()
				join(in, out)
			}()
		}
	}()
}

// Dial opens a TCP connection to addr on the guest's loopback, through its
// sshd.
func (h *Host) Dial(addr string) (net.Conn, error) {
	c, err := h.conn()
	if err != nil {
		return nil, err
	}
	return c.Dial("tcp", addr)
}

// join copies both ways until both sides are done.
func join(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		// Half-close, so the other direction can finish its answer.
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}
