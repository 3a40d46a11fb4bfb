package unit

import (
	"strconv"
	"strings"
)

// Systemd is a systemd release by its number (257).
type Systemd int

// OldestSystemd is the oldest systemd syslet supports (Debian trixie
// ships 257): a key newer than it is told to `syslet validate`, as such a
// host ignores it and staging refuses it there.
const OldestSystemd Systemd = 257

func (s Systemd) String() string { return strconv.Itoa(int(s)) }

// systemdKeys is the one table of systemd's own keys in the sections a
// quadlet file passes through to the unit it generates ([Unit], [Service],
// [Install]), and the systemd release that documented each. Read from
// systemd's manual pages as Debian ships them, systemd 257 (trixie) and
// 262 (testing): the directives of systemd.unit(5)'s [Unit] and [Install]
// sections, and of systemd.service(5), systemd.exec(5), systemd.kill(5)
// and systemd.resource-control(5) for [Service]; a key 262's pages add is
// dated by its own "Added in version" line (an Assert key by its Condition
// key's). The second [Unit] and [Service] rows are the spellings systemd
// 257's parser still reads although its pages list them in another form
// or not at all (StartLimitInterval=, MemoryLimit=, ManagedOOMSwap=): a
// spec keeping one is not refused, and the host's systemd-analyze verify
// judges it at staging.
//
// Keys of a newer systemd than 262 are unknown here until a row is
// added for them; systemd itself reads X- keys as the user's own.
var systemdKeys = []struct {
	since   Systemd
	section string
	keys    string
}{
	{257, Unit, "After AllowIsolate AssertACPower AssertArchitecture AssertCPUFeature AssertCPUPressure AssertCPUs AssertCapability AssertControlGroupController AssertCredential AssertDirectoryNotEmpty AssertEnvironment AssertFileIsExecutable AssertFileNotEmpty AssertFirstBoot AssertGroup AssertHost AssertIOPressure AssertKernelCommandLine AssertKernelVersion AssertMemory AssertMemoryPressure AssertNeedsUpdate AssertOSRelease AssertPathExists AssertPathExistsGlob AssertPathIsDirectory AssertPathIsEncrypted AssertPathIsMountPoint AssertPathIsReadWrite AssertPathIsSymbolicLink AssertSecurity AssertUser AssertVirtualization Before BindsTo CollectMode ConditionACPower ConditionArchitecture ConditionCPUFeature ConditionCPUPressure ConditionCPUs ConditionCapability ConditionControlGroupController ConditionCredential ConditionDirectoryNotEmpty ConditionEnvironment ConditionFileIsExecutable ConditionFileNotEmpty ConditionFirmware ConditionFirstBoot ConditionGroup ConditionHost ConditionIOPressure ConditionKernelCommandLine ConditionKernelVersion ConditionMemory ConditionMemoryPressure ConditionNeedsUpdate ConditionOSRelease ConditionPathExists ConditionPathExistsGlob ConditionPathIsDirectory ConditionPathIsEncrypted ConditionPathIsMountPoint ConditionPathIsReadWrite ConditionPathIsSymbolicLink ConditionSecurity ConditionUser ConditionVirtualization Conflicts DefaultDependencies Description Documentation FailureAction FailureActionExitStatus IgnoreOnIsolate JobRunningTimeoutSec JobTimeoutAction JobTimeoutRebootArgument JobTimeoutSec JoinsNamespaceOf OnFailure OnFailureJobMode OnSuccess OnSuccessJobMode PartOf PropagatesReloadTo PropagatesStopTo RebootArgument RefuseManualStart RefuseManualStop ReloadPropagatedFrom Requires RequiresMountsFor Requisite SourcePath StartLimitAction StartLimitBurst StartLimitIntervalSec StopPropagatedFrom StopWhenUnneeded SuccessAction SuccessActionExitStatus SurviveFinalKillSignal Upholds Wants WantsMountsFor"},
	{257, Service, "AllowedCPUs AllowedMemoryNodes AmbientCapabilities AppArmorProfile BPFProgram BindLogSockets BindPaths BindReadOnlyPaths BusName CPUAccounting CPUAffinity CPUQuota CPUQuotaPeriodSec CPUSchedulingPolicy CPUSchedulingPriority CPUSchedulingResetOnFork CPUWeight CacheDirectory CacheDirectoryMode CapabilityBoundingSet ConfigurationDirectory ConfigurationDirectoryMode CoredumpFilter CoredumpReceive DefaultStartupMemoryLow Delegate DelegateSubgroup DeviceAllow DisableControllers DynamicUser Environment EnvironmentFile ExecCondition ExecPaths ExecReload ExecSearchPath ExecStart ExecStartPost ExecStartPre ExecStop ExecStopPost ExitType ExtensionDirectories ExtensionImagePolicy ExtensionImages FileDescriptorStoreMax FileDescriptorStorePreserve FinalKillSignal Group GuessMainPID IOAccounting IODeviceLatencyTargetSec IODeviceWeight IOReadBandwidthMax IOReadIOPSMax IOSchedulingClass IOSchedulingPriority IOWeight IOWriteBandwidthMax IOWriteIOPSMax IPAccounting IPAddressAllow IPAddressDeny IPCNamespacePath IPEgressFilterPath IPIngressFilterPath IgnoreSIGPIPE ImportCredential InaccessiblePaths KeyringMode KillMode KillSignal LimitAS LimitCORE LimitCPU LimitDATA LimitFSIZE LimitLOCKS LimitMEMLOCK LimitMSGQUEUE LimitNICE LimitNOFILE LimitNPROC LimitRSS LimitRTPRIO LimitRTTIME LimitSIGPENDING LimitSTACK LoadCredential LoadCredentialEncrypted LockPersonality LogExtraFields LogFilterPatterns LogLevelMax LogNamespace LogRateLimitBurst LogRateLimitIntervalSec LogsDirectory LogsDirectoryMode ManagedOOMMemoryPressureDurationSec ManagedOOMMemoryPressureLimit MemoryAccounting MemoryDenyWriteExecute MemoryHigh MemoryKSM MemoryLow MemoryMax MemoryMin MemoryPressureThresholdSec MemoryPressureWatch MemorySwapMax MemoryZSwapMax MemoryZSwapWriteback MountAPIVFS MountFlags MountImagePolicy MountImages NFTSet NUMAMask NUMAPolicy NetworkNamespacePath Nice NoExecPaths NoNewPrivileges NonBlocking NotifyAccess OOMPolicy OOMScoreAdjust OpenFile PAMName PIDFile PassEnvironment Personality PrivateDevices PrivateIPC PrivateMounts PrivateNetwork PrivatePIDs PrivateTmp PrivateUsers ProcSubset ProtectClock ProtectControlGroups ProtectHome ProtectHostname ProtectKernelLogs ProtectKernelModules ProtectKernelTunables ProtectProc ProtectSystem ReadOnlyPaths ReadWritePaths ReloadSignal RemainAfterExit RemoveIPC Restart RestartForceExitStatus RestartKillSignal RestartMaxDelaySec RestartMode RestartPreventExitStatus RestartSec RestartSteps RestrictAddressFamilies RestrictFileSystems RestrictNamespaces RestrictNetworkInterfaces RestrictRealtime RestrictSUIDSGID RootDirectory RootDirectoryStartOnly RootEphemeral RootHash RootHashSignature RootImage RootImageOptions RootImagePolicy RootVerity RuntimeDirectory RuntimeDirectoryMode RuntimeDirectoryPreserve RuntimeMaxSec RuntimeRandomizedExtraSec SELinuxContext SecureBits SendSIGHUP SendSIGKILL SetCredential SetCredentialEncrypted SetLoginEnvironment Slice SmackProcessLabel SocketBindAllow SocketBindDeny Sockets StandardError StandardInput StandardInputData StandardInputText StandardOutput StartupAllowedCPUs StartupAllowedMemoryNodes StartupCPUWeight StartupIOWeight StartupMemoryHigh StartupMemoryLow StartupMemoryMax StartupMemorySwapMax StartupMemoryZSwapMax StateDirectory StateDirectoryMode SuccessExitStatus SupplementaryGroups SyslogFacility SyslogIdentifier SyslogLevel SyslogLevelPrefix SystemCallArchitectures SystemCallErrorNumber SystemCallFilter SystemCallLog TTYColumns TTYPath TTYReset TTYRows TTYVHangup TTYVTDisallocate TasksAccounting TasksMax TemporaryFileSystem TimeoutAbortSec TimeoutCleanSec TimeoutSec TimeoutStartFailureMode TimeoutStartSec TimeoutStopFailureMode TimeoutStopSec TimerSlackNSec Type UMask USBFunctionDescriptors USBFunctionStrings UnsetEnvironment User UtmpIdentifier UtmpMode WatchdogSec WatchdogSignal WorkingDirectory"},
	{257, Install, "Alias Also DefaultInstance RequiredBy UpheldBy WantedBy"},
	{257, Unit, "BindTo IgnoreOnSnapshot OnFailureIsolate PropagateReloadFrom PropagateReloadTo RequiresOverridable RequisiteOverridable StartLimitInterval"},
	{257, Service, "BlockIOAccounting BlockIODeviceWeight BlockIOReadBandwidth BlockIOWeight BlockIOWriteBandwidth BusPolicy CPUShares Capabilities DefaultMemoryLow DefaultMemoryMin DevicePolicy FailureAction InaccessibleDirectories ManagedOOMMemoryPressure ManagedOOMPreference ManagedOOMSwap MemoryLimit NetClass PermissionsStartOnly ReadOnlyDirectories ReadWriteDirectories RebootArgument StartLimitAction StartLimitBurst StartLimitInterval StartupBlockIOWeight StartupCPUShares SysVStartPriority"},
	{258, Service, "BPFDelegateAttachments BPFDelegateCommands BPFDelegateMaps BPFDelegatePrograms CacheDirectoryAccounting CacheDirectoryQuota DelegateNamespaces LogsDirectoryAccounting LogsDirectoryQuota PrivateBPF StateDirectoryAccounting StateDirectoryQuota"},
	{258, Unit, "AssertKernelModuleLoaded AssertVersion ConditionKernelModuleLoaded ConditionVersion"},
	{259, Service, "ExecReloadPost UserNamespacePath"},
	{260, Service, "BindNetworkInterface MemoryTHP RefreshOnReload RootMStack"},
	{260, Unit, "AssertPathIsSocket ConditionPathIsSocket"},
	{261, Service, "CPUPressureThresholdSec CPUPressureWatch CPUSetPartition IOPressureThresholdSec IOPressureWatch OOMRules"},
	{261, Unit, "AssertFraction AssertMachineTag ConditionFraction ConditionMachineTag"},
	{262, Service, "LUOSession RestartRandomizedDelaySec"},
}

