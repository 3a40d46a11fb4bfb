//go:build integration && bench

package integration

// Gitea over HTTPS for TestBenchFleet10k: Gitea serves plain HTTP in the
// test host, so TLS ends in a proxy on this side, as in front of a Gitea
// behind a reverse proxy; the hosts' go-git trusts its certificate.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// startTLSProxy serves https on a loopback port, passing every request to
// the plain-HTTP upstream, and makes go-git in this process trust it; it
// returns the proxy's address. Each fetch opens its own connection (no
// keep-alive), as a host that polls minutes apart does.
func startTLSProxy(t *testing.T, upstream string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "forge"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	cert, err := x509.ParseCertificate(der)
	must(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)

	u, err := url.Parse(upstream)
	must(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	// A connection to Gitea a request, as nginx's default proxying does.
	proxy.Transport = &http.Transport{DisableKeepAlives: true}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	must(t, err)
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: time.Minute}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	client.InstallProtocol("https", githttp.NewClient(&http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true,
	}}))
	return ln.Addr().String()
}
