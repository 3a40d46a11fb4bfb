package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// webhookd's series this reader joins (webhookd/metrics): every one
// carries repo, and Prometheus adds job and instance to each.
//
//	webhookd_host_info{repo, host, <label>…}         1: the host's name and labels
//	webhookd_applied_commit_info{repo, commit}        1: the commit applied last
//	webhookd_last_deploy_result{repo, result}         1 for how the last attempt ended
//	webhookd_last_deploy_commit_info{repo, commit}    1: the commit of the last attempt
const promQuery = `max by (host, result, attempted, applied) (
  webhookd_host_info{%s}
  * on (job, instance, repo) group_left (result) (webhookd_last_deploy_result == 1)
  * on (job, instance, repo) group_left (attempted) label_replace(webhookd_last_deploy_commit_info, "attempted", "$1", "commit", "(.*)")
  * on (job, instance, repo) group_left (applied) label_replace(webhookd_applied_commit_info, "applied", "$1", "commit", "(.*)")
)`

// PrometheusReader reads every selected host's state in one PromQL
// query, from the Prometheus that scrapes the fleet's webhookd: a ring of
// thousands is one request per read, not thousands of status pages.
type PrometheusReader struct {
	// URL is Prometheus's base URL (http://prometheus:9090).
	URL string
	// Selector picks the hosts by the labels webhookd exports.
	Selector Selector
	// HTTP is the client requests go through; nil: a default one.
	HTTP *http.Client
}

// Query is the PromQL query the reader sends.
func (p PrometheusReader) Query() string {
	return fmt.Sprintf(promQuery, p.Selector.PromQL())
}

var promHTTP = &http.Client{
	Timeout: 30 * time.Second,
	Transport: &http.Transport{
		Proxy:       http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	},
}

// PromError is a failed query: no answer, an HTTP error or Prometheus's
// own error.
type PromError struct {
	Code int // 0: no answer
	Msg  string
}

func (e *PromError) Error() string {
	if e.Code == 0 {
		return "prometheus: " + e.Msg
	}
	return fmt.Sprintf("prometheus: HTTP %d: %s", e.Code, e.Msg)
}

// Temporary: no answer, a timeout, too many requests or Prometheus's own
// failure (503 while it starts) may pass; a bad query or URL does not.
func (e *PromError) Temporary() bool {
	return e.Code == 0 || e.Code == http.StatusTooManyRequests || e.Code >= 500
}

// promAnswer is the HTTP API's answer to an instant query.
type promAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
		} `json:"result"`
	} `json:"data"`
}

// Read queries Prometheus once. A host succeeded when it applied commit
// and its last attempt succeeded; it failed when its last attempt was of
// commit and failed or rolled back. Any other state (an older commit, a
// skipped attempt, a host whose series are gone because it is down) is
// not final.
func (p PrometheusReader) Read(ctx context.Context, commit string) (map[string]Report, error) {
	ans, err := p.query(ctx, p.Query())
	if err != nil {
		return nil, err
	}
	out := map[string]Report{}
	for _, s := range ans.Data.Result {
		m := s.Metric
		host := m["host"]
		if host == "" {
			continue
		}
		rep := Report{Word: m["result"]}
		switch {
		case m["applied"] == commit && m["result"] == "success":
			rep.State = Success
		case m["attempted"] == commit && (m["result"] == "failed" || m["result"] == "rolled-back"):
			rep.State = Failure
		case m["attempted"] != commit:
			rep.Word = "at " + short(m["applied"])
		}
		// A host exported by two scrape jobs is one host: keep the
		// report that says most.
		if old, ok := out[host]; !ok || rep.State > old.State {
			out[host] = rep
		}
	}
	return out, nil
}

func short(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	if c == "" {
		return "no commit"
	}
	return c
}

const maxPromAnswer = 64 << 20

func (p PrometheusReader) query(ctx context.Context, q string) (*promAnswer, error) {
	u := strings.TrimRight(p.URL, "/") + "/api/v1/query"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(url.Values{"query": {q}}.Encode()))
	if err != nil {
		return nil, &PromError{Msg: "the URL does not parse"}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "syslet-fleet/1")
	hc := p.HTTP
	if hc == nil {
		hc = promHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &PromError{Msg: err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxPromAnswer+1))
	if err != nil {
		return nil, &PromError{Msg: "reading the answer: " + err.Error()}
	}
	if len(b) > maxPromAnswer {
		return nil, &PromError{Msg: fmt.Sprintf("the answer is larger than %d bytes", maxPromAnswer)}
	}
	var ans promAnswer
	jerr := json.Unmarshal(b, &ans)
	switch {
	case jerr == nil && ans.Status == "error":
		return nil, &PromError{Code: resp.StatusCode, Msg: ans.ErrorType + ": " + ans.Error}
	case resp.StatusCode != http.StatusOK:
		return nil, &PromError{Code: resp.StatusCode, Msg: firstLine(b)}
	case jerr != nil:
		return nil, &PromError{Code: resp.StatusCode, Msg: "unreadable answer: " + jerr.Error()}
	case ans.Data.ResultType != "vector":
		return nil, &PromError{Code: resp.StatusCode, Msg: "want a vector, got " + ans.Data.ResultType}
	}
	return &ans, nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
