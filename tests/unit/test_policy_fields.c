/* Unit tests: every field of config.json has a policy decision (runtime/lib/policy_fields.c)
 * and the policy carries it out. One hostile value per entry of the table, each applied
 * alone to a plain pod: a refused field is refused with its path, an overridden or bounded
 * one comes out changed (or refused), a kept one comes out as written. The table must
 * cover every field the spec parser decodes, an entry without a hostile case fails, an
 * unknown field is refused with its path, and docs/policy.md must say what the table says.
 *
 * `test_policy_fields --markdown` prints the table's rows for docs/policy.md. */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_res.h"
#include "config.h"
#include "policy.h"
#include "policy_fields.h"
#include "spec.h"
#include "tap.h"
#include "../stubs/policy_host.h"
#include "util.h"

/* ---- a fake host (tests/stubs/policy_host.h) ---- */

static const struct ward_policy_host fake = FAKE_POLICY_HOST_RLIMITS;

static const char *tenant_a = "{\"host_paths\": [\"/srv/a\"], \"devices\": [\"/dev/fuse\"], "
			      "\"rlimits\": {\"RLIMIT_NOFILE\": 4096}}";
static const char *profile = "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": "
			     "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\"}]}";
static struct ward_config *cfg;

/* ---- the pod ---- */

static const char *base_pod =
    "{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"rootfs\"},"
    " \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"capabilities\": {\"bounding\": "
    "[\"CAP_KILL\"], \"effective\": [\"CAP_KILL\"], \"permitted\": [\"CAP_KILL\"]}},"
    " \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\"}, {\"type\": "
    "\"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"mount\"}]},"
    " \"mounts\": [{\"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"sysfs\"}]}";

/* Objects merge member by member; anything else replaces. */
static void merge(json_t *dst, json_t *src)
{
	const char *k;
	json_t *v;
	json_object_foreach(src, k, v)
	{
		json_t *d = json_object_get(dst, k);
		if (json_is_object(d) && json_is_object(v))
			merge(d, v);
		else
			json_object_set(dst, k, v);
	}
}

static json_t *pod_with(const char *fragment)
{
	json_error_t je;
	json_t *p = json_loads(base_pod, 0, &je), *x;

	if (!fragment)
		return p;
	x = json_loads(fragment, 0, &je);
	if (!x) {
		printf("# bad fragment %s: %s\n", fragment, je.text);
		abort();
	}
	merge(p, x);
	json_decref(x);
	return p;
}

static json_t *apply(json_t *pod, struct ward_err *err)
{
	struct ward_policy_in in = {FAKE_POLICY_IN(cfg, "a"), .apparmor_enabled = false,
				    .seccomp_json = profile, .seccomp_priv_json = profile,
				    .host = &fake};
	memset(err, 0, sizeof(*err));
	return policy_apply_to_json(&in, pod, NULL, err);
}

/* The value at a location written as "linux|seccomp|syscalls|0|action" ('|' between the
 * steps: keys may hold dots); the dotted form ("linux.seccomp.syscalls[0].action") goes to
 * shown when it is not NULL. */
static json_t *at(json_t *o, const char *loc, char *shown, size_t len)
{
	char buf[512], *save = NULL;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", loc);
	if (shown)
		shown[0] = '\0';
	for (char *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
		bool idx = json_is_array(o);
		if (shown && n < len)
			n += (size_t)snprintf(shown + n, len - n, idx ? "[%s]" : "%s%s",
					      idx ? t : (n ? "." : ""), t);
		o = idx ? json_array_get(o, (size_t)atoi(t)) : json_object_get(o, t);
	}
	return o;
}

/* "mounts[].options" -> "mounts|0|options" */
static void loc_of(const char *path, char *out, size_t len)
{
	size_t n = 0;
	for (const char *p = path; *p && n + 3 < len; p++) {
		if (!strncmp(p, "[]", 2)) {
			n += (size_t)snprintf(out + n, len - n, "|0");
			p++;
		} else {
			out[n++] = *p == '.' ? '|' : *p;
		}
	}
	out[n] = '\0';
}

/* ---- one hostile value per entry of the table ---- */

/* Time offsets need a time namespace (the spec's own check, run on the effective spec). */
#define TIME_NS                                                                                    \
	"\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\"}, {\"type\": "               \
	"\"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"mount\"}, {\"type\": \"time\"}], "

struct hostile {
	const char *path;     /* the table entry */
	const char *fragment; /* merged over the plain pod */
	const char *loc;      /* where the value is ('|' between steps); NULL: from path.
			       * "A>B": the pod's value at A, the effective spec's at B (a value
			       * that would take effect elsewhere: ward's own record) */
	const char *pending;  /* not yet enforced on this branch: why (reported as skip) */
};

/* The hook rule (tenants.d "hooks" allow-list) is the policy branch's (wip/policy). */
#define HOOKS_PENDING "hooks: the allow-list rule comes with wip/policy"
#define HOOK_CASES(kind)                                                                           \
	{"hooks." kind "[].path", "{\"hooks\": {\"" kind "\": [{\"path\": \"/tmp/evil\"}]}}",      \
	 NULL, HOOKS_PENDING},                                                                     \
	    {"hooks." kind "[].args",                                                              \
	     "{\"hooks\": {\"" kind "\": [{\"path\": \"/tmp/evil\", \"args\": [\"evil\", "         \
	     "\"-rf\"]}]}}",                                                                       \
	     NULL, HOOKS_PENDING},                                                                 \
	    {"hooks." kind "[].env",                                                               \
	     "{\"hooks\": {\"" kind "\": [{\"path\": \"/tmp/evil\", \"env\": "                     \
	     "[\"LD_PRELOAD=/tmp/x.so\"]}]}}",                                                     \
	     NULL, HOOKS_PENDING},                                                                 \
	{                                                                                          \
		"hooks." kind "[].timeout",                                                        \
		    "{\"hooks\": {\"" kind                                                         \
		    "\": [{\"path\": \"/tmp/evil\", \"timeout\": 2147483647}]}}",                  \
		    NULL, HOOKS_PENDING                                                            \
	}

#define IDMAP_CASES(p, frag_pre, frag_post, loc_pre)                                               \
	{p "[].containerID",                                                                       \
	 frag_pre "[{\"containerID\": 7, \"hostID\": 1000000, \"size\": 10}]" frag_post,           \
	 loc_pre "|0|containerID", NULL},                                                          \
	    {p "[].hostID",                                                                        \
	     frag_pre "[{\"containerID\": 0, \"hostID\": 0, \"size\": 65536}]" frag_post,          \
	     loc_pre "|0|hostID", NULL},                                                           \
	{                                                                                          \
		p "[].size",                                                                       \
		    frag_pre                                                                       \
		    "[{\"containerID\": 0, \"hostID\": 1000000, \"size\": 4294967295}]" frag_post, \
		    loc_pre "|0|size", NULL                                                        \
	}

