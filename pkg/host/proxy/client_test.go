package proxy

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAPI is a runtime API on a unix socket that answers each command
// with what answers holds for it (a command it does not know gets
// HAProxy's "Unknown command"), one command per connection as HAProxy's
// non-interactive mode does, and records the commands. hang makes it
// read a command and never answer.
type fakeAPI struct {
	socket  string
	answers map[string]string
	hang    bool

	mu   sync.Mutex
	cmds []string
}

func newFakeAPI(t *testing.T, answers map[string]string) *fakeAPI {
	t.Helper()
	f := &fakeAPI{socket: filepath.Join(t.TempDir(), "admin.sock"), answers: answers}
	l, err := net.Listen("unix", f.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeAPI) serve(c net.Conn) {
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	cmd := strings.TrimSuffix(line, "\n")
	f.mu.Lock()
	f.cmds = append(f.cmds, cmd)
	f.mu.Unlock()
	if f.hang {
		time.Sleep(time.Minute)
		return
	}
	out, ok := f.answers[cmd]
	if !ok {
		out = "Unknown command: '" + cmd + "'\n"
	}
	c.Write([]byte(out + "\n"))
}

func (f *fakeAPI) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cmds...)
}

// stat is `show stat -1 4 -1` as HAProxy 3.0 answers it (columns cut
// short): two backends' servers, the header ending in a comma.
const stat = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,status,\n" +
	"web,blue,0,0,3,9,,120,DRAIN,\n" +
	"web,green,1,1,2,4,,40,UP,\n" +
	"api,blue,0,0,7,7,,7,UP,\n"

const serversState = "1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr srv_agent_addr srv_agent_port\n" +
	"3 web 1 blue 127.0.0.1 2 4 1 1 0 1 0 0 8 0 0 0 - 19001 - 0 0 - - 0\n" +
	"3 web 2 green 127.0.0.1 0 5 1 1 3 1 0 0 8 0 0 0 - 19002 - 0 0 - - 0\n"

func TestSetState(t *testing.T) {
	api := newFakeAPI(t, map[string]string{
		"set server web/green state ready":   "",
		"set server web/blue state drain":    "",
		"set server nosuch/blue state ready": "No such backend.",
	})
	c := New(api.socket)
	ctx := context.Background()
	if err := c.SetState(ctx, "web", "green", Ready); err != nil {
		t.Fatal(err)
	}
	if err := c.SetState(ctx, "web", "blue", Drain); err != nil {
		t.Fatal(err)
	}
	err := c.SetState(ctx, "nosuch", "blue", Ready)
	if err == nil || !strings.Contains(err.Error(), "No such backend.") {
		t.Errorf("refused: %v, want HAProxy's words", err)
	}
	for _, bad := range []struct{ backend, server string }{{"web;shutdown", "blue"}, {"web", "blue state maint"}, {"", "blue"}} {
		if err := c.SetState(ctx, bad.backend, bad.server, Ready); err == nil {
			t.Errorf("SetState(%q, %q) sent", bad.backend, bad.server)
		}
	}
	if err := c.SetState(ctx, "web", "blue", Admin("up")); err == nil {
		t.Error("an unknown state was sent")
	}
	want := []string{"set server web/green state ready", "set server web/blue state drain", "set server nosuch/blue state ready"}
	if got := api.commands(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("commands %q, want %q", got, want)
	}
}

func TestSessions(t *testing.T) {
	api := newFakeAPI(t, map[string]string{"show stat -1 4 -1": stat})
	c := New(api.socket)
	got, err := c.Sessions(context.Background(), "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["blue"] != 3 || got["green"] != 3 {
		t.Errorf("sessions %v, want blue 3, green 3 (2 current and 1 queued)", got)
	}
	if _, err := c.Sessions(context.Background(), "nosuch"); err == nil {
		t.Error("a backend with no servers: no error")
	}
}

func TestSaveState(t *testing.T) {
	api := newFakeAPI(t, map[string]string{"show servers state": serversState})
	c := New(api.socket)
	path := filepath.Join(t.TempDir(), "proxy", "server-state")
	if err := c.SaveState(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != serversState+"\n" {
		t.Errorf("saved %q", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("the directory holds %d files, want the state alone", len(ents))
	}

	// A refusal is not saved over the file.
	refusing := New(newFakeAPI(t, nil).socket)
	if err := refusing.SaveState(context.Background(), path); err == nil || !strings.Contains(err.Error(), "Unknown command") {
		t.Errorf("a refused dump: %v", err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(got) {
		t.Error("a refused dump replaced the saved state")
	}
}

func TestUnansweredCommand(t *testing.T) {
	api := newFakeAPI(t, nil)
	api.hang = true
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := New(api.socket).Do(ctx, "show servers state")
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), api.socket) {
		t.Errorf("a runtime API that does not answer: %v", err)
	}
	_, err = New(filepath.Join(t.TempDir(), "none.sock")).Do(context.Background(), "show servers state")
	if err == nil || !strings.Contains(err.Error(), "syslet-proxy.service") {
		t.Errorf("no socket: %v", err)
	}
}
