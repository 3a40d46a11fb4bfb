package notify

import (
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/syslet/syslet/pkg/settings"
)

// Target types.
const (
	TypeWebhook    = "webhook"
	TypeSlack      = "slack"
	TypeMattermost = "mattermost"
	TypeNtfy       = "ntfy"
	TypeSMTP       = "smtp"
)

// Limits of a target's retry settings.
const (
	MaxAttempts = 10
	MaxTimeout  = time.Minute
)

// Target is one checked place to send events, its credentials read.
// Nothing of it prints a credential or its URL.
type Target struct {
	name, typ string
	url       string // may be a credential (urlFile): never printed
	where     string // scheme://host, for messages
	secret    []byte // webhook HMAC key
	token     []byte // ntfy access token
	user      string
	password  []byte
	from      string
	to        []string
	events    map[Kind]bool
	retry     Retry
}

// Name is the target's name in logs and metrics.
func (t *Target) Name() string { return t.name }

// Type is the target's type.
func (t *Target) Type() string { return t.typ }

// String names the target for people: its name, type and host.
func (t *Target) String() string { return fmt.Sprintf("%s (%s, %s)", t.name, t.typ, t.where) }

// Wants reports whether the target takes events of kind k (a test event
// goes to every target).
func (t *Target) Wants(k Kind) bool { return k == Test || t.events[k] }