/* every namespace new, a user namespace among them */
#define NS_WITH_USER                                                                               \
	"[{\"type\": \"pid\"}, {\"type\": \"network\"}, {\"type\": \"ipc\"}, {\"type\": "          \
	"\"uts\"}, "                                                                               \
	"{\"type\": \"mount\"}, {\"type\": \"user\"}]"
#define RES(frag) "{\"linux\": {\"resources\": " frag "}}"
#define SC(frag)                                                                                   \
	"{\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": "         \
	"[{\"names\": [\"mount\"], \"action\": \"SCMP_ACT_LOG\"" frag "}]}}}"

static const struct hostile hostile[] = {
    {"ociVersion", "{\"ociVersion\": \"0.0.1-evil\"}", NULL, NULL},
    {"root.path", "{\"root\": {\"path\": \"/etc\"}}", NULL, NULL},
    {"root.readonly", "{\"root\": {\"path\": \"rootfs\", \"readonly\": false}}", NULL, NULL},
    /* mounts */
    {"mounts[].destination",
     "{\"mounts\": [{\"destination\": \"/proc/sys\", \"type\": \"bind\", \"source\": "
     "\"/srv/a\", \"options\": [\"rbind\"]}]}",
     NULL, NULL},
    {"mounts[].type",
     "{\"mounts\": [{\"destination\": \"/d\", \"type\": \"ext4\", \"source\": "
     "\"/dev/sda1\"}]}",
     NULL, NULL},
    {"mounts[].source",
     "{\"mounts\": [{\"destination\": \"/h\", \"type\": \"bind\", \"source\": \"/etc\"}]}", NULL,
     NULL},
    {"mounts[].options",
     "{\"mounts\": [{\"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"sysfs\", "
     "\"options\": [\"rw\"]}]}",
     NULL, NULL},
    {"mounts[].uidMappings",
     "{\"mounts\": [{\"destination\": \"/v\", \"type\": \"bind\", \"source\": \"/srv/a\", "
     "\"uidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}]}]}",
     NULL, NULL},
    {"mounts[].gidMappings",
     "{\"mounts\": [{\"destination\": \"/v\", \"type\": \"bind\", \"source\": \"/srv/a\", "
     "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}]}]}",
     NULL, NULL},
    IDMAP_CASES("mounts[].uidMappings",
		"{\"mounts\": [{\"destination\": \"/v\", \"type\": \"bind\", \"source\": "
		"\"/srv/a\", \"uidMappings\": ",
		"}]}", "mounts|0|uidMappings"),
    IDMAP_CASES("mounts[].gidMappings",
		"{\"mounts\": [{\"destination\": \"/v\", \"type\": \"bind\", \"source\": "
		"\"/srv/a\", \"gidMappings\": ",
		"}]}", "mounts|0|gidMappings"),
    /* process */
    {"process.terminal", "{\"process\": {\"terminal\": true}}", NULL, NULL},
    {"process.consoleSize.height",
     "{\"process\": {\"consoleSize\": {\"height\": 4294967295, \"width\": 1}}}", NULL, NULL},
    {"process.consoleSize.width",
     "{\"process\": {\"consoleSize\": {\"height\": 1, \"width\": 4294967295}}}", NULL, NULL},
    {"process.user.uid", "{\"process\": {\"user\": {\"uid\": 0, \"gid\": 0}}}", NULL, NULL},
    {"process.user.gid", "{\"process\": {\"user\": {\"uid\": 0, \"gid\": 0}}}", NULL, NULL},
    {"process.user.umask", "{\"process\": {\"user\": {\"uid\": 0, \"gid\": 0, \"umask\": 0}}}",
     NULL, NULL},
    {"process.user.additionalGids",
     "{\"process\": {\"user\": {\"uid\": 0, \"gid\": 0, \"additionalGids\": [0, 4294967294]}}}",
     NULL, NULL},
    {"process.user.username",
     "{\"process\": {\"user\": {\"username\": "
     "\"ContainerAdministrator\"}}}",
     NULL, NULL},
    {"process.args", "{\"process\": {\"args\": [\"/bin/sh\", \"-c\", \"evil\"]}}", NULL, NULL},
    {"process.env", "{\"process\": {\"env\": [\"LD_PRELOAD=/tmp/evil.so\"]}}", NULL, NULL},
    {"process.cwd", "{\"process\": {\"cwd\": \"/proc/1/root\"}}", NULL, NULL},
    {"process.commandLine", "{\"process\": {\"commandLine\": \"cmd.exe /c evil\"}}", NULL, NULL},
    {"process.capabilities.bounding",
     "{\"process\": {\"capabilities\": {\"bounding\": [\"CAP_SYS_MODULE\"]}}}", NULL, NULL},
    {"process.capabilities.effective",
     "{\"process\": {\"capabilities\": {\"effective\": [\"CAP_SYS_MODULE\"]}}}", NULL, NULL},
    {"process.capabilities.permitted",
     "{\"process\": {\"capabilities\": {\"permitted\": [\"CAP_SYS_MODULE\"]}}}", NULL, NULL},
    {"process.capabilities.ambient",
     "{\"process\": {\"capabilities\": {\"ambient\": [\"CAP_SYS_MODULE\"]}}}", NULL, NULL},
    {"process.capabilities.inheritable",
     "{\"process\": {\"capabilities\": {\"inheritable\": [\"CAP_KILL\"]}}}", NULL, NULL},
    {"process.rlimits[].type",
     "{\"process\": {\"rlimits\": [{\"type\": \"RLIMIT_CORE\", \"hard\": 0, \"soft\": 0}]}}", NULL,
     NULL},
    {"process.rlimits[].hard",
     "{\"process\": {\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1048576, \"soft\": "
     "1024}]}}",
     NULL, NULL},
    {"process.rlimits[].soft",
     "{\"process\": {\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1048576, \"soft\": "
     "1048576}]}}",
     NULL, NULL},
    {"process.noNewPrivileges", "{\"process\": {\"noNewPrivileges\": false}}", NULL, NULL},
    {"process.apparmorProfile", "{\"process\": {\"apparmorProfile\": \"unconfined\"}}", NULL, NULL},
    {"process.oomScoreAdj", "{\"process\": {\"oomScoreAdj\": -1000}}", NULL, NULL},
    {"process.selinuxLabel", "{\"process\": {\"selinuxLabel\": \"system_u:system_r:spc_t:s0\"}}",
     NULL, NULL},
    {"process.ioPriority.class",
     "{\"process\": {\"ioPriority\": {\"class\": \"IOPRIO_CLASS_RT\", \"priority\": 0}}}", NULL,
     NULL},
    {"process.ioPriority.priority",
     "{\"process\": {\"ioPriority\": {\"class\": \"IOPRIO_CLASS_BE\", \"priority\": 0}}}", NULL,
     NULL},
    {"process.scheduler.policy", "{\"process\": {\"scheduler\": {\"policy\": \"SCHED_FIFO\"}}}",
     NULL, NULL},
    {"process.scheduler.nice",
     "{\"process\": {\"scheduler\": {\"policy\": \"SCHED_OTHER\", \"nice\": -20}}}", NULL, NULL},
    {"process.scheduler.priority",
     "{\"process\": {\"scheduler\": {\"policy\": \"SCHED_OTHER\", \"priority\": 99}}}", NULL, NULL},
    {"process.scheduler.flags",
     "{\"process\": {\"scheduler\": {\"policy\": \"SCHED_OTHER\", \"flags\": "
     "[\"SCHED_FLAG_UTIL_CLAMP_MIN\"]}}}",
     NULL, NULL},
    {"process.scheduler.runtime",
     "{\"process\": {\"scheduler\": {\"policy\": \"SCHED_OTHER\", \"runtime\": 1000000}}}", NULL,
     NULL},
    {"process.scheduler.deadline",
     "{\"process\": {\"scheduler\": {\"policy\": \"SCHED_OTHER\", \"deadline\": 1000000}}}", NULL,
     NULL},
    {"process.scheduler.period",
     "{\"process\": {\"scheduler\": {\"policy\": \"SCHED_OTHER\", \"period\": 1000000}}}", NULL,
     NULL},
    {"process.execCPUAffinity",
     "{\"process\": {\"execCPUAffinity\": {\"initial\": \"0\", \"final\": \"0-63\"}}}", NULL, NULL},
    /* names */
    {"hostname", "{\"hostname\": \"evil\"}", NULL, NULL},
    {"domainname", "{\"domainname\": \"evil.example\"}", NULL, NULL},
    /* hooks */
    HOOK_CASES("prestart"),
    HOOK_CASES("createRuntime"),
    HOOK_CASES("createContainer"),
    HOOK_CASES("startContainer"),
    HOOK_CASES("poststart"),
    HOOK_CASES("poststop"),
    /* annotations */
    {"annotations.*", "{\"annotations\": {\"io.evil\": \"x\"}}", "annotations|io.evil", NULL},
    {"annotations.ward.dev/*", "{\"annotations\": {\"ward.dev/evil\": \"x\"}}",
     "annotations|ward.dev/evil", NULL},
    {"annotations.ward.dev/tenant", "{\"annotations\": {\"ward.dev/tenant\": \"root\"}}",
     "annotations|ward.dev/tenant", NULL},
    {"annotations.ward.dev/seccomp", "{\"annotations\": {\"ward.dev/seccomp\": \"unconfined\"}}",
     "annotations|ward.dev/seccomp", NULL},
    {"annotations.ward.dev/pod-seccomp",
     "{\"annotations\": {\"ward.dev/pod-seccomp\": \"{\\\"defaultAction\\\": "
     "\\\"SCMP_ACT_ALLOW\\\"}\"}}",
     "annotations|ward.dev/pod-seccomp>ward|podSeccomp", NULL},
    {"annotations.ward.dev/rootfs-idmap",
     "{\"annotations\": {\"ward.dev/rootfs-idmap\": "
     "\"false\"}}",
     "annotations|ward.dev/rootfs-idmap>ward|rootfsIdmap", NULL},
    {"annotations.ward.dev/ids", "{\"annotations\": {\"ward.dev/ids\": \"fixed 0 4294967295\"}}",
     "annotations|ward.dev/ids>ward|ids", NULL},
    {"annotations.ward.dev/gpus", "{\"annotations\": {\"ward.dev/gpus\": \"GPU-evil\"}}",
     "annotations|ward.dev/gpus>ward|gpus", NULL},
    {"annotations.ward.dev/unenforced",
     "{\"annotations\": {\"ward.dev/unenforced\": \"nothing, trust me\"}}",
     "annotations|ward.dev/unenforced", NULL},
    {"annotations.ward.dev/exit-status", "{\"annotations\": {\"ward.dev/exit-status\": \"0\"}}",
     "annotations|ward.dev/exit-status", NULL},
    /* ward's own record (own.h) */
    {"ward.podSeccomp", "{\"ward\": {\"podSeccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\"}}}",
     "ward|podSeccomp", NULL},
    {"ward.rootfsIdmap", "{\"ward\": {\"rootfsIdmap\": true}}", "ward|rootfsIdmap", NULL},
    {"ward.ids", "{\"ward\": {\"ids\": \"fixed 0 4294967295\"}}", "ward|ids", NULL},
    {"ward.gpus", "{\"ward\": {\"gpus\": \"GPU-evil\"}}", "ward|gpus", NULL},
    {"ward.unenforced", "{\"ward\": {\"unenforced\": \"memory\"}}", "ward|unenforced", NULL},
    /* linux */
    {"linux.namespaces[].type",
     "{\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\"}, {\"type\": "
     "\"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"mount\"}, {\"type\": \"time\"}]}}",
     "linux|namespaces", NULL},
    {"linux.namespaces[].path",
     "{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"network\", \"path\": "
     "\"/proc/1/ns/net\"}]}}",
     NULL, NULL},
    {"linux.uidMappings",
     "{\"linux\": {\"namespaces\": " NS_WITH_USER ", "
     "\"uidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 65536}], \"gidMappings\": "
     "[{\"containerID\": 0, \"hostID\": 1000000, \"size\": 65536}]}}",
     NULL, NULL},
    {"linux.gidMappings",
     "{\"linux\": {\"namespaces\": " NS_WITH_USER ", "
     "\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000000, \"size\": 65536}], "
     "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 65536}]}}",
     NULL, NULL},
    IDMAP_CASES("linux.uidMappings",
		"{\"linux\": {\"namespaces\": " NS_WITH_USER ", "
		"\"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000000, \"size\": 65536}], "
		"\"uidMappings\": ",
		"}}", "linux|uidMappings"),
    IDMAP_CASES("linux.gidMappings",
		"{\"linux\": {\"namespaces\": " NS_WITH_USER ", "
		"\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000000, \"size\": 65536}], "
		"\"gidMappings\": ",
		"}}", "linux|gidMappings"),
    {"linux.timeOffsets.monotonic.secs",
     "{\"linux\": {" TIME_NS "\"timeOffsets\": {\"monotonic\": {\"secs\": -31536000}}}}", NULL,
     NULL},
    {"linux.timeOffsets.monotonic.nanosecs",
     "{\"linux\": {" TIME_NS "\"timeOffsets\": {\"monotonic\": {\"nanosecs\": 999999999}}}}", NULL,
     NULL},
    {"linux.timeOffsets.boottime.secs",
     "{\"linux\": {" TIME_NS "\"timeOffsets\": {\"boottime\": {\"secs\": 31536000}}}}", NULL, NULL},
    {"linux.timeOffsets.boottime.nanosecs",
     "{\"linux\": {" TIME_NS "\"timeOffsets\": {\"boottime\": {\"nanosecs\": 1}}}}", NULL, NULL},
    {"linux.devices[].type",
     "{\"linux\": {\"devices\": [{\"type\": \"b\", \"path\": \"/dev/fuse\", \"major\": 10, "
     "\"minor\": 229}]}}",
     NULL, NULL},
    {"linux.devices[].path",
     "{\"linux\": {\"devices\": [{\"type\": \"c\", \"path\": \"/dev/mem\", \"major\": 1, "
     "\"minor\": 1}]}}",
     NULL, NULL},
    {"linux.devices[].major",
     "{\"linux\": {\"devices\": [{\"type\": \"c\", \"path\": \"/dev/fuse\", \"major\": 1, "
     "\"minor\": 229}]}}",
     NULL, NULL},
    {"linux.devices[].minor",
     "{\"linux\": {\"devices\": [{\"type\": \"c\", \"path\": \"/dev/fuse\", \"major\": 10, "
     "\"minor\": 1}]}}",
     NULL, NULL},
    {"linux.devices[].fileMode",
     "{\"linux\": {\"devices\": [{\"type\": \"c\", \"path\": \"/dev/fuse\", \"major\": 10, "
     "\"minor\": 229, \"fileMode\": 4095}]}}",
     NULL, NULL},
    {"linux.devices[].uid",
     "{\"linux\": {\"devices\": [{\"type\": \"c\", \"path\": \"/dev/fuse\", \"major\": 10, "
     "\"minor\": 229, \"uid\": 0}]}}",
     NULL, NULL},
    {"linux.devices[].gid",
     "{\"linux\": {\"devices\": [{\"type\": \"c\", \"path\": \"/dev/fuse\", \"major\": 10, "
     "\"minor\": 229, \"gid\": 0}]}}",
     NULL, NULL},
    {"linux.netDevices", "{\"linux\": {\"netDevices\": {\"eth0\": {\"name\": \"evil0\"}}}}", NULL,
     NULL},
    {"linux.cgroupsPath", "{\"linux\": {\"cgroupsPath\": \"/ward/b/c\"}}", NULL, NULL},
    {"linux.cgroupsPath", "{\"linux\": {\"cgroupsPath\": \"/x:y\"}}", NULL,
     "cgroup: the ':' form is confined by wip/policy's cgroupsPath rule"},
    {"linux.sysctl.*", "{\"linux\": {\"sysctl\": {\"kernel.core_pattern\": \"|/tmp/evil\"}}}",
     "linux|sysctl|kernel.core_pattern", NULL},
    {"linux.seccomp.defaultAction", SC(""), NULL, NULL},
    {"linux.seccomp.defaultErrnoRet",
     "{\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": "
     "0}}}",
     NULL, NULL},
    {"linux.seccomp.architectures",
     "{\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": "
     "[\"SCMP_ARCH_X86\"]}}}",
     NULL, NULL},
    {"linux.seccomp.flags",
     "{\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": "
     "[\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"]}}}",
     NULL, NULL},
    {"linux.seccomp.listenerPath",
     "{\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_NOTIFY\", \"listenerPath\": "
     "\"/run/evil.sock\"}}}",
     NULL, NULL},
    {"linux.seccomp.listenerMetadata",
     "{\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerMetadata\": "
     "\"evil\"}}}",
     NULL, NULL},
    {"linux.seccomp.syscalls[].names", SC(""), NULL, NULL},
    {"linux.seccomp.syscalls[].action", SC(""), NULL, NULL},
    {"linux.seccomp.syscalls[].errnoRet", SC(", \"errnoRet\": 0"), NULL, NULL},
    {"linux.seccomp.syscalls[].args[].index",
     SC(", \"args\": [{\"index\": 5, \"value\": 0, \"op\": \"SCMP_CMP_GE\"}]"), NULL, NULL},
    {"linux.seccomp.syscalls[].args[].value",
     SC(", \"args\": [{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_GE\"}]"), NULL, NULL},
    {"linux.seccomp.syscalls[].args[].valueTwo",
     SC(", \"args\": [{\"index\": 0, \"value\": 0, \"valueTwo\": 0, \"op\": "
	"\"SCMP_CMP_MASKED_EQ\"}]"),
     NULL, NULL},
    {"linux.seccomp.syscalls[].args[].op",
     SC(", \"args\": [{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_GE\"}]"), NULL, NULL},
    {"linux.rootfsPropagation", "{\"linux\": {\"rootfsPropagation\": \"rshared\"}}", NULL, NULL},
    {"linux.maskedPaths", "{\"linux\": {\"maskedPaths\": []}}", NULL, NULL},
    {"linux.readonlyPaths", "{\"linux\": {\"readonlyPaths\": []}}", NULL, NULL},
    {"linux.mountLabel", "{\"linux\": {\"mountLabel\": \"system_u:object_r:evil_t:s0\"}}", NULL,
     NULL},
    {"linux.intelRdt", "{\"linux\": {\"intelRdt\": {\"closID\": \"guaranteed\"}}}", NULL, NULL},
    {"linux.memoryPolicy",
     "{\"linux\": {\"memoryPolicy\": {\"mode\": \"MPOL_BIND\", \"nodes\": \"0\"}}}", NULL, NULL},
    {"linux.personality.domain", "{\"linux\": {\"personality\": {\"domain\": \"SVR4\"}}}", NULL,
     NULL},
    {"linux.personality.flags",
     "{\"linux\": {\"personality\": {\"domain\": \"LINUX\", \"flags\": "
     "[\"ADDR_NO_RANDOMIZE\"]}}}",
     NULL, NULL},
    /* linux.resources */
    {"linux.resources.memory.limit", RES("{\"memory\": {\"limit\": 9223372036854775807}}"), NULL,
     NULL},
    {"linux.resources.memory.reservation", RES("{\"memory\": {\"reservation\": 1}}"), NULL, NULL},
    {"linux.resources.memory.swap", RES("{\"memory\": {\"swap\": -1}}"), NULL, NULL},
    {"linux.resources.memory.kernel", RES("{\"memory\": {\"kernel\": -1}}"), NULL, NULL},
    {"linux.resources.memory.kernelTCP", RES("{\"memory\": {\"kernelTCP\": -1}}"), NULL, NULL},
    {"linux.resources.memory.swappiness", RES("{\"memory\": {\"swappiness\": 100}}"), NULL, NULL},
    {"linux.resources.memory.disableOOMKiller", RES("{\"memory\": {\"disableOOMKiller\": true}}"),
     NULL, NULL},
    {"linux.resources.memory.useHierarchy", RES("{\"memory\": {\"useHierarchy\": false}}"), NULL,
     NULL},
    {"linux.resources.memory.checkBeforeUpdate",
     RES("{\"memory\": {\"checkBeforeUpdate\": false}}"), NULL, NULL},
    {"linux.resources.cpu.shares", RES("{\"cpu\": {\"shares\": 262144}}"), NULL, NULL},
    {"linux.resources.cpu.quota", RES("{\"cpu\": {\"quota\": -1}}"), NULL, NULL},
    {"linux.resources.cpu.burst", RES("{\"cpu\": {\"burst\": 1000000000}}"), NULL, NULL},
    {"linux.resources.cpu.period", RES("{\"cpu\": {\"period\": 1000000}}"), NULL, NULL},
    {"linux.resources.cpu.realtimeRuntime", RES("{\"cpu\": {\"realtimeRuntime\": 950000}}"), NULL,
     NULL},
    {"linux.resources.cpu.realtimePeriod", RES("{\"cpu\": {\"realtimePeriod\": 1000000}}"), NULL,
     NULL},
    {"linux.resources.cpu.cpus", RES("{\"cpu\": {\"cpus\": \"0-1023\"}}"), NULL, NULL},
    {"linux.resources.cpu.mems", RES("{\"cpu\": {\"mems\": \"0-63\"}}"), NULL, NULL},
    {"linux.resources.cpu.idle", RES("{\"cpu\": {\"idle\": 0}}"), NULL, NULL},
    {"linux.resources.pids.limit", RES("{\"pids\": {\"limit\": -1}}"), NULL, NULL},
    {"linux.resources.blockIO.weight", RES("{\"blockIO\": {\"weight\": 1000}}"), NULL, NULL},
    {"linux.resources.blockIO.leafWeight", RES("{\"blockIO\": {\"leafWeight\": 1000}}"), NULL,
     NULL},
