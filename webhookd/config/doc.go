// Package config reads webhookd's configuration file and checks all of it
// at start: Load returns a Config whose every field is validated, whose
// defaults are filled in and whose secret, key, keyring and known_hosts
// files are read; or an error listing every problem found, each naming
// its field (repos[1].status.tokenFile: …), nothing else done.
//
// file.go is the file's shape: the fields a configuration may set, their
// defaults, and the comments that are the configuration reference
// (webhookd(8) and docs/reference/webhookd.md are generated from it).
// Each part's checks live in a file of their own: the daemon's own
// fields (load.go), a repository's remote, path, polls and credentials
// (repo.go), its commit status on the forge (status.go), its drift check
// (drift.go), its signature check (verify.go), its maintenance windows
// (window.go), a registry's token (registry.go); secret.go holds Secret, which never prints itself.
//
// Layer: webhookd. It imports ground packages only.
package config
