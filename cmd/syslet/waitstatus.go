package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/syslet/syslet/pkg/fleet"
	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/push"
	"github.com/syslet/syslet/pkg/settings"
)

// Exit codes of syslet wait-status: CI promotes the commit on 0 only.
const (
	waitSucceeded  = exitOK      // enough hosts succeeded (every named context, by default)
	waitFailed     = exitError   // so many hosts failed (or rolled back) that the threshold cannot be met
	waitUnreadable = exitInvalid // the source refused the read (token, repository, URL, query) or the token file is unusable
	waitPending    = exitPending // --timeout ran out before enough hosts succeeded
)

// minWaitInterval keeps a CI job from hammering the forge's API.
const minWaitInterval = time.Second

// hostContext is the placeholder of a --context pattern with --select.
const hostContext = "{host}"

type waitStatusOptions struct {
	forge, api, repo, tokenFile string
	contexts                    []string
	timeout, interval           time.Duration
	// The fleet: the hosts of --hosts-dir that --select picks, how many
	// must succeed, and Prometheus as the source instead of the forge.
	hostsDir, selectSpec, minSuccess, prometheus string
}

func (o *waitStatusOptions) define(f *flags) {
	f.String(&o.forge, "forge", "", "the forge's API dialect, `KIND`: github, gitea, forgejo or gitlab (required unless --prometheus)")
	f.String(&o.api, "api", "", "the forge's API base `URL`: https://HOST/api/v1 (Gitea, Forgejo), https://HOST/api/v4 (GitLab), https://HOST/api/v3 (GitHub Enterprise); for github the default is https://api.github.com")
	f.String(&o.repo, "repo", "", "the repository on the forge, `OWNER/NAME` (GitLab: the project's path or id; required with --forge)")
	f.String(&o.tokenFile, "token-file", "", "read the API token from `FILE` (mode 0600; required with --forge; it is never printed)")
	f.Each("context", "wait for the status context `NAME` (repeatable): webhookd's repos[].status.context of each host, syslet/HOSTNAME by default; with --select one pattern where {host} stands for each selected host (default syslet/{host})", func(s string) error {
		o.contexts = append(o.contexts, s)
		return nil
	})
	f.String(&o.hostsDir, "hosts-dir", "", "with --select: the config repository's hosts `DIR`, one directory per host holding its labels file (DIR/<host>/labels)")
	f.String(&o.selectSpec, "select", "", "wait for the hosts of --hosts-dir whose labels match `SELECTOR` (ring=canary; key=value or key!=value, comma-separated, all must hold) instead of named contexts")
	f.String(&o.minSuccess, "min-success", "100%", "promote once `N` hosts, or N% of them (rounded up), succeeded; fail once so many failed that N can no longer be met")
	f.String(&o.prometheus, "prometheus", "", "read the hosts' states from the Prometheus at `URL` that scrapes their webhookd (one query a read: webhookd_host_info, webhookd_applied_commit_info, webhookd_last_deploy_result) instead of the forge; needs --select")
	f.Duration(&o.timeout, "timeout", 30*time.Minute, "give up after `D` with exit code 3 when too few hosts have succeeded")
	f.Duration(&o.interval, "interval", 10*time.Second, "read the statuses every `D` (at least 1s)")
}

var commitID = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// waitPlan is what wait-status waits for: the hosts by name, how many of
// them must succeed, and where their states are read.
type waitPlan struct {
	commit string
	hosts  []string
	need   int
	min    push.Size
	what   string // the selection, for the first line
	from   string // the source, for the first line
	reader fleet.Reader
	client *forge.Client // the forge's, whose token is read before the wait
}