#define DEV_ROWS(list, extra)                                                                      \
	{"linux.resources.blockIO." list "[].major",                                               \
	 RES("{\"blockIO\": {\"" list "\": [{\"major\": 8, \"minor\": 0" extra "}]}}"), NULL,      \
	 NULL},                                                                                    \
	{                                                                                          \
		"linux.resources.blockIO." list "[].minor",                                        \
		    RES("{\"blockIO\": {\"" list "\": [{\"major\": 8, \"minor\": 0" extra "}]}}"), \
		    NULL, NULL                                                                     \
	}
    DEV_ROWS("weightDevice", ", \"weight\": 1000"),
    {"linux.resources.blockIO.weightDevice[].weight",
     RES("{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 0, \"weight\": 1000}]}}"),
     NULL, NULL},
    {"linux.resources.blockIO.weightDevice[].leafWeight",
     RES("{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 0, \"leafWeight\": "
	 "1000}]}}"),
     NULL, NULL},
    DEV_ROWS("throttleReadBpsDevice", ", \"rate\": 1"),
    {"linux.resources.blockIO.throttleReadBpsDevice[].rate",
     RES("{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": "
	 "1}]}}"),
     NULL, NULL},
    DEV_ROWS("throttleWriteBpsDevice", ", \"rate\": 1"),
    {"linux.resources.blockIO.throttleWriteBpsDevice[].rate",
     RES("{\"blockIO\": {\"throttleWriteBpsDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": "
	 "1}]}}"),
     NULL, NULL},
    DEV_ROWS("throttleReadIOPSDevice", ", \"rate\": 1"),
    {"linux.resources.blockIO.throttleReadIOPSDevice[].rate",
     RES("{\"blockIO\": {\"throttleReadIOPSDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": "
	 "1}]}}"),
     NULL, NULL},
    DEV_ROWS("throttleWriteIOPSDevice", ", \"rate\": 1"),
    {"linux.resources.blockIO.throttleWriteIOPSDevice[].rate",
     RES("{\"blockIO\": {\"throttleWriteIOPSDevice\": [{\"major\": 8, \"minor\": 0, \"rate\": "
	 "1}]}}"),
     NULL, NULL},
    {"linux.resources.hugepageLimits[].pageSize",
     RES("{\"hugepageLimits\": [{\"pageSize\": \"1GB\", \"limit\": 9223372036854775807}]}"), NULL,
     NULL},
    {"linux.resources.hugepageLimits[].limit",
     RES("{\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 9223372036854775807}]}"), NULL,
     NULL},
    {"linux.resources.network", RES("{\"network\": {\"classID\": 1048577}}"), NULL, NULL},
    {"linux.resources.network",
     RES("{\"network\": {\"priorities\": [{\"name\": \"eth0\", \"priority\": 1000}]}}"), NULL,
     NULL},
    {"linux.resources.rdma.*", RES("{\"rdma\": {\"mlx5_0\": {}}}"), "linux|resources|rdma|mlx5_0",
     NULL},
    {"linux.resources.rdma.*.hcaHandles", RES("{\"rdma\": {\"mlx5_0\": {\"hcaHandles\": 0}}}"),
     "linux|resources|rdma|mlx5_0|hcaHandles", NULL},
    {"linux.resources.rdma.*.hcaObjects", RES("{\"rdma\": {\"mlx5_0\": {\"hcaObjects\": 0}}}"),
     "linux|resources|rdma|mlx5_0|hcaObjects", NULL},
    {"linux.resources.unified.*", RES("{\"unified\": {\"cgroup.procs\": \"1\"}}"),
     "linux|resources|unified|cgroup.procs", NULL},
    {"linux.resources.devices[].allow",
     RES("{\"devices\": [{\"allow\": true, \"access\": \"rwm\"}]}"), NULL, NULL},
    {"linux.resources.devices[].type",
     RES("{\"devices\": [{\"allow\": true, \"type\": \"a\", \"access\": \"rwm\"}]}"), NULL, NULL},
    {"linux.resources.devices[].major",
     RES("{\"devices\": [{\"allow\": true, \"type\": \"b\", \"major\": 8, \"access\": "
	 "\"rwm\"}]}"),
     NULL, NULL},
    {"linux.resources.devices[].minor",
     RES("{\"devices\": [{\"allow\": true, \"type\": \"b\", \"major\": 8, \"minor\": 0, "
	 "\"access\": \"rwm\"}]}"),
     NULL, NULL},
    {"linux.resources.devices[].access",
     RES("{\"devices\": [{\"allow\": false, \"access\": \"m\"}]}"), NULL, NULL},
    /* other platforms */
    {"windows", "{\"windows\": {\"layerFolders\": [\"C:\\\\evil\"]}}", NULL, NULL},
    {"solaris", "{\"solaris\": {\"milestone\": \"evil\"}}", NULL, NULL},
    {"vm", "{\"vm\": {\"hypervisor\": {\"path\": \"/tmp/evil\"}}}", NULL, NULL},
    {"zos", "{\"zos\": {\"namespaces\": [{\"type\": \"pid\"}]}}", NULL, NULL},
    {"freebsd", "{\"freebsd\": {\"jail\": {\"host\": \"inherit\"}}}", NULL, NULL},
};

