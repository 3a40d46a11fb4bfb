package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
)

// Backups of deleted volumes, and volumes filled from them. Step 6
// deletes a volume only after its export is on disk (Backups.Save:
// streamed, fsynced, renamed into place); an export that fails keeps the
// volume and stops the run like any failed delete. Whether they all fit is
// known before anything changes (room): a run that could not keep what it
// deletes does not begin. Step 9 imports a backup into the volume it
// fills (plan/fill.go), the bytes read counted and hashed: a backup that
// is not the one the plan names (its sha256, when the plan knows it)
// fails the import, and the run stops there, the backup kept.

// backedUp lists the volumes the plan deletes whose data is exported
// first (plan.Plan.BackedUp), in plan order.
func (h Host) backedUp(p *plan.Plan) []string {
	if h.Backups == nil {
		return nil
	}
	var out []string
	for i := range p.Actions {
		if a := &p.Actions[i]; p.BackedUp(a) && !slices.Contains(out, a.Target) {
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
	if h.Backups != nil && e.p.BackedUp(&a) {
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

// importVolume brings the backup an OpImportVolume names into its volume,
// and returns it with the size and sha256 of what was read. A backup whose
// sha256 is not the plan's is an error once the import read it: the volume
// holds what does not belong in it, the backup is kept, and the run stops.
//
// An import that names no backup carries the volume's data over (plan's
// carry.go): it imports the export this run took of the volume in step 6,
// whose size and sha256 what it reads must match; when the run took none
// (the volume was gone already) there is nothing to carry.
func (e *run) importVolume(ctx context.Context, a plan.Action) (*backup.Entry, error) {
	d := a.Data()
	file, digest, size := d.Backup, d.Digest, int64(-1)
	if file == "" {
		i := slices.IndexFunc(e.res.Backups, func(b backup.Entry) bool { return b.Volume == a.Target })
		if i < 0 {
			e.log.Info().Str("volume", a.Target).Msg("nothing to carry over: the run exported no data of it")
			return nil, nil
		}
		file, digest, size = e.res.Backups[i].File, e.res.Backups[i].SHA256, e.res.Backups[i].Size
	}
	if e.h.Backups == nil {
		return nil, fmt.Errorf("volume %s: no backup store to import %s from", a.Target, file)
	}
	r, b, err := e.h.Backups.Open(file)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := sha256.New()
	n := &counted{r: io.TeeReader(r, h)}
	if err := e.h.Podman.ImportVolume(ctx, a.Target, n); err != nil {
		return nil, err
	}
	b.Size, b.SHA256 = n.n, hex.EncodeToString(h.Sum(nil))
	if digest != "" && digest != b.SHA256 || size >= 0 && size != b.Size {
		return nil, fmt.Errorf("volume %s: backup %s read as %d bytes with sha256 %s, not as it was taken (sha256 %s): the backup changed since; it is kept", a.Target, file, b.Size, b.SHA256, digest)
	}
	e.log.Info().Str("volume", a.Target).Str("backup", b.File).Int64("bytes", b.Size).Str("sha256", b.SHA256).Msg("imported")
	return &b, nil
}

// counted counts the bytes read through it.
type counted struct {
	r io.Reader
	n int64
}

func (c *counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
