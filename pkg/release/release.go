package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Tags are the build tags podman's bindings need to build without cgo
// and gpgme (the Taskfile's GOFLAGS say the same for plain go commands).
const Tags = "remote,containers_image_openpgp,exclude_graphdriver_btrfs,btrfs_noversion"

// Arches are the architectures a release is built for.
var Arches = []string{"amd64", "arm64"}

// Program is one binary a release ships.
type Program struct {
	Name string // the binary's name, on the host /usr/bin/Name
	Pkg  string // its main package, relative to the module root
}

// Programs are the binaries a release ships, in the order they are built.
var Programs = []Program{{"syslet", "./cmd/syslet"}, {"webhookd", "./cmd/webhookd"}}

// Stamp is what a build says about its source: the version and commit
// `syslet version` prints, and the commit time every timestamp in the
// artifacts is set to.
type Stamp struct {
	// Version is the tag on the commit (v1.2.3), else a Go pseudo-version
	// (v0.0.0-20261201125036-c73c345a7a6d, or v1.2.4-0.… after tag v1.2.3),
	// with "+dirty" when the tree had uncommitted changes.
	Version string
	Commit  string
	Time    time.Time // the commit time, UTC
	Dirty   bool
}

// ReadStamp reads the stamp of the checkout at root from git.
func ReadStamp(root string) (Stamp, error) {
	out, err := git(root, "log", "-1", "--format=%H %ct")
	if err != nil {
		return Stamp{}, err
	}
	hash, ct, _ := strings.Cut(out, " ")
	sec, err := strconv.ParseInt(ct, 10, 64)
	if err != nil || len(hash) != 40 {
		return Stamp{}, fmt.Errorf("reading the commit of %s: unexpected git output %q", root, out)
	}
	st := Stamp{Commit: hash, Time: time.Unix(sec, 0).UTC()}
	status, err := git(root, "status", "--porcelain")
	if err != nil {
		return Stamp{}, err
	}
	st.Dirty = status != ""
	exact, _ := git(root, "describe", "--tags", "--exact-match", "--match", "v[0-9]*")
	last, _ := git(root, "describe", "--tags", "--abbrev=0", "--match", "v[0-9]*")
	st.Version = version(exact, last, st.Time, hash)
	if st.Dirty {
		st.Version += "+dirty"
	}
	return st, nil
}

// version is the tag on the commit, else the pseudo-version Go itself
// would give the commit after the last tag.
func version(exact, last string, t time.Time, hash string) string {
	if exact != "" {
		return exact
	}
	rev := t.Format("20060102150405") + "-" + hash[:12]
	if last == "" {
		return "v0.0.0-" + rev
	}
	if strings.Contains(last, "-") { // a pre-release tag: v1.0.0-rc.1 → v1.0.0-rc.1.0.…
		return strings.SplitN(last, "+", 2)[0] + ".0." + rev
	}
	parts := strings.SplitN(strings.TrimPrefix(strings.SplitN(last, "+", 2)[0], "v"), ".", 3)
	if len(parts) != 3 {
		return "v0.0.0-" + rev
	}
	patch, err := strconv.Atoi(parts[2])
	if err != nil {
		return "v0.0.0-" + rev
	}
	return fmt.Sprintf("v%s.%s.%d-0.%s", parts[0], parts[1], patch+1, rev)
}

// PackageVersion is the version as Debian and RPM compare it: without the
// "v", and the pre-release part after "~" so that it sorts before the
// release it precedes (v0.0.0-2026…-c73c → 0.0.0~2026….c73c).
func (s Stamp) PackageVersion() string {
	v := strings.TrimPrefix(s.Version, "v")
	base, rest, ok := strings.Cut(v, "-")
	if !ok {
		return v
	}
	return base + "~" + strings.ReplaceAll(rest, "-", ".")
}

// Epoch is the stamp's time as SOURCE_DATE_EPOCH spells it.
func (s Stamp) Epoch() string { return strconv.FormatInt(s.Time.Unix(), 10) }

