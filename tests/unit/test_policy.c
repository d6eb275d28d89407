/* Unit tests: the tenant policy as data in, data out, with a fake host. */
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "config.h"
#include "cstorage.h"
#include "policy.h"
#include "spec.h"
#include "tap.h"
#include "../stubs/policy_host.h"
#include "util.h"

/* ---- a fake host (tests/stubs/policy_host.h) ---- */

static const struct ward_policy_host fake = FAKE_POLICY_HOST_RLIMITS;

static const char *tenant_a =
    "{\"host_paths\": [\"/srv/a\"], \"devices\": [\"/dev/fuse\"], \"host_namespaces\": "
    "[\"network\"], \"rlimits\": {\"RLIMIT_NOFILE\": 4096}}";
static const char *tenant_p = "{\"privileged\": true}";
static const char *tenant_h =
    "{\"hooks\": [\"/usr/libexec/oci/hooks.d/\", \"/usr/bin/nvidia-ctk\"]}";
static struct ward_config *cfg;

static const char *profile = "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": "
			     "[{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\"}]}";
static const char *profile_priv = "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": "
				  "[{\"names\": [\"mount\"], \"action\": \"SCMP_ACT_ERRNO\"}]}";

/* A pod spec like `ward spec` writes, with extra JSON merged over it. */
static json_t *pod(const char *extra)
{
	json_t *o = json_pack(
	    "{s:s,s:{s:s},s:{s:[s],s:s,s:{s:[s,s],s:[s,s],s:[s,s]}},s:{s:[{s:s},{s:s},{s:s},{s:"
	    "s},{s:s}]},s:[{s:s,s:s,s:s}]}",
	    "ociVersion", "1.2.0", "root", "path", "rootfs", "process", "args", "sh", "cwd", "/",
	    "capabilities", "bounding", "CAP_KILL", "CAP_NET_RAW", "effective", "CAP_KILL",
	    "CAP_NET_RAW", "permitted", "CAP_KILL", "CAP_NET_RAW", "linux", "namespaces", "type",
	    "pid", "type", "network", "type", "ipc", "type", "uts", "type", "mount", "mounts",
	    "destination", "/sys", "type", "sysfs", "source", "sysfs");
	if (extra) {
		json_t *x = json_loads(extra, 0, NULL);
		const char *k;
		json_t *v;
		json_object_foreach(x, k, v)
		{
			if (json_is_object(v) && json_is_object(json_object_get(o, k)))
				json_object_update(json_object_get(o, k), v);
			else
				json_object_set(o, k, v);
		}
		json_decref(x);
	}
	return o;
}

static json_t *apply_as(const char *tenant, const char *extra, bool apparmor, char ***notes,
			struct ward_err *err)
{
	struct ward_policy_in in = {FAKE_POLICY_IN(cfg, tenant), .apparmor_enabled = apparmor,
				    .seccomp_json = profile, .seccomp_priv_json = profile_priv,
				    .host = &fake};
	json_t *p = pod(extra), *r;
	r = policy_apply_to_json(&in, p, notes, err);
	json_decref(p);
	return r;
}

static json_t *at(json_t *o, const char *path)
{
	char buf[256], *save, *tok;
	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save))
		o = json_is_array(o) ? json_array_get(o, (size_t)atoi(tok))
				     : json_object_get(o, tok);
	return o;
}

static const char *sv(json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "(none)";
}

static bool arr_has(json_t *a, const char *s)
{
	size_t i;
	json_t *e;
	json_array_foreach(a, i, e) if (json_is_string(e) &&
					!strcmp(json_string_value(e), s)) return true;
	return false;
}

static bool has_ns(json_t *spec, const char *type)
{
	size_t i;
	json_t *e;
	json_array_foreach(
	    at(spec, "linux.namespaces"), i,
	    e) if (!strcmp(json_string_value(json_object_get(e, "type")), type)) return true;
	return false;
}

/* The pod (extra merged over pod()) is refused for tenant; the error says want (NULL: not
 * checked). One CHECK each, named name and "  with the reason". */
static void check_refused(const char *tenant, const char *extra, const char *want, const char *name)
{
	struct ward_err err = {0};
	json_t *e = apply_as(tenant, extra, false, NULL, &err);

	CHECK(!e, name);
	if (want)
		CHECK_STR_CONTAINS(err.msg, want, "  with the reason");
	json_decref(e);
}

/* The tests between these two run with the configuration ward_json (NULL: none) and the
 * tenants names/texts in place of the file's cfg; false (and the file's cfg kept) if it
 * does not parse. */
static struct ward_config *saved_cfg;

static bool config_swap(const char *ward_json, const char **names, const char **texts, size_t n,
			const char *what)
{
	struct ward_err err = {0};
	struct ward_config *c = ward_config_parse(ward_json, names, texts, n, &err);
	char name[200];

	snprintf(name, sizeof(name), "%s: the configuration parses", what);
	CHECK(c != NULL, name);
	if (!c) {
		printf("# %s\n", err.msg);
		return false;
	}
	saved_cfg = cfg;
	cfg = c;
	return true;
}

static void config_restore(void)
{
	ward_config_free(cfg);
	cfg = saved_cfg;
}

/* ---- tests ---- */

static void test_defaults(void)
{
	struct ward_err err = {0};
	char **notes = NULL;
	json_t *e = apply_as("a", NULL, false, &notes, &err);

	CHECK(e != NULL, "a plain pod passes the policy");
	if (!e)
		return;
	CHECK(has_ns(e, "user"), "a user namespace is added");
	CHECK(json_integer_value(at(e, "linux.uidMappings.0.hostID")) == 1000000 &&
		  json_integer_value(at(e, "linux.uidMappings.0.size")) == 65536 &&
		  json_integer_value(at(e, "linux.gidMappings.0.hostID")) == 1000000,
	      "mapped to the pod's range");
	CHECK(has_ns(e, "cgroup"), "a cgroup namespace is added");
	CHECK(!arr_has(at(e, "process.capabilities.bounding"), "CAP_NET_RAW") &&
		  arr_has(at(e, "process.capabilities.bounding"), "CAP_KILL"),
	      "CAP_NET_RAW is dropped, CAP_KILL kept");
	CHECK(json_is_true(at(e, "process.noNewPrivileges")), "noNewPrivileges is forced");
	CHECK(json_integer_value(at(e, "process.rlimits.0.hard")) == 4096 &&
		  json_integer_value(at(e, "process.rlimits.0.soft")) == 1024,
	      "an inherited limit above the tenant's cap is lowered to it (soft kept)");
	CHECK(!strcmp(sv(at(e, "linux.seccomp.defaultAction")), "SCMP_ACT_ERRNO"),
	      "the tenant's seccomp profile is the filter");
	CHECK(arr_has(at(e, "linux.maskedPaths"), "/proc/kcore") &&
		  arr_has(at(e, "linux.maskedPaths"), "/proc/driver") &&
		  arr_has(at(e, "linux.maskedPaths"), "/sys/firmware"),
	      "masked paths include kcore, driver, firmware");
	CHECK(arr_has(at(e, "linux.readonlyPaths"), "/proc/sys") &&
		  arr_has(at(e, "linux.readonlyPaths"), "/proc/sysrq-trigger"),
	      "read-only paths include /proc/sys and sysrq-trigger");
	CHECK(arr_has(at(e, "mounts.0.options"), "ro"), "sysfs becomes read-only");
	CHECK(!strcmp(sv(at(e, "linux.cgroupsPath")), "/ward/a/c1"),
	      "the cgroup is below the tenant's");
	CHECK(!strcmp(sv(json_object_get(at(e, "annotations"), "ward.dev/tenant")), "a"),
	      "the tenant is recorded");
	CHECK(!json_object_get(at(e, "process"), "apparmorProfile"),
	      "no AppArmor profile on a host without AppArmor (optional)");
	{
		bool warned = false;
		for (size_t i = 0; notes && notes[i]; i++)
			warned |= !strncmp(notes[i], "warning: AppArmor", 17);
		CHECK(warned, "and a warning says so");
	}
	CHECK(json_is_false(at(e, "linux.resources.devices.0.allow")),
	      "the device rules deny everything first");
	strv_free(notes);
	json_decref(e);

	e = apply_as("a", NULL, true, NULL, &err);
	CHECK(e && !strcmp(sv(at(e, "process.apparmorProfile")), "ward-default"),
	      "with AppArmor: the tenant's profile");
	json_decref(e);
	e = apply_as("a", "{\"process\": {\"apparmorProfile\": \"unconfined\"}}", true, NULL, &err);
	CHECK(e && !strcmp(sv(at(e, "process.apparmorProfile")), "ward-default"),
	      "a pod's own profile is replaced unless the tenant allows it");
	json_decref(e);
}

