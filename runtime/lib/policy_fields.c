/* The policy's decision for every field of config.json, and the walker that refuses what
 * has none (see policy_fields.h). docs/policy.md is this table in prose; the unit test
 * test_policy_fields feeds the policy a hostile value for each entry and checks the table
 * against the fields the spec parser decodes (ward_spec_fields) and against the doc. */
#include "policy_fields.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cgroup_res.h"
#include "util.h"

/* ---- bounds checked here ------------------------------------------------------------ */

/* The checks below take the map key only where it matters (check_unified). */
#define UNUSED __attribute__((unused))

/* v is a string equal to one of names[0..n). */
static bool is_one_of(json_t *v, const char *const *names, size_t n)
{
	for (size_t i = 0; json_is_string(v) && i < n; i++)
		if (!strcmp(json_string_value(v), names[i]))
			return true;
	return false;
}
#define ONE_OF(v, ...)                                                                             \
	is_one_of(v, (const char *const[]){__VA_ARGS__},                                           \
		  ARRAY_SIZE(((const char *const[]){__VA_ARGS__})))

static const char *check_oom_score(const char *key UNUSED, json_t *v)
{
	if (json_is_number(v) && json_number_value(v) < -998)
		return "below -998 (what kubelet gives a pod sandbox): -999 and -1000 would "
		       "leave the pod's processes to the OOM killer last, or never";
	return NULL;
}

static const char *check_ioprio_class(const char *key UNUSED, json_t *v)
{
	if (ONE_OF(v, "IOPRIO_CLASS_RT"))
		return "the real-time I/O class (IOPRIO_CLASS_RT) goes before every other pod's "
		       "I/O; IOPRIO_CLASS_BE and IOPRIO_CLASS_IDLE are allowed";
	return NULL;
}

static const char *check_sched_policy(const char *key UNUSED, json_t *v)
{
	if (ONE_OF(v, "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE"))
		return "real-time policies (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE) can take "
		       "every CPU from the other pods; SCHED_OTHER, SCHED_BATCH and "
		       "SCHED_IDLE are allowed";
	return NULL;
}

static const char *check_nice(const char *key UNUSED, json_t *v)
{
	if (json_is_number(v) && json_number_value(v) < 0)
		return "a negative nice value takes CPU time from the other pods (0 to 19 are "
		       "allowed)";
	return NULL;
}

static const char *check_sched_flags(const char *key UNUSED, json_t *v)
{
	size_t i;
	json_t *e;
	json_array_foreach(v, i, e)
	{
		if (!ONE_OF(e, "SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_KEEP_POLICY",
			    "SCHED_FLAG_KEEP_PARAMS"))
			return "only SCHED_FLAG_RESET_ON_FORK, SCHED_FLAG_KEEP_POLICY and "
			       "SCHED_FLAG_KEEP_PARAMS (no deadline or utilisation clamp flags)";
	}
	return NULL;
}

static const char *check_propagation(const char *key UNUSED, json_t *v)
{
	if (ONE_OF(v, "shared", "rshared"))
		return "a shared root would be a peer of mounts outside the pod (Kubernetes gives "
		       "Bidirectional propagation to privileged containers only); slave, "
		       "private and unbindable (and their r-forms) are allowed";
	return NULL;
}

static const char *check_personality(const char *key UNUSED, json_t *v)
{
	if (json_is_string(v) && !ONE_OF(v, "LINUX", "LINUX32"))
		return "only the LINUX and LINUX32 execution domains";
	return NULL;
}

static const char *check_unified(const char *key, json_t *v)
{
	const char *why = NULL;
	(void)v;
	return ward_cgroup_res_unified_key_ok(key, &why) ? NULL : why;
}

/* ---- the table -------------------------------------------------------------------- */

#define KEPT(p, rule, why)                                                                         \
	{                                                                                          \
		p, WARD_FIELD_KEPT, rule, why, NULL                                                \
	}
#define OVERRIDDEN(p, rule, why)                                                                   \
	{                                                                                          \
		p, WARD_FIELD_OVERRIDDEN, rule, why, NULL                                          \
	}
#define BOUNDED(p, rule, why)                                                                      \
	{                                                                                          \
		p, WARD_FIELD_BOUNDED, rule, why, NULL                                             \
	}
#define BOUNDED_HERE(p, rule, why, fn)                                                             \
	{                                                                                          \
		p, WARD_FIELD_BOUNDED, rule, why, fn                                               \
	}
#define REFUSED(p, rule, why)                                                                      \
	{                                                                                          \
		p, WARD_FIELD_REFUSED, rule, why, NULL                                             \
	}

