// Package forge speaks the commit-status APIs of GitHub, Gitea/Forgejo and
// GitLab, in one place: how a repository is named on each forge's API, how
// a status is set (webhookd's per-host status of a deployed commit), how a
// commit's statuses are read back, and what each forge's state words mean.
//
// A ring of hosts is promoted on those statuses: package fleet waits on
// them (enough hosts success, or too many failed) through the small
// Reader interface, so the waiting is tested without a forge and a real
// forge stands behind Client.
//
// Tokens are the caller's (read from a 0600 file) and never appear in an
// error: a failed request names the method, the API's scheme and host,
// the HTTP status and the start of the answer with the token removed.
//
// Layer: ground. It imports the standard library only.
package forge
