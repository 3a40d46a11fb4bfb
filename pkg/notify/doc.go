// Package notify tells people what a run did, without ever getting in the
// way of the run: the event document (Event, what syslet and webhookd
// send, version 1), the formats it is sent in — a JSON webhook signed
// with HMAC-SHA256 (X-Syslet-Signature-256), a Slack or Mattermost
// incoming webhook, an ntfy topic, a mail over SMTP — and the machinery
// that sends them: one ordered, bounded queue per target, delivered off
// the caller's path, each attempt bounded by a timeout, retried a few
// times with backoff, and every outcome (sent, failed, dropped) reported
// to the caller, who logs and counts it.
//
// A target is read from its settings (pkg/settings.NotifyTarget, in
// syslet.json or webhookd's YAML) by Load, which checks every field and
// reads its credential files (mode 0600). Credentials, the URL of a
// target read from urlFile, and a response body's copy of a credential
// never appear in an error: a failed delivery names the target, its
// scheme and host, and the HTTP status.
//
// What an Event holds is decided by its builders (pkg/app/deploy for a
// run, webhookd for its own steps); this package only bounds it (how many
// units and log lines) and never adds content.
//
// Layer: ground. It imports pkg/settings and the standard library.
package notify
