package layout

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// Host directories syslet writes under.
const (
	UnitDir    = "/etc/containers/systemd"
	ConfigRoot = "/etc/containers/config"
	BuildRoot  = "/etc/containers/builds"
)

// SocketDir holds the socket units syslet writes for containers (a
// container spec's socket): plain systemd units, since quadlet has no
// socket type, so they live where systemd reads the administrator's own.
const SocketDir = "/etc/systemd/system"

// SocketPath is the host path of a socket unit ("web.socket").
func SocketPath(name string) string { return path.Join(SocketDir, name) }

// UnitPath is the host path of a unit file ("web.container").
func UnitPath(fileName string) string { return path.Join(UnitDir, fileName) }

// ConfigDirOf is the directory holding all of a container's config files
// and config dirs; it is removed whole when the container goes.
func ConfigDirOf(container string) string { return path.Join(ConfigRoot, container) }

// ConfigPath mirrors a path inside the container under the container's
// config directory: /etc/nginx/nginx.conf of "web" lives at
// /etc/containers/config/web/etc/nginx/nginx.conf. Mount paths are clean,
// absolute and never nested, so mirrored paths cannot collide.
func ConfigPath(container, mountPath string) string {
	return path.Join(ConfigRoot, container, mountPath)
}

// BuildDirOf is a build's context directory.
func BuildDirOf(build string) string { return path.Join(BuildRoot, build) }

// Containerfile is the path of a build's Containerfile.
func Containerfile(build string) string { return path.Join(BuildRoot, build, "Containerfile") }

// DropInDir is the directory of a unit file's drop-ins
// ("web.container.d"), relative to UnitDir as the unit file's name is.
func DropInDir(unitFile string) string { return unitFile + ".d" }

// PinFile is the drop-in a rollback writes into a container's drop-in
// directory to run the image the container ran in the generation being
// restored; "99-" sorts it after every other drop-in, so it wins.
const PinFile = "99-syslet-pin.conf"

// PinPath is the host path of a container's pin drop-in.
func PinPath(unitFile string) string { return path.Join(UnitDir, DropInDir(unitFile), PinFile) }

// Template splits a unit file name of systemd's template form:
// "web@1.container" is the instance "1" of the template "web@.container";
// "web@.container" is the template itself (instance ""). ok is false for
// a name without "@".
func Template(unitFile string) (template, instance string, ok bool) {
	ext := path.Ext(unitFile)
	base := strings.TrimSuffix(unitFile, ext)
	prefix, inst, ok := strings.Cut(base, "@")
	if !ok {
		return "", "", false
	}
	return prefix + "@" + ext, inst, true
}

// Instance is the unit file name of instance inst of a template
// ("web@.container", "1" → "web@1.container").
func Instance(template, inst string) string {
	ext := path.Ext(template)
	return strings.TrimSuffix(template, ext) + inst + ext
}

// DropInPath is the host path of a unit's drop-in file name
// ("web.container", "10-limits.conf" →
// /etc/containers/systemd/web.container.d/10-limits.conf).
func DropInPath(unitFile, name string) string { return path.Join(UnitDir, DropInDir(unitFile), name) }

// DropInDirs are the drop-in directories, relative to UnitDir, whose
// *.conf files quadlet merges into a unit file, most specific first, as
// podman's GetUnitDropinPaths lists them (the same in every release
// syslet supports): the unit's own "web@1.container.d", a template's
// "web@.container.d" for its instances, the truncated prefixes of a
// dashed name ("foo-bar.container" reads "foo-.container.d") and the
// type's "container.d". quadletcheck's tests hold it to podman's.
func DropInDirs(unitFile string) []string {
	ext := path.Ext(unitFile)
	dext := ext + ".d"
	base := strings.TrimSuffix(unitFile, ext)
	name, inst, isTemplate := strings.Cut(base, "@")
	dirs := []string{strings.TrimPrefix(dext, ".")}
	if parts := strings.Split(name, "-"); len(parts) > 1 {
		for i := range parts[:len(parts)-1] {
			p := strings.Join(parts[:i+1], "-") + "-"
			dirs = append(dirs, p+dext)
			if isTemplate {
				dirs = append(dirs, p+"@"+dext)
			}
		}
	}
	if inst != "" {
		dirs = append(dirs, name+"@"+dext)
	}
	dirs = append(dirs, DropInDir(unitFile))
	slices.Reverse(dirs)
	return dirs
}