static void test_refusals(void)
{
	static const struct {
		const char *extra, *want, *name;
	} cases[] = {
	    {"{\"process\": {\"capabilities\": {\"bounding\": [\"CAP_SYS_MODULE\"]}}}",
	     "capabilities: process.capabilities.bounding: CAP_SYS_MODULE is not allowed",
	     "a capability beyond the tenant's and containerd's defaults"},
	    {"{\"process\": {\"capabilities\": {\"bounding\": [\"CAP_SYS_ADMIN\"]}}}",
	     "privileged: the pod asks for CAP_SYS_ADMIN", "a privileged pod"},
	    {"{\"mounts\": [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"/etc\", "
	     "\"options\": [\"rbind\"]}]}",
	     "host_paths: mounts[0] (/x): source /etc is not under an allowed host path",
	     "a host path outside the allowed prefixes"},
	    {"{\"mounts\": [{\"destination\": \"/x\", \"source\": \"/srv/a/link\", \"options\": "
	     "[\"bind\"]}]}",
	     "source /etc is not under", "a symlink out of an allowed prefix"},
	    {"{\"mounts\": [{\"destination\": \"/x\", \"source\": \"/\", \"options\": "
	     "[\"bind\"]}]}",
	     "binding the host's / is never allowed", "the host's /"},
	    {"{\"mounts\": [{\"destination\": \"/x\", \"source\": \"/proc\", \"options\": "
	     "[\"bind\"]}]}",
	     "is under /proc", "the host's /proc"},
	    {"{\"mounts\": [{\"destination\": \"/x\", \"source\": \"/run/containerd\", "
	     "\"options\": [\"bind\"]}]}",
	     "container runtime", "a runtime's directory"},
	    {"{\"mounts\": [{\"destination\": \"/x\", \"source\": \"/srv/a/disk\", \"options\": "
	     "[\"bind\"]}]}",
	     "devices: mounts[0]", "a device node by bind mount"},
	    {"{\"mounts\": [{\"destination\": \"/x\", \"type\": \"ext4\", \"source\": "
	     "\"/dev/sda1\"}]}",
	     "filesystem type \"ext4\" is not allowed", "a disk filesystem"},
	    {"{\"mounts\": [{\"destination\": \"/proc/sys\", \"source\": \"/srv/a\", \"options\": "
	     "[\"bind\"]}]}",
	     "would cover the container's procfs", "a bind over /proc"},
	    {"{\"mounts\": [{\"destination\": \"/mnt/proc\", \"type\": \"proc\", \"source\": "
	     "\"proc\"}]}",
	     "a proc filesystem is mounted only at /proc", "a second, unmasked procfs"},
	    {"{\"mounts\": [{\"destination\": \"tmp/../proc/sys\", \"source\": \"/srv/a\", "
	     "\"options\": [\"bind\"]}]}",
	     "would cover the container's procfs", "a relative bind over /proc through .."},
	    {"{\"mounts\": [{\"destination\": \"/x/../../sys\", \"source\": \"/srv/a\", "
	     "\"options\": [\"bind\"]}]}",
	     "would cover the container's procfs", "a bind over /sys through .. past /"},
	    {"{\"linux\": {\"devices\": [{\"path\": \"/dev/sda\", \"type\": \"b\", \"major\": 8, "
	     "\"minor\": 0}]}}",
	     "devices: linux.devices[0]: /dev/sda (b 8:0) is not one of the tenant's devices",
	     "a host block device"},
	    {"{\"linux\": {\"devices\": [{\"path\": \"/dev/fuse\", \"type\": \"c\", \"major\": 1, "
	     "\"minor\": 1}]}}",
	     "is c 10:229 on the host", "an allowed device name with other numbers"},
	    {"{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"network\"}, "
	     "{\"type\": \"ipc\"}, {\"type\": \"uts\"}]}}",
	     "host_namespaces: the pod shares the host's pid namespace (hostPID)", "hostPID"},
	    {"{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, {\"type\": "
	     "\"network\"}, {\"type\": \"ipc\", \"path\": \"/proc/1/ns/ipc\"}, {\"type\": "
	     "\"uts\"}]}}",
	     "host's ipc namespace (hostIPC)", "joining the host's ipc namespace by path"},
	    {"{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, {\"type\": "
	     "\"network\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"user\"}], "
	     "\"uidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 65536}], "
	     "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000000, \"size\": 65536}]}}",
	     "ids: linux.uidMappings[0]: host IDs 0-65535 are outside the pod's range",
	     "a mapping of host root"},
	    {"{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, {\"type\": "
	     "\"network\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"user\", "
	     "\"path\": \"/ns/other\"}]}}",
	     "maps host IDs 2000000-2065535, outside the pod's range",
	     "joining another range's user namespace"},
	    {"{\"mounts\": [{\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\": "
	     "\"tmpfs\", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}], "
	     "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000000, \"size\": 1}]}]}",
	     "ids: mounts[0] (/t): uidMappings[0]: host IDs 0-0 are outside the pod's range",
	     "a tmpfs idmapped to host root (mount.c maps any mount with maps)"},
	    {"{\"mounts\": [{\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\": "
	     "\"tmpfs\", \"gidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}]}]}",
	     "ids: mounts[0] (/t): gidMappings[0]: host IDs 0-0 are outside the pod's range",
	     "a tmpfs with only gidMappings to host root"},
	    {"{\"mounts\": [{\"destination\": \"/x\", \"source\": \"/srv/a\", \"options\": "
	     "[\"bind\"], \"uidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}], "
	     "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}]}]}",
	     "ids: mounts[0] (/x): uidMappings[0]: host IDs 0-0 are outside the pod's range",
	     "a bind idmapped to host root"},
	    {"{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, {\"type\": "
	     "\"network\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"user\", "
	     "\"path\": \"/ns/inside\"}], \"uidMappings\": [{\"containerID\": 0, \"hostID\": 0, "
	     "\"size\": 65536}], \"gidMappings\": [{\"containerID\": 0, \"hostID\": 1000000, "
	     "\"size\": 65536}]}}",
	     "ids: linux.uidMappings[0]: host IDs 0-65535 are outside the pod's range",
	     "joining an allowed user namespace with maps of host root (the runtime's chgrp and "
	     "upper-layer owner)"},
	    {"{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, {\"type\": "
	     "\"network\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}, {\"type\": \"user\", "
	     "\"path\": \"/ns/inside\"}], \"gidMappings\": [{\"containerID\": 0, \"hostID\": 0, "
	     "\"size\": 1}]}}",
	     "ids: linux.gidMappings[0]: host IDs 0-0 are outside the pod's range",
	     "joining an allowed user namespace with a gid map of host root"},
	    {"{\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\"}, "
	     "{\"type\": \"ipc\"}, {\"type\": \"uts\"}]}}",
	     "namespaces: linux.namespaces: no mount namespace (the runtime's own, inherited): the "
	     "container's mounts would be made in the host's mount namespace; only a trusted "
	     "tenant may",
	     "no mount namespace"},
	    {"{\"linux\": {\"sysctl\": {\"kernel.core_pattern\": \"|/x\"}}}",
	     "sysctl: linux.sysctl: \"kernel.core_pattern\" is not a sysctl", "a host sysctl"},
	    {"{\"root\": {\"path\": \"/\"}}", "root: root.path / is the host's /",
	     "the host's / as the root filesystem"},
	    {"{\"root\": {\"path\": \"/etc\"}}", "root: root.path /etc is the host's /etc",
	     "a host system directory as the root filesystem"},
	    {"{\"root\": {\"path\": \"/proc/1/root\"}}",
	     "root: root.path /proc/1/root is under /proc", "a root through /proc"},
	    {"{\"annotations\": {\"ward.dev/seccomp\": \"unconfined\"}}",
	     "seccomp: annotation ward.dev/seccomp=unconfined", "asking for no seccomp"},
	};
	struct ward_err err = {0};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[200];
		json_t *e = apply_as("a", cases[i].extra, false, NULL, &err);
		snprintf(name, sizeof(name), "refused: %s", cases[i].name);
		CHECK(!e, name);
		json_decref(e);
		if (!e) {
			snprintf(name, sizeof(name), "  error names tenant and rule: %s",
				 cases[i].name);
			CHECK_STR_CONTAINS(err.msg, cases[i].want, name);
			CHECK(!strncmp(err.msg, "tenant \"a\": ", 12) ||
				  !strncmp(err.msg, "linux.namespaces", 16),
			      "  and starts with the tenant");
		}
	}
}

static void test_allowed(void)
{
	struct ward_err err = {0};
	json_t *e;

	e = apply_as("a",
		     "{\"mounts\": [{\"destination\": \"/data\", \"source\": \"/srv/a/d\", "
		     "\"options\": [\"rbind\"]}, {\"destination\": \"/cfg\", \"source\": \"cfg\", "
		     "\"options\": [\"bind\"]}]}",
		     false, NULL, &err);
	CHECK(e != NULL, "a bind under an allowed prefix and one inside the bundle pass");
	CHECK(e && arr_has(at(e, "mounts.0.options"), "ridmap"), "an rbind is ridmapped");
	CHECK(e && arr_has(at(e, "mounts.1.options"), "idmap") &&
		  !strcmp(sv(at(e, "mounts.1.source")), "/b/cfg"),
	      "a bundle-relative bind is idmapped, its source made absolute");
	json_decref(e);

	e = apply_as("a",
		     "{\"linux\": {\"devices\": [{\"path\": \"/dev/fuse\", \"type\": \"c\", "
		     "\"major\": 10, \"minor\": 229}, {\"path\": \"/dev/null\", \"type\": \"c\", "
		     "\"major\": 1, \"minor\": 3}]}}",
		     false, NULL, &err);
	CHECK(e && json_is_true(at(e, "linux.resources.devices.1.allow")) &&
		  json_integer_value(at(e, "linux.resources.devices.1.major")) == 10,
	      "an allowed device gets an allow rule");
	json_decref(e);

	e = apply_as("a",
		     "{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, "
		     "{\"type\": \"ipc\"}, {\"type\": \"uts\"}], \"sysctl\": "
		     "{\"kernel.shmmax\": \"1000\"}}}",
		     false, NULL, &err);
	CHECK(e != NULL, "hostNetwork passes for a tenant allowing it");
	json_decref(e);
	check_refused("a",
		      "{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, "
		      "{\"type\": \"ipc\"}, {\"type\": \"uts\"}], \"sysctl\": "
		      "{\"net.ipv4.ip_forward\": \"1\"}}}",
		      NULL, "but then net.* sysctls are the host's and refused");

	e = apply_as(
	    "a",
	    "{\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, "
	    "{\"type\": \"network\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"}, {\"type\": "
	    "\"user\", \"path\": \"/ns/inside\"}], \"seccomp\": {\"defaultAction\": "
	    "\"SCMP_ACT_ALLOW\"}}, \"annotations\": {\"ward.dev/rootfs-idmap\": \"no\"}}",
	    false, NULL, &err);
	CHECK(e != NULL, "joining a user namespace inside the pod's range passes");
	CHECK(e && !strcmp(sv(at(e, "ward.podSeccomp.defaultAction")), "SCMP_ACT_ALLOW"),
	      "the pod's own seccomp filter is kept for stacking (ward's record)");
	CHECK(e && !strcmp(sv(at(e, "linux.seccomp.defaultAction")), "SCMP_ACT_ERRNO"),
	      "while linux.seccomp is the tenant's");
	CHECK(e && json_is_true(at(e, "ward.rootfsIdmap")) &&
		  !strcmp(sv(json_object_get(at(e, "annotations"), "ward.dev/rootfs-idmap")), "no"),
	      "a pod cannot write the policy's own record (its annotation stays inert)");
	json_decref(e);
}

static void test_privileged(void)
{
	struct ward_err err = {0};
	json_t *e = apply_as(
	    "p",
	    "{\"process\": {\"capabilities\": {\"bounding\": [\"CAP_SYS_ADMIN\", "
	    "\"CAP_SYS_MODULE\", \"CAP_NET_RAW\"], \"inheritable\": [\"CAP_SYS_ADMIN\"]}}, "
	    "\"linux\": {\"devices\": [{\"path\": \"/dev/sda\", \"type\": \"b\", \"major\": 8, "
	    "\"minor\": 0}], \"resources\": {\"devices\": [{\"allow\": true, \"access\": "
	    "\"rwm\"}]}}}",
	    false, NULL, &err);

	CHECK(e != NULL, "a privileged pod passes for a tenant allowing it");
	if (!e)
		return;
	CHECK(arr_has(at(e, "process.capabilities.bounding"), "CAP_SYS_ADMIN") &&
		  arr_has(at(e, "process.capabilities.bounding"), "CAP_SYS_MODULE"),
	      "it keeps every capability (inside its user namespace)");
	CHECK(json_array_size(at(e, "process.capabilities.inheritable")) == 0,
	      "but no inheritable ones");
	CHECK(has_ns(e, "user"), "it still gets a user namespace");
	CHECK(json_array_size(at(e, "linux.devices")) == 0, "host devices are dropped");
	CHECK(json_is_false(at(e, "linux.resources.devices.0.allow")) &&
		  json_array_size(at(e, "linux.resources.devices")) == 1,
	      "and the allow-all device rule is replaced by deny-all");
	CHECK(!strcmp(sv(at(e, "linux.seccomp.defaultAction")), "SCMP_ACT_ALLOW") &&
		  arr_has(at(e, "linux.seccomp.syscalls.0.names"), "mount"),
	      "it gets the privileged seccomp profile");
	CHECK(arr_has(at(e, "linux.maskedPaths"), "/proc/kcore"), "masks still apply");
	json_decref(e);

	check_refused("p",
		      "{\"process\": {\"capabilities\": {\"bounding\": [\"CAP_SYS_ADMIN\"]}}, "
		      "\"linux\": {\"namespaces\": [{\"type\": \"mount\"}, {\"type\": \"pid\"}, "
		      "{\"type\": \"ipc\"}, {\"type\": \"uts\"}]}}",
		      "privileged pods never share a host namespace",
		      "a privileged pod never shares a host namespace");
}