// parse checks the flags and returns what to wait for.
func (o *waitStatusOptions) parse(f *flags, args []string) (*waitPlan, error) {
	pos, err := parseInterspersed(f.FlagSet, args)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if len(pos) != 1 {
		return nil, fmt.Errorf("%w: want one COMMIT (its full id), got %d arguments", errUsage, len(pos))
	}
	p := &waitPlan{commit: strings.ToLower(pos[0])}
	if !commitID.MatchString(p.commit) {
		return nil, fmt.Errorf("%w: %q is not a full commit id: give the commit itself (git rev-parse), never a branch that may move while this waits", errUsage, pos[0])
	}
	if p.min, err = push.ParseSize(o.minSuccess, 1); err != nil {
		return nil, fmt.Errorf("%w: --min-success: %v", errUsage, err)
	}
	if o.interval < minWaitInterval {
		return nil, fmt.Errorf("%w: --interval %s is shorter than %s", errUsage, o.interval, minWaitInterval)
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("%w: --timeout must be positive", errUsage)
	}
	contexts, err := o.selectHosts(p)
	if err != nil {
		return nil, err
	}
	if p.need, err = fleet.Need(p.min, len(p.hosts)); err != nil {
		return nil, fmt.Errorf("%w: --min-success %s: %v", errUsage, o.minSuccess, err)
	}
	if o.prometheus != "" {
		return p, o.parsePrometheus(p)
	}
	if p.client, err = o.parseForge(); err != nil {
		return nil, err
	}
	p.reader = fleet.ForgeReader{Client: p.client, Contexts: contexts}
	p.from = fmt.Sprintf("%s %s", p.client.Repo.Kind, p.client.Repo.Path)
	return p, nil
}

