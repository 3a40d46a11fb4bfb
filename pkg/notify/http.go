package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/syslet/syslet/pkg/redact"
)

// client sends every HTTP notification. It follows no redirect (a POST
// turned into a GET, or sent to another host, is not what was asked for),
// and each request is bounded by its context (the queue's attempt
// timeout).
var client = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{}).DialContext,
		TLSHandshakeTimeout: DefaultRetry.Timeout,
		MaxIdleConns:        8,
		IdleConnTimeout:     DefaultRetry.Timeout,
	},
}

// UserAgent is sent with every HTTP request.
const UserAgent = "syslet-notify/1"

// Post sends body to rawURL with header and judges the answer: 2xx is
// delivered; 408, 425, 429 and 5xx are worth another try; any other status
// is Permanent. Errors name the method, scheme and host only (a URL may be
// a credential, as Slack's are), with the status and the start of the
// answer's body, from which every byte string in hide is removed.
func Post(ctx context.Context, rawURL string, header http.Header, body []byte, hide ...[]byte) error {
	where := Redact(rawURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return Permanent(fmt.Errorf("POST %s: the URL does not parse", where))
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", UserAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("POST %s: %w", where, err)
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		return nil
	}
	err = fmt.Errorf("POST %s: HTTP %d%s", where, code, answer(excerpt, hide))
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly, code == http.StatusTooManyRequests, code >= 500:
		return err
	case code >= 300 && code < 400:
		return Permanent(fmt.Errorf("%w (redirects are not followed: give the final URL)", err))
	}
	return Permanent(err)
}

// answer is the start of a response body for an error message, after
// ": ", without any hidden value.
func answer(b []byte, hide [][]byte) string {
	if s := redact.Answer(b, 160, hide...); s != "" {
		return ": " + s
	}
	return ""
}

// Redact is a URL as logs may show it: its scheme and host, never its
// path, query or user information (a Slack URL's path is its secret, an
// ntfy topic is a password of sorts).
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	s := u.Scheme + "://" + u.Host
	if u.Path != "" && u.Path != "/" {
		s += "/…"
	}
	return s
}
