package spec

import (
	"strings"

	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// The quadlet types besides containers, volumes, networks and builds:
// pods (several containers in one network namespace: their PodName= is
// the kind's name key, and nothing else of theirs needs checking here),
// image units (a pull), kube units (podman kube play of a YAML file syslet
// writes) and artifacts (an OCI artifact pull, podman 5.7 and later: its
// keys are gated like any newer key).

// image checks an image unit: its Image= is what is pulled, and what a
// container with Image=NAME.image runs (or ImageTag=, when set).
func (d *decoder) image(n *jsontree.Node, s *Spec) {
	if d.missing(s, unit.Image, unit.KeyImage) {
		d.errf(jsontree.Child(s.Path(), "unit")+".Image", RuleImageRequired, "[Image] Image is required: the image to pull")
	} else if v, ok := s.Last(unit.Image, unit.KeyImage); ok && strings.TrimSpace(v.Text) == "" {
		d.errf(v.Path, RuleImageRequired, "[Image] Image must name an image")
	}
	d.plain(n, s)
}

// kube checks a kube unit: its YAML is the yaml field, which syslet
// writes to its own file (layout.KubeYaml) and points Yaml= at.
func (d *decoder) kube(n *jsontree.Node, s *Spec) {
	s.Yaml = d.content(n, "yaml")
	switch v := n.Get("yaml"); {
	case v == nil:
		d.errf(jsontree.Child(n.Path(), "yaml"), RuleRequired, "yaml is required: the Kubernetes YAML podman kube play runs")
	case v.Kind == jsontree.String && strings.TrimSpace(s.Yaml) == "":
		d.errf(v.Path(), RuleRequired, "yaml must not be empty: the Kubernetes YAML podman kube play runs")
	}
	d.plain(n, s)
}

// artifact checks an artifact unit: Artifact= names what is pulled.
func (d *decoder) artifact(n *jsontree.Node, s *Spec) {
	if d.missing(s, unit.Artifact, unit.KeyArtifact) {
		d.errf(jsontree.Child(s.Path(), "unit")+".Artifact", RuleImageRequired, "[Artifact] Artifact is required: the artifact to pull")
	}
	d.plain(n, s)
}