/* The profile the policy loads is the one the audit names: a pod asking CAP_SYS_ADMIN only in
 * its inheritable or ambient set is privileged (it gets the privileged profile), though the
 * policy clears those sets, so the effective spec no longer shows it. */
static void test_privileged_seccomp_name(void)
{
	static const char *const asks[] = {
	    "{\"process\": {\"capabilities\": {\"inheritable\": [\"CAP_SYS_ADMIN\"]}}}",
	    "{\"process\": {\"capabilities\": {\"inheritable\": [\"CAP_SYS_ADMIN\"], "
	    "\"ambient\": [\"CAP_SYS_ADMIN\"]}}}",
	    NULL};
	static const char *const sets[] = {"bounding", "effective", "inheritable", "permitted",
					   "ambient"};
	const struct ward_tenant *t = ward_config_tenant(cfg, "p");
	struct ward_policy_in in = {FAKE_POLICY_IN(cfg, "p"), .seccomp_json = profile,
				    .seccomp_priv_json = profile_priv, .host = &fake};

	CHECK(strcmp(t->seccomp, t->seccomp_privileged) != 0,
	      "seccomp name: the tenant's two profiles differ");
	for (size_t k = 0; asks[k]; k++) {
		struct ward_err err = {0};
		const char *name = NULL;
		json_t *p = pod(asks[k]), *e;
		struct ward_spec *s = ward_policy_apply_json(&in, p, NULL, &name, &err);
		bool admin = false;

		CHECK(s != NULL, k ? "seccomp name: CAP_SYS_ADMIN only inheritable and ambient"
				   : "seccomp name: CAP_SYS_ADMIN only inheritable");
		if (!s) {
			json_decref(p);
			continue;
		}
		e = ward_spec_to_json(s);
		for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
			char path[64];
			snprintf(path, sizeof(path), "process.capabilities.%s", sets[i]);
			admin |= arr_has(at(e, path), "CAP_SYS_ADMIN");
		}
		CHECK(!admin, "  its effective spec has CAP_SYS_ADMIN in no set (cleared)");
		CHECK(!strcmp(sv(at(e, "linux.seccomp.defaultAction")), "SCMP_ACT_ALLOW"),
		      "  it gets the privileged profile");
		CHECK(name && !strcmp(name, t->seccomp_privileged),
		      "  and the policy names that profile (the audit's), not the tenant's plain "
		      "one");
		json_decref(e);
		ward_spec_free(s);
		json_decref(p);
	}
	{
		struct ward_err err = {0};
		const char *name = NULL;
		json_t *p = pod(NULL);
		struct ward_spec *s = ward_policy_apply_json(&in, p, NULL, &name, &err);
		CHECK(s && name && !strcmp(name, t->seccomp),
		      "seccomp name: a plain pod of the same tenant: the plain profile");
		ward_spec_free(s);
		json_decref(p);
	}
}

/* Clearing the inheritable set drops the ambient one; the note names what was dropped, as
 * JSON writes it compactly (caps_text), and none is written when ambient was empty. */
static void test_ambient_note(void)
{
	static const struct {
		const char *ambient, *names;
	} cases[] = {
	    {"[\"CAP_KILL\"]", "[\"CAP_KILL\"]"},
	    {"[\"CAP_KILL\", \"CAP_NET_RAW\", \"CAP_CHOWN\"]",
	     "[\"CAP_KILL\",\"CAP_NET_RAW\",\"CAP_CHOWN\"]"},
	    {"[]", NULL},
	};
	const char *tail = " dropped: the tenant policy cleared the inheritable set "
			   "(CVE-2022-29162), and a capability is ambient only while it is "
			   "inheritable; grant it through the effective and permitted sets (a "
			   "container root) instead";

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct ward_err err = {0};
		char **notes = NULL;
		char *extra = xasprintf("{\"process\": {\"capabilities\": {\"bounding\": "
					"[\"CAP_KILL\"], \"inheritable\": [\"CAP_KILL\"], "
					"\"ambient\": %s}}}",
					cases[i].ambient);
		char *want = cases[i].names ? xasprintf("warning: process.capabilities.ambient: "
							"%s%s",
							cases[i].names, tail)
					    : NULL;
		char *name = xasprintf("ambient %s: %s", cases[i].ambient,
				       want ? "the note names the set" : "no note");
		json_t *e = apply_as("a", extra, false, &notes, &err);
		bool found = false;

		for (size_t k = 0; notes && notes[k]; k++)
			found |= !strncmp(notes[k], "warning: process.capabilities.ambient", 37) &&
				 (!want || !strcmp(notes[k], want));
		CHECK(e && json_array_size(at(e, "process.capabilities.ambient")) == 0 &&
			  found == (want != NULL),
		      name);
		json_decref(e);
		strv_free(notes);
		free_all(extra, want, name);
	}
}

static void test_apparmor_required(void)
{
	const char *names[] = {"a"}, *texts[] = {"{}"};

	if (!config_swap("{\"apparmor\": \"required\"}", names, texts, 1, "apparmor required"))
		return;
	check_refused("a", NULL, "apparmor: ward.json says AppArmor is required",
		      "apparmor required on a host without AppArmor: refused");
	config_restore();
}

/* ---- a bind source that cannot be idmapped (tmpfs before Linux 6.3) ---- */

/* As the host answers on Linux 6.1: the sources under /srv/a/shm are on a tmpfs */
static int fake_idmappable(void *arg, const char *path)
{
	(void)arg;
	return strncmp(path, "/srv/a/shm", 10) != 0;
}

static bool has_note(char **notes, const char *s);

static void test_unmappable_bind(void)
{
	struct ward_policy_in in = {FAKE_POLICY_IN(cfg, "a"), .seccomp_json = profile,
				    .seccomp_priv_json = profile_priv, .host = &fake,
				    .idmappable = fake_idmappable};
	struct ward_err err = {0};
	char **notes = NULL;
	json_t *p, *e;

	p = pod("{\"mounts\": [{\"destination\": \"/dev/shm\", \"source\": \"/srv/a/shm\", "
		"\"type\": \"bind\", \"options\": [\"rbind\"]}, {\"destination\": \"/data\", "
		"\"source\": \"/srv/a/d\", \"options\": [\"rbind\"]}, {\"destination\": \"/own\", "
		"\"source\": \"/srv/a/shm/x\", \"options\": [\"bind\", \"idmap\"]}]}");
	e = policy_apply_to_json(&in, p, &notes, &err);
	json_decref(p);
	CHECK(e != NULL, "a bind from a tmpfs that cannot be idmapped passes");
	CHECK(e && !arr_has(at(e, "mounts.0.options"), "ridmap") &&
		  !arr_has(at(e, "mounts.0.options"), "idmap"),
	      "  and is not idmapped (idmap_mounts adds nothing the kernel would refuse)");
	CHECK(has_note(notes, "mounts[0] (/dev/shm): not idmapped"), "  with a note saying so");
	CHECK(e && arr_has(at(e, "mounts.1.options"), "ridmap"), "another bind is still ridmapped");
	CHECK(e && arr_has(at(e, "mounts.2.options"), "idmap"),
	      "an idmap the pod asks for stays (create reports what the kernel refuses)");
	json_decref(e);
	strv_free(notes);
}

/* ---- hooks: only the tenant's allow-list ---- */

static bool has_note(char **notes, const char *s)
{
	for (size_t i = 0; notes && notes[i]; i++)
		if (strstr(notes[i], s))
			return true;
	return false;
}

