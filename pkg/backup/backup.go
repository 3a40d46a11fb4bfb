package backup

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/syslet/syslet/pkg/filemode"
	"github.com/syslet/syslet/pkg/layout"
)

// Entry is one backup: the file and what it holds.
type Entry struct {
	// File is the backup's base name in the store's directory.
	File   string    `json:"file"`
	Volume string    `json:"volume"`
	Run    string    `json:"run"`
	Time   time.Time `json:"time"`
	Size   int64     `json:"size"`
	// SHA256 is the hex digest of the file, known when the backup was just
	// taken (and recorded in the run journal), empty when listed.
	SHA256 string `json:"sha256,omitempty"`
}

// Store is the backup directory.
type Store struct{ Dir string }

// For is the store of a managed root ("/" on a host).
func For(root string) Store { return Store{Dir: layout.Under(root, layout.Backups)} }

// DefaultKeep is how many backups of each volume are kept by default: the
// newest, older ones removed as a new one is saved.
const DefaultKeep = 5

// tmpPrefix marks a backup being written.
const tmpPrefix = ".tmp-"

// ext ends every backup's name.
const ext = ".tar"

// Name is the file name of run's backup of volume.
func Name(run, volume string) string { return run + "_" + volume + ext }

// parse reads the run and volume out of a backup's file name; run IDs hold
// no "_".
func parse(name string) (run, volume string, ok bool) {
	base, ok := strings.CutSuffix(name, ext)
	if !ok || strings.HasPrefix(name, ".") {
		return "", "", false
	}
	run, volume, ok = strings.Cut(base, "_")
	return run, volume, ok && run != "" && volume != ""
}

// dir makes sure the directory exists, is a real directory (not a
// symlink to one) and is 0700, and returns it.
func (s Store) dir() (string, error) {
	if err := os.MkdirAll(filepath.Dir(s.Dir), 0o700); err != nil {
		return "", fmt.Errorf("backup directory: %w", err)
	}
	if err := os.Mkdir(s.Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("backup directory: %w", err)
	}
	fi, err := os.Lstat(s.Dir)
	if err != nil {
		return "", fmt.Errorf("backup directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("backup directory %s is %s, not a directory: refused (remove it to let syslet create the directory)", s.Dir, filemode.Describe(fi.Mode()))
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(s.Dir, 0o700); err != nil {
			return "", fmt.Errorf("backup directory: %w", err)
		}
	}
	return s.Dir, nil
}

// Free is how many bytes the directory's filesystem has free for root.
func (s Store) Free() (int64, error) {
	d, err := s.dir()
	if err != nil {
		return 0, err
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(d, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", d, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// Save writes run's backup of volume from what export writes, and returns
// it with its size and sha256. export streams: nothing of it is held in
// memory. A temporary file left by an earlier save that was killed is
// removed first.
func (s Store) Save(run, volume string, export func(io.Writer) error) (Entry, error) {
	d, err := s.dir()
	if err != nil {
		return Entry{}, err
	}
	s.sweep()
	name := Name(run, volume)
	final := filepath.Join(d, name)
	if fi, err := os.Lstat(final); err == nil && !fi.Mode().IsRegular() {
		return Entry{}, fmt.Errorf("backup %s is %s planted in %s: refused", name, filemode.Describe(fi.Mode()), d)
	}
	tmp := filepath.Join(d, tmpPrefix+name)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return Entry{}, fmt.Errorf("backup of volume %s: %w", volume, err)
	}
	h := sha256.New()
	cw := &counter{w: io.MultiWriter(f, h)}
	err = export(cw)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return Entry{}, fmt.Errorf("backup of volume %s: %w", volume, err)
	}
	syncDir(d)
	return Entry{File: name, Volume: volume, Run: run, Time: time.Now().UTC(), Size: cw.n, SHA256: fmt.Sprintf("%x", h.Sum(nil))}, nil
}

// sweep removes what killed saves left.
func (s Store) sweep() {
	des, _ := os.ReadDir(s.Dir)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), tmpPrefix) && de.Type().IsRegular() {
			_ = os.Remove(filepath.Join(s.Dir, de.Name()))
		}
	}
}

