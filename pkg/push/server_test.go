package push

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/ssh"
)

// testServer is an in-process SSH server standing in for a host running
// syslet: it accepts one client key and runs handler for each exec request.
type testServer struct {
	addr      string
	hostKey   ssh.Signer
	authCalls atomic.Int32 // public key checks: any means authentication began
	execs     atomic.Int32
	handler   func(s *execSession) int

	mu      sync.Mutex
	signals []string
}

type execSession struct {
	Cmd    string
	Stdin  []byte
	Stdout io.Writer
	Stderr io.Writer
	Signal <-chan string
}

func newSigner(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func startServer(t testing.TB, clientKey ssh.PublicKey, handler func(*execSession) int) *testServer {
	t.Helper()
	srv := &testServer{hostKey: newSigner(t), handler: handler}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
			srv.authCalls.Add(1)
			if bytes.Equal(k.Marshal(), clientKey.Marshal()) {
				return nil, nil
			}
			return nil, io.EOF
		},
	}
	cfg.AddHostKey(srv.hostKey)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	srv.addr = ln.Addr().String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go srv.serve(c, cfg)
		}
	}()
	return srv
}

func (srv *testServer) serve(c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "no")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			return
		}
		go srv.session(ch, creqs)
	}
}

func (srv *testServer) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	sigs := make(chan string, 4)
	for req := range reqs {
		switch req.Type {
		case "exec":
			if len(req.Payload) < 4 {
				req.Reply(false, nil)
				return
			}
			n := binary.BigEndian.Uint32(req.Payload)
			cmd := string(req.Payload[4 : 4+n])
			req.Reply(true, nil)
			srv.execs.Add(1)
			go func() {
				for r := range reqs {
					if r.Type == "signal" && len(r.Payload) >= 4 {
						n := binary.BigEndian.Uint32(r.Payload)
						sig := string(r.Payload[4 : 4+n])
						srv.mu.Lock()
						srv.signals = append(srv.signals, sig)
						srv.mu.Unlock()
						sigs <- sig
					}
					if r.WantReply {
						r.Reply(false, nil)
					}
				}
			}()
			stdin, _ := io.ReadAll(ch)
			code := srv.handler(&execSession{Cmd: cmd, Stdin: stdin, Stdout: ch, Stderr: ch.Stderr(), Signal: sigs})
			status := make([]byte, 4)
			binary.BigEndian.PutUint32(status, uint32(code))
			ch.SendRequest("exit-status", false, status)
			return
		default:
			if req.WantReply {
				req.Reply(false, nil)
			}
		}
	}
}

func (srv *testServer) receivedSignals() []string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return append([]string(nil), srv.signals...)
}
