package podman

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/host"
)

// fakePodman serves podman's REST API on a unix socket from per-route
// handlers keyed "METHOD /path" (the path after /v<version>/libpod).
type fakePodman struct {
	uri string

	mu    sync.Mutex
	calls []string
}

func newFakePodman(t *testing.T, routes map[string]http.HandlerFunc) *fakePodman {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "podman.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePodman{uri: "unix://" + sock}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, route, ok := strings.Cut(r.URL.Path, "/libpod")
		if !ok {
			http.NotFound(w, r)
			return
		}
		key := r.Method + " " + route
		f.mu.Lock()
		f.calls = append(f.calls, key)
		f.mu.Unlock()
		if key == "GET /_ping" {
			w.Header().Set("Libpod-API-Version", "5.4.2")
			io.WriteString(w, "OK")
			return
		}
		h, ok := routes[key]
		if !ok {
			t.Errorf("unexpected request %s", key)
			http.Error(w, "unexpected", http.StatusTeapot)
			return
		}
		h(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return f
}

func (f *fakePodman) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == key {
			n++
		}
	}
	return n
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// apiError answers like podman does on failure: a JSON ErrorModel.
func apiError(code int, msg string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]any{"cause": msg, "message": msg, "response": code})
	}
}

func jsonBody(v any) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
}

func TestConnectsLazilyOnce(t *testing.T) {
	f := newFakePodman(t, map[string]http.HandlerFunc{
		"GET /images/busybox/exists": status(http.StatusNoContent),
	})
	c := New(f.uri)
	time.Sleep(50 * time.Millisecond)
	if n := f.count("GET /_ping"); n != 0 {
		t.Fatalf("New pinged podman %d times; it must not dial", n)
	}
	for range 3 {
		if ok, err := c.ImageExists(context.Background(), "busybox"); err != nil || !ok {
			t.Fatalf("ImageExists = %v, %v", ok, err)
		}
	}
	if n := f.count("GET /_ping"); n != 1 {
		t.Errorf("pinged %d times over 3 calls, want 1", n)
	}
}

