// Package backup is the one home of the volume backups syslet keeps under
// /var/lib/syslet/backups: a podman volume's export (a tar stream, as
// `podman volume export` writes it) taken before an apply deletes or
// recreates the volume, so that `syslet restore` can bring its data back.
//
// A backup is one file, <run>_<volume>.tar, 0600 in a 0700 directory,
// named by the run that took it and the volume it holds. It is written
// under a temporary name (.tmp-…), fsynced, then renamed into place: a
// reader never sees half an export, and a run killed during one leaves
// only a temporary file that the next save removes (only one apply runs
// at a time, so any temporary file found is a leftover). Its sha256 and
// size are returned to the caller, who records them in the run journal.
//
// Nothing planted in the directory is followed: a symlink where the
// directory should be, or a symlink, FIFO or device under a backup's name,
// is refused with an error naming it.
//
// Layer: ground. It imports only the ground packages layout and digest.
package backup
