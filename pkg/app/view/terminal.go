package view

import (
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether w is a terminal: a person is reading (and
// may be asked), so progress and colours are worth drawing. It asks the
// terminal driver (an ioctl), not the file's type: /dev/null is a
// character device too, and `syslet apply specs/ </dev/null` from a cron
// job or a script is no one to ask.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