// List returns the backups, oldest run first; for a volume only its own
// when volume is not "". Whatever else is in the directory (a planted
// symlink or FIFO, a temporary file) is not a backup: it is named in
// refused instead.
func (s Store) List(volume string) (out []Entry, refused []string, err error) {
	fi, err := os.Lstat(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("backup directory %s is %s, not a directory: refused", s.Dir, filemode.Describe(fi.Mode()))
	}
	des, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, nil, err
	}
	for _, de := range des {
		run, vol, ok := parse(de.Name())
		if !ok {
			if !strings.HasPrefix(de.Name(), tmpPrefix) {
				refused = append(refused, de.Name())
			}
			continue
		}
		if !de.Type().IsRegular() {
			refused = append(refused, fmt.Sprintf("%s (%s)", de.Name(), filemode.Describe(de.Type())))
			continue
		}
		if volume != "" && vol != volume {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed since the directory was read
		}
		out = append(out, Entry{File: de.Name(), Volume: vol, Run: run, Time: info.ModTime().UTC(), Size: info.Size()})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Run+"_"+a.Volume, b.Run+"_"+b.Volume) })
	return out, refused, nil
}

// Open opens a backup for reading: only a regular file, never through a
// symlink, and without blocking on a FIFO planted under its name.
func (s Store) Open(name string) (*os.File, Entry, error) {
	run, vol, ok := parse(name)
	if !ok || filepath.Base(name) != name {
		return nil, Entry{}, fmt.Errorf("%q is not the name of a backup (RUN_VOLUME.tar, as syslet backups lists them)", name)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, Entry{}, fmt.Errorf("backup %s is a symlink planted in %s: refused", name, s.Dir)
		}
		return nil, Entry{}, fmt.Errorf("opening backup: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("backup %s is %s planted in %s: refused", name, filemode.Describe(fi.Mode()), s.Dir)
	}
	if err != nil {
		f.Close()
		return nil, Entry{}, err
	}
	return f, Entry{File: name, Volume: vol, Run: run, Time: fi.ModTime().UTC(), Size: fi.Size()}, nil
}

// Prune removes all but the newest keep backups of volume (keep <= 0
// keeps them all), and never the spared files (a backup a run is about to
// import), and returns what it removed.
func (s Store) Prune(volume string, keep int, spared ...string) ([]string, error) {
	if keep <= 0 {
		return nil, nil
	}
	es, _, err := s.List(volume)
	if err != nil || len(es) <= keep {
		return nil, err
	}
	var gone []string
	for _, e := range es[:len(es)-keep] {
		if slices.Contains(spared, e.File) {
			continue
		}
		if err := os.Remove(filepath.Join(s.Dir, e.File)); err != nil {
			return gone, err
		}
		gone = append(gone, e.File)
	}
	syncDir(s.Dir)
	return gone, nil
}

// PruneTotal removes the oldest backups, run by run, while all of them
// hold more than max bytes (max <= 0: no bound), but never those of run
// (the run saving now: the data a run just deleted is the last to go) nor
// the spared files. It returns what it removed.
func (s Store) PruneTotal(max int64, run string, spared ...string) ([]string, error) {
	if max <= 0 {
		return nil, nil
	}
	es, _, err := s.List("")
	if err != nil {
		return nil, err
	}
	var total int64
	for _, e := range es {
		total += e.Size
	}
	var gone []string
	for _, e := range es {
		if total <= max {
			break
		}
		if e.Run == run || slices.Contains(spared, e.File) {
			continue
		}
		if err := os.Remove(filepath.Join(s.Dir, e.File)); err != nil {
			return gone, err
		}
		total -= e.Size
		gone = append(gone, e.File)
	}
	if len(gone) > 0 {
		syncDir(s.Dir)
	}
	return gone, nil
}

// counter counts what passes through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func syncDir(d string) {
	if f, err := os.Open(d); err == nil {
		_ = f.Sync()
		f.Close()
	}
}

// Size writes a backup's or a volume's size for people: the unit that
// keeps it short, and the exact count.
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}