func TestCancelledFirstCallerDoesNotPoisonConnection(t *testing.T) {
	f := newFakePodman(t, map[string]http.HandlerFunc{
		"GET /volumes/data/exists": status(http.StatusNoContent),
	})
	c := New(f.uri)
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := c.VolumeExists(ctx, "data"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if ok, err := c.VolumeExists(context.Background(), "data"); err != nil || !ok {
		t.Fatalf("after the first caller's context ended: %v, %v", ok, err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := c.VolumeExists(ctx, "data"); err == nil {
		t.Error("a call under a cancelled context succeeded")
	}
}

func TestConnectFailsFastWithoutSocket(t *testing.T) {
	uri := "unix://" + filepath.Join(t.TempDir(), "nonexistent.sock")
	c := New(uri)
	for range 2 { // a failed dial is retried, not cached
		start := time.Now()
		_, err := c.ImageExists(context.Background(), "busybox")
		if err == nil {
			t.Fatal("ImageExists without a socket succeeded")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("failing to connect took %v", d)
		}
		if !strings.Contains(err.Error(), "connecting to podman at "+`"`+uri+`"`) {
			t.Errorf("error does not say what failed: %v", err)
		}
	}
}

func TestDefaultURI(t *testing.T) {
	if got := New("").uri; got != DefaultURI {
		t.Errorf("New(\"\").uri = %q, want %q", got, DefaultURI)
	}
}

func TestExists(t *testing.T) {
	f := newFakePodman(t, map[string]http.HandlerFunc{
		"GET /images/present/exists":  status(http.StatusNoContent),
		"GET /images/absent/exists":   apiError(http.StatusNotFound, "no such image"),
		"GET /networks/broken/exists": apiError(http.StatusInternalServerError, "database is locked"),
		"GET /volumes/absent/exists":  apiError(http.StatusNotFound, "no such volume"),
	})
	c := New(f.uri)
	ctx := context.Background()
	if ok, err := c.ImageExists(ctx, "present"); err != nil || !ok {
		t.Errorf("present image: %v, %v", ok, err)
	}
	if ok, err := c.ImageExists(ctx, "absent"); err != nil || ok {
		t.Errorf("absent image: %v, %v", ok, err)
	}
	if ok, err := c.VolumeExists(ctx, "absent"); err != nil || ok {
		t.Errorf("absent volume: %v, %v", ok, err)
	}
	ok, err := c.NetworkExists(ctx, "broken")
	if err == nil || ok {
		t.Fatalf("a 500 from podman read as %v, %v; want an error, not absence", ok, err)
	}
	if !strings.Contains(err.Error(), `checking network "broken"`) || !strings.Contains(err.Error(), "database is locked") {
		t.Errorf("error = %v", err)
	}
}

func TestRemovalsTreatNotFoundAsSuccess(t *testing.T) {
	// "used" is mounted by a running quadlet container; "leftover" by the
	// container a stopped unit left behind, which is removed to free it.
	leftover := true
	f := newFakePodman(t, map[string]http.HandlerFunc{
		"DELETE /volumes/gone": apiError(http.StatusNotFound, "no such volume"),
		"DELETE /volumes/used": apiError(http.StatusConflict, "volume is being used"),
		"DELETE /volumes/leftover": func(w http.ResponseWriter, r *http.Request) {
			if leftover {
				apiError(http.StatusConflict, "volume is being used")(w, r)
				return
			}
			status(http.StatusNoContent)(w, r)
		},
		"GET /containers/json": func(w http.ResponseWriter, r *http.Request) {
			state, id := "running", "db1"
			if strings.Contains(r.URL.Query().Get("filters"), "leftover") {
				state, id = "exited", "db2"
			}
			jsonBody([]map[string]any{{"Id": id, "State": state, "Labels": map[string]string{"PODMAN_SYSTEMD_UNIT": "db.service"}}})(w, r)
		},
		"DELETE /containers/db2": func(w http.ResponseWriter, r *http.Request) {
			leftover = false
			jsonBody([]map[string]any{{"Id": "db2"}})(w, r)
		},
		"DELETE /networks/gone": apiError(http.StatusNotFound, "unable to find network"),
		"DELETE /networks/ok":   jsonBody([]map[string]any{{"Name": "ok"}}),
		"DELETE /secrets/gone":  apiError(http.StatusNotFound, "no such secret"),
		"DELETE /secrets/ok":    status(http.StatusNoContent),
		"DELETE /images/remove": func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Query().Get("images") {
			case "gone":
				jsonBody(map[string]any{"Errors": []string{"gone: image not known"}, "ExitCode": 1})(w, r)
			case "busy":
				jsonBody(map[string]any{"Errors": []string{"image used by container abc"}, "ExitCode": 2})(w, r)
			default:
				jsonBody(map[string]any{"Deleted": []string{"sha"}, "ExitCode": 0})(w, r)
			}
		},
	})
	c := New(f.uri)
	ctx := context.Background()
	for name, err := range map[string]error{
		"volume gone":  c.RemoveVolume(ctx, "gone"),
		"leftover":     c.RemoveVolume(ctx, "leftover"),
		"network gone": c.RemoveNetwork(ctx, "gone"),
		"network ok":   c.RemoveNetwork(ctx, "ok"),
		"secret gone":  c.RemoveSecret(ctx, "gone"),
		"secret ok":    c.RemoveSecret(ctx, "ok"),
		"image gone":   c.RemoveImage(ctx, "gone"),
		"image ok":     c.RemoveImage(ctx, "localhost/app:1"),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := c.RemoveVolume(ctx, "used"); err == nil || !strings.Contains(err.Error(), `removing volume "used": volume is being used`) {
		t.Errorf("volume in use: %v", err)
	}
	if err := c.RemoveImage(ctx, "busy"); err == nil || !strings.Contains(err.Error(), "image used by container") {
		t.Errorf("image in use: %v", err)
	}
}

func TestSecrets(t *testing.T) {
	f := newFakePodman(t, map[string]http.HandlerFunc{
		"GET /secrets/json": jsonBody([]map[string]any{
			{"ID": "id2", "Spec": map[string]any{"Name": "web-token", "Labels": map[string]string{"syslet/hash": "abc"}}},
			{"ID": "id1", "Spec": map[string]any{"Name": "db-password", "Labels": map[string]string{}}},
		}),
	})
	got, err := New(f.uri).Secrets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []host.Secret{
		{Name: "db-password", ID: "id1"},
		{Name: "web-token", ID: "id2", Labels: map[string]string{"syslet/hash": "abc"}},
	}
	if len(got) != 2 || got[0].Name != want[0].Name || got[0].Labels != nil || got[1].Labels["syslet/hash"] != "abc" || got[1].ID != "id2" {
		t.Errorf("Secrets = %+v, want %+v", got, want)
	}
}

func TestCreateSecret(t *testing.T) {
	const data = "s3cr3t-value"
	var gotQuery map[string][]string
	var gotBody []byte
	f := newFakePodman(t, map[string]http.HandlerFunc{
		"POST /secrets/create": func(w http.ResponseWriter, r *http.Request) {
			gotQuery = r.URL.Query()
			gotBody, _ = io.ReadAll(r.Body)
			if r.URL.Query().Get("name") == "fails" {
				apiError(http.StatusInternalServerError, "secret store is read-only")(w, r)
				return
			}
			jsonBody(map[string]string{"ID": "x"})(w, r)
		},
	})
	c := New(f.uri)
	if err := c.CreateSecret(context.Background(), "web-token", []byte(data), map[string]string{"syslet/hash": "abc"}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotBody, []byte(data)) {
		t.Errorf("body = %q", gotBody)
	}
	if gotQuery["name"][0] != "web-token" || gotQuery["replace"][0] != "true" || !strings.Contains(gotQuery["labels"][0], "syslet/hash") {
		t.Errorf("query = %v", gotQuery)
	}
	err := c.CreateSecret(context.Background(), "fails", []byte(data), nil)
	if err == nil || !strings.Contains(err.Error(), `creating secret "fails"`) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), data) {
		t.Errorf("error reveals the secret: %v", err)
	}
}

func TestPullImage(t *testing.T) {
	var quiet []string
	f := newFakePodman(t, map[string]http.HandlerFunc{
		"POST /images/pull": func(w http.ResponseWriter, r *http.Request) {
			quiet = append(quiet, r.URL.Query().Get("quiet"))
			enc := json.NewEncoder(w)
			switch r.URL.Query().Get("reference") {
			case "localhost:5000/busybox:missing":
				enc.Encode(map[string]string{"stream": "Trying to pull localhost:5000/busybox:missing...\n"})
				enc.Encode(map[string]string{"error": "initializing source docker://localhost:5000/busybox:missing: reading manifest missing in localhost:5000/busybox: manifest unknown"})
			default:
				enc.Encode(map[string]string{"stream": "Trying to pull localhost:5000/busybox:latest...\n"})
				enc.Encode(map[string]any{"images": []string{"77ee76d6e147"}})
				enc.Encode(map[string]string{"id": "77ee76d6e147"})
			}
		},
	})
	c := New(f.uri)
	var progress bytes.Buffer
	if err := c.PullImage(context.Background(), "localhost:5000/busybox:latest", &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "Trying to pull localhost:5000/busybox:latest") {
		t.Errorf("progress = %q", progress.String())
	}
	err := c.PullImage(context.Background(), "localhost:5000/busybox:missing", nil)
	if err == nil || !strings.Contains(err.Error(), `pulling image "localhost:5000/busybox:missing"`) || !strings.Contains(err.Error(), "manifest unknown") {
		t.Errorf("err = %v", err)
	}
	if len(quiet) != 2 || quiet[0] == "true" || quiet[1] != "true" {
		t.Errorf("quiet params = %q; want quiet only without a progress writer", quiet)
	}
}

func TestVersion(t *testing.T) {
	f := newFakePodman(t, map[string]http.HandlerFunc{
		// The shape podman 5.4.2 answers GET /libpod/version with (trimmed).
		"GET /version": jsonBody(map[string]any{
			"Platform":   map[string]string{"Name": "linux/amd64/debian-13"},
			"Components": []map[string]any{{"Name": "Podman Engine", "Version": "5.4.2", "Details": map[string]string{"APIVersion": "5.4.2"}}},
			"Version":    "5.4.2", "ApiVersion": "1.41", "MinAPIVersion": "1.24", "Os": "linux", "Arch": "amd64",
		}),
	})
	v, err := New(f.uri).Version(context.Background())
	if err != nil || v != "5.4.2" {
		t.Fatalf("Version = %q, %v; want 5.4.2", v, err)
	}
	g := newFakePodman(t, map[string]http.HandlerFunc{"GET /version": apiError(http.StatusInternalServerError, "boom")})
	if _, err := New(g.uri).Version(context.Background()); err == nil {
		t.Fatal("Version of a failing service succeeded")
	}
}