#define NOT_IMPLEMENTED ": not implemented by ward, so refused rather than ignored"

#define HOOK_FIELDS(kind)                                                                          \
	BOUNDED("hooks." kind, "hooks",                                                            \
		"only hooks whose path is in the tenant's allow-list (tenants.d \"hooks\"); "      \
		"a hook runs on the host as root"),                                                \
	    BOUNDED("hooks." kind "[].path", "hooks",                                              \
		    "absolute, without . or .., and in the tenant's hook allow-list"),             \
	    BOUNDED("hooks." kind "[].args", "hooks",                                              \
		    "kept for an allowed hook (the allow-list trusts the program with any "        \
		    "arguments); refused with the hook otherwise"),                                \
	    BOUNDED("hooks." kind "[].env", "hooks",                                               \
		    "kept for an allowed hook; refused with the hook otherwise"),                  \
	    BOUNDED("hooks." kind "[].timeout", "hooks",                                           \
		    "kept for an allowed hook; refused with the hook otherwise")

#define IDMAP_FIELDS(p, what)                                                                      \
	BOUNDED(p, "ids", "every line maps host IDs inside the pod's ID range" what),              \
	    KEPT(p "[].containerID", "ids", "any container ID: the host side is what is bounded"), \
	    BOUNDED(p "[].hostID", "ids", "inside the pod's host ID range"),                       \
	    BOUNDED(p "[].size", "ids", "hostID + size stays inside the pod's host ID range")

/* A section of config.json: bounded by its fields, the rule named after it. */
#define SECTION(p, why) BOUNDED(p, p, why)

/* Rows that share a section's prefix and rule, or one decision and reason. */
#define RES_KEPT(p, why)     KEPT("linux.resources." p, "cgroup", why)
#define PROCESS_KEPT(p, why) KEPT("process." p, "process", why)
#define OWN_RECORD(p, why)   REFUSED("ward." p, "fields", why)

/* Members decided as their parent is. */
#define AS_BOUNDING(p)	   BOUNDED("process.capabilities." p, "capabilities", "as bounding")
#define AS_TIME_OFFSETS(p) KEPT("linux.timeOffsets" p, "namespaces", "as linux.timeOffsets")
#define AS_SECCOMP(p)	   OVERRIDDEN("linux.seccomp" p, "seccomp", "as linux.seccomp")
#define AS_RES_DEVICES(p)                                                                          \
	OVERRIDDEN("linux.resources.devices[]." p, "devices", "as linux.resources.devices")

#define RLIMIT_CAPPED(p)                                                                           \
	BOUNDED("process.rlimits[]." p, "rlimits", "capped at the tenant's limit for the type")
#define DEADLINE_PARAM(p)                                                                          \
	REFUSED("process.scheduler." p, "scheduler",                                               \
		"SCHED_DEADLINE parameters: real-time policies are refused")
#define HOST_NODE(p) BOUNDED("linux.devices[]." p, "devices", "must match the host's node")
#define MAPPED_ID    "a container ID, mapped into the pod's range"
#define PTY_SIZE     "the pty's size"

#define BELOW_TENANT                                                                               \
	"kept: the container's cgroup is below /ward/<tenant>/, whose budget (tenants.d "          \
	"\"cgroup\") bounds it"
#define V1_ONLY "kept: a cgroup v1 knob, which ward's cgroup v2 layer reports as not enforced"

