// Package fsroot reads and writes the files syslet manages, under a root
// directory ("/" on a real host, a scratch directory in tests and for
// `syslet render --out`). Every path it takes is an absolute host path
// such as /etc/containers/systemd/web.container; the root is prepended
// here and nowhere else.
//
// Paths are resolved beneath the root one component at a time with
// openat(O_NOFOLLOW), and every change is made relative to the directory
// handle found that way (mkdirat, renameat, unlinkat, symlinkat): no
// symlink is ever followed below the root, in an intermediate directory
// or at the final name, so a link planted in a managed tree cannot turn a
// root-owned write or removal into one elsewhere. A symlink where a
// directory or file is expected is a *SymlinkError naming it; ReadTree
// reports links with their targets and never reads through them.
//
// Writes are atomic: a temporary file in the same directory, fsync, rename,
// fsync of the directory. A config directory is a set of per-file links
// through one "..data" link to a numbered version directory; a new version
// becomes visible with a single rename(2) of "..data". The names of that
// layout are pkg/layout's, shared with the planner that reads it back.
//
// An apply splits each write in two (prepare.go): PrepareFile, PrepareDir
// and PrepareLink write every byte next to the target before anything is
// stopped; Swap then only renames, and Settle or Undo ends the write. A
// config dir is prepared one of two ways, each its own type: the next
// version inside a dir that exists (version.go), or a new dir built whole
// beside its place (preparedir.go). "Staging" is another step's word
// (pkg/host/stage: the generator's check before the apply).
//
// Layer: adapter (a ground package only pkg/app may import). It imports
// pkg/host and pkg/layout; never plan, render or executor, whose
// interfaces it implements.
package fsroot
