package unit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Podman is a podman release as major.minor. Patch releases add no quadlet
// keys, so they are not told apart.
type Podman struct{ Major, Minor int }

// OldestPodman is the oldest podman syslet supports (Debian trixie ships
// 5.4): the version `syslet validate` checks against unless told otherwise.
var OldestPodman = Podman{5, 4}

func (p Podman) String() string { return strconv.Itoa(p.Major) + "." + strconv.Itoa(p.Minor) }

// Less reports whether p is older than q.
func (p Podman) Less(q Podman) bool {
	return p.Major < q.Major || (p.Major == q.Major && p.Minor < q.Minor)
}

// ParsePodman reads a podman version as podman prints it ("5.4.2",
// "5.5.0-rc1", "6.0.0-dev") or as a person writes it ("5.4", "v5.8").
func ParsePodman(s string) (Podman, error) {
	v := strings.TrimPrefix(strings.TrimSpace(s), "v")
	v, _, _ = strings.Cut(v, "-") // pre-release or build suffix
	parts := strings.Split(v, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Podman{}, fmt.Errorf("podman version %q: want MAJOR.MINOR or MAJOR.MINOR.PATCH", s)
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			return Podman{}, fmt.Errorf("podman version %q: %q is not a number", s, p)
		}
		n[i] = x
	}
	return Podman{n[0], n[1]}, nil
}

// quadletKeys is the one table of which podman release introduced each key
// of the quadlet sections syslet renders. Read from podman's own key lists
// (pkg/systemd/quadlet/quadlet.go) at the tags v5.4.0 … v5.8.2 and on its
// main branch, and checked against the release notes: 5.5 added Memory,
// ReloadCmd, ReloadSignal (#22036), Retry and RetryDelay (#25109) and
// NetworkDeleteOnStop (#23678); 5.6 InterfaceName; 5.7 HttpProxy, BuildArg
// and IgnoreFile; 5.8 AppArmor. For the other types: 5.5 added [Image]
// Retry, RetryDelay and [Pod] HostName; 5.6 [Image] Policy and [Pod]
// ExitPolicy, Label; 5.7 [Pod] StopTimeout and the .artifact type. 6.0
// added [Volume] UID and GID (its release notes; the lists of v6.0.2, the
// module proxy's source, differ from v5.8.2's by those two only), 6.1
// [Container] ImageVolume (its release notes, #28875; Debian's 6.1.1
// generator accepts it, 6.0.2's refuses it as unsupported).
//
// TestKeyTableMatchesConverter keeps the rows up to the converter's release
// equal to the converter's own lists.
var quadletKeys = []struct {
	since   Podman
	section string
	keys    string
}{
	{Podman{5, 4}, Container, "AddCapability AddDevice AddHost Annotation AutoUpdate CgroupsMode ContainerName ContainersConfModule DNS DNSOption DNSSearch DropCapability Entrypoint Environment EnvironmentFile EnvironmentHost Exec ExposeHostPort GIDMap GlobalArgs Group GroupAdd HealthCmd HealthInterval HealthLogDestination HealthMaxLogCount HealthMaxLogSize HealthOnFailure HealthRetries HealthStartPeriod HealthStartupCmd HealthStartupInterval HealthStartupRetries HealthStartupSuccess HealthStartupTimeout HealthTimeout HostName IP IP6 Image Label LogDriver LogOpt Mask Mount Network NetworkAlias NoNewPrivileges Notify PidsLimit Pod PodmanArgs PublishPort Pull ReadOnly ReadOnlyTmpfs RemapGid RemapUid RemapUidSize RemapUsers Rootfs RunInit SeccompProfile Secret SecurityLabelDisable SecurityLabelFileType SecurityLabelLevel SecurityLabelNested SecurityLabelType ServiceName ShmSize StartWithPod StopSignal StopTimeout SubGIDMap SubUIDMap Sysctl Timezone Tmpfs UIDMap Ulimit Unmask User UserNS VolatileTmp Volume WorkingDir"},
	{Podman{5, 4}, Volume, "ContainersConfModule Copy Device Driver GlobalArgs Group Image Label Options PodmanArgs ServiceName Type User VolumeName"},
	{Podman{5, 4}, Network, "ContainersConfModule DNS DisableDNS Driver Gateway GlobalArgs IPAMDriver IPRange IPv6 Internal Label NetworkName Options PodmanArgs ServiceName Subnet"},
	{Podman{5, 4}, Build, "Annotation Arch AuthFile ContainersConfModule DNS DNSOption DNSSearch Environment File ForceRM GlobalArgs GroupAdd ImageTag Label Network PodmanArgs Pull Secret ServiceName SetWorkingDirectory TLSVerify Target Variant Volume"},
	{Podman{5, 4}, Pod, "AddHost ContainersConfModule DNS DNSOption DNSSearch GIDMap GlobalArgs IP IP6 Network NetworkAlias PodName PodmanArgs PublishPort RemapGid RemapUid RemapUidSize RemapUsers ServiceName ShmSize SubGIDMap SubUIDMap UIDMap UserNS Volume"},
	{Podman{5, 4}, Image, "AllTags Arch AuthFile CertDir ContainersConfModule Creds DecryptionKey GlobalArgs Image ImageTag OS PodmanArgs ServiceName TLSVerify Variant"},
	{Podman{5, 4}, Kube, "AutoUpdate ConfigMap ContainersConfModule ExitCodePropagation GlobalArgs KubeDownForce LogDriver LogOpt Network PodmanArgs PublishPort RemapGid RemapUid RemapUidSize RemapUsers ServiceName SetWorkingDirectory UserNS Yaml"},
	{Podman{5, 4}, Quadlet, "DefaultDependencies"},
	{Podman{5, 5}, Container, "Memory ReloadCmd ReloadSignal Retry RetryDelay"},
	{Podman{5, 5}, Network, "NetworkDeleteOnStop"},
	{Podman{5, 5}, Build, "Retry RetryDelay"},
	{Podman{5, 5}, Image, "Retry RetryDelay"},
	{Podman{5, 5}, Pod, "HostName"},
	{Podman{5, 6}, Image, "Policy"},
	{Podman{5, 6}, Pod, "ExitPolicy Label"},
	{Podman{5, 6}, Network, "InterfaceName"},
	{Podman{5, 7}, Container, "HttpProxy"},
	{Podman{5, 7}, Build, "BuildArg IgnoreFile"},
	{Podman{5, 7}, Pod, "StopTimeout"},
	{Podman{5, 7}, Artifact, "Artifact AuthFile CertDir ContainersConfModule Creds DecryptionKey GlobalArgs PodmanArgs Quiet Retry RetryDelay ServiceName TLSVerify"},
	{Podman{5, 8}, Container, "AppArmor"},
	{Podman{6, 0}, Volume, "UID GID"},
	{Podman{6, 1}, Container, "ImageVolume"},
}

