package view

import "os"

// IsTerminal reports whether w is a terminal: a person is reading (and
// may be asked), so progress and colours are worth drawing.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