func (s Stamp) ldflags() string {
	return strings.Join([]string{
		"-s", "-w",
		"-X", "main.version=" + s.Version,
		"-X", "main.commit=" + s.Commit,
		"-X", "main.commitTime=" + s.Time.Format(time.RFC3339),
		"-X", "main.modified=" + strconv.FormatBool(s.Dirty),
	}, " ")
}

// Paths says whether a binary carries the source paths of the checkout
// it was built in.
type Paths bool

const (
	// Trimmed (-trimpath) is a release's: the same commit gives the same
	// bytes anywhere.
	Trimmed Paths = false
	// Kept is for tests: the same program, tags and stamp, compiled from
	// the packages go test and go vet already left in Go's build cache.
	// -trimpath compiles every dependency again (a minute and a half of
	// both cores on a cold cache); only the paths in the bytes differ.
	Kept Paths = true
)

// Binary builds the program p of the module at root for linux/arch into
// out: static, without VCS data from the environment (the stamp says it),
// its source paths trimmed or kept.
func Binary(root string, p Program, arch, out string, st Stamp, paths Paths) error {
	t0 := time.Now()
	args := []string{"build"}
	if paths == Trimmed {
		args = append(args, "-trimpath")
	}
	args = append(args, "-buildvcs=false", "-tags", Tags, "-ldflags", st.ldflags(), "-o", out, p.Pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0")
	if err := runLogged(cmd); err != nil {
		return fmt.Errorf("building %s for %s: %w", p.Name, arch, err)
	}
	logf("built %s in %s", out, time.Since(t0).Round(time.Millisecond))
	return nil
}

// BinaryName is a program's file name among the release artifacts.
func BinaryName(p Program, arch string) string { return p.Name + "-linux-" + arch }

// Artifact is one file of a release.
type Artifact struct {
	Name   string
	Size   int64
	SHA256 string
}

// All builds a whole release of the checkout at root into out, which it
// empties first: per architecture the binaries, their SBOMs, the .deb and
// the .rpm; then SHA256SUMS over every file. It returns the artifacts,
// SHA256SUMS last.
func All(root, out string, arches []string) ([]Artifact, error) {
	return build(root, out, arches, Programs)
}

// build is All with the main packages to build as progs (Programs, or a
// small stand-in for both in a test of the whole pipeline).
func build(root, out string, arches []string, progs []Program) ([]Artifact, error) {
	st, err := ReadStamp(root)
	if err != nil {
		return nil, err
	}
	logf("release %s (commit %s, %s)", st.Version, st.Commit, st.Time.Format(time.RFC3339))
	if err := os.RemoveAll(out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	for _, arch := range arches {
		bins := map[string]string{}
		for _, p := range progs {
			bin := filepath.Join(out, BinaryName(p, arch))
			if err := Binary(root, p, arch, bin, st, Trimmed); err != nil {
				return nil, err
			}
			bins[p.Name] = bin
			if err := SBOM(root, bin, bin+".cdx.json", st); err != nil {
				return nil, err
			}
		}
		for _, format := range Formats {
			if _, err := Package(root, format, arch, bins, st, out); err != nil {
				return nil, err
			}
		}
	}
	if err := writeSums(out); err != nil {
		return nil, err
	}
	return list(out)
}

// SumsFile is the checksum list of a release, in sha256sum's format.
const SumsFile = "SHA256SUMS"

// writeSums writes SumsFile in dir over every other file in it.
func writeSums(dir string) error {
	arts, err := list(dir)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, a := range arts {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	return os.WriteFile(filepath.Join(dir, SumsFile), []byte(b.String()), 0o644)
}

// list returns the files in dir, sorted by name with SumsFile last.
func list(dir string) ([]Artifact, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Artifact
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		n, err := io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, Artifact{Name: e.Name(), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	slices.SortFunc(out, func(a, b Artifact) int {
		if (a.Name == SumsFile) != (b.Name == SumsFile) {
			if a.Name == SumsFile {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// Log receives the progress lines of a build (stderr by default).
var Log io.Writer = os.Stderr

func logf(format string, args ...any) { fmt.Fprintf(Log, "release: "+format+"\n", args...) }

// runLogged runs cmd with its output going to Log; the error names the
// command.
func runLogged(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = Log, Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(cmd.Args[:min(len(cmd.Args), 4)], " "), err)
	}
	return nil
}
