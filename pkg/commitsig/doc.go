// Package commitsig decides whether a git commit was signed by a key the
// host trusts, before anything of the commit is checked out or applied.
//
// Input: the raw bytes of one commit object (as git stores it, without
// the object header) and a Trust: an allowed-signers file in git's and
// OpenSSH's format (gpg.ssh.allowedSignersFile; ssh-keygen(1), ALLOWED
// SIGNERS), an OpenPGP public keyring (gpg --export, armored or binary),
// or both. Output: the Signer (principal, key fingerprint) of a good signature, or
// a *RefusedError whose Reason is one of a fixed few (reason.go is their
// one home): unsigned, unknown key, bad signature, key not yet valid, key
// expired.
//
// The SSH check is git's own for gpg.format=ssh: the commit's gpgsig header
// holds an armored SSHSIG signature (namespace "git", sha256 or sha512)
// over the commit without its signature headers, made by a key listed in
// the file for the namespace "git". A key's valid-after/valid-before must
// hold at the commit's committer date (what git checks) and also now: a
// key that has expired no longer deploys anything, whatever date a commit
// claims.
//
// The OpenPGP check is git's for gpg.format=openpgp: the gpgsig header
// holds an armored detached signature over the same payload, verified
// with github.com/ProtonMail/go-crypto (pure Go) against a signing key or
// subkey of the keyring. A revoked or expired key (now, or at the
// commit's date) is "no longer valid"; a key created after the commit or
// the signature, or a signature dated in the future, is "not yet valid".
// The signer is shown by the key's fingerprint and primary user ID.
//
// Every byte is hostile: the commit object and the signature are capped
// (MaxCommit, MaxSignature) before they are decoded, a NUL, a block that
// is not armored, trailing data, an unknown version or hash, and a
// certificate in place of a key are each refused as a bad signature.
//
// Layer: ground. It imports golang.org/x/crypto/ssh,
// github.com/ProtonMail/go-crypto/openpgp and pkg/bounded only.
package commitsig