// selectHosts sets the plan's hosts: the selected host directories, or
// the named contexts; it returns each host's context.
func (o *waitStatusOptions) selectHosts(p *waitPlan) (map[string]string, error) {
	contexts := map[string]string{}
	for _, c := range o.contexts {
		if c == "" || len(c) > 255 || strings.ContainsAny(c, "\r\n") {
			return nil, fmt.Errorf("%w: --context %q: want one line of at most 255 bytes", errUsage, c)
		}
	}
	if o.selectSpec == "" {
		switch {
		case o.hostsDir != "":
			return nil, fmt.Errorf("%w: --hosts-dir: give --select too (ring=canary): the hosts are picked by their labels", errUsage)
		case o.prometheus != "":
			return nil, fmt.Errorf("%w: --prometheus: give --hosts-dir and --select (ring=canary): the hosts are picked by their labels", errUsage)
		case len(o.contexts) == 0:
			return nil, fmt.Errorf("%w: --context: name at least one status context to wait for (or pick hosts with --hosts-dir and --select)", errUsage)
		}
		for _, c := range o.contexts {
			if _, dup := contexts[c]; !dup {
				p.hosts = append(p.hosts, c)
			}
			contexts[c] = c
		}
		p.what = strings.Join(p.hosts, ", ")
		return contexts, nil
	}
	sel, err := fleet.ParseSelector(o.selectSpec)
	if err != nil {
		return nil, fmt.Errorf("%w: --select: %v", errUsage, err)
	}
	pattern := "syslet/" + hostContext
	switch {
	case o.hostsDir == "":
		return nil, fmt.Errorf("%w: --select: give --hosts-dir DIR, the config repository's host directories holding the labels", errUsage)
	case len(o.contexts) > 1:
		return nil, fmt.Errorf("%w: --context: with --select, give one pattern with %s (default syslet/%s)", errUsage, hostContext, hostContext)
	case len(o.contexts) == 1 && o.prometheus != "":
		return nil, fmt.Errorf("%w: --context names the forge's statuses; --prometheus reads webhookd's metrics", errUsage)
	case len(o.contexts) == 1 && !strings.Contains(o.contexts[0], hostContext):
		return nil, fmt.Errorf("%w: --context %q: with --select, the pattern needs %s (syslet/%s)", errUsage, o.contexts[0], hostContext, hostContext)
	case len(o.contexts) == 1:
		pattern = o.contexts[0]
	}
	all, err := hostDirs(o.hostsDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	for _, h := range all {
		ls, err := fleet.ReadLabels(filepath.Join(o.hostsDir, h))
		if err != nil {
			return nil, fmt.Errorf("%w: --select: %v", errUsage, err)
		}
		if sel.Matches(ls) {
			p.hosts = append(p.hosts, h)
			contexts[h] = strings.ReplaceAll(pattern, hostContext, h)
		}
	}
	if len(p.hosts) == 0 {
		return nil, fmt.Errorf("%w: --select %s: none of the %d host(s) of %s carries these labels (%s/<host>/%s)", errUsage, sel, len(all), o.hostsDir, o.hostsDir, fleet.LabelsFile)
	}
	p.what = sel.String() + ": " + strings.Join(p.hosts, ", ")
	return contexts, nil
}

// parseForge checks the forge's flags and returns its client.
func (o *waitStatusOptions) parseForge() (*forge.Client, error) {
	kind, err := forge.ParseKind(o.forge)
	if err != nil {
		return nil, fmt.Errorf("%w: --forge: %v", errUsage, err)
	}
	api := strings.TrimRight(o.api, "/")
	if api == "" && kind == forge.GitHub {
		api = forge.DefaultAPI(kind, "github.com")
	}
	if api == "" {
		return nil, fmt.Errorf("%w: --api: required for %s (e.g. https://git.example/api/v1)", errUsage, kind)
	}
	if err := forge.CheckAPI(api); err != nil {
		return nil, fmt.Errorf("%w: --api: %v", errUsage, err)
	}
	if err := forge.CheckPath(kind, o.repo); err != nil {
		return nil, fmt.Errorf("%w: --repo: %v", errUsage, err)
	}
	if o.tokenFile == "" {
		return nil, fmt.Errorf("%w: --token-file: required", errUsage)
	}
	return &forge.Client{Repo: forge.Repo{Kind: kind, API: api, Path: o.repo}}, nil
}

// parsePrometheus sets the plan's reader to Prometheus.
func (o *waitStatusOptions) parsePrometheus(p *waitPlan) error {
	if o.forge != "" || o.api != "" || o.repo != "" || o.tokenFile != "" {
		return fmt.Errorf("%w: --prometheus reads webhookd's metrics: --forge, --api, --repo and --token-file are for the forge's statuses", errUsage)
	}
	u := strings.TrimRight(o.prometheus, "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") || strings.ContainsAny(u, " \t\r\n?#") {
		return fmt.Errorf("%w: --prometheus %q: want Prometheus's base URL, http(s)://HOST:PORT", errUsage, o.prometheus)
	}
	sel, _ := fleet.ParseSelector(o.selectSpec) // checked by selectHosts
	p.reader = fleet.PrometheusReader{URL: u, Selector: sel}
	p.from = "prometheus " + u
	return nil
}

// cmdWaitStatus is `syslet wait-status`: it reads what the hosts say of
// COMMIT (their statuses on the forge, or their webhookd's metrics in
// Prometheus) until enough of them succeeded (exit 0), so many failed
// that enough cannot (exit 1, at once), or --timeout runs out (exit 3).
// It changes nothing: a CI job promotes the commit (pushes it to the next
// ring's branch) on exit 0 only.
func cmdWaitStatus(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o waitStatusOptions
	f := commandFlags("wait-status")
	o.define(f)
	p, err := o.parse(f, args)
	if err != nil {
		return usage(stdout, stderr, "wait-status", err)
	}
	if p.client != nil {
		token, err := settings.ReadCredential(o.tokenFile)
		if err != nil {
			fmt.Fprintf(stderr, "syslet wait-status: --token-file: %v\n", err)
			return waitUnreadable
		}
		p.client.Token = token
	}

	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	interrupted := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			close(interrupted)
			cancel()
		case <-ctx.Done():
		}
	}()

	short := p.commit[:12]
	start := time.Now()
	since := func() string { return fmt.Sprintf("%5s", time.Since(start).Round(time.Second)) }
	if p.all() {
		fmt.Fprintf(stdout, "waiting for %d status(es) of %s on %s (at most %s): %s\n", len(p.hosts), short, p.from, (*duration)(&o.timeout), p.what)
	} else {
		fmt.Fprintf(stdout, "waiting for %d of %d host(s) (--min-success %s) to run %s, read from %s (at most %s): %s\n", p.need, len(p.hosts), p.min, short, p.from, (*duration)(&o.timeout), p.what)
	}
	res, err := fleet.Wait(ctx, p.reader, p.commit, p.hosts, p.need, fleet.Watch{
		Every: o.interval,
		Changed: func(host string, r fleet.Report) {
			fmt.Fprintf(stdout, "%s %s: %s\n", since(), host, describe(r))
		},
		Retrying: func(err error) {
			fmt.Fprintf(stderr, "%s syslet wait-status: %v (trying again)\n", since(), err)
		},
	})
	select {
	case <-interrupted:
		fmt.Fprintln(stderr, "syslet wait-status: interrupted; nothing was promoted")
		return exitInterrupted
	default:
	}
	if err != nil {
		fmt.Fprintf(stderr, "syslet wait-status: reading the states of %s from %s: %v\n", short, p.from, err)
		return waitUnreadable
	}
	return p.tell(stdout, res, since(), (*duration)(&o.timeout).String())
}