static void test_hooks(void)
{
	static const char *const kinds[] = {"prestart",	      "createRuntime", "createContainer",
					    "startContainer", "poststart",     "poststop"};
	static const struct {
		const char *hooks, *want, *name;
	} refused[] = {
	    {"{\"prestart\": [{\"path\": \"/tmp/evil\"}]}",
	     "hooks: hooks.prestart[0]: /tmp/evil is not in the tenant's hook allow-list "
	     "(tenants.d/h.json \"hooks\")",
	     "a program outside the allow-list"},
	    {"{\"createRuntime\": [{\"path\": \"/usr/libexec/oci/hooks.d/sub/x\"}]}",
	     "hooks.createRuntime[0]: /usr/libexec/oci/hooks.d/sub/x is not in the tenant's",
	     "a program below, not directly in, an allowed directory"},
	    {"{\"poststop\": [{\"path\": \"/usr/libexec/oci/hooks.d/../../../tmp/x\"}]}",
	     "is not an absolute path without \".\", \"..\" or empty components",
	     "an allowed directory with .."},
	    {"{\"poststart\": [{\"path\": \"usr/bin/nvidia-ctk\"}]}",
	     "hooks.poststart[0]: usr/bin/nvidia-ctk is not an absolute path", "a relative path"},
	    {"{\"prestart\": [{\"path\": \"/usr/libexec/oci/hooks.d/\"}]}",
	     "is not an absolute path without", "the directory itself"},
	    {"{\"prestart\": [{\"path\": \"/usr/bin/nvidia-ctk\", \"env\": [\"A=1\", "
	     "\"LD_PRELOAD=/b/rootfs/x.so\"]}]}",
	     "hooks.prestart[0] (/usr/bin/nvidia-ctk): env[1]: LD_PRELOAD is not passed",
	     "an allowed hook with LD_PRELOAD"},
	    {"{\"prestart\": [{\"path\": \"/usr/bin/nvidia-ctk\", \"env\": "
	     "[\"GLIBC_TUNABLES=x\"]}]}",
	     "env[0]: GLIBC_TUNABLES is not passed", "an allowed hook with GLIBC_TUNABLES"},
	};
	struct ward_err err = {0};
	char **notes = NULL;
	char extra[256], name[160];
	json_t *e;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		snprintf(extra, sizeof(extra), "{\"hooks\": {\"%s\": [{\"path\": \"/tmp/evil\"}]}}",
			 kinds[k]);
		e = apply_as("a", extra, false, NULL, &err);
		snprintf(name, sizeof(name), "a tenant without \"hooks\" refuses a %s hook",
			 kinds[k]);
		CHECK(!e, name);
		json_decref(e);
		snprintf(extra, sizeof(extra),
			 "tenant \"a\": hooks: hooks.%s[0]: /tmp/evil is not in the tenant's hook "
			 "allow-list (tenants.d/a.json \"hooks\")",
			 kinds[k]);
		CHECK_STR_CONTAINS(err.msg, extra, "  naming the tenant, the rule and the hook");
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(extra, sizeof(extra), "{\"hooks\": %s}", refused[i].hooks);
		e = apply_as("h", extra, false, NULL, &err);
		snprintf(name, sizeof(name), "refused: %s", refused[i].name);
		CHECK(!e, name);
		json_decref(e);
		CHECK_STR_CONTAINS(err.msg, refused[i].want, "  with the reason");
		CHECK(!strncmp(err.msg, "tenant \"h\": hooks: ", 19), "  the tenant and the rule");
	}
	/* An unknown hook kind is caught first by the every-field table (policy_fields.c). */
	e = apply_as("h", "{\"hooks\": {\"preStart\": [{\"path\": \"/usr/bin/nvidia-ctk\"}]}}",
		     false, NULL, &err);
	CHECK(!e, "refused: an unknown hook kind");
	json_decref(e);
	CHECK_STR_CONTAINS(err.msg, "tenant \"h\": fields: hooks.preStart:", "  naming the field");
	e = apply_as("h",
		     "{\"hooks\": {\"createContainer\": [{\"path\": \"/usr/bin/nvidia-ctk\", "
		     "\"args\": [\"nvidia-ctk\", \"hook\"]}], \"poststop\": [{\"path\": "
		     "\"/usr/libexec/oci/hooks.d/nri\"}]}}",
		     false, &notes, &err);
	CHECK(e != NULL, "allow-listed hooks (a file, a program in a directory) pass");
	CHECK(e && !strcmp(sv(at(e, "hooks.createContainer.0.path")), "/usr/bin/nvidia-ctk") &&
		  !strcmp(sv(at(e, "hooks.poststop.0.path")), "/usr/libexec/oci/hooks.d/nri"),
	      "and are kept first, in their place");
	CHECK(e && json_array_size(at(e, "hooks.poststop")) == 1,
	      "and nothing after them: ward writes the audit lines itself, no audit hook");
	CHECK(has_note(notes, "hooks.createContainer[0]: /usr/bin/nvidia-ctk kept (in the "
			      "tenant's hook allow-list)") &&
		  has_note(notes, "hooks.poststop[0]: /usr/libexec/oci/hooks.d/nri kept"),
	      "policy explain's notes list each kept hook");
	strv_free(notes);
	json_decref(e);
	e = apply_as("a", NULL, false, NULL, &err);
	CHECK(e && !at(e, "hooks.createRuntime") && !at(e, "hooks.poststart") &&
		  !at(e, "hooks.poststop"),
	      "a pod without hooks gets none (no audit hook process per container)");
	json_decref(e);
}

/* ---- cgroupsPath: always below /ward/<tenant>/ ---- */

static void test_cgroups_path(void)
{
	static const struct {
		const char *in, *want;
	} systemd[] = {
	    {"kubepods-besteffort-pod1234.slice:cri-containerd:abc",
	     "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234.slice/"
	     "cri-containerd-abc.scope"},
	    {"kubepods.slice:cri-containerd:abc", "kubepods.slice/cri-containerd-abc.scope"},
	    {"-.slice:docker:abc", "docker-abc.scope"},
	    {"a:b", NULL},
	    {"a.slice:b:c:d", NULL},
	    {"a.slic:p:n", NULL},
	    {".slice:p:n", NULL},
	    {"a--b.slice:p:n", NULL},
	    {"-a.slice:p:n", NULL},
	    {"a-.slice:p:n", NULL},
	    {"a.slice::n", NULL},
	    {"a.slice:p:", NULL},
	    {"a/b.slice:p:n", NULL},
	    {"a.slice:p:../n", NULL},
	    {"a.slice:p/q:n", NULL},
	};
	static const struct {
		const char *in, *want;
	} policy[] = {
	    {"/x:y", "linux.cgroupsPath \"/x:y\": ':' is allowed only in systemd's"},
	    {"../../x", "component \"..\" would leave the directory it names"},
	    {"a/../../b", "component \"..\" would leave"},
	    {"/ward/a/../b/c", "component \"..\" would leave"},
	    {"a//b", "component \"\" is empty"},
	    {"./a", "component \".\" would leave"},
	    {"a/", "component \"\" is empty"},
	    {"a:b", "linux.cgroupsPath \"a:b\": expected systemd's slice:prefix:name form"},
	    {"a-.slice:p:n", "slice \"a-.slice\": empty name between '-'"},
	    {"a\tb", "has a control character"},
	    {"/ward/othertenant/c", "=/ward/a/ward/othertenant/c"},
	    {"/kubepods/besteffort/pod1/c1", "=/ward/a/kubepods/besteffort/pod1/c1"},
	    {"kubepods/pod1/c1", "=/ward/a/kubepods/pod1/c1"},
	    {"", "=/ward/a/c1"},
	    {"/", "=/ward/a/c1"},
	    {"kubepods-besteffort-pod1.slice:cri-containerd:abc",
	     "=/ward/a/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/"
	     "cri-containerd-abc.scope"},
	};
	struct ward_err err = {0};
	char name[300];

	for (size_t i = 0; i < sizeof(systemd) / sizeof(systemd[0]); i++) {
		char *got = ward_cgroup_systemd_path(systemd[i].in, &err);
		snprintf(name, sizeof(name), "systemd %s -> %s", systemd[i].in,
			 systemd[i].want ? systemd[i].want : "refused");
		CHECK(systemd[i].want ? got && !strcmp(got, systemd[i].want) : !got, name);
		free(got);
	}
	for (size_t i = 0; i < sizeof(policy) / sizeof(policy[0]); i++) {
		json_t *x = json_pack("{s:{s:s}}", "linux", "cgroupsPath", policy[i].in);
		char *extra = json_dumps(x, JSON_COMPACT);
		json_t *e = apply_as("a", extra, false, NULL, &err);
		const char *want = policy[i].want;

		snprintf(name, sizeof(name), "cgroupsPath \"%s\": %s", policy[i].in,
			 want[0] == '=' ? want + 1 : "refused");
		if (want[0] == '=') {
			CHECK(e && !strcmp(sv(at(e, "linux.cgroupsPath")), want + 1), name);
		} else {
			CHECK(!e, name);
			CHECK_STR_CONTAINS(err.msg, want, "  with the reason");
			CHECK(!strncmp(err.msg, "tenant \"a\": cgroup: ", 20),
			      "  the tenant and the rule");
		}
		json_decref(e);
		json_decref(x);
		free(extra);
	}
}

/* A mount that stays a peer of the host's (shared, rshared) is refused: the pod's own mounts
 * would propagate to the host. rslave is fine. */
static void test_shared_propagation(void)
{
	struct ward_err err = {0};
	json_t *e;

	check_refused("a",
		      "{\"mounts\": [{\"destination\": \"/v\", \"type\": \"bind\", \"source\": "
		      "\"/b/vol\", \"options\": [\"rbind\", \"rshared\"]}]}",
		      "tenant \"a\": mounts: mounts[0] (/v): shared propagation (\"rshared\")",
		      "mounts: an rshared bind is refused");
	check_refused("a",
		      "{\"mounts\": [{\"destination\": \"/t\", \"type\": \"tmpfs\", \"source\": "
		      "\"tmpfs\", \"options\": [\"shared\"]}]}",
		      NULL, "mounts: a shared tmpfs is refused");
	e = apply_as("a",
		     "{\"mounts\": [{\"destination\": \"/v\", \"type\": \"bind\", \"source\": "
		     "\"/b/vol\", \"options\": [\"rbind\", \"rslave\"]}]}",
		     false, NULL, &err);
	CHECK(e != NULL, "mounts: an rslave bind passes");
	json_decref(e);
}

/* root.path: inside the bundle, or under the tenant's root_paths; what counts is what the
 * path resolves to (the held fd's real path, here fake_resolve's answer). */
static void test_root_paths(void)
{
	const char *names[] = {"a", "r"},
		   *texts[] = {"{}", "{\"root_paths\": [\"/var/lib/containers/storage\"]}"};
	struct ward_err err = {0};
	json_t *e;

	if (!config_swap(NULL, names, texts, 2, "root_paths"))
		return;
	check_refused(
	    "a", "{\"root\": {\"path\": \"/etc/cron.d\"}}",
	    "tenant \"a\": root_paths: root.path /etc/cron.d is /etc/cron.d, which is neither "
	    "inside the bundle (/b)",
	    "root_paths: a host directory outside the bundle is refused");
	check_refused("a", "{\"root\": {\"path\": \"/srv/a/link\"}}",
		      "root.path /srv/a/link is the host's /etc",
		      "root_paths: judged by what the path resolves to");
	e = apply_as("a", "{\"root\": {\"path\": \"/b/rootfs\"}}", false, NULL, &err);
	CHECK(e != NULL, "root_paths: the bundle's rootfs passes");
	json_decref(e);
	e = apply_as("r", "{\"root\": {\"path\": \"/var/lib/containers/storage/vfs/x\"}}", false,
		     NULL, &err);
	CHECK(e != NULL, "root_paths: a root under the tenant's root_paths passes");
	json_decref(e);
	check_refused(
	    "r", "{\"root\": {\"path\": \"/var/lib/containers/storage/overlay/x/merged\"}}",
	    "tenant \"r\": root_paths: root.path /var/lib/containers/storage/overlay/x/merged is "
	    "/var/lib/containers/storage/overlay/x/merged, in containers/storage "
	    "(/var/lib/containers/storage) but not the merged dir of container c1's own layer "
	    "(l1)",
	    "root_paths: another container's overlay in containers/storage is refused, though "
	    "under the tenant's root_paths");
	check_refused("r", "{\"root\": {\"path\": \"/var/lib/containersX/y\"}}", NULL,
		      "root_paths: a prefix matches whole components only");
	config_restore();
}

/* containers/storage (podman, CRI-O): the container's own layer's merged dir is its root
 * without root_paths; another's, an image layer's diff, the l/ links and the overlay dir
 * itself are refused; an unreadable containers.json is an error, not a pass. */
