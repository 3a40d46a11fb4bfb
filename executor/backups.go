package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
)

// Backups of deleted volumes. Step 6 deletes a volume only after its
// export is on disk (Backups.Save: streamed, fsynced, renamed into
// place); an export that fails keeps the volume and stops the run like
// any failed delete. Whether they all fit is known before anything
// changes (room): a run that could not keep what it deletes does not
// begin.

// backedUp lists the volumes the plan deletes whose data is exported
// first, in plan order.
func (h Host) backedUp(p *plan.Plan) []string {
	if h.Backups == nil {
		return nil
	}
	var out []string
	for i := range p.Actions {
		if a := &p.Actions[i]; a.Op == plan.OpDeleteVolume && !a.Data().NoBackup && !slices.Contains(out, a.Target) {
			out = append(out, a.Target)
		}
	}
	return out
}

// exportRoom is how much room a volume of size bytes may take once
// exported: tar adds a 512-byte header per file and pads each to 512
// bytes, which a volume of many small files feels; an eighth more and a
// mebibyte cover that without measuring every file.
func exportRoom(size int64) int64 { return size + size/8 + 1<<20 }

// room refuses, before any change, a plan whose volume backups do not fit
// in the free space of the backups' filesystem, naming each volume, its
// size and the space left.
func (h Host) room(ctx context.Context, p *plan.Plan) error {
	vols := h.backedUp(p)
	if len(vols) == 0 {
		return nil
	}
	sizes, err := h.Podman.VolumeSizes(ctx)
	if err != nil {
		return fmt.Errorf("sizing the volumes to back up before they are deleted: %w; nothing applied", err)
	}
	free, err := h.Backups.Free()
	if err != nil {
		return fmt.Errorf("%w: %w; nothing applied", ErrNoRoom, err)
	}
	var need int64
	var each []string
	for _, v := range vols {
		size, ok := sizes[v]
		if !ok {
			continue // already gone: nothing to keep
		}
		need += exportRoom(size)
		each = append(each, fmt.Sprintf("volume %s holds %s", v, backup.Size(size)))
	}
	if need <= free {
		return nil
	}
	return fmt.Errorf("%w: %s, and the backup needs %s but the backup directory has %s free; nothing applied (free space there, or set \"backup\": false on a volume whose data may go, or pass --no-backup for this run)",
		ErrNoRoom, strings.Join(each, ", "), backup.Size(need), backup.Size(free))
}

// deleteVolume exports a volume to its backup, then deletes it. A volume
// already gone needs neither.
func (e *run) deleteVolume(ctx context.Context, a plan.Action) (*backup.Entry, error) {
	h := e.h
	var saved *backup.Entry
	if h.Backups != nil && !a.Data().NoBackup {
		s, err := h.Backups.Save(a.Target, func(w io.Writer) error { return h.Podman.ExportVolume(ctx, a.Target, w) })
		switch {
		case errors.Is(err, host.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("volume %s is kept: %w", a.Target, err)
		default:
			saved = &s
			e.log.Info().Str("volume", a.Target).Str("backup", s.File).Int64("bytes", s.Size).Str("sha256", s.SHA256).Msg("backed up")
		}
	}
	return saved, h.Podman.RemoveVolume(ctx, a.Target)
}
