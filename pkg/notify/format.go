package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The headers of the webhook target.
const (
	HeaderEvent     = "X-Syslet-Event"         // the event's kind
	HeaderDelivery  = "X-Syslet-Delivery"      // the event's id, the same on every retry
	HeaderSignature = "X-Syslet-Signature-256" // "sha256=" + hex HMAC-SHA256 of the body with the target's secret
)

// Sign is the value of HeaderSignature for body: what a receiver computes
// with the shared secret and compares in constant time.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// job turns an event into the target's delivery, prepared once so that
// every retry sends the same bytes.
func (t *Target) job(ev *Event) (Job, error) {
	var body []byte
	header := http.Header{}
	hide := [][]byte{t.secret, t.token, t.password, []byte(t.url)}
	switch t.typ {
	case TypeWebhook:
		b, err := json.Marshal(ev)
		if err != nil {
			return Job{}, err
		}
		body = b
		header.Set("Content-Type", "application/json")
		header.Set(HeaderEvent, string(ev.Event))
		header.Set(HeaderDelivery, ev.ID)
		if len(t.secret) > 0 {
			header.Set(HeaderSignature, Sign(t.secret, body))
		}
	case TypeSlack, TypeMattermost:
		b, err := json.Marshal(map[string]string{"text": chatText(ev, t.typ == TypeSlack)})
		if err != nil {
			return Job{}, err
		}
		body = b
		header.Set("Content-Type", "application/json")
	case TypeNtfy:
		body = []byte(strings.Join(lines(ev), "\n"))
		header.Set("Content-Type", "text/plain; charset=utf-8")
		header.Set("Title", ascii(Title(ev)))
		header.Set("Priority", ntfyPriority(ev.Event))
		header.Set("Tags", ntfyTags(ev.Event))
		if len(t.token) > 0 {
			header.Set("Authorization", "Bearer "+string(t.token))
		}
	case TypeSMTP:
		msg, err := t.mailMessage(ev)
		if err != nil {
			return Job{}, err
		}
		return Job{Event: string(ev.Event), Do: func(ctx context.Context) error { return t.sendMail(ctx, msg) }}, nil
	default:
		return Job{}, fmt.Errorf("unknown target type %q", t.typ)
	}
	return Job{Event: string(ev.Event), Do: func(ctx context.Context) error { return Post(ctx, t.url, header, body, hide...) }}, nil
}

// Title is an event's one-line title: "web1: deploy failed".
func Title(ev *Event) string {
	what := map[Kind]string{
		Started: "deploy started", Succeeded: "deploy succeeded", Failed: "deploy FAILED",
		RolledBack: "deploy ROLLED BACK", Drift: "drift found", Test: "test notification",
	}[ev.Event]
	if what == "" {
		what = string(ev.Event)
	}
	return ev.Host + ": " + what
}

// lines writes an event for people, one fact a line; log lines are
// indented with "| ".
func lines(ev *Event) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	src := ev.Source.Text
	if ev.Source.Trigger != "" {
		src += " (" + ev.Source.Trigger + ")"
	}
	if src != "" {
		add("source: %s", src)
	}
	if ev.Run != "" {
		add("run: %s", ev.Run)
	}
	if ev.Summary != "" {
		add("summary: %s", ev.Summary)
	}
	if ev.DurationSeconds > 0 {
		add("took: %s", time.Duration(ev.DurationSeconds*float64(time.Second)).Round(100*time.Millisecond))
	}
	if ev.Stage != "" {
		add("stage: %s", ev.Stage)
	}
	if ev.Error != "" {
		add("error: %s", ev.Error)
	}
	if len(ev.Findings) > 0 {
		add("invalid specs (%d error(s)):", max(ev.FindingCount, len(ev.Findings)))
		for _, f := range ev.Findings {
			add("  %s (%s)", f, f.Rule)
		}
		if more := ev.FindingCount - len(ev.Findings); more > 0 {
			add("  … and %d more", more)
		}
	}
	if len(ev.Failing) > 0 {
		add("failing:")
		for _, u := range ev.Failing {
			if u.Unit == "" {
				add("  %s", u.Reason)
			} else {
				add("  %s: %s", u.Unit, u.Reason)
			}
			for _, l := range u.Log {
				add("    | %s", l)
			}
		}
	}
	if rb := ev.Rollback; rb != nil {
		switch {
		case rb.Passed:
			add("rolled back: the generation of run %s runs again (run %s; it passed the health gate)", rb.Generation, rb.Run)
		case rb.Error != "":
			add("rollback to the generation of run %s FAILED: %s", rb.Generation, rb.Error)
		}
	}
	if len(ev.Drift) > 0 {
		add("differs from the applied specs:")
		for _, d := range ev.Drift {
			line := fmt.Sprintf("  %s: %s", d.Unit, d.Kind)
			if d.Effect != "" && d.Effect != d.Kind {
				line += " (" + d.Effect + ")"
			}
			if len(d.Reasons) > 0 {
				line += ": " + strings.Join(d.Reasons, "; ")
			}
			out = append(out, line)
		}
	}
	return out
}

// chatText is the message of a Slack (mrkdwn) or Mattermost (Markdown)
// incoming webhook: a bold title, the facts, log lines in a code block.
func chatText(ev *Event, slack bool) string {
	esc := func(s string) string { return s }
	bold := "**"
	if slack {
		esc = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace
		bold = "*"
	}
	var b strings.Builder
	b.WriteString(bold + esc("syslet "+Title(ev)) + bold + "\n")
	inLog := false
	for _, l := range lines(ev) {
		log, isLog := strings.CutPrefix(l, "    | ")
		switch {
		case isLog && !inLog:
			b.WriteString("```\n")
			inLog = true
		case !isLog && inLog:
			b.WriteString("```\n")
			inLog = false
		}
		if isLog {
			// A fence inside a log line would end the block early.
			b.WriteString(esc(strings.ReplaceAll(log, "```", "'''")) + "\n")
			continue
		}
		b.WriteString(esc(l) + "\n")
	}
	if inLog {
		b.WriteString("```\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func ntfyPriority(k Kind) string {
	switch k {
	case Failed, RolledBack:
		return "high"
	case Started, Succeeded:
		return "low"
	}
	return "default"
}

func ntfyTags(k Kind) string {
	tag := map[Kind]string{
		Started: "hourglass_flowing_sand", Succeeded: "white_check_mark", Failed: "rotating_light",
		RolledBack: "leftwards_arrow_with_hook", Drift: "warning", Test: "test_tube",
	}[k]
	return strings.TrimPrefix(tag+",syslet", ",")
}

// ascii makes s fit an HTTP header: printable ASCII only.
func ascii(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}