static void test_storage_root(void)
{
	const char *names[] = {"a"}, *texts[] = {"{}"};
	const char *refused[] = {"/p/root/overlay/l2/merged", "/p/root/overlay/l1/diff",
				 "/p/root/overlay/l/ABC", "/p/root/overlay",
				 "/p/root/overlay/l1/merged/etc"};
	struct ward_err err = {0};
	json_t *e;
	char *x;

	if (!config_swap("{\"containers_storage\": {\"root\": \"/p/root\", \"runroot\": "
			 "\"/p/run\"}}",
			 names, texts, 1, "storage"))
		return;
	e = apply_as("a", "{\"root\": {\"path\": \"/p/root/overlay/l1/merged\"}}", false, NULL,
		     &err);
	CHECK(e != NULL, "storage: the container's own layer's merged dir is its root");
	CHECK(e && !strcmp(json_string_value(at(e, "root.path")), "/p/root/overlay/l1/merged"),
	      "  kept as it is");
	json_decref(e);
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		x = xasprintf("{\"root\": {\"path\": \"%s\"}}", refused[i]);
		err = (struct ward_err){0};
		e = apply_as("a", x, false, NULL, &err);
		free(x);
		x = xasprintf("storage: root.path %s is refused", refused[i]);
		CHECK(!e, x);
		CHECK_STR_CONTAINS(err.msg,
				   "tenant \"a\": root_paths:", "  naming tenant and rule");
		CHECK_STR_CONTAINS(err.msg, "not the merged dir of container c1's own layer (l1)",
				   "  and the container's own layer");
		json_decref(e);
		free(x);
	}
	config_restore();
	if (!config_swap("{\"containers_storage\": {\"root\": \"/p/broken\"}}", names, texts, 1,
			 "storage, a second"))
		return;
	check_refused("a", "{\"root\": {\"path\": \"/p/broken/overlay/l1/merged\"}}",
		      "root.path: containers/storage /p/broken: unreadable",
		      "storage: a containers.json that cannot be read refuses the root");
	config_restore();
}

/* cstorage.c: a container's layer in containers.json. */
static void test_cstorage_parse(void)
{
	json_t *l = json_loads("[{\"id\": \"c0\", \"layer\": \"L0\"}, {\"id\": \"c1\", "
			       "\"layer\": \"L1\"}, {\"id\": \"c2\"}, 7, {\"id\": 3}]",
			       0, NULL);

	CHECK(ward_cstorage_layer_in(l, "c1") && !strcmp(ward_cstorage_layer_in(l, "c1"), "L1"),
	      "cstorage: the layer of the container");
	CHECK(ward_cstorage_layer_in(l, "c2") == NULL, "cstorage: a container without a layer");
	CHECK(ward_cstorage_layer_in(l, "c9") == NULL, "cstorage: a container not listed");
	CHECK(ward_cstorage_layer_in(json_object_get(l, "x"), "c1") == NULL,
	      "cstorage: not a list: nothing");
	json_decref(l);
	CHECK(ward_cstorage_is_layer_root("/g", "/g/overlay/L1/merged"),
	      "cstorage: a layer's merged dir is a layer root");
	CHECK(!ward_cstorage_is_layer_root("/g", "/g/overlay/L1/merged/etc") &&
		  !ward_cstorage_is_layer_root("/g", "/g/overlay/L1/diff") &&
		  !ward_cstorage_is_layer_root("/g", "/g/overlay//merged") &&
		  !ward_cstorage_is_layer_root("/g", "/gx/overlay/L1/merged") &&
		  !ward_cstorage_is_layer_root(NULL, "/g/overlay/L1/merged"),
	      "cstorage: nothing else is (a dir inside, diff, another root, no root)");
}

/* cstorage.c: the bundle directory ward opened is a container's userdata under the graph
 * root (podman) or the run root (CRI-O), by identity: not a directory elsewhere, not the
 * userdata of another id, not through a symlink inside the storage. */
static void test_cstorage_bundle(void)
{
	char t[] = "/tmp/ward-test-cstorage-XXXXXX";
	char g[64], r[64], p[1024];
	int fd;

	CHECK(mkdtemp(t) != NULL, "cstorage bundle: mkdtemp");
	snprintf(g, sizeof(g), "%s/g", t);
	snprintf(r, sizeof(r), "%s/r", t);
	snprintf(p, sizeof(p),
		 "mkdir -p %s/overlay-containers/c1/userdata %s/overlay-containers/"
		 "c2/userdata %s/overlay-containers/c3 %s/elsewhere && ln -s "
		 "%s/overlay-containers/c1/userdata %s/overlay-containers/c3/userdata",
		 g, r, g, t, g, g);
	CHECK(system(p) == 0, "cstorage bundle: the storage dirs");
	snprintf(p, sizeof(p), "%s/overlay-containers/c1/userdata", g);
	fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(ward_cstorage_bundle_is_userdata(fd, g, r, "c1"),
	      "cstorage bundle: the graph root's userdata of c1 is c1's (podman)");
	CHECK(!ward_cstorage_bundle_is_userdata(fd, g, r, "c2"), "cstorage bundle: ... not c2's");
	CHECK(!ward_cstorage_bundle_is_userdata(fd, g, r, "c3"),
	      "cstorage bundle: ... nor c3's, whose userdata is a symlink to it");
	CHECK(!ward_cstorage_bundle_is_userdata(fd, NULL, r, "c1"),
	      "cstorage bundle: ... nor c1's when the graph root is not configured");
	CHECK(!ward_cstorage_bundle_is_userdata(fd, g, r, "../c1"),
	      "cstorage bundle: an id that is not a name is nobody's");
	close(fd);
	snprintf(p, sizeof(p), "%s/overlay-containers/c2/userdata", r);
	fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(ward_cstorage_bundle_is_userdata(fd, g, r, "c2"),
	      "cstorage bundle: the run root's userdata of c2 is c2's (CRI-O)");
	close(fd);
	snprintf(p, sizeof(p), "%s/elsewhere", t);
	fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(!ward_cstorage_bundle_is_userdata(fd, g, r, "c1"),
	      "cstorage bundle: a bundle elsewhere naming c1 is not c1's userdata");
	close(fd);
	CHECK(!ward_cstorage_bundle_is_userdata(-1, g, r, "c1"), "cstorage bundle: no fd, no");
	snprintf(p, sizeof(p), "rm -rf %s", t);
	CHECK(system(p) == 0, "cstorage bundle: cleaned up");
}

/* Pod-owned host paths under ward.json's containerd root/state and kubelet root dir, and
 * under the state the bundle sits in; the pod uid the sandbox recorded wins over the
 * container's annotation; another pod's directories are refused. */
static int path_case(const struct ward_config *c, const char *bundle_state, const char *pod_uid,
		     const char *sb, const char *uid, const char *own_ud, const char *sb_ud,
		     const char *src, struct ward_err *err)
{
	struct ward_policy_in in = {.cfg = c,
				    .userdata_ids = {own_ud, sb_ud},
				    .tenant = ward_config_tenant(c, "default"),
				    .container_id = "c1",
				    .bundle = "/b",
				    .ids = {1000000, 65536},
				    .ids_owner = "pod:default/c1",
				    .seccomp_json = profile,
				    .seccomp_priv_json = profile_priv,
				    .host = &fake,
				    .bundle_containerd_state = bundle_state,
				    .pod_uid = pod_uid};
	json_t *p = pod(NULL), *r;
	json_object_set_new(p, "annotations",
			    json_pack("{s:s,s:s}", "io.kubernetes.cri.sandbox-id", sb,
				      "io.kubernetes.cri.sandbox-uid", uid));
	json_object_set_new(
	    p, "mounts",
	    json_pack("[{s:s,s:s,s:[s]}]", "destination", "/x", "source", src, "options", "rbind"));
	*err = (struct ward_err){0};
	r = policy_apply_to_json(&in, p, NULL, err);
	json_decref(p);
	json_decref(r);
	return r ? 0 : -1;
}

static int own_path_case(const struct ward_config *c, const char *bundle_state, const char *pod_uid,
			 const char *sb, const char *uid, const char *src, struct ward_err *err)
{
	return path_case(c, bundle_state, pod_uid, sb, uid, NULL, NULL, src, err);
}

/* containers/storage userdata of container "c1" being created: own_ud and sb_ud are the ids
 * create vouched for (its bundle is c1's userdata; its pod's infra "inf" is a live sandbox of
 * the same tenant and pod whose bundle was its userdata). */
static int ud_case(const struct ward_config *c, const char *own_ud, const char *sb_ud,
		   const char *src, struct ward_err *err)
{
	return path_case(c, NULL, NULL, "sb1", "u1", own_ud, sb_ud, src, err);
}

static void test_pod_own_paths(void)
{
	struct ward_err err = {0};
	struct ward_config *c = ward_config_parse(
	    "{\"containerd\": {\"root\": \"/var/lib/rancher/k3s/agent/containerd\", \"state\": "
	    "\"/run/k3s/containerd\"}, \"kubelet_root_dir\": \"/k/kubelet\"}",
	    NULL, NULL, 0, &err);

	CHECK(c != NULL, "ward.json containerd.root/state and kubelet_root_dir parse");
	if (!c)
		return;
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1",
			    "/run/k3s/containerd/io.containerd.grpc.v1.cri/sandboxes/sb1/shm",
			    &err) == 0,
	      "the pod's shm under the configured containerd state");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1",
			    "/var/lib/rancher/k3s/agent/containerd/io.containerd.grpc.v1.cri/"
			    "sandboxes/sb1/hostname",
			    &err) == 0,
	      "the pod's hostname under the configured containerd root");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1", "/k/kubelet/pods/u1/volumes/v", &err) == 0,
	      "the pod's volume under the configured kubelet root dir");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1",
			    "/run/k3s/containerd/io.containerd.grpc.v1.cri/sandboxes/sb2/shm",
			    &err) < 0,
	      "another pod's shm is refused");
	CHECK_STR_CONTAINS(err.msg, "is a container runtime's socket or directory",
			   "... as a runtime's directory (the configured state is one)");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1", "/run/k3s/containerd/containerd.sock",
			    &err) < 0,
	      "the configured containerd state's socket dir is a runtime's");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1", "/var/lib/kubelet/pods/u1/volumes/v",
			    &err) < 0,
	      "the default kubelet dir is nobody's once kubelet_root_dir moves it");
	CHECK(own_path_case(c, NULL, "u0", "sb1", "u1", "/k/kubelet/pods/u1/volumes/v", &err) < 0,
	      "a pod uid the sandbox did not record is refused");
	CHECK(own_path_case(c, NULL, "u0", "sb1", "u1", "/k/kubelet/pods/u0/volumes/v", &err) == 0,
	      "the sandbox's recorded pod uid is the pod's");
	CHECK(own_path_case(c, NULL, NULL, "..", "u1",
			    "/run/k3s/containerd/io.containerd.grpc.v1.cri/sandboxes/x", &err) < 0,
	      "a sandbox id of .. names nothing");
	CHECK(own_path_case(c, "/s2", NULL, "sb1", "u1",
			    "/s2/io.containerd.grpc.v1.cri/sandboxes/sb1/shm", &err) == 0,
	      "the pod's shm under the state the bundle sits in");
	CHECK(own_path_case(c, "/s2", NULL, "sb1", "u1",
			    "/s2/io.containerd.grpc.v1.cri/sandboxes/sb2/shm", &err) < 0,
	      "another pod's shm under the bundle's state is refused");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1",
			    "/s2/io.containerd.grpc.v1.cri/sandboxes/sb1/shm", &err) < 0,
	      "without the bundle's state, that path is no pod's");
	ward_config_free(c);
	c = ward_config_parse("{\"containerd\": {\"root\": \"relative\"}}", NULL, NULL, 0, &err);
	CHECK(c == NULL, "a relative containerd.root is a configuration error");
	CHECK_STR_CONTAINS(err.msg, "root", "... naming the key");
	ward_config_free(c);
	err = (struct ward_err){0};
	c = ward_config_parse("{\"containerd\": {\"sockets\": \"/x\"}}", NULL, NULL, 0, &err);
	CHECK(c == NULL, "an unknown key under containerd is an error");
	ward_config_free(c);
}

