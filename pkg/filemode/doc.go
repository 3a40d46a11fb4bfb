// Package filemode is the one home of how syslet reads and names a file's
// type: a stat mode turned into an fs.FileMode (FromStat), and that type
// named for a message (Describe: "a FIFO", "a symlink"). The bounded reads
// (pkg/bounded), the managed trees (pkg/host/fsroot) and the plan's
// description of a file that is not a regular one all say it the same way.
//
// Layer: ground. It imports nothing from syslet, only io/fs and
// golang.org/x/sys/unix (the stat constants).
package filemode
