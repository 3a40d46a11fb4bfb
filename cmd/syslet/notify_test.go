package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/settings"
)

// settingsRoot writes /etc/syslet/syslet.json under a fresh root.
func settingsRoot(t *testing.T, doc string) string {
	t.Helper()
	root := t.TempDir()
	p := filepath.Join(root, settings.Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNotifyTest: every target gets one example event, each result is
// printed, a failed target makes the exit code 1, and settings without
// targets say where to put them.
func TestNotifyTest(t *testing.T) {
	var mu sync.Mutex
	var got []notify.Event
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev notify.Event
		json.Unmarshal(b, &ev)
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	}))
	defer ok.Close()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403) }))
	defer refusing.Close()

	root := settingsRoot(t, `{"notify": [{"name": "ops", "type": "webhook", "url": "`+ok.URL+`/hook"}]}`)
	var out, errw bytes.Buffer
	if code := run([]string{"notify-test", "--root", root, "--event", "failed"}, nil, &out, &errw); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errw.String())
	}
	if !strings.Contains(out.String(), "ops (webhook, http://127.0.0.1:") || !strings.Contains(out.String(), "sent after 1 attempt(s)") {
		t.Errorf("output %q", out.String())
	}
	if len(got) != 1 || got[0].Event != notify.Failed || got[0].Source.Kind != "test" || len(got[0].Failing) != 1 {
		t.Errorf("received %+v", got)
	}

	root = settingsRoot(t, `{"notify": [{"name": "ops", "type": "webhook", "url": "`+ok.URL+`"}, {"name": "no", "type": "webhook", "url": "`+refusing.URL+`", "attempts": 1}]}`)
	out.Reset()
	if code := run([]string{"notify-test", "--root", root}, nil, &out, &errw); code != exitError || !strings.Contains(out.String(), "no (webhook, http://127.0.0.1:") ||
		!strings.Contains(out.String(), "failed after 1 attempt(s)") || !strings.Contains(out.String(), "HTTP 403") {
		t.Errorf("exit %d, output %q", code, out.String())
	}

	for _, tc := range []struct{ doc, want string }{
		{`{}`, "no notification targets are configured in /etc/syslet/syslet.json"},
		{`{"notify": [{"type": "pager"}]}`, `notify[0].type: "pager" is not a target type`},
		{`{"notfy": []}`, `unknown field "notfy"`},
	} {
		errw.Reset()
		if code := run([]string{"notify-test", "--root", settingsRoot(t, tc.doc)}, nil, &out, &errw); code != exitError || !strings.Contains(errw.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q", tc.doc, code, errw.String())
		}
	}
}

func TestMetricsFileIsACheckOfTheHost(t *testing.T) {
	for _, args := range [][]string{
		{"--metrics-file", "/tmp/x.prom", "x"},
		{"--diff", "--root", "/tmp", "--metrics-file", "/tmp/x.prom", "x"},
		{"notify-test", "--event", "exploded"},
	} {
		var out, errw bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errw); code != exitUsage {
			t.Errorf("syslet %s: exit %d, want %d\n%s", strings.Join(args, " "), code, exitUsage, errw.String())
		}
	}
}
