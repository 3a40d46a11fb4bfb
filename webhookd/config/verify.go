package config

import (
	"path"

	"github.com/syslet/syslet/pkg/commitsig"
)

// validateVerify reads the keys a commit must be signed by.
func (r *Repo) validateVerify(f func(string) string, add func(field, format string, args ...any)) {
	if r.Verify == nil {
		return
	}
	if r.Verify.AllowedSigners == "" && r.Verify.Keyring == "" {
		add(f("verify.allowedSigners"), "required when verify is set: an allowed-signers file in git's format (or verify.keyring, an OpenPGP public keyring)")
		return
	}
	var t commitsig.Trust
	if file := r.Verify.AllowedSigners; file != "" {
		if !path.IsAbs(file) {
			add(f("verify.allowedSigners"), "must be an absolute path, got %q", file)
		} else if s, err := commitsig.LoadAllowedSigners(file); err != nil {
			add(f("verify.allowedSigners"), "%v", err)
		} else {
			t.SSH = s
		}
	}
	if file := r.Verify.Keyring; file != "" {
		if !path.IsAbs(file) {
			add(f("verify.keyring"), "must be an absolute path, got %q", file)
		} else if k, err := commitsig.LoadKeyring(file); err != nil {
			add(f("verify.keyring"), "%v", err)
		} else {
			t.PGP = k
		}
	}
	r.trust = t
}

// Trust is the keys a commit to deploy must be signed by (zero: the
// repository checks no signature).
func (r *Repo) Trust() commitsig.Trust { return r.trust }
