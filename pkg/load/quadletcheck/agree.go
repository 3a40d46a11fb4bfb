package quadletcheck

import (
	"path"
	"slices"
	"strings"

	"github.com/containers/podman/v5/pkg/systemd/parser"
	"github.com/containers/podman/v5/pkg/systemd/quadlet"

	"github.com/syslet/syslet/pkg/spec"
)

// agree compares what render derived about a unit with what the converter
// made of it. The planner and executor act on render's facts (which service
// to start, which volume to delete, which containers to restart when a
// network is recreated); the host runs the converter's. Any difference is
// a syslet bug, reported so that nothing is deployed while it stands.
// file is the unit as the generator parses it, service what the converter
// made of it.
func agree(c *checked, file, service *parser.UnitFile, byService map[string]string) {
	differ := func(what, syslet, quadlet string) {
		c.more().rep.Errorf(c.Spec.Source, c.Spec.Path(), spec.RuleDisagreement,
			"%s: syslet derives %s %q but podman's quadlet derives %q; this is a syslet bug, please report it", c.FileName, what, syslet, quadlet)
	}
	if service.Filename != c.Service {
		differ("the service", c.Service, service.Filename)
	}
	var resource string
	switch c.Kind {
	case spec.Container:
		resource = quadlet.GetContainerResourceName(file)
		if resource == "" {
			// The converter only resolves %N; the name with other specifiers
			// is passed to podman as written (systemd fills them in).
			resource, _ = file.Lookup(quadlet.ContainerGroup, quadlet.KeyContainerName)
		}
		if c.Instance != "" {
			// systemd fills in %i when the instance's service runs.
			resource = strings.ReplaceAll(resource, "%i", c.Instance)
		}
		if resource != c.Container {
			differ("the container name", c.Container, resource)
		}
	case spec.Volume, spec.Network, spec.Build, spec.Pod, spec.Image, spec.Artifact:
		resource = c.info.ResourceName
		if resource != c.Resource {
			differ("the "+string(c.Kind)+" name", c.Resource, resource)
		}
	}
	if c.Kind != spec.Container {
		return
	}
	// The units a container requires, by kind, as the converter wrote them
	// into its service: Requires=NAME-volume.service, BindsTo= its pod's
	// service and so on (byService maps a service back to its quadlet file).
	var volumes, networks, images, artifacts []string
	build, pod := "", ""
	reqs := append(service.LookupAllStrv(quadlet.UnitGroup, "Requires"), service.LookupAllStrv(quadlet.UnitGroup, "BindsTo")...)
	for _, req := range reqs {
		required, ok := byService[req]
		if !ok {
			continue
		}
		base := strings.TrimSuffix(required, path.Ext(required))
		switch path.Ext(required) {
		case ".volume":
			volumes = append(volumes, base) // sameSet compacts
		case ".network":
			networks = append(networks, base)
		case ".build":
			build = base
		case ".image":
			images = append(images, base)
		case ".artifact":
			artifacts = append(artifacts, base)
		case ".pod":
			pod = base
		}
	}
	if !sameSet(volumes, c.Used().Volumes) {
		differ("the volumes it requires", strings.Join(c.Used().Volumes, " "), strings.Join(volumes, " "))
	}
	if !sameSet(networks, c.Used().Networks) {
		differ("the networks it requires", strings.Join(c.Used().Networks, " "), strings.Join(networks, " "))
	}
	if !sameSet(images, c.Used().Images) {
		differ("the image units it requires", strings.Join(c.Used().Images, " "), strings.Join(images, " "))
	}
	if !sameSet(artifacts, c.Used().Artifacts) {
		differ("the artifacts it requires", strings.Join(c.Used().Artifacts, " "), strings.Join(artifacts, " "))
	}
	if build != c.Build {
		differ("the build it requires", c.Build, build)
	}
	if pod != c.Pod {
		differ("the pod it runs in", c.Pod, pod)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
