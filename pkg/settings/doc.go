// Package settings owns syslet's own settings file, /etc/syslet/syslet.json:
// its schema, read with every unknown field refused and every error naming
// the field, and the rule for the operator's credential files (a regular
// file only its owner may read, never printed).
//
// Each field belongs to the package that acts on it: pkg/secrets reads the
// identity fields (sshKeyPath, ageIdentityFiles), pkg/notify the
// notification targets (notify). The target's schema, NotifyTarget, is
// shared with webhookd's YAML, so one target is written the same way in
// both files.
//
// Layer: ground. It imports only pkg/layout and the standard library; it
// reads files and opens nothing else.
package settings