/* podman's/CRI-O's containers/storage and Docker's per-container directories: the userdata
 * of the container being created (id "c1") is its own only when create vouched for it (its
 * bundle is that directory), its podman pod's infra's ("inf") only when create vouched for
 * that; another container's is refused as a runtime's directory, files there as not allowed,
 * both naming the containers/storage rule. Docker's directory is still keyed by the id. */
static void test_engine_own_paths(void)
{
	struct ward_err err = {0};
	struct ward_config *c = ward_config_parse(NULL, NULL, NULL, 0, &err);

	CHECK(c != NULL, "engines: the built-in configuration parses");
	if (!c)
		return;
	CHECK(ud_case(c, "c1", NULL, "/run/containers/storage/overlay-containers/c1/userdata/hosts",
		      &err) == 0,
	      "engines: the container's own podman userdata (runroot) is its bind source");
	CHECK(ud_case(c, "c1", NULL,
		      "/var/lib/containers/storage/overlay-containers/c1/userdata/shm", &err) == 0,
	      "engines: ... and its userdata under the storage root");
	CHECK(ud_case(c, NULL, NULL,
		      "/var/lib/containers/storage/overlay-containers/c1/userdata/shm", &err) < 0,
	      "engines: a container whose bundle is not its userdata does not get it (the id alone "
	      "is not enough)");
	CHECK_STR_CONTAINS(err.msg,
			   "is a container runtime's socket or directory (containers/storage:",
			   "  as a runtime's directory, naming the containers/storage rule");
	CHECK(ud_case(c, NULL, NULL, "/run/containers/storage/overlay-containers/c1/userdata/hosts",
		      &err) < 0,
	      "engines: ... nor its files");
	CHECK(ud_case(c, "c1", NULL, "/run/containers/storage/overlay-containers/c2/userdata/hosts",
		      &err) < 0,
	      "engines: another container's userdata is refused");
	CHECK_STR_CONTAINS(err.msg, "tenant \"default\": host_paths:", "  naming the tenant");
	CHECK(ud_case(c, "c1", "inf",
		      "/run/containers/storage/overlay-containers/inf/userdata/resolv.conf",
		      &err) == 0,
	      "engines: a podman pod member binds its infra's resolv.conf");
	CHECK(ud_case(c, "c1", "inf",
		      "/var/lib/containers/storage/overlay-containers/inf/userdata/shm", &err) == 0,
	      "engines: ... and its shm");
	CHECK(ud_case(c, "c1", "inf",
		      "/run/containers/storage/overlay-containers/inf2/userdata/resolv.conf",
		      &err) < 0,
	      "engines: ... never another pod's infra's");
	CHECK(ud_case(c, "c1", NULL,
		      "/run/containers/storage/overlay-containers/inf/userdata/resolv.conf",
		      &err) < 0,
	      "engines: an infra create did not vouch for is refused");
	/* the engine writes hosts/resolv.conf there again as host root, by name: a container
	 * that could swap one for a symlink would have it write a host file; only the names
	 * the engine binds pass */
	{
		static const struct {
			const char *infra, *path, *what;
			bool ok;
		} only_names[] = {
		    {"inf", "inf/userdata",
		     "a member never binds its infra's userdata directory itself", false},
		    {NULL, "c1/userdata", "nor a container its own userdata directory", false},
		    {NULL, "c1/userdata/config.json", "nor a file the engine does not bind", false},
		    {NULL, "c1/userdata/run", "nor run/ (only run/secrets)", false},
		    {NULL, "c1/userdata/run/secrets/s", "run/secrets and below is its own", true},
		    {NULL, "c1/userdata/.containerenv", ".containerenv is its own", true},
		};
		for (size_t i = 0; i < ARRAY_SIZE(only_names); i++) {
			char path[256], name[128];
			snprintf(path, sizeof(path),
				 "/run/containers/storage/overlay-containers/%s",
				 only_names[i].path);
			snprintf(name, sizeof(name), "engines: %s", only_names[i].what);
			CHECK((ud_case(c, "c1", only_names[i].infra, path, &err) == 0) ==
				  only_names[i].ok,
			      name);
		}
	}
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1", "/var/lib/docker/containers/c1", &err) < 0,
	      "engines: nor its own Docker directory itself");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1", "/var/lib/docker/containers/c1/mounts/shm",
			    &err) == 0,
	      "engines: Docker's mounts/shm is its own");
	CHECK(ud_case(c, "..", "..", "/run/containers/storage/overlay-containers/x", &err) < 0,
	      "engines: an id of .. names nothing");
	CHECK(ud_case(c, "c1", NULL, "/run/containers/storage/overlay-containers/c1", &err) < 0,
	      "engines: the container's directory above userdata is not its own");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1", "/var/lib/docker/containers/c1/hostname",
			    &err) == 0,
	      "engines: the container's own Docker directory is its bind source");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1", "/var/lib/docker/containers/c2/hostname",
			    &err) < 0,
	      "engines: another container's Docker directory is refused");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1", "/var/lib/docker/containers", &err) < 0,
	      "engines: Docker's containers directory itself is a runtime's");
	ward_config_free(c);
	c = ward_config_parse("{\"containers_storage\": {\"root\": \"/p/root\", \"runroot\": "
			      "\"/p/run\"}, \"docker_root\": \"/d\"}",
			      NULL, NULL, 0, &err);
	CHECK(c != NULL, "engines: containers_storage and docker_root parse");
	if (!c)
		return;
	CHECK(ud_case(c, "c1", NULL, "/p/run/overlay-containers/c1/userdata/hosts", &err) == 0,
	      "engines: the configured runroot's userdata of the container is its own");
	CHECK(ud_case(c, "c1", NULL, "/p/root/overlay-containers/c2/userdata/hosts", &err) < 0,
	      "engines: another container's under the configured root is refused");
	CHECK(own_path_case(c, NULL, NULL, "sb1", "u1", "/d/containers/c1/resolv.conf", &err) == 0,
	      "engines: the configured docker_root's directory of the container is its own");
	CHECK(ud_case(c, "c1", NULL, "/run/containers/storage/overlay-containers/c1/userdata/hosts",
		      &err) < 0,
	      "engines: the default runroot is nobody's once containers_storage moves it");
	ward_config_free(c);
	err = (struct ward_err){0};
	c = ward_config_parse("{\"containers_storage\": {\"runroot\": \"/\"}}", NULL, NULL, 0,
			      &err);
	CHECK(c == NULL, "engines: containers_storage.runroot / is a configuration error");
	CHECK_STR_CONTAINS(err.msg, "runroot", "  naming the key");
	ward_config_free(c);
	err = (struct ward_err){0};
	c = ward_config_parse("{\"containers_storage\": {\"graph\": \"/x\"}}", NULL, NULL, 0, &err);
	CHECK(c == NULL, "engines: an unknown key under containers_storage is an error");
	ward_config_free(c);
	err = (struct ward_err){0};
	c = ward_config_parse("{\"docker_root\": \"docker\"}", NULL, NULL, 0, &err);
	CHECK(c == NULL, "engines: a relative docker_root is a configuration error");
	ward_config_free(c);
}

/* The cgroupsPath a container of the pod with pod_uid (the sandbox's record; NULL: the
 * annotation ann_uid) and the id "c1" of tenant gets, or NULL if refused. */
static char *kubelet_cg_case(struct ward_config *c, const char *tenant, const char *pod_uid,
			     const char *ann_uid, const char *cgroups_path, struct ward_err *err)
{
	struct ward_policy_in in = {FAKE_POLICY_IN(c, tenant), .seccomp_json = profile,
				    .seccomp_priv_json = profile_priv, .host = &fake,
				    .pod_uid = pod_uid};
	json_t *x =
	    json_pack("{s:{s:s},s:{}}", "linux", "cgroupsPath", cgroups_path, "annotations");
	char *extra, *out = NULL;
	json_t *p, *r;

	if (ann_uid)
		json_object_set_new(json_object_get(x, "annotations"),
				    "io.kubernetes.cri.sandbox-uid", json_string(ann_uid));
	extra = json_dumps(x, JSON_COMPACT);
	p = pod(extra);
	r = policy_apply_to_json(&in, p, NULL, err);
	if (r)
		out = xstrdup(sv(at(r, "linux.cgroupsPath")));
	json_decref(r);
	json_decref(p);
	json_decref(x);
	free(extra);
	return out;
}

/* kubelet_cg_case's answer is want (NULL: refused): one CHECK named name, what it got
 * printed when it is not. */
static void kubelet_cg_check(struct ward_config *c, const char *tenant, const char *pod_uid,
			     const char *ann_uid, const char *cgroups_path, const char *want,
			     const char *name)
{
	struct ward_err err = {0};
	char *got = kubelet_cg_case(c, tenant, pod_uid, ann_uid, cgroups_path, &err);

	CHECK(want ? got && !strcmp(got, want) : !got, name);
	if (want && (!got || strcmp(got, want)))
		printf("# got %s (%s)\n", got ? got : "refused", got ? "" : err.msg);
	free(got);
}

/* Kubernetes: a container whose cgroupsPath is exactly its pod's kubelet pod cgroup plus
 * its id stays in kubelet's tree (QoS, eviction, stats); anything else goes below
 * /ward/<tenant>/. */