/* ---- (a) the hostile cases ---- */

static void check_case(const struct hostile *h)
{
	const struct ward_policy_field *f = ward_policy_field_find(h->path);
	char loc[512], shown[512], name[700], *got_loc;
	struct ward_err err;
	json_t *pod, *e, *want, *got;
	bool ok;

	if (!f) {
		snprintf(name, sizeof(name), "%s: has a table entry", h->path);
		CHECK(false, name);
		return;
	}
	if (h->loc)
		snprintf(loc, sizeof(loc), "%s", h->loc);
	else
		loc_of(h->path, loc, sizeof(loc));
	got_loc = strchr(loc, '>');
	if (got_loc)
		*got_loc++ = '\0';
	pod = pod_with(h->fragment);
	want = at(pod, loc, shown, sizeof(shown));
	e = apply(pod, &err);
	got = e ? at(e, got_loc ? got_loc : loc, NULL, 0) : NULL;
	switch (f->decision) {
	case WARD_FIELD_REFUSED:
		ok = !e && strstr(err.msg, shown) && strstr(err.msg, "tenant \"a\"");
		snprintf(name, sizeof(name), "refused: %s = %s is refused, naming %s", h->path,
			 h->fragment, shown);
		break;
	case WARD_FIELD_KEPT:
		/* the serializer leaves out a false boolean: the same value */
		ok = e && want && (got ? json_equal(want, got) : json_is_false(want));
		snprintf(name, sizeof(name), "kept: %s (%s) comes out as written", h->path,
			 h->fragment);
		break;
	default:
		ok = !e || !got || !json_equal(want, got);
		snprintf(name, sizeof(name), "%s: %s = %s is refused or changed",
			 ward_policy_decision_name(f->decision), h->path, h->fragment);
		break;
	}
	if (h->pending && !ok) {
		tap_n++;
		printf("ok %d - %s # skip pending (%s)\n", tap_n, name, h->pending);
		if (!e)
			printf("#   refused: %s\n", err.msg);
		fflush(stdout);
		json_decref(pod);
		json_decref(e);
		return;
	}
	CHECK(ok, name);
	if (!ok || !e) /* a refusal says which rule refused it */
		printf("#   %s\n", e ? "the policy accepted it" : err.msg);
	json_decref(pod);
	json_decref(e);
}