const struct ward_policy_field ward_policy_fields[] = {
    KEPT("ociVersion", "fields", "the spec version the pod was written for"),

    /* ---- root ---- */
    SECTION("root", "see root.path and root.readonly"),
    BOUNDED("root.path", "root",
	    "the bundle's rootfs or a directory under the tenant's root_paths; never the "
	    "host's /, a system directory (/etc, /usr, ...) or ward's own data; idmapped to "
	    "the pod's range when the tenant has idmap_rootfs"),
    KEPT("root.readonly", "root", "a read-only root only takes rights away"),

    /* ---- mounts ---- */
    SECTION("mounts", "each mount is bounded by the rules of its fields below"),
    BOUNDED("mounts[].destination", "mounts",
	    "kernel filesystems only at their own place (proc at /proc, sysfs at /sys, "
	    "cgroup at /sys/fs/cgroup, ...), where ward masks them; no bind over /proc or "
	    "/sys"),
    BOUNDED("mounts[].type", "mounts",
	    "proc, sysfs, tmpfs, devpts, mqueue, cgroup, cgroup2, bind or none; no block "
	    "device, network, overlay or FUSE filesystem"),
    BOUNDED("mounts[].source", "host_paths",
	    "a bind's source, resolved on the host, is in the bundle, the pod's own CRI and "
	    "kubelet directories or the tenant's host_paths; never /, /proc, /sys, /dev, "
	    "ward's data, a container runtime's directory or a device node"),
    BOUNDED("mounts[].options", "mounts",
	    "kept, except that sysfs is made read-only and binds are idmapped (idmap or "
	    "ridmap added) when the tenant has idmap_mounts; shared and rshared propagation "
	    "are refused (the pod's mounts would reach the host)"),
    IDMAP_FIELDS("mounts[].uidMappings", " (any mount's idmap, a tmpfs' too)"),
    IDMAP_FIELDS("mounts[].gidMappings", " (any mount's idmap, a tmpfs' too)"),

    /* ---- process ---- */
    SECTION("process", "see the process fields below"),
    PROCESS_KEPT("terminal", "a pty for the container's own process"),
    PROCESS_KEPT("consoleSize", PTY_SIZE),
    PROCESS_KEPT("consoleSize.height", PTY_SIZE),
    PROCESS_KEPT("consoleSize.width", PTY_SIZE),
    PROCESS_KEPT("user", "IDs inside the pod's user namespace (see uidMappings)"),
    PROCESS_KEPT("user.uid", "a container ID; container root is a host ID of the pod's range"),
    PROCESS_KEPT("user.gid", MAPPED_ID),
    PROCESS_KEPT("user.umask", "the process's own umask"),
    PROCESS_KEPT("user.additionalGids", "container IDs, mapped into the pod's range"),
    REFUSED("process.user.username", "fields", "a Windows field" NOT_IMPLEMENTED),
    PROCESS_KEPT("args", "the container's own program"),
    PROCESS_KEPT("env", "the container's own environment"),
    PROCESS_KEPT("cwd", "a path inside the container"),
    REFUSED("process.commandLine", "fields", "a Windows field" NOT_IMPLEMENTED),
    BOUNDED("process.capabilities", "capabilities",
	    "the sets below; every capability is one of the pod's user namespace"),
    BOUNDED("process.capabilities.bounding", "capabilities",
	    "the tenant's capabilities; containerd's defaults beyond them are dropped, any "
	    "other refused (all of them for a privileged pod of a tenant that allows one)"),
    AS_BOUNDING("effective"),
    AS_BOUNDING("permitted"),
    AS_BOUNDING("ambient"),
    OVERRIDDEN("process.capabilities.inheritable", "capabilities",
	       "cleared (CVE-2022-29162: inheritable capabilities reach programs run later)"),
    BOUNDED("process.rlimits", "rlimits",
	    "each limit the tenant caps (tenants.d \"rlimits\") is capped; when the pod sets "
	    "none, the inherited limit stays, lowered to the cap only if above it (a cap never "
	    "raises a limit); the other types are kept"),
    KEPT("process.rlimits[].type", "rlimits", "the limit's name; its values are bounded"),
    RLIMIT_CAPPED("hard"),
    RLIMIT_CAPPED("soft"),
    OVERRIDDEN("process.noNewPrivileges", "privileges",
	       "forced on unless the tenant has allow_new_privileges"),
    OVERRIDDEN("process.apparmorProfile", "apparmor",
	       "the tenant's profile (the pod's only with allow_pod_apparmor); none when "
	       "the host has no AppArmor and the config allows that"),
    BOUNDED_HERE("process.oomScoreAdj", "oomScoreAdj",
		 "-998 (kubelet's value for a sandbox) to 1000; lower values keep the pod's "
		 "processes from the OOM killer while other pods are killed",
		 check_oom_score),
    REFUSED("process.selinuxLabel", "selinux", "SELinux labels" NOT_IMPLEMENTED),
    BOUNDED("process.ioPriority", "ioPriority", "see class and priority"),
    BOUNDED_HERE("process.ioPriority.class", "ioPriority",
		 "IOPRIO_CLASS_BE or IOPRIO_CLASS_IDLE; the real-time class is refused",
		 check_ioprio_class),
    KEPT("process.ioPriority.priority", "ioPriority", "a level inside the class"),
    BOUNDED("process.scheduler", "scheduler", "see the scheduler fields"),
    BOUNDED_HERE("process.scheduler.policy", "scheduler",
		 "SCHED_OTHER, SCHED_BATCH or SCHED_IDLE; real-time policies are refused",
		 check_sched_policy),
    BOUNDED_HERE("process.scheduler.nice", "scheduler", "0 to 19: no negative nice value",
		 check_nice),
    REFUSED("process.scheduler.priority", "scheduler",
	    "a static priority is for real-time policies, which are refused"),
    BOUNDED_HERE("process.scheduler.flags", "scheduler",
		 "SCHED_FLAG_RESET_ON_FORK, SCHED_FLAG_KEEP_POLICY, SCHED_FLAG_KEEP_PARAMS",
		 check_sched_flags),
    DEADLINE_PARAM("runtime"),
    DEADLINE_PARAM("deadline"),
    DEADLINE_PARAM("period"),
    REFUSED("process.execCPUAffinity", "fields", "execCPUAffinity" NOT_IMPLEMENTED),

    /* ---- names ---- */
    KEPT("hostname", "fields",
	 "the name of the pod's own uts namespace; with one joined by path only the name it "
	 "has (CRI-O, podman --pod), which is not set again"),
    KEPT("domainname", "fields", "as hostname"),

    /* ---- hooks ---- */
    SECTION("hooks",
	    "hooks run on the host as root: only the tenant's allow-listed ones; ward adds "
	    "its own GPU hook after the check (the audit lines are written by ward itself, no "
	    "hook)"),
    HOOK_FIELDS("prestart"),
    HOOK_FIELDS("createRuntime"),
    HOOK_FIELDS("createContainer"),
    HOOK_FIELDS("startContainer"),
    HOOK_FIELDS("poststart"),
    HOOK_FIELDS("poststop"),

    /* ---- annotations ---- */
    KEPT("annotations", "annotations", "see annotations.*"),
    KEPT("annotations.*", "annotations",
	 "kept: labels for the orchestrator (CRI's io.kubernetes.cri.* name the pod and "
	 "its tenant, see the tenant rules); ward.dev/* are ward's own"),
    REFUSED("annotations.ward.dev/*", "annotations",
	    "ward.dev/ is ward's own namespace: only the keys below may be written by a pod"),
    BOUNDED("annotations.ward.dev/tenant", "tenant",
	    "the tenant the pod asks for, granted only by the tenant choice rules (namespace "
	    "mapping first); the policy writes the tenant chosen"),
    BOUNDED("annotations.ward.dev/seccomp", "seccomp",
	    "\"unconfined\" is refused unless the tenant's profile is unconfined"),
    OVERRIDDEN("annotations.ward.dev/pod-seccomp", "seccomp",
	       "the pod's value stays an inert annotation, never read: ward records the pod's "
	       "own linux.seccomp, stacked on the tenant's, in ward.podSeccomp"),
    OVERRIDDEN("annotations.ward.dev/rootfs-idmap", "root",
	       "the pod's value stays an inert annotation, never read: ward records the "
	       "tenant's idmap_rootfs in ward.rootfsIdmap"),
    OVERRIDDEN("annotations.ward.dev/ids", "ids",
	       "the pod's value stays an inert annotation, never read: ward records the pod's "
	       "ID range in ward.ids"),
    OVERRIDDEN("annotations.ward.dev/gpus", "gpus",
	       "the pod's value stays an inert annotation, never read: ward records the GPUs "
	       "leased to the container in ward.gpus"),
    REFUSED("annotations.ward.dev/unenforced", "annotations",
	    "written by ward into the container's state (limits not enforced); a pod may "
	    "not preset it"),
    REFUSED("annotations.ward.dev/exit-status", "annotations",
	    "written by ward for the poststop hooks and the audit log; a pod may not preset "
	    "it"),

    /* ---- ward's own record (own.h) ---- */
    BOUNDED("ward", "fields",
	    "ward's own record of what its policy decided (own.h): each member is refused"),
    OWN_RECORD("podSeccomp",
	       "written by the policy: the pod's own linux.seccomp, stacked on the tenant's"),
    OWN_RECORD("rootfsIdmap", "written by the policy from idmap_rootfs"),
    OWN_RECORD("ids", "written by the policy: the pod's ID range"),
    OWN_RECORD("gpus", "written by the policy: the GPUs leased"),
    OWN_RECORD("unenforced", "written by ward: the limits not enforced"),

    /* ---- linux ---- */
    SECTION("linux", "see the linux fields below"),
    BOUNDED("linux.namespaces", "namespaces",
	    "a new user, mount and cgroup namespace always (added when missing; a pod member "
	    "joins its sandbox's user namespace instead); the host's network, pid, ipc and uts "
	    "namespaces only as the tenant's host_namespaces allow"),
    BOUNDED("linux.namespaces[].type", "namespaces", "as linux.namespaces"),
    BOUNDED("linux.namespaces[].path", "host_namespaces",
	    "a namespace joined by path: the host's only as host_namespaces allow, a user "
	    "namespace only if it maps inside the pod's range, never the host's mount or "
	    "cgroup namespace"),
    IDMAP_FIELDS("linux.uidMappings", "; set to the whole range when missing"),
    IDMAP_FIELDS("linux.gidMappings", "; set to the whole range when missing"),
    KEPT("linux.timeOffsets", "namespaces",
	 "offsets of the pod's own time namespace: only its own clocks move"),
    AS_TIME_OFFSETS(".monotonic"),
    AS_TIME_OFFSETS(".monotonic.secs"),
    AS_TIME_OFFSETS(".monotonic.nanosecs"),
    AS_TIME_OFFSETS(".boottime"),
    AS_TIME_OFFSETS(".boottime.secs"),
    AS_TIME_OFFSETS(".boottime.nanosecs"),
    BOUNDED("linux.devices", "devices",
	    "the default devices (null, zero, full, random, urandom, tty, ...) and the "
	    "tenant's devices, checked against the host's node; GPUs only through the GPU "
	    "rules"),
    HOST_NODE("type"),
    BOUNDED("linux.devices[].path", "devices", "a default device or one of the tenant's"),
    HOST_NODE("major"),
    HOST_NODE("minor"),
    KEPT("linux.devices[].fileMode", "devices", "the node's mode inside the container"),
    KEPT("linux.devices[].uid", "devices", MAPPED_ID),
    KEPT("linux.devices[].gid", "devices", MAPPED_ID),
    REFUSED("linux.netDevices", "fields",
	    "moving host network interfaces into the pod" NOT_IMPLEMENTED),
    OVERRIDDEN("linux.cgroupsPath", "cgroup",
	       "placed below /ward/<tenant>/ whatever its form, unless exactly this pod's kubelet "
	       "pod cgroup plus its id (tenant without a budget); a path that would leave it is "
	       "refused"),
    BOUNDED("linux.sysctl", "sysctl", "see linux.sysctl.*"),
    BOUNDED("linux.sysctl.*", "sysctl",
	    "only namespaced sysctls of the pod's own (not the host's) ipc, network and uts "
	    "namespaces"),
    OVERRIDDEN("linux.seccomp", "seccomp",
	       "the tenant's profile is the filter; the pod's own filter is kept beside it "
	       "and both are loaded, so a syscall passes only if both allow it (a tenant whose "
	       "seccomp is unconfined: the pod's own filter alone)"),
    AS_SECCOMP(".defaultAction"),
    AS_SECCOMP(".defaultErrnoRet"),
    AS_SECCOMP(".architectures"),
    AS_SECCOMP(".flags"),
    REFUSED("linux.seccomp.listenerPath", "seccomp",
	    "a seccomp notify listener is a host socket that would receive the pod's "
	    "syscalls to decide"),
    REFUSED("linux.seccomp.listenerMetadata", "seccomp",
	    "goes with listenerPath, which is refused"),
    AS_SECCOMP(".syscalls"),
    AS_SECCOMP(".syscalls[].names"),
    AS_SECCOMP(".syscalls[].action"),
    AS_SECCOMP(".syscalls[].errnoRet"),
    AS_SECCOMP(".syscalls[].args"),
    AS_SECCOMP(".syscalls[].args[].index"),
    AS_SECCOMP(".syscalls[].args[].value"),
    AS_SECCOMP(".syscalls[].args[].valueTwo"),
    AS_SECCOMP(".syscalls[].args[].op"),
    BOUNDED_HERE("linux.rootfsPropagation", "rootfsPropagation",
		 "slave, private, unbindable (and rslave, rprivate, runbindable); shared and "
		 "rshared are refused",
		 check_propagation),
    BOUNDED("linux.maskedPaths", "paths", "kept, with ward's defaults added"),
    BOUNDED("linux.readonlyPaths", "paths", "kept, with ward's defaults added"),
    REFUSED("linux.mountLabel", "selinux", "SELinux labels" NOT_IMPLEMENTED),
    REFUSED("linux.intelRdt", "fields",
	    "Intel RDT (closID, schemata, l3CacheSchema, memBwSchema, enableMonitoring) "
	    "partitions the host's caches and memory bandwidth" NOT_IMPLEMENTED),
    REFUSED("linux.memoryPolicy", "fields", "NUMA memory policies" NOT_IMPLEMENTED),
    BOUNDED("linux.personality", "personality", "see domain and flags"),
    BOUNDED_HERE("linux.personality.domain", "personality", "LINUX or LINUX32", check_personality),
    REFUSED("linux.personality.flags", "personality",
	    "personality flags (ADDR_NO_RANDOMIZE, ...)" NOT_IMPLEMENTED),

    /* ---- linux.resources ---- */
    BOUNDED("linux.resources", "cgroup",
	    "limits of the container's cgroup, which is below /ward/<tenant>/ and its "
	    "budget; see each field"),
    RES_KEPT("memory", BELOW_TENANT),
    RES_KEPT("memory.limit", BELOW_TENANT),
    RES_KEPT("memory.reservation", BELOW_TENANT),
    RES_KEPT("memory.swap", BELOW_TENANT),
    RES_KEPT("memory.kernel", V1_ONLY),
    RES_KEPT("memory.kernelTCP", V1_ONLY),
    RES_KEPT("memory.swappiness", V1_ONLY),
    REFUSED("linux.resources.memory.disableOOMKiller", "cgroup",
	    "a cgroup whose processes the OOM killer never takes would push it onto the "
	    "other pods"),
    RES_KEPT("memory.useHierarchy", V1_ONLY),
    RES_KEPT("memory.checkBeforeUpdate", "kept: a check made at update time"),
    RES_KEPT("cpu", BELOW_TENANT),
    RES_KEPT("cpu.shares", BELOW_TENANT),
    RES_KEPT("cpu.quota", BELOW_TENANT),
    RES_KEPT("cpu.burst", BELOW_TENANT),
    RES_KEPT("cpu.period", BELOW_TENANT),
    REFUSED("linux.resources.cpu.realtimeRuntime", "cgroup",
	    "real-time CPU time is taken from every other pod"),
    REFUSED("linux.resources.cpu.realtimePeriod", "cgroup",
	    "goes with realtimeRuntime, which is refused"),
    RES_KEPT("cpu.cpus", "kept: a cpuset inside the parent's (the kernel bounds it)"),
    RES_KEPT("cpu.mems", "kept: a cpuset inside the parent's (the kernel bounds it)"),
    RES_KEPT("cpu.idle", BELOW_TENANT),
    RES_KEPT("pids", BELOW_TENANT),
    RES_KEPT("pids.limit", BELOW_TENANT),
    RES_KEPT("blockIO", BELOW_TENANT),
    RES_KEPT("blockIO.weight", BELOW_TENANT),
    RES_KEPT("blockIO.leafWeight", V1_ONLY),
    RES_KEPT("blockIO.weightDevice", BELOW_TENANT),
    RES_KEPT("blockIO.weightDevice[].major", BELOW_TENANT),
    RES_KEPT("blockIO.weightDevice[].minor", BELOW_TENANT),
    RES_KEPT("blockIO.weightDevice[].weight", BELOW_TENANT),
    RES_KEPT("blockIO.weightDevice[].leafWeight", V1_ONLY),
    RES_KEPT("blockIO.throttleReadBpsDevice", BELOW_TENANT),
    RES_KEPT("blockIO.throttleReadBpsDevice[].major", BELOW_TENANT),
    RES_KEPT("blockIO.throttleReadBpsDevice[].minor", BELOW_TENANT),
    RES_KEPT("blockIO.throttleReadBpsDevice[].rate", BELOW_TENANT),
    RES_KEPT("blockIO.throttleWriteBpsDevice", BELOW_TENANT),
    RES_KEPT("blockIO.throttleWriteBpsDevice[].major", BELOW_TENANT),
    RES_KEPT("blockIO.throttleWriteBpsDevice[].minor", BELOW_TENANT),
    RES_KEPT("blockIO.throttleWriteBpsDevice[].rate", BELOW_TENANT),
    RES_KEPT("blockIO.throttleReadIOPSDevice", BELOW_TENANT),
    RES_KEPT("blockIO.throttleReadIOPSDevice[].major", BELOW_TENANT),
    RES_KEPT("blockIO.throttleReadIOPSDevice[].minor", BELOW_TENANT),
    RES_KEPT("blockIO.throttleReadIOPSDevice[].rate", BELOW_TENANT),
    RES_KEPT("blockIO.throttleWriteIOPSDevice", BELOW_TENANT),
    RES_KEPT("blockIO.throttleWriteIOPSDevice[].major", BELOW_TENANT),
    RES_KEPT("blockIO.throttleWriteIOPSDevice[].minor", BELOW_TENANT),
    RES_KEPT("blockIO.throttleWriteIOPSDevice[].rate", BELOW_TENANT),
    RES_KEPT("hugepageLimits", BELOW_TENANT),
    RES_KEPT("hugepageLimits[].pageSize", BELOW_TENANT),
    RES_KEPT("hugepageLimits[].limit", BELOW_TENANT),
    REFUSED("linux.resources.network", "cgroup",
	    "net_cls class IDs and net_prio priorities (classID, priorities) tag the pod's "
	    "traffic for the host's own traffic rules, where it could pass as another's"),
    RES_KEPT("rdma", BELOW_TENANT),
    RES_KEPT("rdma.*", BELOW_TENANT),
    RES_KEPT("rdma.*.hcaHandles", BELOW_TENANT),
    RES_KEPT("rdma.*.hcaObjects", BELOW_TENANT),
    BOUNDED("linux.resources.unified", "cgroup", "see linux.resources.unified.*"),
    BOUNDED_HERE("linux.resources.unified.*", "cgroup",
		 "controller files of the container's own cgroup (CONTROLLER.FILE); cgroup "
		 "core files (cgroup.procs, cgroup.subtree_control, cgroup.kill, ...) are "
		 "ward's, except cgroup.max.depth and cgroup.max.descendants",
		 check_unified),
    OVERRIDDEN("linux.resources.devices", "devices",
	       "rebuilt by the policy: deny all, then the devices granted (defaults, the "
	       "tenant's, leased GPUs)"),
    AS_RES_DEVICES("allow"),
    AS_RES_DEVICES("type"),
    AS_RES_DEVICES("major"),
    AS_RES_DEVICES("minor"),
    AS_RES_DEVICES("access"),

    /* ---- other platforms ---- */
    REFUSED("windows", "fields", "the Windows section" NOT_IMPLEMENTED),
    REFUSED("solaris", "fields", "the Solaris section" NOT_IMPLEMENTED),
    REFUSED("vm", "fields", "the virtual-machine section" NOT_IMPLEMENTED),
    REFUSED("zos", "fields", "the z/OS section" NOT_IMPLEMENTED),
    REFUSED("freebsd", "fields", "the FreeBSD section (runtime-spec 1.3)" NOT_IMPLEMENTED),
};

