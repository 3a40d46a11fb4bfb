package settings

import (
	"fmt"
	"time"
)

// NotifyTarget is one place notifications go, as an operator writes it:
// in /etc/syslet/syslet.json ("notify": [...]) for syslet's own runs and
// in webhookd's YAML ("notify:") for its deploys. pkg/notify checks what
// the fields mean (each error names its field) and reads the files.
type NotifyTarget struct {
	Name string `json:"name,omitempty" yaml:"name"` // names the target in logs and metrics; default TYPE-N (its position, from 1)
	Type string `json:"type" yaml:"type"`           // webhook (signed JSON), slack, mattermost, ntfy or smtp
	URL  string `json:"url,omitempty" yaml:"url"`   // where to send: the webhook, incoming-webhook or ntfy topic URL; smtp://host:port or smtps://host:port
	// URLFile holds the URL instead, in a file of mode 0600: for URLs that
	// are themselves credentials (a Slack or Mattermost incoming webhook).
	URLFile      string   `json:"urlFile,omitempty" yaml:"urlFile"`
	SecretFile   string   `json:"secretFile,omitempty" yaml:"secretFile"`     // webhook: the HMAC-SHA256 key (mode 0600) the X-Syslet-Signature-256 header is made with
	TokenFile    string   `json:"tokenFile,omitempty" yaml:"tokenFile"`       // ntfy: an access token (mode 0600), sent as Authorization: Bearer
	Username     string   `json:"username,omitempty" yaml:"username"`         // smtp: the user to authenticate as (with passwordFile)
	PasswordFile string   `json:"passwordFile,omitempty" yaml:"passwordFile"` // smtp: that user's password (mode 0600)
	From         string   `json:"from,omitempty" yaml:"from"`                 // smtp: the sender address
	To           []string `json:"to,omitempty" yaml:"to"`                     // smtp: the recipient addresses
	Events       []string `json:"events,omitempty" yaml:"events"`             // which events to send (started, succeeded, failed, rolled-back, drift); default all
	Timeout      Duration `json:"timeout,omitempty" yaml:"timeout"`           // bound on one attempt; default 5s
	Attempts     int      `json:"attempts,omitempty" yaml:"attempts"`         // tries per event, with backoff between them; default 3
}

// Duration is a time.Duration written as Go writes one ("5s", "2m"), in
// JSON and YAML alike.
type Duration time.Duration

// UnmarshalText reads "5s", "1m30s".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration like 5s or 1m", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration back the same way.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }
