// Package generation keeps the last good generations of a host: for every
// run that ended ok — its started units passed the health gate — the
// validated input stream it applied (ciphertexts only: a spec stream never
// holds plaintext), its input and plan digests, and the image each
// container ran, by ID. A rollback applies one of them again through the
// normal pipeline, each container pinned to the image it ran then, so the
// host returns to exactly what served, even if a tag has moved since.
//
// Generations live under /var/lib/syslet/generations (layout.Generations),
// one file each (0600, written atomically, in a 0700 directory). The
// store is bounded: the last Keep generations and at most MaxBytes in all,
// the newest always kept. Files are read regular-only, without following
// links, and bounded in size (pkg/bounded).
//
// Layer: ground. It imports pkg/layout, pkg/bounded and pkg/commitsig (the signer it
// records) only; never plan, render, executor
// or pkg/app.
package generation
