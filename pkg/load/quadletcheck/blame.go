package quadletcheck

import (
	"regexp"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// culprit says which keys a converter message is about. The messages are
// podman 5.8's (pkg/systemd/quadlet/quadlet.go); a message not listed here
// is still placed by the keys it names (see blame).
type culprit struct {
	re      *regexp.Regexp
	section string   // "" = the unit's own quadlet section
	keys    []string // in order of preference
}

var culprits = []culprit{
	{regexp.MustCompile(`^invalid Group set without User`), "", []string{"Group"}},
	{regexp.MustCompile(`^ReloadCmd and ReloadSignal are mutually exclusive`), "", []string{"ReloadSignal", "ReloadCmd"}},
	{regexp.MustCompile(`^cannot set more gateways than subnets`), "", []string{"Gateway"}},
	{regexp.MustCompile(`^cannot set more ranges than subnets`), "", []string{"IPRange"}},
	{regexp.MustCompile(`^cannot set gateway or range without subnet`), "", []string{"Gateway", "IPRange"}},
	{regexp.MustCompile(`^key Type can't be used without Device`), "", []string{"Type"}},
	{regexp.MustCompile(`^key Options can't be used without Device`), "", []string{"Options"}},
	{regexp.MustCompile(`^the key Image is mandatory when using the image driver`), "", []string{"Driver"}},
	{regexp.MustCompile(`^deprecated Remap keys are set along with explicit mapping keys`), "", []string{"RemapUsers", "RemapUid", "RemapGid", "RemapUidSize"}},
	{regexp.MustCompile(`^UidMap set without RemapUsers|UID mapping$`), "", []string{"RemapUid"}},
	{regexp.MustCompile(`^GidMap set without RemapUsers|GID mapping$`), "", []string{"RemapGid"}},
	{regexp.MustCompile(`^unsupported RemapUsers option|^RemapUsers=`), "", []string{"RemapUsers"}},
	{regexp.MustCompile(`^the Image And Rootfs keys conflict`), "", []string{"Rootfs", "Image"}},
	{regexp.MustCompile(`^no Image key specified`), "", []string{"Image"}},
	{regexp.MustCompile(`^no Artifact key specified`), "", []string{"Artifact"}},
	{regexp.MustCompile(`^SetWorkingDirectory=yaml`), "", []string{"SetWorkingDirectory"}},
	{regexp.MustCompile(`^RemapUsers=manual is not supported`), "", []string{"RemapUsers"}},
	{regexp.MustCompile(`^requested Quadlet image`), "", []string{"Image"}},
	{regexp.MustCompile(`^requested Quadlet unit|^cannot get the resource name of|^extra options are not supported when joining`), "", []string{"Network"}},
	{regexp.MustCompile(`^requested Quadlet source|^source cannot be empty|^source parameter does not include a value`), "", []string{"Volume", "Mount"}},
	{regexp.MustCompile(`^incorrect mount format|^parse error on line|^record on line`), "", []string{"Mount"}},
	{regexp.MustCompile(`^invalid port format`), "", []string{"ExposeHostPort"}},
	{regexp.MustCompile(`^pod .* is not Quadlet based|^quadlet pod unit`), "", []string{"Pod"}},
	{regexp.MustCompile(`^invalid KillMode`), unit.Service, []string{"KillMode"}},
	{regexp.MustCompile(`^invalid service Type`), unit.Service, []string{"Type"}},
	{regexp.MustCompile(`^unable to translate dependency for`), unit.Unit, []string{"After", "Before", "BindsTo", "Conflicts", "OnFailure", "OnSuccess", "PartOf", "PropagatesReloadTo", "PropagatesStopTo", "ReloadPropagatedFrom", "Requires", "Requisite", "StopPropagatedFrom", "Upholds", "Wants"}},
	{regexp.MustCompile(`^SetWorkingDirectory=|^unsupported value for WorkingDirectory`), "", []string{"SetWorkingDirectory"}},
}

var unsupportedKey = regexp.MustCompile(`^unsupported key '([^']+)' in group '([^']+)'`)

// quadletSection is the section a unit type's converter reads.
func quadletSection(u *render.Unit) string { return u.Kind.Quadlet().Section }

// blame returns the JSON path a converter message is about: the line of the
// key it names (and, where several lines have that key, the one whose value
// the message quotes), else the unit's quadlet section, else the unit.
func blame(u *render.Unit, msg string) string {
	own := quadletSection(u)
	if m := unsupportedKey.FindStringSubmatch(msg); m != nil {
		if l, ok := pick(u, m[2], []string{m[1]}, msg); ok {
			return l.Origin
		}
	}
	for _, c := range culprits {
		if !c.re.MatchString(msg) {
			continue
		}
		sec := c.section
		if sec == "" {
			sec = own
		}
		if l, ok := pick(u, sec, c.keys, msg); ok {
			return l.Origin
		}
		break
	}
	// Any key of the unit's own section that the message names as a word.
	words := strings.FieldsFunc(msg, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for _, l := range u.Lines {
		if l.Section == own && slices.Contains(words, l.Key) {
			return l.Origin
		}
	}
	if sec := sectionPath(u, own); sec != "" {
		return sec
	}
	return u.Spec.Path() + ".unit"
}

// pick finds the line of section with one of keys: one whose value the
// message quotes ("invalid port format 'x'"), or holds a reference the
// message names (Volume=data.volume:/data and "requested Quadlet source
// data.volume was not found"), else the first line in the keys' order.
func pick(u *render.Unit, section string, keys []string, msg string) (render.Line, bool) {
	tokens := strings.FieldsFunc(msg, func(r rune) bool { return r == ' ' || r == '\'' || r == '"' })
	for _, l := range u.Lines {
		if l.Section == section && slices.Contains(keys, l.Key) && slices.Contains(tokens, l.Value) {
			return l, true
		}
	}
	for _, l := range u.Lines {
		if l.Section != section || !slices.Contains(keys, l.Key) {
			continue
		}
		for _, f := range strings.FieldsFunc(l.Value, func(r rune) bool { return r == ':' || r == ',' || r == '=' }) {
			if strings.Contains(f, ".") && slices.Contains(tokens, f) {
				return l, true
			}
		}
	}
	for _, k := range keys {
		if l, ok := lineOf(u, section, k); ok {
			return l, true
		}
	}
	return render.Line{}, false
}

// lineOf returns the first line of section.key.
func lineOf(u *render.Unit, section, key string) (render.Line, bool) {
	for _, l := range u.Lines {
		if l.Section == section && l.Key == key {
			return l, true
		}
	}
	return render.Line{}, false
}

// sectionPath is the JSON path of the user's section, if they wrote one.
func sectionPath(u *render.Unit, section string) string {
	if s := u.Spec.Lookup(section); s != nil {
		return s.Path
	}
	return ""
}
