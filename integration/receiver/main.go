package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Record is one request as the tests read it.
type Record struct {
	Time    time.Time           `json:"time"`
	Method  string              `json:"method"`
	Path    string              `json:"path"` // escaped, as sent
	Header  map[string][]string `json:"header"`
	Body    string              `json:"body"`
	Code    int                 `json:"code"`
	Verdict string              `json:"verdict"` // "ok", or why a forge would refuse it
}

var (
	mu  sync.Mutex
	out *os.File
)

func record(r Record) {
	b, _ := json.Marshal(r)
	mu.Lock()
	defer mu.Unlock()
	out.Write(append(b, '\n'))
	out.Sync()
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8090", "HTTP address")
	smtpAddr := flag.String("smtp", "127.0.0.1:2525", "SMTP address")
	logFile := flag.String("log", "/var/lib/receiver/requests.jsonl", "where requests are recorded")
	modeFile := flag.String("mode-file", "/run/receiver.mode", "ok, fail or hang")
	tokenFile := flag.String("token-file", "", "the token the forges expect")
	flag.Parse()
	var err error
	if out, err = os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err != nil {
		log.Fatal(err)
	}
	token := ""
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			log.Fatal(err)
		}
		token = strings.TrimSpace(string(b))
	}
	go serveSMTP(*smtpAddr)
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		rec := Record{Time: time.Now().UTC(), Method: req.Method, Path: req.URL.EscapedPath(), Header: req.Header, Body: string(body), Code: 200, Verdict: "ok"}
		mode, _ := os.ReadFile(*modeFile)
		switch strings.TrimSpace(string(mode)) {
		case "hang":
			rec.Code, rec.Verdict = 0, "hang"
			record(rec)
			select {
			case <-req.Context().Done():
			case <-time.After(10 * time.Minute):
			}
			return
		case "fail":
			rec.Code, rec.Verdict = 503, "fail"
			record(rec)
			w.WriteHeader(503)
			return
		}
		if f := forge(rec.Path); f != "" && req.Method == http.MethodGet {
			if code, verdict := authorize(f, req, token); code != 0 {
				rec.Code, rec.Verdict = code, verdict
			} else if code, verdict, ok := read(f, rec.Path, w, req); ok {
				rec.Code, rec.Verdict = code, verdict
				record(rec)
				return
			} else {
				rec.Code, rec.Verdict = 404, "not a statuses endpoint: "+rec.Path
			}
		} else if f != "" {
			var doc map[string]any
			rec.Code, rec.Verdict, doc = judge(f, req, body, token)
			if rec.Code == 201 {
				keep(f, rec.Path, doc)
			}
		}
		record(rec)
		w.WriteHeader(rec.Code)
		io.WriteString(w, `{"verdict":`+fmt.Sprintf("%q", rec.Verdict)+`}`)
	})
	log.Fatal(http.ListenAndServe(*listen, h))
}

func forge(path string) string {
	for _, f := range []string{"github", "gitea", "gitlab"} {
		if strings.HasPrefix(path, "/"+f+"/") {
			return f
		}
	}
	return ""
}

// authorize checks a request's auth header and media type as the forge
// would: 0 when they are right.
func authorize(forge string, req *http.Request, token string) (int, string) {
	var auth, authWant string
	switch forge {
	case "github":
		auth, authWant = req.Header.Get("Authorization"), "Bearer "+token
		if req.Header.Get("Accept") != "application/vnd.github+json" || req.Header.Get("X-GitHub-Api-Version") != "2022-11-28" {
			return 400, "GitHub wants Accept: application/vnd.github+json and X-GitHub-Api-Version: 2022-11-28"
		}
	case "gitea":
		auth, authWant = req.Header.Get("Authorization"), "token "+token
	case "gitlab":
		auth, authWant = req.Header.Get("PRIVATE-TOKEN"), token
	}
	if token == "" || auth != authWant {
		return 401, "bad or missing auth header"
	}
	return 0, ""
}

// judge answers a status call as the forge would, and returns the status
// it sets when it is accepted (201).
func judge(forge string, req *http.Request, body []byte, token string) (int, string, map[string]any) {
	if req.Method != http.MethodPost {
		return 405, "method " + req.Method, nil
	}
	var path *regexp.Regexp
	var states, fields []string
	switch forge {
	case "github":
		path = githubSet
		states, fields = []string{"error", "failure", "pending", "success"}, []string{"state", "target_url", "description", "context"}
	case "gitea":
		path = giteaSet
		states, fields = []string{"pending", "success", "error", "failure", "warning"}, []string{"state", "target_url", "description", "context"}
	case "gitlab":
		path = gitlabSet
		states, fields = []string{"pending", "running", "success", "failed", "canceled"}, []string{"state", "target_url", "description", "name", "context", "ref", "pipeline_id", "coverage"}
		if strings.Count(strings.TrimPrefix(req.URL.EscapedPath(), "/gitlab/projects/"), "/") != 2 {
			return 404, "the project id must be one URL-encoded path segment", nil
		}
	}
	if code, verdict := authorize(forge, req, token); code == 400 {
		return code, verdict, nil
	}
	if !path.MatchString(req.URL.EscapedPath()) {
		return 404, "not the statuses endpoint: " + req.URL.EscapedPath(), nil
	}
	if code, verdict := authorize(forge, req, token); code != 0 {
		return code, verdict, nil
	}
	if !strings.HasPrefix(req.Header.Get("Content-Type"), "application/json") {
		return 415, "not JSON: " + req.Header.Get("Content-Type"), nil
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return 400, "body: " + err.Error(), nil
	}
	for k, v := range doc {
		if !slices.Contains(fields, k) {
			return 422, "undocumented field " + k, nil
		}
		if _, ok := v.(string); !ok {
			return 422, "field " + k + " is not a string", nil
		}
	}
	st, _ := doc["state"].(string)
	if !slices.Contains(states, st) {
		return 422, fmt.Sprintf("state %q is not one of %v", st, states), nil
	}
	return 201, "ok", doc
}

// serveSMTP takes mail and records each message with path "smtp".
func serveSMTP(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			r := bufio.NewReader(c)
			say := func(l string) { io.WriteString(c, l+"\r\n") }
			var env, data strings.Builder
			say("220 receiver ESMTP")
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				cmd := strings.ToUpper(strings.TrimSpace(line))
				switch {
				case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
					say("250 receiver")
				case strings.HasPrefix(cmd, "MAIL"), strings.HasPrefix(cmd, "RCPT"):
					env.WriteString(strings.TrimSpace(line) + "\n")
					say("250 ok")
				case cmd == "DATA":
					say("354 go on")
					for {
						l, err := r.ReadString('\n')
						if err != nil {
							return
						}
						if l == ".\r\n" {
							break
						}
						data.WriteString(l)
					}
					record(Record{Time: time.Now().UTC(), Method: "SMTP", Path: "smtp", Header: map[string][]string{"Envelope": {env.String()}}, Body: data.String(), Code: 250, Verdict: "ok"})
					env.Reset()
					data.Reset()
					say("250 queued")
				case cmd == "QUIT":
					say("221 bye")
					return
				default:
					say("250 ok")
				}
			}
		}()
	}
}
