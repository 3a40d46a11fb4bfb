package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/settings"
)

// Exit codes of syslet wait-status: CI promotes the commit on 0 only.
const (
	waitSucceeded  = exitOK      // every named context is success
	waitFailed     = exitError   // a named context failed: the commit failed (or rolled back) on that host
	waitUnreadable = exitInvalid // the forge refused the read (token, repository, API URL) or the token file is unusable
	waitPending    = exitPending // --timeout ran out with a named context still pending or absent
)

// minWaitInterval keeps a CI job from hammering the forge's API.
const minWaitInterval = time.Second

type waitStatusOptions struct {
	forge, api, repo, tokenFile string
	contexts                    []string
	timeout, interval           time.Duration
}

func (o *waitStatusOptions) define(f *flags) {
	f.String(&o.forge, "forge", "", "the forge's API dialect, `KIND`: github, gitea, forgejo or gitlab (required)")
	f.String(&o.api, "api", "", "the forge's API base `URL`: https://HOST/api/v1 (Gitea, Forgejo), https://HOST/api/v4 (GitLab), https://HOST/api/v3 (GitHub Enterprise); for github the default is https://api.github.com")
	f.String(&o.repo, "repo", "", "the repository on the forge, `OWNER/NAME` (GitLab: the project's path or id; required)")
	f.String(&o.tokenFile, "token-file", "", "read the API token from `FILE` (mode 0600; required; it is never printed)")
	f.Each("context", "wait for the status context `NAME` (repeatable, at least one): webhookd's repos[].status.context of each host, syslet/HOSTNAME by default", func(s string) error {
		o.contexts = append(o.contexts, s)
		return nil
	})
	f.Duration(&o.timeout, "timeout", 30*time.Minute, "give up after `D` with exit code 3 when a context is still pending or has no status")
	f.Duration(&o.interval, "interval", 10*time.Second, "read the statuses every `D` (at least 1s)")
}

var commitID = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// parse checks the flags and returns the commit and the forge client.
func (o *waitStatusOptions) parse(f *flags, args []string) (string, *forge.Client, error) {
	pos, err := parseInterspersed(f.FlagSet, args)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if len(pos) != 1 {
		return "", nil, fmt.Errorf("%w: want one COMMIT (its full id), got %d arguments", errUsage, len(pos))
	}
	commit := strings.ToLower(pos[0])
	if !commitID.MatchString(commit) {
		return "", nil, fmt.Errorf("%w: %q is not a full commit id: give the commit itself (git rev-parse), never a branch that may move while this waits", errUsage, pos[0])
	}
	kind, err := forge.ParseKind(o.forge)
	if err != nil {
		return "", nil, fmt.Errorf("%w: --forge: %v", errUsage, err)
	}
	api := strings.TrimRight(o.api, "/")
	if api == "" && kind == forge.GitHub {
		api = forge.DefaultAPI(kind, "github.com")
	}
	if api == "" {
		return "", nil, fmt.Errorf("%w: --api: required for %s (e.g. https://git.example/api/v1)", errUsage, kind)
	}
	if err := forge.CheckAPI(api); err != nil {
		return "", nil, fmt.Errorf("%w: --api: %v", errUsage, err)
	}
	if err := forge.CheckPath(kind, o.repo); err != nil {
		return "", nil, fmt.Errorf("%w: --repo: %v", errUsage, err)
	}
	if o.tokenFile == "" {
		return "", nil, fmt.Errorf("%w: --token-file: required", errUsage)
	}
	if len(o.contexts) == 0 {
		return "", nil, fmt.Errorf("%w: --context: name at least one status context to wait for", errUsage)
	}
	for _, c := range o.contexts {
		if c == "" || len(c) > 255 || strings.ContainsAny(c, "\r\n") {
			return "", nil, fmt.Errorf("%w: --context %q: want one line of at most 255 bytes", errUsage, c)
		}
	}
	if o.interval < minWaitInterval {
		return "", nil, fmt.Errorf("%w: --interval %s is shorter than %s", errUsage, o.interval, minWaitInterval)
	}
	if o.timeout <= 0 {
		return "", nil, fmt.Errorf("%w: --timeout must be positive", errUsage)
	}
	return commit, &forge.Client{Repo: forge.Repo{Kind: kind, API: api, Path: o.repo}}, nil
}

// cmdWaitStatus is `syslet wait-status`: it reads COMMIT's statuses on the
// forge until every named context is success (exit 0), one of them failed
// (exit 1, at once), or --timeout runs out (exit 3). It changes nothing:
// a CI job promotes the commit (pushes it to the next ring's branch) on
// exit 0 only.
func cmdWaitStatus(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o waitStatusOptions
	f := commandFlags("wait-status")
	o.define(f)
	commit, client, err := o.parse(f, args)
	if err != nil {
		return usage(stdout, stderr, "wait-status", err)
	}
	token, err := settings.ReadCredential(o.tokenFile)
	if err != nil {
		fmt.Fprintf(stderr, "syslet wait-status: --token-file: %v\n", err)
		return waitUnreadable
	}
	client.Token = token

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

	short := commit[:12]
	start := time.Now()
	since := func() string { return fmt.Sprintf("%5s", time.Since(start).Round(time.Second)) }
	fmt.Fprintf(stdout, "waiting for %d status(es) of %s on %s %s (at most %s): %s\n", len(o.contexts), short, client.Repo.Kind, client.Repo.Path, (*duration)(&o.timeout), strings.Join(o.contexts, ", "))
	res, err := forge.Wait(ctx, client, commit, o.contexts, forge.Watch{
		Every: o.interval,
		Changed: func(s forge.Status) {
			fmt.Fprintf(stdout, "%s %s: %s\n", since(), s.Context, describe(s))
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
		fmt.Fprintf(stderr, "syslet wait-status: reading the statuses of %s: %v\n", short, err)
		return waitUnreadable
	}
	switch res.Outcome {
	case forge.Succeeded:
		fmt.Fprintf(stdout, "%s every status is success: %s may be promoted\n", since(), short)
		return waitSucceeded
	case forge.Failed:
		fmt.Fprintf(stdout, "%s %s failed on %s (%s): do not promote it\n", since(), short, res.Failed, res.Last[res.Failed].Word)
		return waitFailed
	}
	var waiting []string
	for _, c := range o.contexts {
		if s, ok := res.Last[c]; !ok {
			waiting = append(waiting, c+" (no status yet)")
		} else if s.State != forge.Success {
			waiting = append(waiting, c+" ("+s.Word+")")
		}
	}
	slices.Sort(waiting)
	msg := fmt.Sprintf("%s still waiting after %s: %s", since(), (*duration)(&o.timeout), strings.Join(waiting, ", "))
	if res.Err != nil {
		msg += fmt.Sprintf("; the last read failed: %v", res.Err)
	}
	fmt.Fprintln(stdout, msg+": not promoted")
	return waitPending
}

// describe is a status as one line: its state and, when the forge has
// one, its description.
func describe(s forge.Status) string {
	if s.Description == "" {
		return s.Word
	}
	return s.Word + " (" + s.Description + ")"
}