// all reports whether every host must succeed (the default).
func (p *waitPlan) all() bool { return p.need == len(p.hosts) }

// tell prints how the wait ended and returns the exit code.
func (p *waitPlan) tell(stdout io.Writer, res fleet.Result, at, timeout string) int {
	short := p.commit[:12]
	tally := fmt.Sprintf("%d of %d host(s) succeeded, %d needed (--min-success %s)", len(res.Succeeded), len(p.hosts), p.need, p.min)
	switch res.Verdict {
	case fleet.Met:
		if p.all() {
			fmt.Fprintf(stdout, "%s every status is success: %s may be promoted\n", at, short)
			return waitSucceeded
		}
		line := fmt.Sprintf("%s %s: %s may be promoted", at, tally, short)
		if rest := p.named(res, append(res.Failed, res.Waiting...)); rest != "" {
			line += "; not successful: " + rest
		}
		fmt.Fprintln(stdout, line)
		return waitSucceeded
	case fleet.Unreachable:
		line := fmt.Sprintf("%s %s failed on %s", at, short, p.named(res, res.Failed))
		if !p.all() {
			line += fmt.Sprintf(": at most %d of %d host(s) can still succeed, %d needed (--min-success %s)", len(p.hosts)-len(res.Failed), len(p.hosts), p.need, p.min)
		}
		fmt.Fprintln(stdout, line+": do not promote it")
		return waitFailed
	}
	msg := fmt.Sprintf("%s still waiting after %s: %s", at, timeout, p.named(res, append(res.Failed, res.Waiting...)))
	if !p.all() {
		msg = fmt.Sprintf("%s still waiting after %s: %s; not successful: %s", at, timeout, tally, p.named(res, append(res.Failed, res.Waiting...)))
	}
	if res.Err != nil {
		msg += fmt.Sprintf("; the last read failed: %v", res.Err)
	}
	fmt.Fprintln(stdout, msg+": not promoted")
	return waitPending
}

// named lists hosts with what each said: its word, or that it said
// nothing at all (missing: down, or not polling).
func (p *waitPlan) named(res fleet.Result, hosts []string) string {
	var parts []string
	for _, h := range hosts {
		r, ok := res.Last[h]
		switch {
		case !ok && p.all():
			parts = append(parts, h+" (no status yet)")
		case !ok:
			parts = append(parts, h+" (missing: no report)")
		default:
			parts = append(parts, h+" ("+r.Word+")")
		}
	}
	return strings.Join(parts, ", ")
}

// describe is a report as one line: its word and, when the source has
// one, its description.
func describe(r fleet.Report) string {
	if r.Description == "" {
		return r.Word
	}
	return r.Word + " (" + r.Description + ")"
}
