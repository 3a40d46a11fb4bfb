// Command faultproxy stands between podman and a test host's registry and
// fails the way registries fail in production. The fault suite
// (integration/faults_test.go) runs it inside a guest, in front of the
// registry on 127.0.0.1:5000, and points images at its address.
//
//	faultproxy -listen 127.0.0.1:5001 -upstream 127.0.0.1:5000 -mode MODE
//
// Modes:
//
//	pass    forward every request (a healthy registry)
//	refuse  answer every request 403 with the registry API's DENIED error
//	hang    forward the API, manifests and small blobs (an image's
//	        config), but send only the first half of every layer and then
//	        stall until the client gives up: a pull that hangs mid-transfer
//
// A registry that is down is faultproxy not running (connection refused).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:5001", "address to serve on")
	upstream := flag.String("upstream", "127.0.0.1:5000", "the registry behind it")
	mode := flag.String("mode", "pass", "pass, refuse or hang")
	flag.Parse()
	up := &url.URL{Scheme: "http", Host: *upstream}
	var h http.Handler
	switch *mode {
	case "pass":
		h = httputil.NewSingleHostReverseProxy(up)
	case "refuse":
		h = http.HandlerFunc(refuse)
	case "hang":
		h = hang{up: up, pass: httputil.NewSingleHostReverseProxy(up)}
	default:
		log.Fatalf("faultproxy: unknown mode %q", *mode)
	}
	log.Printf("faultproxy: %s on %s in front of %s", *mode, *listen, up)
	log.Fatal(http.ListenAndServe(*listen, logged(h)))
}

func logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s", r.Method, r.URL.Path)
		h.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintln(w, `{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`)
}

// smallBlob is the size below which hang sends a blob whole: configs and
// manifests go through, layers stall.
const smallBlob = 64 << 10

// hang forwards everything but layer downloads, of which it sends half.
type hang struct {
	up   *url.URL
	pass http.Handler
}

func (h hang) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/blobs/") {
		h.pass.ServeHTTP(w, r)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, h.up.String()+r.URL.Path, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	size, _ := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	if size < smallBlob {
		io.Copy(w, resp.Body)
		return
	}
	n, _ := io.CopyN(w, resp.Body, size/2)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	log.Printf("hang: sent %d of %d bytes of %s; stalling", n, size, r.URL.Path)
	<-r.Context().Done()
	log.Printf("hang: %s: the client gave up", r.URL.Path)
}