/* ---- (b) every entry has a hostile case ---- */

static bool has_descendants(const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < ward_policy_n_fields; i++) {
		const char *p = ward_policy_fields[i].path;
		if (!strncmp(p, path, n) && (p[n] == '.' || p[n] == '['))
			return true;
	}
	return false;
}

static void test_coverage(void)
{
	size_t missing = 0;

	for (size_t i = 0; i < ward_policy_n_fields; i++) {
		const char *p = ward_policy_fields[i].path;
		size_t n = strlen(p);
		bool covered = false;
		for (size_t k = 0; k < ARRAY_SIZE(hostile) && !covered; k++) {
			const char *h = hostile[k].path;
			/* an object or array is covered by the cases of its members */
			covered = !strcmp(h, p) || (has_descendants(p) && !strncmp(h, p, n) &&
						    (h[n] == '.' || h[n] == '['));
		}
		if (!covered) {
			printf("#   no hostile case for %s\n", p);
			missing++;
		}
		/* every entry has a rule and a reason */
		if (!ward_policy_fields[i].rule || !*ward_policy_fields[i].rule ||
		    !ward_policy_fields[i].reason || !*ward_policy_fields[i].reason) {
			printf("#   %s: no rule or reason\n", p);
			missing++;
		}
		for (size_t k = 0; k < i; k++)
			if (!strcmp(ward_policy_fields[k].path, p)) {
				printf("#   %s: twice in the table\n", p);
				missing++;
			}
	}
	CHECK(missing == 0, "every entry of the policy table has a hostile case, a rule, a reason");
}

