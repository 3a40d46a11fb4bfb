// Package bounded is the one way syslet reads a file it does not control:
// the trees it manages on a host (units, config files, build contexts),
// its own state (the run journal, the apply lock, generations, the
// identity cache, settings), spec sources and hand-written quadlets.
//
// Every read is bounded and typed. A file is opened without following a
// symlink at its name (O_NOFOLLOW), without blocking on a FIFO swapped in
// for it (O_NONBLOCK), and checked on the open descriptor to be a regular
// file; anything else is a *NotRegularError naming the path. Each kind of
// file has a cap (Kind), each tree a total (Budget); going past either is
// a *LimitError naming the path and the cap. A file too large to keep in
// memory is compared by its streamed sha256 (Digest), never read whole.
// Lines (the journal) are bounded one by one, and an over-long line is
// skipped without being held (FileLines).
//
// syslet's own state files are opened for writing with OpenState (the
// same refusals) and replaced with WriteState (a new file fsynced, renamed
// over the old one, the directory fsynced).
//
// Beneath resolves a name inside a directory following symlinks only as
// long as they stay inside it: a spec directory (or webhookd's checkout)
// never reads through a link that leaves it.
//
// Layer: ground. It imports pkg/digest, pkg/filemode and
// golang.org/x/sys/unix only; never pkg/host (whose adapters read through
// it), plan, render, executor or pkg/app.
package bounded
