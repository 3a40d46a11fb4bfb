package deploy

import (
	"context"
	"fmt"

	"github.com/syslet/syslet/pkg/backup"
)

// The volumes a failed run deleted or recreated, brought back by its
// rollback. The failed run exported each before deleting it; once the
// rollback's changes have landed (the volume exists again, under the
// generation's unit, and the containers run the generation's specs),
// each backup is imported into its volume as `syslet restore` does, the
// containers mounting it stopped and started around it, so that the
// health gate judges the host with its data back. What the volume held
// since the failed run is kept in a backup of its own. A restore that
// fails is named with the command that retries it: the backup stays.

// restoreBackups brings the pass's backups back into their volumes, and
// returns what it restored and what it could not, for the rollback's
// report, with the entries restored for the journal.
func (r *runner) restoreBackups(ctx context.Context, in passInput) (restored, lost []string, entries []backup.Entry) {
	live := r.h.live
	vols, ok := live.Podman.(Volumes)
	for _, b := range in.restore {
		retry := fmt.Sprintf("syslet restore %s %s", b.Volume, b.File)
		if !ok {
			lost = append(lost, fmt.Sprintf("volume %s (deleted by the failed run; this podman adapter cannot import it: %s)", b.Volume, retry))
			continue
		}
		out, err := r.restoreOne(ctx, vols, in.runID, b)
		if err != nil {
			r.view.Warning(fmt.Sprintf("restoring volume %s from backup %s: %v", b.Volume, b.File, err))
			lost = append(lost, fmt.Sprintf("volume %s (deleted by the failed run; restoring backup %s failed: %v; the backup is kept: %s)", b.Volume, b.File, err, retry))
			continue
		}
		line := fmt.Sprintf("volume %s from backup %s (%d bytes, sha256 %s)", b.Volume, b.File, out.From.Size, out.From.SHA256)
		if out.Kept != nil {
			line += fmt.Sprintf("; what it held after the failed run is in backup %s", out.Kept.File)
		}
		restored = append(restored, line)
		entries = append(entries, out.From)
	}
	return restored, lost, entries
}

// restoreOne imports one backup into its volume.
func (r *runner) restoreOne(ctx context.Context, vols Volumes, run string, b backup.Entry) (*Restored, error) {
	f, from, err := r.h.backups.Open(b.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return restoreInto(ctx, r.h.live, vols, r.h.backups, &Restored{Run: run, Volume: b.Volume, From: from}, f, r.req.StopTimeout, r.req.StartTimeout, nil)
}