// Kube units' YAML files live under KubeRoot, one directory per unit
// (KubeRoot/NAME, removed whole with the unit).
const KubeRoot = "/etc/containers/kube"

// KubeYaml is the YAML file a kube unit's Yaml= points at.
func KubeYaml(kube string) string { return path.Join(KubeRoot, kube, kube+".yaml") }

// DataLink is the link inside a config directory that names the current
// version; per-file links point through it ("app.conf" → "..data/app.conf"),
// so one rename of DataLink switches every file at once.
const DataLink = "..data"

// VersionName is the name of a config directory's n-th version directory.
func VersionName(n int) string { return "..v" + strconv.Itoa(n) }

// Version parses a version directory name; ok is false for anything else.
func Version(name string) (n int, ok bool) {
	s, found := strings.CutPrefix(name, "..v")
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// FileLink is the target of a config directory's per-file link.
func FileLink(name string) string { return DataLink + "/" + name }

// Digests is the manifest syslet writes into each version directory of a
// config directory: the digest of every file of that version, so a later
// plan can tell a hand edit from syslet's own content. It lives in the
// version (not in the unit's marker, which would then change whenever a
// file does), so it is swapped in with the files by the same rename. As
// an internal name it gets no per-file link.
const Digests = "..digests"

// plainName reports whether s is one path component other than "." and
// "..".
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.Contains(s, "/")
}

// Internal reports whether a name inside a config directory belongs to the
// layout (the data link, version directories, temporary links) rather than
// being one of the user's files. User file names never start with "..".
func Internal(name string) bool { return strings.HasPrefix(name, "..") }

// Resolve follows the links of a config directory entry the way the
// container sees it: dir/name → dir/..data/name → dir/..vN/name. readlink
// returns a path's link target and whether it is a link. Relative targets
// resolve against the link's directory; at most depth links are followed.
func Resolve(readlink func(p string) (string, bool), dir, link string, depth int) string {
	// The link as syslet writes it, FileLink(name) through a DataLink naming
	// a version directory beside it, resolves without joining or cleaning
	// paths: a plan resolves every file of every config dir.
	if name, ok := strings.CutPrefix(link, DataLink+"/"); ok && plainName(name) {
		if v, ok := readlink(dir + "/" + DataLink); ok && plainName(v) {
			vdir := dir + "/" + v
			p := vdir + "/" + name
			_, vLink := readlink(vdir)
			_, pLink := readlink(p)
			if !vLink && !pLink {
				return p
			}
		}
	}
	p := path.Join(dir, link)
	for ; depth > 0; depth-- {
		parent, base := path.Dir(p), path.Base(p)
		if t, ok := readlink(parent); ok {
			p = path.Join(path.Dir(parent), t, base)
			continue
		}
		if t, ok := readlink(p); ok {
			p = path.Join(path.Dir(p), t)
			continue
		}
		break
	}
	return p
}

// Temporary names. An apply stages what it will install next to each
// target under these names before anything is stopped — a file's new
// content, a link to the file it replaces (kept until the run no longer
// needs to put it back), a link inside a config dir — and later renames
// them into place or away. A run killed in between leaves them behind;
// the next apply finds them (Leftover) and removes them. Each is the
// prefix followed by 16 hex digits.
const (
	TempPrefix    = ".syslet-tmp-" // staged content, or a staged config dir being built
	BackupPrefix  = ".syslet-old-" // the file or directory a staged one replaces
	DirTempPrefix = "..tmp-"       // inside a config dir: a staged link, or a link kept to put back
	// legacyTempPrefix is what earlier versions named a file being written.
	legacyTempPrefix = ".syslet-"
)

// tempSuffixLen is the length of a temporary name's random part (hex).
const tempSuffixLen = 16

// Leftover reports whether name is a temporary name of syslet's: a
// staged file, a backup, a config dir's temporary link, or the temporary
// file an earlier version wrote in place.
func Leftover(name string) bool {
	for _, p := range []string{TempPrefix, BackupPrefix, DirTempPrefix, legacyTempPrefix} {
		if s, ok := strings.CutPrefix(name, p); ok && len(s) == tempSuffixLen && isHex(s) {
			return true
		}
	}
	return false
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