static void test_kubelet_cgroups(void)
{
	static const struct {
		const char *pod_uid, *ann_uid, *in, *want;
	} cases[] = {
	    /* this pod's cgroupfs-driver path, each QoS class */
	    {NULL, "u-1", "/kubepods/burstable/podu-1/c1", "/kubepods/burstable/podu-1/c1"},
	    {NULL, "u-1", "/kubepods/besteffort/podu-1/c1", "/kubepods/besteffort/podu-1/c1"},
	    {NULL, "u-1", "/kubepods/podu-1/c1", "/kubepods/podu-1/c1"},
	    {NULL, "u-1", "kubepods/podu-1/c1", "/kubepods/podu-1/c1"},
	    /* the sandbox's recorded uid wins over the container's annotation */
	    {"u-1", "u-2", "/kubepods/burstable/podu-1/c1", "/kubepods/burstable/podu-1/c1"},
	    {"u-1", "u-2", "/kubepods/burstable/podu-2/c1", "/ward/a/kubepods/burstable/podu-2/c1"},
	    /* the systemd driver: slice:prefix:name, and its cgroupfs spelling */
	    {NULL, "u-1", "kubepods-burstable-podu_1.slice:cri-containerd:c1",
	     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu_1.slice/"
	     "cri-containerd-c1.scope"},
	    {NULL, "u-1", "kubepods-podu_1.slice:cri-containerd:c1",
	     "/kubepods.slice/kubepods-podu_1.slice/cri-containerd-c1.scope"},
	    {NULL, "u-1",
	     "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice/"
	     "cri-containerd-c1.scope",
	     "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podu_1.slice/"
	     "cri-containerd-c1.scope"},
	    /* another pod's uid, a wrong container id, extra components, no uid: below
	     * the tenant's cgroup */
	    {NULL, "u-1", "/kubepods/burstable/podu-2/c1", "/ward/a/kubepods/burstable/podu-2/c1"},
	    {NULL, "u-1", "kubepods-burstable-podu_2.slice:cri-containerd:c1",
	     "/ward/a/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podu_2.slice/"
	     "cri-containerd-c1.scope"},
	    {NULL, "u-1", "/kubepods/burstable/podu-1/c2", "/ward/a/kubepods/burstable/podu-1/c2"},
	    {NULL, "u-1", "kubepods-podu_1.slice:cri-containerd:c2",
	     "/ward/a/kubepods.slice/kubepods-podu_1.slice/cri-containerd-c2.scope"},
	    {NULL, "u-1", "/kubepods/burstable/podu-1/c1/x",
	     "/ward/a/kubepods/burstable/podu-1/c1/x"},
	    {NULL, "u-1", "/kubepods/burstable/podu-1", "/ward/a/kubepods/burstable/podu-1"},
	    {NULL, "u-1", "/kubepods/guaranteed/podu-1/c1",
	     "/ward/a/kubepods/guaranteed/podu-1/c1"},
	    {NULL, "u-1", "/x/kubepods/podu-1/c1", "/ward/a/x/kubepods/podu-1/c1"},
	    {NULL, "u-1", "/kubepods//podu-1/c1", NULL},
	    {NULL, "u-1", "/kubepods/burstable/../podu-1/c1", NULL},
	    {NULL, NULL, "/kubepods/pod/c1", "/ward/a/kubepods/pod/c1"},
	    {NULL, "", "/kubepods/pod/c1", "/ward/a/kubepods/pod/c1"},
	    {"", "u-1", "/kubepods/podu-1/c1", "/ward/a/kubepods/podu-1/c1"},
	    {NULL, "../x", "/kubepods/pod../x/c1", "/ward/a/kubepods/pod../x/c1"},
	    {NULL, "u/1", "/kubepods/podu/1/c1", "/ward/a/kubepods/podu/1/c1"},
	};
	const char *names[] = {"a", "b"},
		   *texts[] = {"{}", "{\"cgroup\": {\"pids\": {\"limit\": 100}}}"};
	struct ward_err err = {0};
	struct ward_config *c = ward_config_parse(NULL, names, texts, 2, &err);
	char name[400];

	CHECK(c != NULL, "kubelet cgroups: the configuration parses");
	if (!c)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "pod uid %s (annotation %s), cgroupsPath \"%s\" -> %s",
			 cases[i].pod_uid ? cases[i].pod_uid : "-",
			 cases[i].ann_uid ? cases[i].ann_uid : "-", cases[i].in,
			 cases[i].want ? cases[i].want : "refused");
		kubelet_cg_check(c, "a", cases[i].pod_uid, cases[i].ann_uid, cases[i].in,
				 cases[i].want, name);
	}
	kubelet_cg_check(
	    c, "b", NULL, "u-1", "/kubepods/burstable/podu-1/c1",
	    "/ward/b/kubepods/burstable/podu-1/c1",
	    "a tenant with a cgroup budget: the pod goes below /ward/<tenant>, which holds it");
	ward_config_free(c);

	c = ward_config_parse("{\"kubelet_cgroup_root\": \"/k8s/pods\"}", names, texts, 2, &err);
	CHECK(c != NULL, "kubelet_cgroup_root: a string parses");
	if (c) {
		kubelet_cg_check(c, "a", NULL, "u-1", "/k8s/pods/podu-1/c1", "/k8s/pods/podu-1/c1",
				 "the configured root is kept");
		kubelet_cg_check(c, "a", NULL, "u-1", "/kubepods/podu-1/c1",
				 "/ward/a/kubepods/podu-1/c1",
				 "the default root is not, once the key names another");
		ward_config_free(c);
	}
	c = ward_config_parse("{\"kubelet_cgroup_root\": []}", names, texts, 2, &err);
	CHECK(c != NULL, "kubelet_cgroup_root: [] parses");
	if (c) {
		kubelet_cg_check(c, "a", NULL, "u-1", "/kubepods/podu-1/c1",
				 "/ward/a/kubepods/podu-1/c1",
				 "[]: no pod is kept in kubelet's tree");
		ward_config_free(c);
	}
	static const char *const bad[] = {
	    "{\"kubelet_cgroup_root\": \"/\"}", "{\"kubelet_cgroup_root\": \"/a/../b\"}",
	    "{\"kubelet_cgroup_root\": \"kubepods\"}", "{\"kubelet_cgroup_root\": \"a/b.slice\"}",
	    "{\"kubelet_cgroup_root\": [1]}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = (struct ward_err){0};
		c = ward_config_parse(bad[i], names, texts, 2, &err);
		snprintf(name, sizeof(name), "ward.json %s is refused", bad[i]);
		CHECK(c == NULL, name);
		CHECK_STR_CONTAINS(err.msg, "kubelet_cgroup_root", "  naming the key");
		ward_config_free(c);
	}
}

/* A tenant's rlimit cap only lowers: with the runtime's NOFILE hard limit below the cap
 * (containerd's 20000 against the cap 1048576 here), no limit is added and the inherited
 * one stays; a pod's own limit above the cap is still lowered. */
static void test_rlimit_never_raised(void)
{
	const char *names[] = {"a"}, *texts[] = {"{\"rlimits\": {\"RLIMIT_NOFILE\": 1048576}}"};
	struct ward_err err = {0};
	json_t *e;

	if (!config_swap(NULL, names, texts, 1, "rlimits"))
		return;
	e = apply_as("a", NULL, false, NULL, &err);
	CHECK(e && json_array_size(at(e, "process.rlimits")) == 0,
	      "rlimits: a cap above the inherited hard limit adds no limit (never raises)");
	json_decref(e);
	e = apply_as("a",
		     "{\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": 0, "
		     "\"gid\": 0}, \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1, "
		     "\"hard\": 2000000}]}}",
		     false, NULL, &err);
	CHECK(e && json_integer_value(at(e, "process.rlimits.0.hard")) == 1048576,
	      "rlimits: a pod's own limit above the cap is lowered to it");
	json_decref(e);
	/* an rlimit the tenant has no cap for stays within the runtime's own: the runtime
	 * raises hard limits from the host side, so RTPRIO 99 would be real-time scheduling */
	e = apply_as("a",
		     "{\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": 0, "
		     "\"gid\": 0}, \"rlimits\": [{\"type\": \"RLIMIT_RTPRIO\", \"soft\": 99, "
		     "\"hard\": 99}, {\"type\": \"RLIMIT_CORE\", \"soft\": 0, \"hard\": 0}]}}",
		     false, NULL, &err);
	CHECK(e && json_integer_value(at(e, "process.rlimits.0.hard")) == 0 &&
		  json_integer_value(at(e, "process.rlimits.0.soft")) == 0,
	      "rlimits: an uncapped RLIMIT_RTPRIO above the runtime's hard limit is lowered to it");
	CHECK(e && json_integer_value(at(e, "process.rlimits.1.hard")) == 0,
	      "rlimits: an uncapped limit within the runtime's stays as written");
	json_decref(e);
	check_refused(
	    "a",
	    "{\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": 0, "
	    "\"gid\": 0}, \"rlimits\": [{\"type\": \"BOGUS\", \"soft\": 1, \"hard\": 1}]}}",
	    "tenant \"a\": rlimits: process.rlimits[0]: BOGUS",
	    "rlimits: an rlimit whose runtime limit is unknown is refused");
	config_restore();
}

/* A pod member joins its sandbox's user namespace (given by the caller, held open): the
 * policy adds it by path, checks it maps inside the pod's range, and writes its mapping;
 * a sandbox's user namespace outside the range is refused. */
static void test_pod_userns(void)
{
	struct ward_err err = {0};
	struct ward_policy_in in = {.cfg = cfg,
				    .tenant = ward_config_tenant(cfg, "a"),
				    .container_id = "app",
				    .bundle = "/b",
				    .ids = {1000000, 65536},
				    .ids_owner = "pod:a/sb",
				    .seccomp_json = profile,
				    .seccomp_priv_json = profile_priv,
				    .host = &fake,
				    .pod_userns = "/proc/42/ns/user-inside"};
	json_t *p = pod(NULL), *e, *ns;
	size_t i;
	bool found = false;

	e = policy_apply_to_json(&in, p, NULL, &err);
	CHECK(e != NULL, "pod userns: a pod member passes");
	json_array_foreach(at(e, "linux.namespaces"), i, ns)
	{
		if (!strcmp(sv(json_object_get(ns, "type")), "user"))
			found = json_is_string(json_object_get(ns, "path")) &&
				!strcmp(sv(json_object_get(ns, "path")), "/proc/42/ns/user-inside");
	}
	CHECK(found, "pod userns: it joins the sandbox's user namespace by path");
	CHECK(json_integer_value(at(e, "linux.uidMappings.0.hostID")) == 1000000 &&
		  json_integer_value(at(e, "linux.uidMappings.0.size")) == 65536 &&
		  json_integer_value(at(e, "linux.gidMappings.0.containerID")) == 0,
	      "pod userns: its mappings are the joined namespace's");
	json_decref(e);
	in.pod_userns = "/proc/42/ns/user-other";
	e = policy_apply_to_json(&in, p, NULL, &err);
	CHECK(!e, "pod userns: a sandbox user namespace outside the pod's range is refused");
	CHECK_STR_CONTAINS(err.msg, "tenant \"a\": ids:", "  naming the tenant and the rule");
	json_decref(e);
	json_decref(p);
}

/* ---- exec (ward_policy_exec) ---- */

/* The container: made by the policy (ward.dev/ids) unless bare, bounding CAP_KILL and
 * CAP_NET_RAW, noNewPrivileges, AppArmor profile "ward-a". */
static struct ward_spec *exec_container(bool policy_made)
{
	char *text = xasprintf(
	    "{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"rootfs\"}, \"process\": "
	    "{\"args\": [\"sh\"], \"cwd\": \"/\", \"noNewPrivileges\": true, "
	    "\"apparmorProfile\": \"ward-a\", \"capabilities\": {\"bounding\": [\"CAP_KILL\", "
	    "\"CAP_NET_RAW\"], \"effective\": [\"CAP_KILL\"], \"permitted\": [\"CAP_KILL\"]}}%s}",
	    policy_made ? ", \"annotations\": {\"ward.dev/ids\": \"pod:a/sb 1000000 65536\"}" : "");
	struct ward_err err = {0};
	struct ward_spec *s = ward_spec_parse(text, strlen(text), "/b", &err);

