package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"sync"
)

// The statuses the receiver accepted, kept so that they can be read
// back the way each forge serves them: the latest status of every
// context of a commit, newest first, a page at a time.
//
//	GitHub  GET /github/repos/{owner}/{repo}/commits/{sha}/status?per_page&page  (at most 100 a page)
//	Gitea   GET /gitea/repos/{owner}/{repo}/commits/{sha}/status?limit&page      (at most 50; the state is "status")
//	GitLab  GET /gitlab/projects/{id}/repository/commits/{sha}/statuses?per_page&page  (a list; "name", "status")

// kept is one accepted status.
type kept struct {
	context, state, description, targetURL string
}

var (
	keptMu sync.Mutex
	// statuses holds, per forge/repository/commit, the statuses in the
	// order they came.
	statuses = map[string][]kept{}
)

// The statuses endpoints, for POST (set) and GET (read back).
var (
	githubSet  = regexp.MustCompile(`^/github/repos/([^/]+/[^/]+)/statuses/([0-9a-f]{40})$`)
	giteaSet   = regexp.MustCompile(`^/gitea/repos/([^/]+/[^/]+)/statuses/([0-9a-f]{40})$`)
	gitlabSet  = regexp.MustCompile(`^/gitlab/projects/([^/]+)/statuses/([0-9a-f]{40})$`) // the id: a number or the URL-encoded path
	githubRead = regexp.MustCompile(`^/github/repos/([^/]+/[^/]+)/commits/([0-9a-f]{40})/status$`)
	giteaRead  = regexp.MustCompile(`^/gitea/repos/([^/]+/[^/]+)/commits/([0-9a-f]{40})/status$`)
	gitlabRead = regexp.MustCompile(`^/gitlab/projects/([^/]+)/repository/commits/([0-9a-f]{40})/statuses$`)
)

// keep stores a status the receiver accepted (201) at path.
func keep(forge, path string, doc map[string]any) {
	re := map[string]*regexp.Regexp{"github": githubSet, "gitea": giteaSet, "gitlab": gitlabSet}[forge]
	m := re.FindStringSubmatch(path)
	if m == nil {
		return
	}
	str := func(k string) string { s, _ := doc[k].(string); return s }
	k := kept{context: str("context"), state: str("state"), description: str("description"), targetURL: str("target_url")}
	if forge == "gitlab" {
		k.context = str("name")
	}
	keptMu.Lock()
	defer keptMu.Unlock()
	key := forge + " " + m[1] + " " + m[2]
	statuses[key] = append(statuses[key], k)
}

// read answers a statuses read at path, or reports that path is none.
func read(forge, path string, w http.ResponseWriter, req *http.Request) (code int, verdict string, ok bool) {
	re := map[string]*regexp.Regexp{"github": githubRead, "gitea": giteaRead, "gitlab": gitlabRead}[forge]
	m := re.FindStringSubmatch(path)
	if m == nil {
		return 0, "", false
	}
	sizeParam, max := "per_page", 100
	if forge == "gitea" {
		sizeParam, max = "limit", 50
	}
	size, err := strconv.Atoi(req.URL.Query().Get(sizeParam))
	if err != nil || size < 1 || size > max {
		size = max // the forges clamp it
	}
	page, err := strconv.Atoi(req.URL.Query().Get("page"))
	if err != nil || page < 1 {
		page = 1
	}

	keptMu.Lock()
	all := statuses[forge+" "+m[1]+" "+m[2]]
	// The latest of each context, newest first.
	var latest []kept
	seen := map[string]bool{}
	for i := len(all) - 1; i >= 0; i-- {
		if !seen[all[i].context] {
			seen[all[i].context] = true
			latest = append(latest, all[i])
		}
	}
	keptMu.Unlock()
	lo, hi := min((page-1)*size, len(latest)), min(page*size, len(latest))

	items := []map[string]string{}
	stateKey, contextKey := "state", "context"
	switch forge {
	case "gitea":
		stateKey = "status"
	case "gitlab":
		stateKey, contextKey = "status", "name"
	}
	for _, k := range latest[lo:hi] {
		items = append(items, map[string]string{stateKey: k.state, contextKey: k.context, "description": k.description, "target_url": k.targetURL})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if forge == "gitlab" {
		json.NewEncoder(w).Encode(items)
	} else {
		json.NewEncoder(w).Encode(map[string]any{"state": combined(latest), "sha": m[2], "total_count": len(latest), "statuses": items})
	}
	return http.StatusOK, "ok", true
}

// combined is GitHub's and Gitea's state of a commit: failure if any
// context failed, pending if any is pending (or there is none), else
// success.
func combined(latest []kept) string {
	if len(latest) == 0 {
		return "pending"
	}
	state := "success"
	for _, k := range latest {
		switch k.state {
		case "failure", "error":
			return "failure"
		case "pending":
			state = "pending"
		}
	}
	return state
}