const size_t ward_policy_n_fields = ARRAY_SIZE(ward_policy_fields);

const struct ward_policy_field *ward_policy_field_find(const char *path)
{
	for (size_t i = 0; path && i < ward_policy_n_fields; i++)
		if (!strcmp(ward_policy_fields[i].path, path))
			return &ward_policy_fields[i];
	return NULL;
}

const char *ward_policy_decision_name(enum ward_field_decision d)
{
	switch (d) {
	case WARD_FIELD_KEPT:
		return "kept";
	case WARD_FIELD_OVERRIDDEN:
		return "overridden";
	case WARD_FIELD_BOUNDED:
		return "bounded";
	case WARD_FIELD_REFUSED:
		return "refused";
	}
	return "?";
}

/* ---- the walker ------------------------------------------------------------------- */

#define FIELD_PATH_MAX 512

struct walk {
	const char *tenant;
	struct ward_err *err;
};

static int walk_refuse(struct walk *w, const char *rule, const char *path, const char *why)
{
	return ward_fail(w->err, 0, "tenant \"%s\": %s: %s: %s", w->tenant, rule, path, why);
}

/* Some entry lies below pattern pat, after sep ("." or "[]"). */
static bool has_below(const char *pat, const char *sep)
{
	size_t n = strlen(pat), m = strlen(sep);
	for (size_t i = 0; i < ward_policy_n_fields; i++) {
		const char *p = ward_policy_fields[i].path;
		if (!n && !strcmp(sep, "."))
			return true; /* the top level */
		if (!strncmp(p, pat, n) && !strncmp(p + n, sep, m))
			return true;
	}
	return false;
}

