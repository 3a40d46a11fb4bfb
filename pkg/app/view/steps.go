package view

import (
	"fmt"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/plan"
)

// describe is how the plan's steps name one action: what it does to
// what, in the words an operator reads before applying it.
func describe(a plan.Action) string {
	d := a.Data()
	switch a.Op {
	case plan.OpWriteDir:
		n := 0
		for _, f := range d.Files {
			if !layout.Internal(f.Name) {
				n++
			}
		}
		return fmt.Sprintf("%s/ (%d files, new version)", a.Target, n)
	case plan.OpWriteFile, plan.OpWriteUnit:
		return fmt.Sprintf("%s (%04o)", a.Target, d.Mode)
	case plan.OpLinkUnit:
		return a.Target + " -> " + d.Link
	case plan.OpPull:
		if d.Pull != nil {
			return a.Target + " (as " + a.Unit + " pulls it)"
		}
	case plan.OpCreateSecret:
		return "secret " + a.Target + " = (secret)"
	case plan.OpRemoveSecret:
		return "remove secret " + a.Target
	case plan.OpRemoveUnit, plan.OpRemoveFile:
		return "remove " + a.Target
	case plan.OpDeleteVolume:
		return "volume " + a.Target
	case plan.OpDeleteNetwork:
		return "network " + a.Target
	case plan.OpDeleteImage:
		return "image " + a.Target
	case plan.OpDaemonReload:
		return "systemctl daemon-reload"
	case plan.OpRestart:
		return "restart " + a.Target + " (its socket stays open)"
	case plan.OpAwaitReady:
		return "wait until " + a.Target + " is ready (its probe)"
	case plan.OpSwitch:
		if sw := d.Switch; sw != nil && sw.Old != "" {
			return "switch " + a.Target + " from " + sw.Old + " to " + sw.New + " (syslet-proxy)"
		} else if sw != nil {
			return "switch " + a.Target + " to " + sw.New + " (syslet-proxy)"
		}
	case plan.OpDrain:
		if d.Switch != nil {
			return "drain " + a.Target + " (at most " + d.Switch.Drain.String() + ")"
		}
	case plan.OpStopSlot:
		return "stop " + a.Target
	case plan.OpRemoveSlot:
		return "remove " + a.Target
	case plan.OpCreateVolume:
		if d.Service != "" {
			return "create volume " + a.Target + " (through " + d.Service + ")"
		}
		return "create volume " + a.Target + " (podman's defaults)"
	case plan.OpImportVolume:
		if d.Backup == "" {
			return "carry the data of volume " + a.Target + " over (import the export step 6 takes of it)"
		}
		return "fill volume " + a.Target + " from backup " + d.Backup
	}
	return a.Target
}
