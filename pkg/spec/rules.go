package spec

// Rule identifiers. They are part of syslet's interface: `syslet validate
// --output json` prints them, and CI jobs and tests branch on them, so they
// never change meaning. Messages are for people and may be reworded.
const (
	RuleJSON            = "json-syntax"            // the source is not a JSON stream
	RuleSource          = "source"                 // the source cannot be read (missing, not a regular file)
	RuleInputSize       = "input-size"             // the input is larger than the maximum
	RuleEmptyInput      = "empty-input"            // the input holds no JSON value at all
	RuleNotObject       = "spec-not-object"        // a stream item is not an object
	RuleDuplicateKey    = "duplicate-key"          // a JSON object repeats a key
	RuleUnknownField    = "unknown-field"          // a field the spec's type does not have
	RuleMisspelledField = "misspelled-field"       // an unknown field one or two edits (or only case) away from a known one
	RuleFieldType       = "field-type"             // a field has the wrong JSON type
	RuleRequired        = "required"               // a required field is missing or empty
	RuleAPIVersion      = "api-version"            // apiVersion is not "v1"
	RuleType            = "type"                   // type is not one of the kinds
	RuleName            = "name"                   // name is not a valid unit / podman name
	RuleDuplicateName   = "duplicate-name"         // two specs of one type share a name
	RuleServiceConflict = "service-name-conflict"  // two units would get the same service
	RuleServiceName     = "service-name"           // a ServiceName= systemd would refuse, or on a template
	RuleDropIn          = "drop-in"                // a drop-in name that is not NAME.conf, or a key syslet sets in the unit
	RuleInstance        = "instance"               // an invalid or repeated instance name, instances on a kind that has none, a DefaultInstance not listed
	RuleNameConflict    = "resource-name-conflict" // two units would create the same podman container or pod
	RuleControlChar     = "control-character"      // newline, NUL or other control character
	RuleContinuation    = "line-continuation"      // a value ends in a backslash
	RuleSection         = "unknown-section"        // a section the unit type does not have
	RuleReservedSection = "reserved-section"       // [X-Syslet] or a quadlet-internal section
	RuleKeyName         = "invalid-key"            // a key that is not a systemd key name
	RuleUnknownKey      = "unknown-key"            // quadlet, or systemd in its own sections, does not know the key
	RuleNewerPodman     = "key-needs-newer-podman" // the podman checked against does not know the key yet
	// RuleNewerSystemd: a key of systemd's own sections that the oldest
	// systemd syslet supports does not know yet (a warning).
	RuleNewerSystemd   = "key-needs-newer-systemd"
	RuleQuadlet        = "quadlet-conversion"   // podman's quadlet converter rejects the unit
	RuleQuadletWarning = "quadlet-warning"      // podman's quadlet converter warns about the unit
	RuleDisagreement   = "quadlet-disagreement" // syslet and quadlet derive different names (a syslet bug)
	RuleMapNotAllowed  = "map-not-allowed"      // map value on a key that takes none
	RuleMapKey         = "map-key"              // a map key that cannot be rendered
	RuleMapValue       = "map-value"            // an empty map value that gives an invalid line
	// RuleMapValueIgnored: a map value the format ignores (Network: the
	// key alone names the network, as the earlier syslet wrote it).
	RuleMapValueIgnored = "map-value-ignored"
	RuleForcedKey       = "forced-key"             // a key syslet sets itself
	RuleEnum            = "invalid-value"          // desiredState, reclaimPolicy (a desiredState in another case warns)
	RulePort            = "port"                   // a PublishPort= port outside 1-65535, or a range that runs backwards
	RuleMode            = "mode"                   // a file mode that is not octal 0000-0777
	RuleMountPath       = "mount-path"             // not absolute, not clean, has "..", ":" or space (a config dir's trailing slash warns)
	RuleMountDuplicate  = "duplicate-mount-path"   // two config files or dirs of a container at one mountPath
	RuleMountNested     = "nested-mount-path"      // a config mountPath inside another
	RuleFileName        = "config-file-name"       // a config-dir file name that is not plain
	RuleFileDuplicate   = "duplicate-file-name"    // a config dir names a file twice
	RuleExecReload      = "exec-reload-required"   // configDirs without [Service] ExecReload=
	RuleStateConflict   = "desired-state-conflict" // Type=oneshot, Restart= or configDirs against desiredState
	RuleProxy           = "proxy"                  // a start-first container's proxy that cannot work: a bad listen address, port, mode or drain, slot ports in use, a network or pod the slots cannot share
	RuleProxyPort       = "proxy-port"             // a start-first container that also publishes a fixed host port (the proxy's listen port, or one its second slot could not bind)
	RuleImageRequired   = "image-required"         // a container without [Container] Image (or Rootfs)
	RuleImageTag        = "image-tag"              // a build's [Build] ImageTag missing or not localhost/NAME:TAG
	RuleImageRef        = "image-reference"        // [Container] Image= that podman's reference parser refuses
	RuleContextFile     = "context-file"           // a build context file name that is not a clean relative path
	RuleSecretFormat    = "secret-format"          // a ciphertext that is not a SOPS YAML or JSON map
	RuleSecretKey       = "secret-key"             // a secret key that does not match [a-z0-9-]+
	// RuleSecretNotEncrypted: no value of the ciphertext is encrypted (an
	// error), or some are left in clear text (a warning).
	RuleSecretNotEncrypted = "secret-not-encrypted"
	RuleSecretRecipients   = "secret-recipients"           // no age recipient in the sops metadata
	RuleSecretValueType    = "secret-value-type"           // a value encrypted as int, float or bool
	RuleSecretExternal     = "secret-external"             // an external secret that also carries a ciphertext
	RuleUndefinedRef       = "undefined-reference"         // a unit refers to a volume, network, build, pod, image or artifact no spec declares
	RuleUnsupportedRef     = "unsupported-reference"       // a reference to a quadlet type syslet does not manage
	RuleUndefinedSecret    = "undefined-secret"            // Secret= names a secret no spec declares
	RuleDuplicateDest      = "duplicate-mount-destination" // two mounts of a container at one destination
	RuleDuplicateSecret    = "duplicate-secret-name"       // two secret specs give one podman secret name
	RuleAutoUpdate         = "auto-update"                 // AutoUpdate=: podman's own updates restart the container outside syslet (a warning)
	RuleProbe              = "probe"                       // a readiness probe that cannot run: no way or two ways to ask, a bad path, status, duration or count
	RuleProbePort          = "probe-port"                  // a probe port that is the host side of a PublishPort=, not the container's
	// RuleRemovalDefault is the plan's, not the specs': an installed unit
	// says RemovalAllowed=false and its spec, not setting removalAllowed,
	// now gets the default true (the earlier syslet's default was false),
	// so the takeover drops the unit's protection.
	RuleRemovalDefault = "removal-allowed-default"
	// RuleSocket: a container's socket that listens nowhere, sets a key
	// it may not (Service=, Accept=), is on a template or a container that
	// does not run, or takes a port the container also publishes.
	RuleSocket = "socket"
)