// SystemdKeysSince maps section → key → the systemd release that
// documented it: systemdKeys as data. Read it; never change it.
var SystemdKeysSince = func() map[string]map[string]Systemd {
	m := map[string]map[string]Systemd{}
	for _, row := range systemdKeys {
		if m[row.section] == nil {
			m[row.section] = map[string]Systemd{}
		}
		for _, k := range strings.Fields(row.keys) {
			if _, dup := m[row.section][k]; dup {
				panic("unit: systemd key table lists " + row.section + "." + k + " twice")
			}
			m[row.section][k] = row.since
		}
	}
	return m
}()

// SystemdSection reports whether section is one of systemd's own that
// SystemdKeySince knows the keys of.
func SystemdSection(section string) bool {
	_, ok := SystemdKeysSince[section]
	return ok
}

// SystemdKeySince returns the systemd release that documented key in a
// section of systemd's own ([Unit], [Service], [Install]), and false when
// no release syslet knows reads it. A key of the user's own (X-…) is known
// since OldestSystemd, as systemd reads it without a word.
func SystemdKeySince(section, key string) (Systemd, bool) {
	if strings.HasPrefix(key, "X-") {
		return OldestSystemd, true
	}
	v, ok := SystemdKeysSince[section][key]
	return v, ok
}
