// Command gitea runs Gitea's own command line (gitea.dev/cmd) unchanged: the
// wrapper exists only because Gitea's module cannot be built with `go
// install` (it declares itself gitea.dev and needs its replace lines).
package main

import (
	"os"
	"runtime/debug"

	"gitea.dev/cmd"
	"gitea.dev/modules/log"
	"gitea.dev/modules/setting"

	// Markdown rendering, for commit messages and repository pages.
	_ "gitea.dev/modules/markup/markdown"
)

func main() {
	v := version()
	setting.AppVer = v
	app := cmd.NewMainApp(cmd.AppVersion{Version: v})
	_ = cmd.RunMainApp(app, os.Args...) // it reports its own errors and exit status
	log.GetManager().Close()
}

// version is Gitea's release as go.mod requires it, so that the version has
// one home: "1.27.3".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "gitea.dev" {
				return d.Version[1:]
			}
		}
	}
	return "unknown"
}