/* The pattern a "prefix*" entry hangs below: the longest path of the table that is a
 * proper prefix of it ending at a '.' ("annotations" for the entry of the ward.dev/
 * keys), or "" at the top. */
static size_t wildcard_parent_len(const char *p)
{
	char buf[FIELD_PATH_MAX];
	size_t len = strlen(p);

	if (len >= sizeof(buf))
		return 0;
	for (size_t n = len; n-- > 0;) {
		if (p[n] != '.')
			continue;
		memcpy(buf, p, n);
		buf[n] = '\0';
		if (ward_policy_field_find(buf))
			return n;
	}
	return 0;
}

static size_t wildcard_parent[ARRAY_SIZE(ward_policy_fields)];
static bool wildcard_parent_done;

/* The entry for member key of an object at pattern pat: the exact path first, else the
 * "prefix*" entry below pat with the longest prefix that key starts with. */
static const struct ward_policy_field *child_entry(const char *pat, const char *key)
{
	char exact[FIELD_PATH_MAX];
	const struct ward_policy_field *best = NULL;
	size_t best_len = 0, n = strlen(pat);

	/* a key too long for the buffer matches no exact entry (none is that long) */
	if ((size_t)snprintf(exact, sizeof(exact), "%s%s%s", pat, n ? "." : "", key) <
		sizeof(exact) &&
	    (best = ward_policy_field_find(exact)))
		return best;
	if (!wildcard_parent_done) { /* once: the table does not change */
		for (size_t i = 0; i < ward_policy_n_fields; i++)
			wildcard_parent[i] = wildcard_parent_len(ward_policy_fields[i].path);
		wildcard_parent_done = true;
	}
	for (size_t i = 0; i < ward_policy_n_fields; i++) {
		const char *p = ward_policy_fields[i].path, *kp;
		size_t len = strlen(p), klen;
		if (!len || p[len - 1] != '*' || strncmp(p, pat, n) || (n && p[n] != '.') ||
		    wildcard_parent[i] != n)
			continue;
		kp = p + (n ? n + 1 : 0); /* the key's part: after "pat." */
		klen = len - 1 - (size_t)(kp - p);
		if (!strncmp(kp, key, klen) && (!best || klen > best_len)) {
			best = &ward_policy_fields[i];
			best_len = klen;
		}
	}
	return best;
}