// KeysSince maps quadlet section → key → the podman release that
// introduced it: the key table as data, for the converter check's tests and
// the reference docs. Read it; never change it.
var KeysSince = func() map[string]map[string]Podman {
	m := map[string]map[string]Podman{}
	for _, row := range quadletKeys {
		if m[row.section] == nil {
			m[row.section] = map[string]Podman{}
		}
		for _, k := range strings.Fields(row.keys) {
			if _, dup := m[row.section][k]; dup {
				panic("unit: quadlet key table lists " + row.section + "." + k + " twice")
			}
			m[row.section][k] = row.since
		}
	}
	return m
}()

// KeySince returns the podman release that introduced key in a quadlet
// section, and false when no release syslet knows accepts it. Sections that
// are not quadlet's ([Unit], [Service], [Install], X-…) are systemd's to
// judge: every key is reported as known since OldestPodman.
func KeySince(section, key string) (Podman, bool) {
	ks, ok := KeysSince[section]
	if !ok {
		return OldestPodman, true
	}
	v, ok := ks[key]
	return v, ok
}

// Feature is a generator behaviour that hangs on a value, not a key: a
// release before Since reads such a line differently — refuses it, or
// worse, drops it without a word. quadletcheck gates features like keys.
type Feature struct {
	Since    Podman
	Section  string
	Keys     []string
	What     string                  // what the line does, for messages
	Matches  func(value string) bool // whether a value uses the feature
	Unless   string                  // a key of Section whose presence in the unit means the feature is not used
	Instead  string                  // what to write for older releases
	Evidence string                  // where the release is documented
}

