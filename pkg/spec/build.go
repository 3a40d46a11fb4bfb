package spec

import (
	"path"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

func (d *decoder) build(n *jsontree.Node, s *Spec) {
	s.Containerfile = d.content(n, "containerfile")
	if strings.TrimSpace(s.Containerfile) == "" {
		d.errf(jsontree.Child(n.Path(), "containerfile"), RuleRequired, "containerfile is required: the Containerfile's content")
	}
	if v := n.Get("contextFiles"); v != nil {
		seen := map[string]string{} // accepted filename → its path
		// under maps each directory an accepted filename lies in to the
		// first filename below it: whether a name clashes as a directory
		// of another, or lies inside another, is then one look-up per
		// component, not a scan of every name accepted before.
		under := map[string]string{}
		for _, it := range d.objects(v, "contextFiles", "filename", "content", "mode") {
			cf := ContextFile{Filename: d.str(it, "filename", true), Content: d.content(it, "content"), Mode: d.mode(it), Path: it.Path()}
			fp := jsontree.Child(it.Path(), "filename")
			f := cf.Filename
			switch {
			case f == "":
			case hasControl(f):
				d.errf(fp, RuleControlChar, "filename contains a control character")
			case strings.HasPrefix(f, "/") || slices.Contains(strings.Split(f, "/"), "..") || path.Clean(f) != f || f == ".":
				d.errf(fp, RuleContextFile, "filename %q must be a clean relative path without \"..\"", f)
			case f == "Containerfile":
				d.errf(fp, RuleContextFile, "filename must not be \"Containerfile\": syslet writes the containerfile field there")
			case strings.HasPrefix(f, "Containerfile/"):
				d.errf(fp, RuleContextFile, "filename %q needs a directory named \"Containerfile\", where syslet writes the containerfile field", f)
			case longPath(f) != "":
				d.errf(fp, RuleContextFile, "filename %s", longPath(f))
			case seen[f] != "":
				d.errf(fp, RuleContextFile, "filename %q already appears at %s", f, seen[f])
			default:
				// The first clash in document order is named: a file that
				// is a directory of this name, or (first) a name below it.
				other := under[f]
				for dir := f; other == ""; {
					i := strings.LastIndexByte(dir, '/')
					if i < 0 {
						break
					}
					dir = dir[:i]
					if seen[dir] != "" {
						other = dir
					}
				}
				if other != "" {
					d.errf(fp, RuleContextFile, "filename %q and %q (%s) cannot both exist: one is a directory of the other", f, other, seen[other])
				} else {
					seen[f] = fp
					for dir := f; ; {
						i := strings.LastIndexByte(dir, '/')
						if i < 0 {
							break
						}
						dir = dir[:i]
						if _, ok := under[dir]; ok {
							break // and so are its parents
						}
						under[dir] = f
					}
				}
			}
			s.ContextFiles = append(s.ContextFiles, cf)
		}
	}
	// Every tag is checked, not only one: quadlet tags the image with all
	// of them and hands the first to containers using Image=NAME.build.
	tags := s.Values(unit.Build, unit.KeyImageTag)
	prefix := "localhost/" + s.Name + ":"
	switch {
	case len(tags) == 0:
		if d.missing(s, unit.Build, unit.KeyImageTag) { // else present but refused, and reported
			d.errf(jsontree.Child(s.Path(), "unit")+".Build", RuleImageTag, "[Build] ImageTag is required and must start with %q", prefix)
		}
	case s.Name == "":
		// the prefix depends on the name, whose absence is reported already
	default:
		for _, tag := range tags {
			if !strings.HasPrefix(tag.Text, prefix) || len(tag.Text) == len(prefix) {
				d.errf(tag.Path, RuleImageTag, "ImageTag %q must start with %q and name a tag", tag.Text, prefix)
			} else if why := checkImageTag(tag.Text); why != "" {
				d.errf(tag.Path, RuleImageTag, "ImageTag %q is not an image reference podman accepts: %s", tag.Text, why)
			}
		}
	}
	d.plain(n, s)
}