// Load checks targets as an operator wrote them under field ("notify")
// and reads their credential files. Every problem is reported, each
// naming its field ("notify[0].url"); no error holds a credential.
func Load(ts []settings.NotifyTarget, field string) ([]*Target, error) {
	var out []*Target
	var errs []error
	names := map[string]int{}
	for i, st := range ts {
		f := func(name string) string { return fmt.Sprintf("%s[%d].%s", field, i, name) }
		add := func(name, format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s: %s", f(name), fmt.Sprintf(format, args...)))
		}
		t := load(st, i, add)
		if j, dup := names[t.name]; dup {
			add("name", "%q is already the name of %s[%d]", t.name, field, j)
		}
		names[t.name] = i
		out = append(out, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func load(st settings.NotifyTarget, i int, add func(field, format string, args ...any)) *Target {
	t := &Target{name: st.Name, typ: st.Type}
	switch st.Type {
	case TypeWebhook, TypeSlack, TypeMattermost, TypeNtfy, TypeSMTP:
	case "":
		add("type", "required: webhook, slack, mattermost, ntfy or smtp")
	default:
		add("type", "%q is not a target type (want webhook, slack, mattermost, ntfy or smtp)", st.Type)
	}
	if t.name == "" {
		t.name = st.Type + "-" + strconv.Itoa(i+1)
	} else if !validName(t.name) {
		add("name", "%q must be 1-63 characters of a-z, A-Z, 0-9, '.', '_', '-'", t.name)
	}
	var u *url.URL
	t.url, t.where, u = loadURL(st, add)
	t.secret, t.token, t.password = loadCredentials(st, u, add)
	if st.Type == TypeSMTP {
		t.from, t.to, t.user = loadMail(st, add)
	} else {
		for _, c := range []struct {
			field string
			set   bool
		}{{"from", st.From != ""}, {"to", len(st.To) > 0}, {"username", st.Username != ""}} {
			if c.set {
				add(c.field, "only applies to smtp targets")
			}
		}
	}
	t.events = loadEvents(st, add)
	t.retry = loadRetry(st, add)
	return t
}

// loadURL reads a target's URL, given or from a private file, and checks
// it for the target's type: the URL, where it points with any credential
// taken out (what messages show), and the URL parsed (nil when it is not
// usable).
func loadURL(st settings.NotifyTarget, add func(field, format string, args ...any)) (raw, where string, u *url.URL) {
	switch {
	case st.URL != "" && st.URLFile != "":
		add("url", "give url or urlFile, not both")
	case st.URLFile != "":
		if b, err := readFile(st.URLFile); err != nil {
			add("urlFile", "%v", err)
		} else {
			raw = string(b)
		}
	case st.URL != "":
		raw = st.URL
	default:
		add("url", "required (or urlFile, for a URL that is itself a credential)")
	}
	field := "url"
	if st.URLFile != "" {
		field = "urlFile"
	}
	if raw == "" {
		return raw, "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		// The URL itself is never shown: it may be a credential.
		add(field, "not an absolute URL")
		return raw, "", nil
	}
	switch st.Type {
	case TypeSMTP:
		if u.Scheme != "smtp" && u.Scheme != "smtps" {
			add(field, "want smtp://HOST:PORT (STARTTLS when the server offers it) or smtps://HOST:PORT (TLS), got %s://", u.Scheme)
		}
		if u.Port() == "" {
			add(field, "give the port (587 for smtp://, 465 for smtps://)")
		}
		if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			add(field, "only smtp[s]://HOST:PORT; the user goes in username, its password in passwordFile")
		}
	default:
		if u.Scheme != "https" && u.Scheme != "http" {
			add(field, "want an https:// (or http://) URL, got %s://", u.Scheme)
		}
		if u.User != nil {
			add(field, "must not carry a user or password")
		}
	}
	return raw, Redact(raw), u
}

// loadCredentials reads the credential files a target's type takes: a
// webhook's signing secret, ntfy's token, the SMTP password.
func loadCredentials(st settings.NotifyTarget, u *url.URL, add func(field, format string, args ...any)) (secret, token, password []byte) {
	creds := func(field, file string, allowed bool, what string) []byte {
		if file == "" {
			return nil
		}
		if !allowed {
			add(field, "only applies to %s targets", what)
			return nil
		}
		b, err := readFile(file)
		if err != nil {
			add(field, "%v", err)
			return nil
		}
		return b
	}
	secret = creds("secretFile", st.SecretFile, st.Type == TypeWebhook, "webhook")
	token = creds("tokenFile", st.TokenFile, st.Type == TypeNtfy, "ntfy")
	password = creds("passwordFile", st.PasswordFile, st.Type == TypeSMTP, "smtp")
	if st.Type == TypeWebhook && st.SecretFile != "" && len(secret) > 0 && len(secret) < 16 {
		add("secretFile", "%s holds %d bytes; use at least 16 (e.g. openssl rand -hex 32)", st.SecretFile, len(secret))
	}
	if len(token) > 0 && u != nil && u.Scheme == "http" && !loopback(u.Hostname()) {
		add("tokenFile", "the token would cross the network in clear: use an https:// URL")
	}
	return secret, token, password
}

// loadMail reads an SMTP target's sender, recipients and login user.
func loadMail(st settings.NotifyTarget, add func(field, format string, args ...any)) (from string, to []string, user string) {
	if st.From == "" {
		add("from", "required for smtp targets")
	} else if a, err := mail.ParseAddress(st.From); err != nil {
		add("from", "%q is not a mail address: %v", st.From, err)
	} else {
		from = a.Address
	}
	if len(st.To) == 0 {
		add("to", "at least one recipient is required for smtp targets")
	}
	for k, rcpt := range st.To {
		if a, err := mail.ParseAddress(rcpt); err != nil {
			add(fmt.Sprintf("to[%d]", k), "%q is not a mail address: %v", rcpt, err)
		} else {
			to = append(to, a.Address)
		}
	}
	switch {
	case st.Username != "" && st.PasswordFile == "":
		add("passwordFile", "required with username")
	case st.Username == "" && st.PasswordFile != "":
		add("username", "required with passwordFile")
	}
	return from, to, st.Username
}

// loadEvents reads which events a target is sent: all when it names none.
func loadEvents(st settings.NotifyTarget, add func(field, format string, args ...any)) map[Kind]bool {
	events := map[Kind]bool{}
	if len(st.Events) == 0 {
		for _, k := range Kinds {
			events[k] = true
		}
	}
	for k, e := range st.Events {
		kind, err := ParseKind(e)
		if err != nil {
			add(fmt.Sprintf("events[%d]", k), "%v", err)
			continue
		}
		events[kind] = true
	}
	return events
}

// loadRetry reads how hard a target is tried: DefaultRetry, with the
// target's timeout and attempts where it sets them.
func loadRetry(st settings.NotifyTarget, add func(field, format string, args ...any)) Retry {
	r := DefaultRetry
	if st.Timeout != 0 {
		d := time.Duration(st.Timeout)
		if d < 100*time.Millisecond || d > MaxTimeout {
			add("timeout", "%s is not between 100ms and %s", d, MaxTimeout)
		}
		r.Timeout = d
	}
	if st.Attempts != 0 {
		if st.Attempts < 1 || st.Attempts > MaxAttempts {
			add("attempts", "%d is not between 1 and %d", st.Attempts, MaxAttempts)
		}
		r.Attempts = st.Attempts
	}
	return r
}

// readFile reads a credential file, which must be an absolute path of
// mode 0600.
func readFile(file string) ([]byte, error) {
	if !filepath.IsAbs(file) {
		return nil, fmt.Errorf("path %q must be absolute", file)
	}
	return settings.ReadCredential(file)
}

func validName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
