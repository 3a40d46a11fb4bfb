package quadletcheck

import (
	"bytes"
	"fmt"
	"path"
	"slices"

	"github.com/containers/podman/v5/pkg/systemd/parser"
	"github.com/containers/podman/v5/pkg/systemd/quadlet"

	"github.com/syslet/syslet/pkg/unit"
)

// infoKeys are the lines unitInfo reads: a unit's service name, a
// container's name, a build's image.
var infoKeys = map[infoKey]bool{
	{unit.Container, unit.KeyServiceName}: true, {unit.Volume, unit.KeyServiceName}: true,
	{unit.Network, unit.KeyServiceName}: true, {unit.Build, unit.KeyServiceName}: true,
	{unit.Container, unit.KeyContainerName}: true, {unit.Build, unit.KeyImageTag}: true,
}

type infoKey struct{ section, key string }

// infoKeysOf is infoKeys for the kinds unitInfo reads only those of
// (fewKeys), and nil (the whole unit) for the others.
func infoKeysOf(fileName string) map[infoKey]bool {
	if podmanKindOf(fileName).fewKeys {
		return infoKeys
	}
	return nil
}

// parse reads the unit as the generator would from the bytes a host gets
// (keys newer than the linked converter withheld), or only the lines of
// only (nil: all of them).
func (c *checked) parse(only map[infoKey]bool) (*parser.UnitFile, error) {
	var text string
	switch {
	case only != nil:
		f := &unit.File{}
		if c.Merged != nil || mayHoldInfo(c.Content) {
			for _, sec := range c.MergedFile().Sections {
				for _, e := range sec.Entries {
					if only[infoKey{sec.Name, e.Key}] {
						f.Add(sec.Name, e.Key, e.Value)
					}
				}
			}
		}
		if len(f.Sections) == 0 {
			// None of the lines (as for almost every volume and network):
			// what podman's parser makes of an empty file, without
			// writing and parsing one.
			pf := parser.NewUnitFile()
			pf.Filename, pf.Path = c.FileName, c.Path
			return pf, nil
		}
		text = string(f.Bytes())
	case c.odd != nil && len(c.odd.withheld) > 0:
		text = string(c.MergedFile().Without(c.odd.withheld...).Bytes())
	case c.Merged == nil:
		text = string(c.Content) // kept as its bytes: what a host gets
	default:
		text = string(c.Merged.Bytes())
	}
	pf := parser.NewUnitFile()
	pf.Filename = c.FileName
	pf.Path = c.Path
	if err := pf.Parse(text); err != nil {
		return nil, err
	}
	return pf, nil
}

// mayHoldInfo reports whether a unit kept as its bytes may hold one of
// the infoKeys: a look for "Key=" before parsing it to find out (no volume
// or network of a big set holds any).
func mayHoldInfo(content []byte) bool {
	for _, k := range infoNeedles {
		if bytes.Contains(content, k) {
			return true
		}
	}
	return false
}

// infoNeedles are the infoKeys' keys as a unit's lines start: "Key=".
var infoNeedles = func() [][]byte {
	var out [][]byte
	for k := range infoKeys {
		if n := []byte(k.key + "="); !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, n) }) {
			out = append(out, n)
		}
	}
	return out
}()

// unitInfo is what the generator knows about a unit before converting any
// (podman's cmd/quadlet generateUnitsInfoMap): its service name, and the
// resource names that can be told without converting — a container's name
// and a build's image. Volumes and networks fill theirs in when converted.
func unitInfo(f *parser.UnitFile) *quadlet.UnitInfo {
	name, _ := quadlet.GetUnitServiceName(f)
	info := &quadlet.UnitInfo{ServiceName: name}
	if p := podmanKindOf(f.Filename); p.info != nil {
		p.info(f, info)
	}
	return info
}

// convertOne calls the converter for the unit's kind. A panic inside it is
// a finding too: the generator on a host would crash the same way, and then
// no unit at all would be generated.
func convertOne(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (service *parser.UnitFile, warnings, err error) {
	defer func() {
		if r := recover(); r != nil {
			service, err = nil, fmt.Errorf("the converter crashed on this unit (%v); podman's generator would crash too", r)
		}
	}()
	p := podmanKindOf(f.Filename)
	if p.convert == nil {
		return nil, nil, fmt.Errorf("syslet does not render %s units", path.Ext(f.Filename))
	}
	return p.convert(f, infos)
}

// podmanKind is what podman's generator (cmd/quadlet) does with one
// quadlet kind, as its own functions.
type podmanKind struct {
	// info fills in what the generator knows of a unit before converting
	// any, besides its service name (nil: nothing).
	info func(f *parser.UnitFile, info *quadlet.UnitInfo)
	// fewKeys: info and the service name read only infoKeys of the unit;
	// the other kinds' names podman's helpers derive from more keys.
	fewKeys bool
	// convert is the kind's converter.
	convert func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error)
}

// podmanKindOf is the podman kind of a unit file, by the kind table's
// reading of its name (the zero podmanKind for none).
func podmanKindOf(fileName string) podmanKind {
	if k := unit.KindOf(fileName); k != nil {
		return podmanKinds[k.Name]
	}
	return podmanKind{}
}

// podmanKinds are podman's own functions per quadlet kind (unit.Kinds'
// Name), called as its generator calls them. Podman has no entry point
// that picks them by the file's extension, so each kind of unit.Kinds has
// its row here (TestPodmanKinds).
var podmanKinds = map[string]podmanKind{
	"container": {
		info: func(f *parser.UnitFile, info *quadlet.UnitInfo) {
			info.ResourceName = quadlet.GetContainerResourceName(f)
		},
		fewKeys: true,
		convert: func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
			return quadlet.ConvertContainer(f, infos, false)
		}},
	"volume": {fewKeys: true, convert: func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
		return quadlet.ConvertVolume(f, infos, false)
	}},
	"network": {fewKeys: true, convert: func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
		return quadlet.ConvertNetwork(f, infos, false)
	}},
	"build": {
		info:    func(f *parser.UnitFile, info *quadlet.UnitInfo) { info.ResourceName = quadlet.GetBuiltImageName(f) },
		fewKeys: true,
		convert: func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
			return quadlet.ConvertBuild(f, infos, false)
		}},
	"pod": {
		info: func(f *parser.UnitFile, info *quadlet.UnitInfo) {
			info.ContainersToStart = []string{}
			info.ResourceName = quadlet.GetPodResourceName(f)
		},
		convert: func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
			return quadlet.ConvertPod(f, infos, false)
		}},
	"image": {convert: func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
		service, err := quadlet.ConvertImage(f, infos, false)
		return service, nil, err
	}},
	"kube": {convert: func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
		service, err := quadlet.ConvertKube(f, infos, false)
		return service, nil, err
	}},
	"artifact": {
		info: func(f *parser.UnitFile, info *quadlet.UnitInfo) { info.ServiceName = quadlet.GetArtifactServiceName(f) },
		convert: func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
			service, err := quadlet.ConvertArtifact(f, infos, false)
			return service, nil, err
		}},
}
