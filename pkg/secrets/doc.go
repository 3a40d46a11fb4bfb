// Package secrets opens the SOPS-encrypted secret specs of spec format v1
// on the host they are deployed to. It owns three things:
//
//   - The host's age identities: the X25519 identity derived from the SSH
//     ed25519 host key exactly as ssh-to-age derives it (SHA-512 of the
//     ed25519 seed, first 32 bytes, bech32 "AGE-SECRET-KEY-1…"), every
//     identity derived earlier (an append-only 0600 cache, so secrets
//     encrypted for a host key that was since replaced still open), and
//     any age identity files the settings list.
//   - Its fields of the settings file /etc/syslet/syslet.json (sshKeyPath,
//     ageIdentityFiles), read through pkg/settings.
//   - Decryption of a ciphertext with the SOPS library (data key through
//     age only, MAC verified) into a flat map of key → value.
//
// Plaintext never leaves this package except as the []byte values handed
// to the executor for podman; no error message, log line or String method
// here contains a value. Opened.Wipe zeroes every value buffer once the
// apply has stored them. The strings inside the SOPS library's decrypted
// tree are Go strings and cannot be zeroed; they are dropped at once.
//
// Every path is resolved under a root directory ("/" on a host), so tests
// work in a scratch directory.
//
// Layer: ground. It takes its own Sealed type from the caller and so
// imports nothing of the pipeline (render, plan, executor), nor pkg/app.
package secrets