	if (!s)
		fprintf(stderr, "# exec container: %s\n", err.msg);
	free(text);
	return s;
}

/* An exec process asking for caps (JSON array text) in every set but ambient, nnp and
 * apparmor as given (NULL: none). */
static struct ward_process *exec_proc(const char *caps, bool nnp, const char *apparmor)
{
	char *text =
	    xasprintf("{\"args\": [\"true\"], \"cwd\": \"/\", \"noNewPrivileges\": %s%s%s%s, "
		      "\"capabilities\": {\"bounding\": %s, \"effective\": %s, \"permitted\": %s, "
		      "\"inheritable\": %s}}",
		      nnp ? "true" : "false", apparmor ? ", \"apparmorProfile\": \"" : "",
		      apparmor ? apparmor : "", apparmor ? "\"" : "", caps, caps, caps, caps);
	struct ward_err err = {0};
	struct ward_process *p = ward_process_parse(text, strlen(text), "process.json", &err);

	if (!p)
		fprintf(stderr, "# exec process: %s\n", err.msg);
	free(text);
	return p;
}

/* ward_policy_exec of a process asking for wanted, the pod having asked for asked at
 * create, in container c (made: by the policy): its result, and the profile the process
 * gets in *out (malloc'd; NULL: none). */
static int exec_apparmor(const struct ward_spec *c, bool made, const char *asked,
			 const char *wanted, char **out, char ***notes, struct ward_err *err)
{
	struct ward_process *p = exec_proc("[]", true, wanted);
	int rc = ward_policy_exec("a", made, c->process, asked, p, notes, err);

	*out = p->apparmor_profile ? xstrdup(p->apparmor_profile) : NULL;
	ward_process_free(p);
	return rc;
}

static void test_exec(void)
{
	struct ward_spec *c = exec_container(true), *bare = exec_container(false);
	struct ward_err err = {0};
	struct ward_process *p;
	char **notes = NULL, *aa = NULL;
	const char *refused[][2] = {{NULL, "unconfined"},
				    {"containers-default-0.50.1", "other-profile"},
				    {"", "unconfined"}};
	int rc;

	CHECK(c && bare, "exec: the test containers parse");
	if (!c || !bare)
		goto out;

	/* capabilities inside the bounding set pass; nnp and apparmor become the container's */
	p = exec_proc("[\"CAP_KILL\"]", false, NULL);
	rc = ward_policy_exec("a", true, c->process, NULL, p, &notes, &err);
	CHECK(rc == 0, "exec: capabilities inside the container's bounding set pass");
	CHECK(p->no_new_privileges, "exec: no_new_privileges is kept when the container has it");
	CHECK(p->capabilities.effective && p->capabilities.effective[0] &&
		  !strcmp(p->capabilities.effective[0], "CAP_KILL") &&
		  !p->capabilities.effective[1],
	      "exec: the allowed capability stays");
	CHECK(!notes, "exec: nothing to note");
	ward_process_free(p);

	/* a capability outside the bounding set is refused, naming the tenant and the rule */
	p = exec_proc("[\"CAP_KILL\", \"CAP_SYS_ADMIN\"]", false, NULL);
	rc = ward_policy_exec("a", true, c->process, NULL, p, NULL, &err);
	CHECK(rc < 0, "exec: a capability outside the bounding set is refused");
	CHECK_STR_CONTAINS(err.msg,
			   "tenant \"a\": capabilities: CAP_SYS_ADMIN is not in the "
			   "container's bounding set",
			   "  naming the tenant, the rule and the capability");
	ward_process_free(p);

	/* containerd's defaults the container lacks are dropped quietly, with a note; one
	 * dropped before a refused one is freed once (the set stays whole) */
	p = exec_proc("[\"CAP_CHOWN\", \"CAP_KILL\", \"CAP_SETUID\"]", false, NULL);
	rc = ward_policy_exec("a", true, c->process, NULL, p, &notes, &err);
	CHECK(rc == 0, "exec: containerd's default capabilities are dropped, not refused");
	CHECK(p->capabilities.bounding && !strcmp(p->capabilities.bounding[0], "CAP_KILL") &&
		  !p->capabilities.bounding[1] &&
		  !strcmp(p->capabilities.inheritable[0], "CAP_KILL") &&
		  !p->capabilities.inheritable[1],
	      "exec: only the container's capabilities remain, in every set");
	CHECK(notes && strstr(notes[0], "dropped CAP_CHOWN"), "exec: the drop is noted");
	strv_free(notes);
	notes = NULL;
	ward_process_free(p);
	p = exec_proc("[\"CAP_CHOWN\", \"CAP_SYS_ADMIN\", \"CAP_KILL\"]", false, NULL);
	rc = ward_policy_exec("a", true, c->process, NULL, p, NULL, &err);
	CHECK(rc < 0 && strstr(err.msg, "CAP_SYS_ADMIN"),
	      "exec: a refused capability after a dropped one is refused");
	ward_process_free(p); /* valgrind: no double free */

	/* AppArmor: the container's profile, never another */
	CHECK(exec_apparmor(c, true, NULL, "ward-a", &aa, NULL, &err) == 0 && !strcmp(aa, "ward-a"),
	      "exec: the container's own AppArmor profile passes");
	free(aa);
	/* the profile the pod asked for at create (recorded in the state): accepted, and the
	 * process runs under the container's, with a note */
	rc = exec_apparmor(c, true, "containers-default-0.50.1", "containers-default-0.50.1", &aa,
			   &notes, &err);
	CHECK(rc == 0, "exec: the profile the pod asked for at create is accepted");
	CHECK(aa && !strcmp(aa, "ward-a"), "exec: ... and runs as the container's profile");
	CHECK(notes && notes[0] && strstr(notes[0], "\"containers-default-0.50.1\"") &&
		  strstr(notes[0], "container's \"ward-a\""),
	      "exec: ... with a note naming both");
	free(aa);
	strv_free(notes);
	notes = NULL;
	rc = exec_apparmor(c, true, "containers-default-0.50.1", "ward-a", &aa, &notes, &err);
	CHECK(rc == 0 && !strcmp(aa, "ward-a") && !notes,
	      "exec: the container's own profile still passes, without a note");
	free(aa);
	/* any other profile is refused, with or without a recorded one (an empty one accepts
	 * nothing more) */
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		char *want = xasprintf("tenant \"a\": apparmor: exec processes run under the "
				       "container's profile \"ward-a\", not \"%s\"",
				       refused[i][1]);
		rc = exec_apparmor(c, true, refused[i][0], refused[i][1], &aa, NULL, &err);
		CHECK(rc < 0, "exec: another AppArmor profile is refused");
		CHECK_STR_CONTAINS(err.msg, want,
				   "  naming the tenant, the rule and both profiles");
		free(want);
		free(aa);
	}

	/* a container the policy did not make (a trusted tenant): the process runs as asked */
	p = exec_proc("[\"CAP_SYS_ADMIN\"]", false, "unconfined");
	rc = ward_policy_exec("t", false, bare->process, NULL, p, &notes, &err);
	CHECK(rc == 0 && !p->no_new_privileges &&
		  !strcmp(p->capabilities.bounding[0], "CAP_SYS_ADMIN"),
	      "exec: a container outside the policy runs the process as asked");
	ward_process_free(p);
	CHECK(exec_apparmor(bare, false, "asked", "asked", &aa, NULL, &err) == 0 &&
		  !strcmp(aa, "asked"),
	      "exec: outside the policy, the profile asked at create is not mapped");
	free(aa);
out:
	ward_spec_free(c);
	ward_spec_free(bare);
}

/* The policy takes the pod's typed spec and returns a new one: the pod's is left as it was
 * (const), the effective one owns all of its memory (the pod's freed first), and ward's
 * record is the policy's whatever the pod's annotations say. */
static void test_typed(void)
{
	struct ward_policy_in in = {FAKE_POLICY_IN(cfg, "a"), .seccomp_json = profile,
				    .seccomp_priv_json = profile_priv, .host = &fake};
	struct ward_err err = {0};
	json_t *p = pod("{\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_LOG\"}}, "
			"\"annotations\": {\"ward.dev/pod-seccomp\": \"not json\", "
			"\"ward.dev/ids\": \"fixed 0 4294967295\"}}");
	struct ward_spec *pod_spec = ward_spec_pod_from_json(p, "/b", &err), *e;
	json_t *before, *after, *ej;

	CHECK(pod_spec != NULL, "typed: the pod's spec decodes (its ward.dev/ annotations inert)");
	if (!pod_spec) {
		json_decref(p);
		return;
	}
	before = ward_spec_to_json(pod_spec);
	e = ward_policy_apply(&in, pod_spec, NULL, &err);
	after = ward_spec_to_json(pod_spec);
	CHECK(e && json_equal(before, after), "typed: the pod's spec is not changed");
	ward_spec_free(pod_spec);
	ej = e ? ward_spec_to_json(e) : NULL;
	CHECK(ej && !strcmp(sv(at(ej, "linux.seccomp.defaultAction")), "SCMP_ACT_ERRNO") &&
		  !strcmp(sv(at(ej, "ward.podSeccomp.defaultAction")), "SCMP_ACT_LOG") &&
		  !strcmp(sv(at(ej, "ward.ids")), "pod:a/c1 1000000 65536") &&
		  !strcmp(sv(json_object_get(at(ej, "annotations"), "ward.dev/ids")),
			  "fixed 0 4294967295"),
	      "typed: the effective spec stands alone: the tenant's filter, the pod's in ward's "
	      "record, the policy's ID range (the pod's annotation inert)");
	CHECK(e && !ward_spec_check(e, &err), "typed: the effective spec passes the spec's checks");
	json_decref(ej);
	json_decref(before);
	json_decref(after);
	ward_spec_free(e);
	json_decref(p);
}

int main(void)
{
	const char *names[] = {"a", "p", "h"}, *texts[] = {tenant_a, tenant_p, tenant_h};
	struct ward_err err = {0};

	cfg = ward_config_parse(NULL, names, texts, 3, &err);
	CHECK(cfg != NULL, "the test configuration parses");
	if (!cfg)
		TAP_DONE();
	test_defaults();
	test_refusals();
	test_allowed();
	test_unmappable_bind();
	test_privileged();
	test_privileged_seccomp_name();
	test_ambient_note();
	test_apparmor_required();
	test_hooks();
	test_cgroups_path();
	test_root_paths();
	test_shared_propagation();
	test_pod_own_paths();
	test_engine_own_paths();
	test_cstorage_bundle();
	test_storage_root();
	test_cstorage_parse();
	test_kubelet_cgroups();
	test_rlimit_never_raised();
	test_pod_userns();
	test_exec();
	test_typed();
	ward_config_free(cfg);
	TAP_DONE();
}
