//go:build guest

// These tests run as root inside a disposable test host with rootful podman,
// podman.socket and a registry on localhost:5000 holding busybox:latest.
package podman

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const (
	image   = "localhost:5000/busybox:latest"
	missing = "localhost:5000/busybox:missing"
)

func TestMain(m *testing.M) {
	for _, unit := range []string{"podman.socket", "docker-registry.service"} {
		if out, err := exec.Command("systemctl", "start", unit).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "starting %s: %v %s\n", unit, err, out)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

func podmanCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("podman", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func timed(t *testing.T, what string, f func() error) error {
	t.Helper()
	start := time.Now()
	err := f()
	t.Logf("timing: %s took %v", what, time.Since(start).Round(10*time.Microsecond))
	return err
}

func TestImages(t *testing.T) {
	c := New(DefaultURI)
	ctx := context.Background()
	_ = c.RemoveImage(ctx, image)

	var ok bool
	err := timed(t, "first call (connect + ImageExists)", func() (err error) {
		ok, err = c.ImageExists(ctx, image)
		return err
	})
	if err != nil || ok {
		t.Fatalf("ImageExists before pull = %v, %v", ok, err)
	}
	var progress bytes.Buffer
	if err := timed(t, "PullImage(busybox:latest)", func() error { return c.PullImage(ctx, image, &progress) }); err != nil {
		t.Fatal(err)
	}
	t.Logf("progress:\n%s", progress.String())
	if !strings.Contains(progress.String(), "Trying to pull "+image) {
		t.Errorf("no progress text")
	}
	if ok, err := c.ImageExists(ctx, image); err != nil || !ok {
		t.Fatalf("ImageExists after pull = %v, %v", ok, err)
	}
	if err := c.PullImage(ctx, image, nil); err != nil {
		t.Fatalf("quiet re-pull: %v", err)
	}

	err = timed(t, "PullImage(busybox:missing)", func() error { return c.PullImage(ctx, missing, nil) })
	t.Logf("missing tag: %v", err)
	if err == nil || !strings.Contains(err.Error(), "manifest unknown") {
		t.Errorf("pulling a missing tag = %v, want manifest unknown", err)
	}

	// An image a container still uses is not forced out.
	podmanCLI(t, "create", "--name", "syslet-t-holder", image, "true")
	err = c.RemoveImage(ctx, image)
	t.Logf("remove image in use: %v", err)
	if err == nil {
		t.Error("RemoveImage of an image in use succeeded")
	}
	podmanCLI(t, "rm", "syslet-t-holder")

	if err := c.RemoveImage(ctx, image); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.ImageExists(ctx, image); ok {
		t.Error("image still present after RemoveImage")
	}
	if err := c.RemoveImage(ctx, image); err != nil {
		t.Errorf("removing an absent image: %v", err)
	}
	if err := c.RemoveImage(ctx, "localhost/never-existed:1"); err != nil {
		t.Errorf("removing a never-existing image: %v", err)
	}
}

func TestVolumesAndNetworks(t *testing.T) {
	c := New(DefaultURI)
	ctx := context.Background()
	for _, name := range []string{"syslet-t-nothing"} {
		if err := c.RemoveVolume(ctx, name); err != nil {
			t.Errorf("RemoveVolume(missing): %v", err)
		}
		if err := c.RemoveNetwork(ctx, name); err != nil {
			t.Errorf("RemoveNetwork(missing): %v", err)
		}
	}

	podmanCLI(t, "volume", "create", "syslet-t-vol")
	if ok, err := c.VolumeExists(ctx, "syslet-t-vol"); err != nil || !ok {
		t.Fatalf("VolumeExists = %v, %v", ok, err)
	}
	if err := c.RemoveVolume(ctx, "syslet-t-vol"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.VolumeExists(ctx, "syslet-t-vol"); err != nil || ok {
		t.Errorf("VolumeExists after remove = %v, %v", ok, err)
	}

	podmanCLI(t, "network", "create", "syslet-t-net")
	if ok, err := c.NetworkExists(ctx, "syslet-t-net"); err != nil || !ok {
		t.Fatalf("NetworkExists = %v, %v", ok, err)
	}
	if err := c.RemoveNetwork(ctx, "syslet-t-net"); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.NetworkExists(ctx, "syslet-t-net"); err != nil || ok {
		t.Errorf("NetworkExists after remove = %v, %v", ok, err)
	}
}

func TestGuestSecrets(t *testing.T) {
	c := New(DefaultURI)
	ctx := context.Background()
	const name = "syslet-t-token"
	t.Cleanup(func() { _ = c.RemoveSecret(context.Background(), name) })

	if err := c.RemoveSecret(ctx, "syslet-t-never"); err != nil {
		t.Errorf("RemoveSecret(missing): %v", err)
	}
	if err := c.CreateSecret(ctx, name, []byte("first-value"), map[string]string{"syslet/hash": "aaa"}); err != nil {
		t.Fatal(err)
	}
	assertLabel := func(want string) {
		t.Helper()
		list, err := c.Secrets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.Name == name {
				t.Logf("listed: %+v", s)
				if s.Labels["syslet/hash"] != want || s.ID == "" {
					t.Errorf("secret %s = %+v, want label syslet/hash=%s", name, s, want)
				}
				return
			}
		}
		t.Errorf("secret %s not listed in %+v", name, list)
	}
	assertLabel("aaa")

	// Create again replaces value and labels.
	if err := c.CreateSecret(ctx, name, []byte("second-value"), map[string]string{"syslet/hash": "bbb"}); err != nil {
		t.Fatalf("replacing a secret: %v", err)
	}
	assertLabel("bbb")
	podmanCLI(t, "pull", "-q", image)
	if got := podmanCLI(t, "run", "--rm", "--secret", name, image, "cat", "/run/secrets/"+name); got != "second-value" {
		t.Errorf("container sees secret %q, want the replaced value", got)
	}

	if err := c.RemoveSecret(ctx, name); err != nil {
		t.Fatal(err)
	}
	list, _ := c.Secrets(ctx)
	for _, s := range list {
		if s.Name == name {
			t.Errorf("secret still listed after RemoveSecret")
		}
	}
}

func TestNoSocketFailsFast(t *testing.T) {
	c := New("unix:///run/podman/nonexistent.sock")
	start := time.Now()
	_, err := c.VolumeExists(context.Background(), "x")
	t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Errorf("want a quick connection error")
	}
}
