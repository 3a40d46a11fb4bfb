package plan

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Taking over a host from the earlier syslet. Its units carry the same
// [X-Syslet] marker and mean the same once normalized (it sorted every
// line, which unit.Same ignores), with two differences in what it wrote:
//
//   - config files and config dirs lived at <container>/<base>-<sha8>, so
//     their Volume= source moves and the container must restart to mount
//     the new path (configMountMoves says so in the reason);
//   - its .build units named the Containerfile but set no
//     SetWorkingDirectory; the image they built is kept (adoptedBuild);
//   - a config dir's mount path kept the trailing slash it was written
//     with ("/etc/nginx/conf.d/"), in the Volume= destination and in the
//     hash of its directory's name; spec reads it cleaned, so the
//     destinations of a move are compared cleaned (sameMount);
//   - its first releases defaulted removalAllowed to false, so a spec
//     that never set it finds RemovalAllowed=false installed and would
//     silently lose that protection (removalDefault warns).

// adoptedBuild reports whether the only difference between an installed
// build unit and the rendered one is the SetWorkingDirectory= syslet adds
// for its own context directory. The earlier syslet wrote build units
// without it; the image it built from the same Containerfile is kept
// rather than rebuilt (which would restart every container running it).
func adoptedBuild(u *render.Unit, keys []KeyChange) bool {
	// The digests syslet now records in its marker are metadata.
	keys = slices.DeleteFunc(slices.Clone(keys), func(k KeyChange) bool { return k.Section == unit.Syslet })
	if u.Kind != spec.Build || len(keys) != 1 {
		return false
	}
	k := keys[0]
	return k.Op == "+" && k.Section == unit.Build && k.Key == unit.KeySetWorkingDirectory && k.New == layout.BuildDirOf(u.Name)
}

// configMountMoves finds Volume= changes that only move one of the
// container's config mounts to a new host path (same destination and
// options), and returns a reason for each plus the key changes left over.
func configMountMoves(u *render.Unit, keys []KeyChange) (moves []string, rest []KeyChange) {
	own := func(src string) bool {
		return slices.Contains(u.Used().ConfigFiles, src) || slices.Contains(u.Used().ConfigDirs, src)
	}
	type mount struct{ src, dst string }
	split := func(v string) (mount, bool) {
		src, dst, ok := strings.Cut(v, ":")
		return mount{src, dst}, ok && path.IsAbs(src)
	}
	var removed []int
	for i, k := range keys {
		if k.Section == unit.Container && k.Key == unit.KeyVolume && (k.Op == "-" || k.Op == "~") {
			removed = append(removed, i)
		}
	}
	used := map[int]bool{}
	for i, k := range keys {
		if k.Section != unit.Container || k.Key != unit.KeyVolume || (k.Op != "+" && k.Op != "~") {
			continue
		}
		nm, ok := split(k.New)
		if !ok || !own(nm.src) {
			continue
		}
		for _, j := range removed {
			if used[j] {
				continue
			}
			om, ok := split(keys[j].Old)
			if !ok || !sameMount(om.dst, nm.dst) || om.src == nm.src {
				continue
			}
			used[i], used[j] = true, true
			what := "config file"
			if slices.Contains(u.Used().ConfigDirs, nm.src) {
				what = "config dir"
			}
			dst, _, _ := strings.Cut(nm.dst, ":")
			moves = append(moves, fmt.Sprintf("%s mount %s moves from %s to %s", what, dst, om.src, nm.src))
			break
		}
	}
	for i, k := range keys {
		if !used[i] {
			rest = append(rest, k)
		}
	}
	return moves, rest
}

// sameMount reports whether two Volume= destinations ("dst" or
// "dst:options") mount at the same path with the same options: the
// earlier syslet wrote a config dir's destination as the spec had it,
// trailing slash included.
func sameMount(a, b string) bool {
	ad, aopts, _ := strings.Cut(a, ":")
	bd, bopts, _ := strings.Cut(b, ":")
	return aopts == bopts && path.Clean(ad) == path.Clean(bd)
}

// removalDefault warns when a rewrite of an installed unit turns its
// RemovalAllowed=false into true only because the spec leaves
// removalAllowed to its default: true here, false in the earlier syslet's
// first releases. The rewrite is metadata-only, so nothing else would say
// that from then on the unit is removed when its spec goes, and a volume
// may be recreated (its data deleted) when it changes.
func removalDefault(u *render.Unit, iu *installedUnit) (w report.Finding, ok bool) {
	if u.Kind == spec.Build || !u.RemovalAllowed || u.RemovalSet || !iu.parses || iu.removalAllowed() {
		return w, false
	}
	then := "removing its spec later removes the unit"
	switch u.Kind {
	case spec.Volume:
		then += " (and, under reclaimPolicy Delete, volume " + u.Resource + "), and a change to it recreates the volume, deleting its data"
	case spec.Network:
		then += " (and, under reclaimPolicy Delete, network " + u.Resource + ")"
	}
	return report.Finding{Source: u.Origin.Source, Path: u.Origin.Path(), Rule: spec.RuleRemovalDefault, Severity: report.Warning,
		Message: fmt.Sprintf("%s: the installed unit says RemovalAllowed=false, but the spec does not set removalAllowed, whose default is true (it was false in the earlier syslet's first releases); this apply drops that protection: %s. Write \"removalAllowed\": false to keep it", u.FileName, then)}, true
}