// Features lists the value-level differences between podman releases that
// matter to units syslet renders. Checked against podman's own generator:
// the integration test runs the corpus through the test host's podman 5.4.2.
var Features = []Feature{
	{Since: Podman{5, 5}, Section: Unit, Keys: DependencyKeys,
		What:     "naming a quadlet unit in a dependency",
		Matches:  func(v string) bool { return quadletWord(v) != "" },
		Instead:  "name its service",
		Evidence: `5.5 release notes: "Wants=my.container is now valid"; older releases pass the name through and systemd ignores it`},
	{Since: Podman{5, 5}, Section: Install, Keys: []string{"UpheldBy"},
		What:     "UpheldBy=",
		Matches:  func(string) bool { return true },
		Instead:  "use [Unit] Upholds= on the other unit",
		Evidence: "5.5 release notes; older generators ignore the key"},
	{Since: Podman{5, 6}, Section: Container, Keys: []string{"Mount"},
		What: "a Mount= without type=",
		Matches: func(v string) bool {
			return !slices.ContainsFunc(strings.Split(v, ","), func(o string) bool { return strings.HasPrefix(o, "type=") })
		},
		Instead:  "add type=volume",
		Evidence: `5.6 release notes (#26101); podman 5.4.2's generator refuses it: "incorrect mount format"`},
	{Since: Podman{6, 0}, Section: Container, Keys: []string{"Mount"},
		What:     "an anonymous volume Mount= (a volume mount without source=)",
		Matches:  anonymousMount,
		Instead:  "name the volume with source=",
		Evidence: `6.0 release notes (#28497); 5.5 to 5.8 generators refuse it ("source cannot be empty"), 5.4.2's panics on it, converting none of the host's units`},
	{Since: Podman{6, 0}, Section: Volume, Keys: []string{"Options"}, Unless: "Device",
		What:     "Options= without Device= (generic volume options)",
		Matches:  func(v string) bool { return strings.TrimSpace(v) != "" },
		Instead:  "set Device= too",
		Evidence: `6.0 release notes ("Options= to set generic volume options"); 5.x generators refuse it: "key Options can't be used without Device"`},
	{Since: Podman{5, 6}, Section: Container, Keys: []string{"Environment"},
		What: "an Environment= variable without a value (taken from the host)",
		Matches: func(v string) bool {
			return slices.ContainsFunc(Words(v), func(w string) bool { return !strings.Contains(w, "=") })
		},
		Instead:  "give it a value, or use EnvironmentHost=",
		Evidence: "5.6 release notes (#26247); older generators drop the variable"},
}

// anonymousMount reports whether a Mount= value is a volume mount (type=volume,
// or no type=, which quadlet reads as one from 5.6) with no source.
func anonymousMount(v string) bool {
	volume, source := true, false
	for _, o := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(o), "=")
		switch k {
		case "type":
			volume = val == "volume"
		case "source", "src":
			source = true
		}
	}
	return volume && !source
}

// Words splits a value the way systemd splits an assignment list (and
// quadlet reads list keys such as Secret=): whitespace separates, double
// or single quotes group, a backslash escapes the next character.
func Words(v string) []string {
	var out []string
	var w strings.Builder
	in, quote, esc := false, rune(0), false
	for _, r := range v {
		switch {
		case esc:
			w.WriteRune(r)
			esc, in = false, true
		case r == '\\':
			esc, in = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, w.String())
	}
	return out
}

// quadletWord returns the first word of a list that names a quadlet file
// ("db.container"), or "".
func quadletWord(value string) string {
	for _, w := range strings.Fields(value) {
		if IsQuadletFile(w) {
			return w
		}
	}
	return ""
}

// DependencyKeys are the [Unit] keys quadlet translates (its
// unitDependencyKeys).
var DependencyKeys = []string{"After", "Before", "BindsTo", "Conflicts", "OnFailure", "OnSuccess", "PartOf",
	"PropagatesReloadTo", "PropagatesStopTo", "ReloadPropagatedFrom", "Requires", "Requisite",
	"StopPropagatedFrom", "Upholds", "Wants"}