/* null, false, 0, "", {} and []: what the spec parser reads as absent or empty. */
static bool empty_value(json_t *v)
{
	return !v || json_is_null(v) || json_is_false(v) ||
	       (json_is_integer(v) && json_integer_value(v) == 0) ||
	       (json_is_real(v) && json_real_value(v) == 0) ||
	       (json_is_string(v) && json_string_length(v) == 0) ||
	       (json_is_object(v) && json_object_size(v) == 0) ||
	       (json_is_array(v) && json_array_size(v) == 0);
}

static int walk_value(struct walk *w, const char *pat, json_t *v, const char *path);

static int visit(struct walk *w, const struct ward_policy_field *f, const char *key, json_t *v,
		 const char *path)
{
	const char *why;

	if (f->decision == WARD_FIELD_REFUSED && !empty_value(v))
		return walk_refuse(w, f->rule, path, f->reason);
	if (f->check && (why = f->check(key, v)))
		return walk_refuse(w, f->rule, path, why);
	return walk_value(w, f->path, v, path);
}

static int walk_value(struct walk *w, const char *pat, json_t *v, const char *path)
{
	char child[FIELD_PATH_MAX], elem[FIELD_PATH_MAX];
	const char *key;
	json_t *c;
	size_t i;

	if (json_is_object(v) && has_below(pat, ".")) {
		json_object_foreach(v, key, c)
		{
			const struct ward_policy_field *f;
			if (json_is_null(c))
				continue; /* absent, as the spec parser reads it */
			snprintf(child, sizeof(child), "%s%s%s", path, *path ? "." : "", key);
			f = child_entry(pat, key);
			if (!f)
				return walk_refuse(w, "fields", child,
						   "ward's policy has no decision for this field "
						   "(refused for non-trusted tenants)");
			if (visit(w, f, key, c, child) < 0)
				return -1;
		}
	} else if (json_is_array(v) && has_below(pat, "[]")) {
		snprintf(elem, sizeof(elem), "%s[]", pat);
		json_array_foreach(v, i, c)
		{
			snprintf(child, sizeof(child), "%s[%zu]", path, i);
			if (walk_value(w, elem, c, child) < 0)
				return -1;
		}
	}
	/* Anything else is a leaf; wrong JSON types are the spec parser's to name. */
	return 0;
}

int ward_policy_check_fields(json_t *pod, const char *tenant_name, struct ward_err *err)
{
	struct walk w = {.tenant = tenant_name ? tenant_name : "", .err = err};

	if (!json_is_object(pod))
		return ward_fail(err, 0, "config.json: expected a JSON object");
	return walk_value(&w, "", pod, "");
}

int ward_policy_check_process_fields(const char *json, size_t len, const char *tenant_name,
				     struct ward_err *err)
{
	struct walk w = {.tenant = tenant_name ? tenant_name : "", .err = err};
	json_error_t je;
	json_t *o;
	int rc;

	/* integers as reals: a uint64 rlimit (RLIM_INFINITY) must decode too */
	o = json_loadb(json ? json : "", json ? len : 0,
		       JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &je);
	if (!json_is_object(o)) {
		json_decref(o);
		return ward_fail(err, 0, "process.json: %s",
				 o ? "expected a JSON object" : je.text);
	}
	rc = walk_value(&w, "process", o, "process");
	json_decref(o);
	return rc;
}