/* ---- (c) every field the spec parser decodes has a decision ---- */

static void test_parser_fields(void)
{
	size_t missing = 0;

	for (size_t i = 0; ward_spec_fields[i]; i++)
		if (!ward_policy_field_find(ward_spec_fields[i])) {
			printf("#   the spec parser decodes %s; the policy table has no decision\n",
			       ward_spec_fields[i]);
			missing++;
		}
	CHECK(missing == 0, "every field the spec parser decodes has a policy decision");
	missing = 0;
	for (size_t i = 0; ward_cgroup_res_fields[i]; i++)
		if (!ward_policy_field_find(ward_cgroup_res_fields[i])) {
			printf("#   cgroup_res.c decodes %s; the policy table has no decision\n",
			       ward_cgroup_res_fields[i]);
			missing++;
		}
	CHECK(missing == 0,
	      "every linux.resources field cgroup_res.c decodes has a policy decision");
}

/* ---- (d) unknown fields ---- */

static void test_unknown(void)
{
	static const struct {
		const char *fragment, *path;
	} u[] = {
	    {"{\"linux\": {\"fooBar\": 1}}", "linux.fooBar"},
	    {"{\"process\": {\"x\": \"y\"}}", "process.x"},
	    {"{\"mounts\": [{\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", "
	     "\"y\": true}]}",
	     "mounts[0].y"},
	    {"{\"evil\": {}}", "evil"},
	    {"{\"root\": {\"path\": \"rootfs\", \"propagation\": \"shared\"}}", "root.propagation"},
	    {"{\"hooks\": {\"preStart\": [{\"path\": \"/tmp/evil\"}]}}", "hooks.preStart"},
	    {"{\"linux\": {\"resources\": {\"memory\": {\"oomGroup\": true}}}}",
	     "linux.resources.memory.oomGroup"},
	    {"{\"linux\": {\"resources\": {\"misc\": {}}}}", "linux.resources.misc"},
	    {"{\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": "
	     "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, "
	     "\"value\": 0, \"op\": \"SCMP_CMP_EQ\", \"evil\": 1}]}]}}}",
	     "linux.seccomp.syscalls[0].args[0].evil"},
	    {"{\"linux\": {\"sysctl.kernel\": {}}}", "linux.sysctl.kernel"},
	    {"{\"process\": {\"user\": {\"uid\": 0, \"gid\": 0, \"groups\": [0]}}}",
	     "process.user.groups"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(u); i++) {
		struct ward_err err;
		json_t *pod = pod_with(u[i].fragment), *e = apply(pod, &err);
		char name[300], want[300];
		snprintf(name, sizeof(name), "an unknown field %s is refused with its path",
			 u[i].path);
		snprintf(want, sizeof(want),
			 "tenant \"a\": fields: %s: ward's policy has no decision for this field "
			 "(refused for non-trusted tenants)",
			 u[i].path);
		CHECK(!e && !strcmp(err.msg, want), name);
		if (e || strcmp(err.msg, want))
			printf("#   got: %s\n#   want: %s\n", e ? "(accepted)" : err.msg, want);
		json_decref(pod);
		json_decref(e);
	}
	{
		struct ward_err err;
		json_t *pod = pod_with("{\"linux\": {\"fooBar\": null, \"intelRdt\": {}}, "
				       "\"windows\": null}"),
		       *e = apply(pod, &err);
		CHECK(e != NULL, "null fields and an empty refused section read as absent");
		if (!e)
			printf("#   %s\n", err.msg);
		json_decref(pod);
		json_decref(e);
	}
}

/* ---- what containerd's CRI writes must pass for the default tenant ---- */

static void test_cri_specs(void)
{
	static const char *sandbox =
	    "{\"annotations\": {\"io.kubernetes.cri.container-type\": \"sandbox\", "
	    "\"io.kubernetes.cri.sandbox-id\": \"sb1\", \"io.kubernetes.cri.sandbox-name\": "
	    "\"web\", \"io.kubernetes.cri.sandbox-namespace\": \"team-a\", "
	    "\"io.kubernetes.cri.sandbox-uid\": \"u1\", "
	    "\"io.kubernetes.cri.sandbox-log-directory\": \"/var/log/pods/x\"},"
	    " \"root\": {\"path\": \"rootfs\", \"readonly\": true},"
	    " \"process\": {\"user\": {\"uid\": 65535, \"gid\": 65535, \"additionalGids\": "
	    "[65535]}, \"args\": [\"/pause\"], \"env\": [\"PATH=/bin\"], \"cwd\": \"/\", "
	    "\"noNewPrivileges\": true, \"oomScoreAdj\": -998, \"capabilities\": {\"bounding\": "
	    "[\"CAP_CHOWN\", \"CAP_NET_RAW\"], \"effective\": [\"CAP_CHOWN\"], \"permitted\": "
	    "[\"CAP_CHOWN\"]}},"
	    " \"hostname\": \"web\","
	    " \"mounts\": [{\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\", "
	    "\"options\": [\"nosuid\", \"noexec\", \"nodev\"]}, {\"destination\": \"/dev\", "
	    "\"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"nosuid\", "
	    "\"strictatime\", \"mode=755\", \"size=65536k\"]}, {\"destination\": \"/dev/shm\", "
	    "\"type\": \"bind\", \"source\": "
	    "\"/run/containerd/io.containerd.grpc.v1.cri/sandboxes/sb1/shm\", \"options\": "
	    "[\"rbind\", \"ro\"]}],"
	    " \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"ipc\"}, {\"type\": "
	    "\"uts\"}, {\"type\": \"mount\"}, {\"type\": \"network\", \"path\": "
	    "\"/var/run/netns/cni-1\"}], \"cgroupsPath\": \"/k8s.io/sb1\", \"resources\": "
	    "{\"devices\": [{\"allow\": false, \"access\": \"rwm\"}], \"cpu\": {\"shares\": 2}}, "
	    "\"sysctl\": {\"net.ipv4.ip_unprivileged_port_start\": \"0\"}, \"maskedPaths\": "
	    "[\"/proc/acpi\"], \"readonlyPaths\": [\"/proc/sys\"]}}";
	static const char *app =
	    "{\"annotations\": {\"io.kubernetes.cri.container-type\": \"container\", "
	    "\"io.kubernetes.cri.sandbox-id\": \"sb1\", \"io.kubernetes.cri.container-name\": "
	    "\"app\", \"io.kubernetes.cri.image-name\": \"busybox\"},"
	    " \"process\": {\"terminal\": false, \"user\": {\"uid\": 0, \"gid\": 0}, \"args\": "
	    "[\"sh\"], \"cwd\": \"/\", \"apparmorProfile\": \"cri-containerd.apparmor.d\", "
	    "\"oomScoreAdj\": 1000, \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1024, "
	    "\"soft\": 1024}]},"
	    " \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"ipc\", \"path\": "
	    "\"/proc/42/ns/ipc\"}, {\"type\": \"uts\", \"path\": \"/proc/42/ns/uts\"}, {\"type\": "
	    "\"mount\"}, {\"type\": \"network\", \"path\": \"/proc/42/ns/net\"}], "
	    "\"cgroupsPath\": \"/kubepods/burstable/podu1/c2\", \"resources\": {\"devices\": "
	    "[{\"allow\": false, \"access\": \"rwm\"}], \"memory\": {\"limit\": 134217728, "
	    "\"swap\": 134217728}, \"cpu\": {\"shares\": 102, \"quota\": 50000, \"period\": "
	    "100000}, \"pids\": {\"limit\": 1024}, \"hugepageLimits\": [{\"pageSize\": \"2MB\", "
	    "\"limit\": 0}, {\"pageSize\": \"1GB\", \"limit\": 0}], \"unified\": "
	    "{\"memory.high\": \"100663296\", \"memory.oom.group\": \"1\"}}, \"seccomp\": "
	    "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 1, \"architectures\": "
	    "[\"SCMP_ARCH_X86_64\"], \"syscalls\": [{\"names\": [\"read\"], \"action\": "
	    "\"SCMP_ACT_ALLOW\"}, {\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\", "
	    "\"args\": [{\"index\": 0, \"value\": 0, \"valueTwo\": 0, \"op\": "
	    "\"SCMP_CMP_EQ\"}]}]}, \"rootfsPropagation\": \"rslave\", \"maskedPaths\": "
	    "[\"/proc/kcore\"], \"readonlyPaths\": [\"/proc/bus\"]}}";
	const char *specs[] = {sandbox, app};
	const char *names[] = {"a CRI sandbox (pause) spec passes the field check",
			       "a CRI app container spec passes the field check"};

	for (size_t i = 0; i < 2; i++) {
		struct ward_err err;
		json_t *pod = pod_with(specs[i]), *e = apply(pod, &err);
		CHECK(e != NULL, names[i]);
		if (!e)
			printf("#   %s\n", err.msg);
		json_decref(pod);
		json_decref(e);
	}
	{
		struct ward_err err;
		cleanup_free char *text = ward_spec_default_json(false, ward_policy_masked_paths,
								 ward_policy_readonly_paths);
		json_t *def = json_loads(text, 0, NULL), *e;
		e = apply(def, &err);
		CHECK(e != NULL, "`ward spec`'s config.json passes the field check");
		if (!e)
			printf("#   %s\n", err.msg);
		json_decref(def);
		json_decref(e);
	}
}

/* ---- exec --process: the same decisions for the process JSON ---- */

static void test_exec_process(void)
{
	static const struct {
		const char *json, *want; /* want NULL: accepted */
	} c[] = {
	    /* what containerd writes for an exec, with RLIM_INFINITY as Go writes it */
	    {"{\"user\": {\"uid\": 0, \"gid\": 0, \"additionalGids\": [0, 10]}, \"args\": "
	     "[\"sh\"], "
	     "\"env\": [\"PATH=/bin\"], \"cwd\": \"/\", \"terminal\": true, \"consoleSize\": "
	     "{\"height\": 24, \"width\": 80}, \"capabilities\": {\"bounding\": [\"CAP_KILL\"]}, "
	     "\"noNewPrivileges\": true, \"apparmorProfile\": \"x\", \"oomScoreAdj\": 1000, "
	     "\"selinuxLabel\": \"\", \"rlimits\": [{\"type\": \"RLIMIT_MEMLOCK\", \"hard\": "
	     "18446744073709551615, \"soft\": 18446744073709551615}]}",
	     NULL},
	    {"{\"args\": [\"sh\"], \"cwd\": \"/\", \"x\": 1}",
	     "tenant \"a\": fields: process.x: ward's policy has no decision for this field"},
	    {"{\"args\": [\"sh\"], \"cwd\": \"/\", \"scheduler\": {\"policy\": \"SCHED_RR\", "
	     "\"priority\": 1}}",
	     "tenant \"a\": scheduler: process.scheduler.policy: real-time policies"},
	    {"{\"args\": [\"sh\"], \"cwd\": \"/\", \"oomScoreAdj\": -1000}",
	     "tenant \"a\": oomScoreAdj: process.oomScoreAdj: below -998"},
	    {"{\"args\": [\"sh\"], \"cwd\": \"/\", \"ioPriority\": {\"class\": "
	     "\"IOPRIO_CLASS_RT\"}}",
	     "tenant \"a\": ioPriority: process.ioPriority.class"},
	    {"{\"args\": [\"sh\"], \"cwd\": \"/\", \"selinuxLabel\": \"x\"}",
	     "tenant \"a\": selinux: process.selinuxLabel"},
	    {"{\"args\": [\"sh\"], \"cwd\": \"/\", \"args\": [\"x\"]}", "process.json: duplicate"},
	    {"[1]", "process.json: expected a JSON object"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		struct ward_err err = {0};
		int rc = ward_policy_check_process_fields(c[i].json, strlen(c[i].json), "a", &err);
		char name[300];
		snprintf(name, sizeof(name), "exec process %zu: %s", i,
			 c[i].want ? c[i].want : "containerd's exec process is accepted");
		CHECK(c[i].want ? rc < 0 && strstr(err.msg, c[i].want) : rc == 0, name);
		if (rc < 0)
			printf("#   %s\n", err.msg);
	}
}

/* The keys ward_own_take moves into ward's own record (own.h): the pod's values stay as
 * inert annotations, so the table must not say the policy writes them there. */
static void test_inert_annotations(void)
{
	static const char *const keys[] = {WARD_ANN_POD_SECCOMP, WARD_ANN_ROOTFS_IDMAP,
					   WARD_ANN_IDS, WARD_ANN_GPUS};
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		cleanup_free char *path = xasprintf("annotations.%s", keys[i]);
		const struct ward_policy_field *f = ward_policy_field_find(path);
		cleanup_free char *name = xasprintf(
		    "%s: the reason says the pod's value stays an inert annotation", path);
		CHECK(f && strstr(f->reason, "inert annotation") &&
			  !strstr(f->reason, "written by the policy"),
		      name);
	}
}

/* ---- docs/policy.md says what the table says ---- */

/* One markdown row per entry: | `path` | decision | rule | reason | */
static char *markdown_rows(void)
{
	char *out = xstrdup("");
	for (size_t i = 0; i < ward_policy_n_fields; i++) {
		const struct ward_policy_field *f = &ward_policy_fields[i];
		char *row = xasprintf("%s| `%s` | %s | %s | %s |\n", out, f->path,
				      ward_policy_decision_name(f->decision), f->rule, f->reason);
		free(out);
		out = row;
	}
	return out;
}

#define DOC_BEGIN "<!-- fields: generated by build/tests/test_policy_fields --markdown -->\n"
#define DOC_END	  "<!-- end of fields -->\n"

static void test_doc(void)
{
	size_t len = 0;
	struct ward_err err;
	cleanup_free char *rows = markdown_rows();
	cleanup_free char *doc = NULL;
	const char *b, *e;
	int fd = open("docs/policy.md", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		doc = read_all_fd(fd, &len, &err);
		close(fd);
	}
	b = doc ? strstr(doc, DOC_BEGIN) : NULL;
	e = b ? strstr(b, DOC_END) : NULL;
	if (b) {
		b = strchr(b + strlen(DOC_BEGIN), '\n'); /* the header row */
		b = b ? strchr(b + 1, '\n') : NULL;	 /* the separator row */
	}
	CHECK(b && e && (size_t)(e - b - 1) == strlen(rows) && !strncmp(b + 1, rows, strlen(rows)),
	      "docs/policy.md has the table's rows (regenerate with test_policy_fields "
	      "--markdown)");
}

int main(int argc, char **argv)
{
	const char *names[] = {"a"};
	const char *texts[] = {tenant_a};
	struct ward_err err = {0};

	if (argc > 1 && !strcmp(argv[1], "--markdown")) {
		char *rows = markdown_rows();
		printf("%s", DOC_BEGIN);
		printf("| field | decision | rule | what a non-trusted tenant's pod gets |\n");
		printf("|---|---|---|---|\n%s%s", rows, DOC_END);
		free(rows);
		return 0;
	}
	cfg = ward_config_parse(NULL, names, texts, 1, &err);
	CHECK(cfg != NULL, "the test configuration parses");
	if (!cfg) {
		printf("#   %s\n", err.msg);
		TAP_DONE();
	}
	for (size_t i = 0; i < ARRAY_SIZE(hostile); i++)
		check_case(&hostile[i]);
	test_coverage();
	test_parser_fields();
	test_unknown();
	test_cri_specs();
	test_exec_process();
	test_inert_annotations();
	test_doc();
	ward_config_free(cfg);
	TAP_DONE();
}
