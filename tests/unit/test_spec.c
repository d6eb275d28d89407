/* spec.c: config.json -> struct ward_spec. Every field of a full config lands in the struct,
 * the default spec parses back, and each bad input is refused with the field path named. */
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cgroup_res.h"
#include "json.h"
#include "policy.h"
#include "spec.h"
#include "spec_json.h"
#include "tap.h"
#include "util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define BUNDLE "/run/bundles/web-1"

/* JSON written with ' for " keeps the fixtures readable. */
/* <bundle>/config.json read as create reads it (through the bundle's fd) and parsed. */
static struct ward_spec *load_bundle(const char *bundle, struct ward_err *err)
{
	size_t len = 0;
	cleanup_fd int fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *text = ward_spec_read_bundle(fd, bundle, &len, err);

	return text ? ward_spec_parse(text, len, bundle, err) : NULL;
}

/* The spec's text as create writes it to the state (ward_json_dumps of ward_spec_to_json). */
static char *spec_text(const struct ward_spec *s, size_t flags)
{
	json_t *o = ward_spec_to_json(s);
	char *text = ward_json_dumps(o, flags);

	json_decref(o);
	return text;
}

static char *J(const char *s)
{
	char *r = xstrdup(s);
	for (char *p = r; *p; p++)
		if (*p == '\'')
			*p = '"';
	return r;
}

static struct ward_spec *parse(const char *sq, struct ward_err *err)
{
	cleanup_free char *json = J(sq);
	ward_err_clear(err);
	return ward_spec_parse(json, strlen(json), BUNDLE, err);
}

/* The document must be refused with an error containing want. */
static void expect_err(const char *sq, const char *want, const char *name)
{
	struct ward_err err;
	struct ward_spec *s = parse(sq, &err);
	CHECK(s == NULL, name);
	CHECK_STR_CONTAINS(err.msg, want, name);
	ward_spec_free(s);
}

static void expect_ok(const char *sq, const char *name)
{
	struct ward_err err;
	struct ward_spec *s = parse(sq, &err);
	CHECK(s != NULL, name);
	if (!s)
		printf("#   error: %s\n", err.msg);
	ward_spec_free(s);
}

static bool strv_eq(char *const *v, const char *const *want)
{
	size_t i = 0;
	if (!v)
		return false;
	for (; want[i]; i++)
		if (!v[i] || strcmp(v[i], want[i]) != 0)
			return false;
	return v[i] == NULL;
}

#define STRV(...)   ((const char *const[]){__VA_ARGS__, NULL})
#define STREQ(a, b) ((a) && strcmp((a), (b)) == 0)

/* Minimal valid document, and one with a valid process, to build bad inputs from. */
#define MIN  "{'ociVersion':'1.3.0','root':{'path':'rootfs'}"
#define PROC "'process':{'args':['sh'],'cwd':'/'"
#define P(x) MIN "," PROC "," x "}}"
#define L(x) MIN ",'linux':{" x "}}"

static const char full_config[] =
    "{'ociVersion':'1.3.0',"
    " 'root':{'path':'/srv/rootfs','readonly':true},"
    " 'mounts':["
    "  {'destination':'/proc','type':'proc','source':'proc'},"
    "  {'destination':'/data','type':'bind','source':'data','options':['rbind','ro'],"
    "   'uidMappings':[{'containerID':0,'hostID':100000,'size':65536}],"
    "   'gidMappings':[{'containerID':0,'hostID':200000,'size':1000}]},"
    "  {'destination':'cache','source':'/var/cache','options':[]}"
    " ],"
    " 'process':{"
    "  'terminal':true,'consoleSize':{'height':24,'width':80},"
    "  'user':{'uid':1000,'gid':1001,'umask':18,'additionalGids':[5,27]},"
    "  'args':['/bin/app','--port','8080'],"
    "  'env':['PATH=/usr/bin','EMPTY='],"
    "  'cwd':'/work',"
    "  'capabilities':{'bounding':['CAP_KILL','CAP_CHOWN'],'effective':['CAP_KILL'],"
    "   'inheritable':[],'permitted':['CAP_KILL'],'ambient':['CAP_KILL']},"
    "  'rlimits':[{'type':'RLIMIT_NOFILE','hard':4096,'soft':1024},"
    "   {'type':'RLIMIT_MEMLOCK','hard':18446744073709551615,'soft':18446744073709551615}],"
    "  'noNewPrivileges':true,'apparmorProfile':'ward-default','selinuxLabel':'system_u:r',"
    "  'oomScoreAdj':-500,"
    "  'ioPriority':{'class':'IOPRIO_CLASS_BE','priority':4},"
    "  'scheduler':{'policy':'SCHED_DEADLINE','nice':-5,'priority':3,"
    "   'flags':['SCHED_FLAG_RESET_ON_FORK'],'runtime':1000000,'deadline':2000000,"
    "   'period':3000000}"
    " },"
    " 'hostname':'web-1','domainname':'example.org',"
    " 'hooks':{"
    "  'prestart':[{'path':'/usr/bin/pre'}],"
    "  'createRuntime':[{'path':'/usr/bin/net-hook','args':['net-hook','up'],"
    "   'env':['A=1'],'timeout':5},{'path':'/usr/bin/second'}],"
    "  'createContainer':[{'path':'/cc'}],'startContainer':[{'path':'/sc'}],"
    "  'poststart':[{'path':'/ps'}],'poststop':[{'path':'/usr/bin/audit','timeout':30}]"
    " },"
    " 'annotations':{'org.example.team':'infra','io.ward.tenant':'blue'},"
    " 'linux':{"
    "  'namespaces':[{'type':'pid'},{'type':'network','path':'/var/run/netns/web'},"
    "   {'type':'mount'},{'type':'ipc'},{'type':'uts'},{'type':'user'},{'type':'cgroup'},"
    "   {'type':'time'}],"
    "  'uidMappings':[{'containerID':0,'hostID':100000,'size':65536}],"
    "  'gidMappings':[{'containerID':0,'hostID':100000,'size':65536},"
    "   {'containerID':65536,'hostID':300000,'size':1}],"
    "  'timeOffsets':{'monotonic':{'secs':-3600,'nanosecs':5},'boottime':{'secs':86400}},"
    "  'devices':[{'type':'c','path':'/dev/fuse','major':10,'minor':229,'fileMode':438,"
    "   'uid':0,'gid':0},{'type':'p','path':'/dev/myfifo'}],"
    "  'cgroupsPath':'/ward/web-1',"
    "  'resources':{'memory':{'limit':536870912},'pids':{'limit':-1}},"
    "  'sysctl':{'net.ipv4.ip_forward':'1','kernel.shm_rmid_forced':'1'},"
    "  'seccomp':{'defaultAction':'SCMP_ACT_ERRNO','defaultErrnoRet':1,"
    "   'architectures':['SCMP_ARCH_X86_64','SCMP_ARCH_X86'],"
    "   'flags':['SECCOMP_FILTER_FLAG_LOG'],'listenerPath':'/run/seccomp.sock',"
    "   'listenerMetadata':'meta',"
    "   'syscalls':[{'names':['read','write'],'action':'SCMP_ACT_ALLOW'},"
    "    {'names':['personality'],'action':'SCMP_ACT_ERRNO','errnoRet':38,"
    "     'args':[{'index':0,'value':4294967295,'valueTwo':18446744073709551615,"
    "      'op':'SCMP_CMP_MASKED_EQ'}]}]},"
    "  'rootfsPropagation':'rslave',"
    "  'maskedPaths':['/proc/kcore'],'readonlyPaths':['/proc/sys','/proc/bus'],"
    "  'mountLabel':'system_u:object_r',"
    "  'personality':{'domain':'LINUX32','flags':[]}"
    " }"
    "}";

static void test_full(void)
{
	struct ward_err err;
	struct ward_spec *s = parse(full_config, &err);
	const struct ward_process *p;
	const struct ward_linux *l;

	CHECK(s != NULL, "full config parses");
	if (!s) {
		printf("#   error: %s\n", err.msg);
		return;
	}
	CHECK(STREQ(s->oci_version, "1.3.0"), "ociVersion");
	CHECK(STREQ(s->root_path, "/srv/rootfs") && s->root_readonly, "root");

	CHECK(s->n_mounts == 3, "3 mounts");
	CHECK(STREQ(s->mounts[0].destination, "/proc") && STREQ(s->mounts[0].type, "proc") &&
		  STREQ(s->mounts[0].source, "proc") && s->mounts[0].options &&
		  !s->mounts[0].options[0],
	      "mounts[0]: proc keeps its relative source, empty options vector");
	CHECK(STREQ(s->mounts[1].source, BUNDLE "/data"), "bind mount source made absolute");
	CHECK(strv_eq(s->mounts[1].options, STRV("rbind", "ro")), "mounts[1].options");
	CHECK(s->mounts[1].uid_mappings.n == 1 &&
		  s->mounts[1].uid_mappings.v[0].host_id == 100000 &&
		  s->mounts[1].uid_mappings.v[0].size == 65536,
	      "mounts[1].uidMappings");
	CHECK(s->mounts[1].gid_mappings.n == 1 &&
		  s->mounts[1].gid_mappings.v[0].host_id == 200000 &&
		  s->mounts[1].gid_mappings.v[0].size == 1000,
	      "mounts[1].gidMappings");
	CHECK(STREQ(s->mounts[2].destination, "cache") && s->mounts[2].type == NULL &&
		  STREQ(s->mounts[2].source, "/var/cache"),
	      "mounts[2]: relative destination kept, no type");

	p = s->process;
	CHECK(p != NULL, "process present");
	if (p) {
		CHECK(p->terminal && p->has_console_size && p->console_height == 24 &&
			  p->console_width == 80,
		      "terminal, consoleSize");
		CHECK(p->user.uid == 1000 && p->user.gid == 1001, "user uid/gid");
		CHECK(p->user.has_umask && p->user.umask == 18, "user.umask");
		CHECK(p->user.n_additional_gids == 2 && p->user.additional_gids[0] == 5 &&
			  p->user.additional_gids[1] == 27,
		      "user.additionalGids");
		CHECK(strv_eq(p->args, STRV("/bin/app", "--port", "8080")), "args");
		CHECK(strv_eq(p->env, STRV("PATH=/usr/bin", "EMPTY=")), "env");
		CHECK(STREQ(p->cwd, "/work"), "cwd");
		CHECK(p->has_capabilities, "has_capabilities");
		CHECK(strv_eq(p->capabilities.bounding, STRV("CAP_KILL", "CAP_CHOWN")) &&
			  strv_eq(p->capabilities.effective, STRV("CAP_KILL")) &&
			  strv_eq(p->capabilities.permitted, STRV("CAP_KILL")) &&
			  strv_eq(p->capabilities.ambient, STRV("CAP_KILL")),
		      "capability sets");
		CHECK(p->capabilities.inheritable && !p->capabilities.inheritable[0],
		      "empty inheritable set is an empty vector, not NULL");
		CHECK(p->n_rlimits == 2 && STREQ(p->rlimits[0].type, "RLIMIT_NOFILE") &&
			  p->rlimits[0].hard == 4096 && p->rlimits[0].soft == 1024,
		      "rlimits[0]");
		CHECK(p->n_rlimits == 2 && p->rlimits[1].hard == UINT64_MAX &&
			  p->rlimits[1].soft == UINT64_MAX,
		      "rlimits[1]: 18446744073709551615 (RLIM_INFINITY as Go writes it)");
		CHECK(p->no_new_privileges, "noNewPrivileges");
		CHECK(STREQ(p->apparmor_profile, "ward-default"), "apparmorProfile");
		CHECK(STREQ(p->selinux_label, "system_u:r"), "selinuxLabel");
		CHECK(p->has_oom_score_adj && p->oom_score_adj == -500, "oomScoreAdj");
		CHECK(p->has_io_priority && STREQ(p->io_priority_class, "IOPRIO_CLASS_BE") &&
			  p->io_priority == 4,
		      "ioPriority");
		CHECK(p->has_scheduler && STREQ(p->scheduler.policy, "SCHED_DEADLINE") &&
			  p->scheduler.nice == -5 && p->scheduler.priority == 3 &&
			  strv_eq(p->scheduler.flags, STRV("SCHED_FLAG_RESET_ON_FORK")) &&
			  p->scheduler.runtime == 1000000 && p->scheduler.deadline == 2000000 &&
			  p->scheduler.period == 3000000,
		      "scheduler");
	}

	CHECK(STREQ(s->hostname, "web-1") && STREQ(s->domainname, "example.org"),
	      "hostname, domainname");
	CHECK(s->hooks[WARD_HOOK_PRESTART].n == 1 &&
		  STREQ(s->hooks[WARD_HOOK_PRESTART].v[0].path, "/usr/bin/pre") &&
		  s->hooks[WARD_HOOK_PRESTART].v[0].args == NULL &&
		  s->hooks[WARD_HOOK_PRESTART].v[0].timeout == 0,
	      "hooks.prestart");
	CHECK(s->hooks[WARD_HOOK_CREATE_RUNTIME].n == 2 &&
		  strv_eq(s->hooks[WARD_HOOK_CREATE_RUNTIME].v[0].args, STRV("net-hook", "up")) &&
		  strv_eq(s->hooks[WARD_HOOK_CREATE_RUNTIME].v[0].env, STRV("A=1")) &&
		  s->hooks[WARD_HOOK_CREATE_RUNTIME].v[0].timeout == 5 &&
		  STREQ(s->hooks[WARD_HOOK_CREATE_RUNTIME].v[1].path, "/usr/bin/second"),
	      "hooks.createRuntime");
	CHECK(s->hooks[WARD_HOOK_CREATE_CONTAINER].n == 1 &&
		  STREQ(s->hooks[WARD_HOOK_CREATE_CONTAINER].v[0].path, "/cc") &&
		  s->hooks[WARD_HOOK_START_CONTAINER].n == 1 &&
		  STREQ(s->hooks[WARD_HOOK_START_CONTAINER].v[0].path, "/sc") &&
		  s->hooks[WARD_HOOK_POSTSTART].n == 1 &&
		  STREQ(s->hooks[WARD_HOOK_POSTSTART].v[0].path, "/ps"),
	      "hooks.createContainer, startContainer, poststart");
	CHECK(s->hooks[WARD_HOOK_POSTSTOP].n == 1 &&
		  s->hooks[WARD_HOOK_POSTSTOP].v[0].timeout == 30,
	      "hooks.poststop");
	CHECK(STREQ(ward_spec_annotation(s, "io.ward.tenant"), "blue") &&
		  STREQ(ward_spec_annotation(s, "org.example.team"), "infra"),
	      "annotations");
	CHECK(ward_spec_annotation(s, "nope") == NULL, "absent annotation is NULL");

	l = &s->linux;
	CHECK(l->n_namespaces == 8, "8 namespaces");
	CHECK(ward_spec_ns(s, CLONE_NEWNET) &&
		  STREQ(ward_spec_ns(s, CLONE_NEWNET)->path, "/var/run/netns/web"),
	      "network namespace joined by path");
	CHECK(ward_spec_ns(s, CLONE_NEWPID) && ward_spec_ns(s, CLONE_NEWPID)->path == NULL,
	      "new pid namespace");
	CHECK(ward_spec_ns(s, CLONE_NEWTIME) && ward_spec_ns(s, CLONE_NEWCGROUP) &&
		  ward_spec_ns(s, CLONE_NEWUSER) && ward_spec_ns(s, CLONE_NEWNS) &&
		  ward_spec_ns(s, CLONE_NEWIPC) && ward_spec_ns(s, CLONE_NEWUTS),
	      "all namespace types mapped to CLONE_* flags");
	CHECK(l->uid_mappings.n == 1 && l->uid_mappings.v[0].container_id == 0 &&
		  l->uid_mappings.v[0].host_id == 100000 && l->uid_mappings.v[0].size == 65536,
	      "linux.uidMappings");
	CHECK(l->gid_mappings.n == 2 && l->gid_mappings.v[1].container_id == 65536 &&
		  l->gid_mappings.v[1].host_id == 300000 && l->gid_mappings.v[1].size == 1,
	      "linux.gidMappings");
	CHECK(l->time_monotonic.set && l->time_monotonic.secs == -3600 &&
		  l->time_monotonic.nanosecs == 5,
	      "timeOffsets.monotonic");
	CHECK(l->time_boottime.set && l->time_boottime.secs == 86400 &&
		  l->time_boottime.nanosecs == 0,
	      "timeOffsets.boottime");
	CHECK(l->n_devices == 2 && l->devices[0].type == 'c' &&
		  STREQ(l->devices[0].path, "/dev/fuse") && l->devices[0].major == 10 &&
		  l->devices[0].minor == 229 && l->devices[0].has_file_mode &&
		  l->devices[0].file_mode == 438 && l->devices[0].has_uid && l->devices[0].has_gid,
	      "devices[0]");
	CHECK(l->n_devices == 2 && l->devices[1].type == 'p' && !l->devices[1].has_file_mode &&
		  !l->devices[1].has_uid,
	      "devices[1]: FIFO without major/minor");
	CHECK(STREQ(l->cgroups_path, "/ward/web-1"), "cgroupsPath");
	CHECK(l->has_resources && l->resources.has_memory && l->resources.memory.limit.set &&
		  l->resources.memory.limit.v == 536870912 && !l->resources.memory.swap.set &&
		  l->resources.has_pids && l->resources.pids_limit.set &&
		  l->resources.pids_limit.v == -1 && !l->resources.has_cpu,
	      "resources typed: memory.limit, pids.limit, the rest unset");
	CHECK(strv_eq(l->sysctl_keys, STRV("net.ipv4.ip_forward", "kernel.shm_rmid_forced")) &&
		  strv_eq(l->sysctl_values, STRV("1", "1")),
	      "sysctl");
	CHECK(l->seccomp != NULL, "seccomp present");
	if (l->seccomp) {
		const struct ward_seccomp *sc = l->seccomp;
		CHECK(STREQ(sc->default_action, "SCMP_ACT_ERRNO") && sc->has_default_errno_ret &&
			  sc->default_errno_ret == 1,
		      "seccomp.defaultAction, defaultErrnoRet");
		CHECK(strv_eq(sc->architectures, STRV("SCMP_ARCH_X86_64", "SCMP_ARCH_X86")) &&
			  strv_eq(sc->flags, STRV("SECCOMP_FILTER_FLAG_LOG")),
		      "seccomp.architectures, flags");
		CHECK(STREQ(sc->listener_path, "/run/seccomp.sock") &&
			  STREQ(sc->listener_metadata, "meta"),
		      "seccomp.listenerPath, listenerMetadata");
		CHECK(sc->n_syscalls == 2 &&
			  strv_eq(sc->syscalls[0].names, STRV("read", "write")) &&
			  STREQ(sc->syscalls[0].action, "SCMP_ACT_ALLOW") &&
			  !sc->syscalls[0].has_errno_ret && sc->syscalls[0].n_args == 0,
		      "seccomp.syscalls[0]");
		CHECK(sc->n_syscalls == 2 && sc->syscalls[1].has_errno_ret &&
			  sc->syscalls[1].errno_ret == 38 && sc->syscalls[1].n_args == 1 &&
			  sc->syscalls[1].args[0].index == 0 &&
			  sc->syscalls[1].args[0].value == 4294967295u &&
			  sc->syscalls[1].args[0].value_two == UINT64_MAX &&
			  STREQ(sc->syscalls[1].args[0].op, "SCMP_CMP_MASKED_EQ"),
		      "seccomp.syscalls[1] with args");
	}
	CHECK(STREQ(l->rootfs_propagation, "rslave"), "rootfsPropagation");
	CHECK(strv_eq(l->masked_paths, STRV("/proc/kcore")) &&
		  strv_eq(l->readonly_paths, STRV("/proc/sys", "/proc/bus")),
	      "maskedPaths, readonlyPaths");
	CHECK(STREQ(l->mount_label, "system_u:object_r"), "mountLabel");
	CHECK(l->personality && STREQ(l->personality->domain, "LINUX32") && l->personality->flags &&
		  !l->personality->flags[0],
	      "personality");
	ward_spec_free(s);
}

static void test_minimal(void)
{
	struct ward_err err;
	struct ward_spec *s = parse(MIN "}", &err);
	CHECK(s != NULL, "minimal config (no process) parses");
	if (!s)
		return;
	CHECK(s->process == NULL && s->n_mounts == 0 && s->linux.n_namespaces == 0 &&
		  s->linux.seccomp == NULL && s->linux.personality == NULL &&
		  !s->linux.has_resources && s->annotation_keys == NULL &&
		  s->hooks[WARD_HOOK_POSTSTOP].n == 0,
	      "absent sections are empty");
	CHECK(STREQ(s->root_path, BUNDLE "/rootfs"), "relative root.path resolved against bundle");
	ward_spec_free(s);

	s = parse(P("'user':{'uid':0,'gid':0,'additionalGids':[]}"), &err);
	CHECK(s && s->process && s->process->user.uid == 0 && !s->process->user.has_umask &&
		  s->process->env == NULL && !s->process->has_capabilities &&
		  !s->process->has_oom_score_adj && !s->process->has_scheduler,
	      "process without optional fields");
	ward_spec_free(s);

	s = parse(MIN ",'hostname':null,'linux':{'seccomp':null},'process':null}", &err);
	CHECK(s && s->hostname == NULL && s->linux.seccomp == NULL && s->process == NULL,
	      "JSON null reads as absent");
	ward_spec_free(s);
}

static void test_default(bool rootless)
{
	struct ward_err err;
	cleanup_free char *json =
	    ward_spec_default_json(rootless, ward_policy_masked_paths, ward_policy_readonly_paths);
	struct ward_spec *s;
	const struct ward_mount *sys = NULL, *pts = NULL;
	const char *name = rootless ? "rootless default" : "default";
	char buf[128];

	CHECK(json != NULL, name);
	s = ward_spec_parse(json, strlen(json), BUNDLE, &err);
	snprintf(buf, sizeof(buf), "%s spec parses back", name);
	CHECK(s != NULL, buf);
	if (!s) {
		printf("#   error: %s\n", err.msg);
		return;
	}
	CHECK(STREQ(s->oci_version, WARD_OCI_VERSION), "default: ociVersion 1.3.0");
	CHECK(s->process && strv_eq(s->process->args, STRV("sh")) && s->process->terminal &&
		  STREQ(s->process->cwd, "/") && s->process->no_new_privileges,
	      "default: sh on a terminal in /");
	CHECK(STREQ(s->root_path, BUNDLE "/rootfs") && s->root_readonly, "default: rootfs ro");
	CHECK(s->n_mounts == 7, "default: 7 mounts");
	for (size_t i = 0; i < s->n_mounts; i++) {
		if (STREQ(s->mounts[i].destination, "/sys"))
			sys = &s->mounts[i];
		if (STREQ(s->mounts[i].destination, "/dev/pts"))
			pts = &s->mounts[i];
	}
	CHECK(sys && pts, "default: /sys and /dev/pts mounts");
	CHECK(s->linux.masked_paths && s->linux.readonly_paths && s->linux.n_namespaces >= 5,
	      "default: masked/readonly paths, namespaces");
	CHECK(ward_spec_ns(s, CLONE_NEWPID) && ward_spec_ns(s, CLONE_NEWIPC) &&
		  ward_spec_ns(s, CLONE_NEWUTS) && ward_spec_ns(s, CLONE_NEWNS) &&
		  ward_spec_ns(s, CLONE_NEWCGROUP),
	      "default: pid ipc uts mount cgroup namespaces");
	if (!rootless) {
		CHECK(ward_spec_ns(s, CLONE_NEWNET) && !ward_spec_ns(s, CLONE_NEWUSER),
		      "default: network namespace, no user namespace");
		CHECK(sys && STREQ(sys->type, "sysfs"), "default: sysfs");
		CHECK(pts && strv_eq(pts->options, STRV("nosuid", "noexec", "newinstance",
							"ptmxmode=0666", "mode=0620", "gid=5")),
		      "default: devpts gid=5");
		CHECK(s->linux.has_resources && s->linux.resources.has_devices &&
			  s->linux.resources.n_devices >= 1 && !s->linux.resources.devices[0].allow,
		      "default: device cgroup denies all");
	} else {
		CHECK(!ward_spec_ns(s, CLONE_NEWNET) && ward_spec_ns(s, CLONE_NEWUSER),
		      "rootless: user namespace, no network namespace");
		CHECK(s->linux.uid_mappings.n == 1 &&
			  s->linux.uid_mappings.v[0].container_id == 0 &&
			  s->linux.uid_mappings.v[0].host_id == geteuid() &&
			  s->linux.uid_mappings.v[0].size == 1,
		      "rootless: euid mapped to 0");
		CHECK(s->linux.gid_mappings.n == 1 &&
			  s->linux.gid_mappings.v[0].host_id == getegid(),
		      "rootless: egid mapped to 0");
		CHECK(sys && STREQ(sys->source, "/sys") && sys->options &&
			  STREQ(sys->options[0], "rbind"),
		      "rootless: /sys rbind from host");
		CHECK(pts && strv_eq(pts->options, STRV("nosuid", "noexec", "newinstance",
							"ptmxmode=0666", "mode=0620")),
		      "rootless: devpts without gid=5");
		CHECK(!s->linux.has_resources, "rootless: no resources");
	}
	ward_spec_free(s);
}

static void test_bad_top(void)
{
	expect_err("{'ociVersion': }", "config.json: invalid JSON at line 1 column",
		   "malformed JSON");
	expect_err("{\n'ociVersion':'1.3.0',\n'root': {'path' 'x'}}",
		   "config.json: invalid JSON at line 3 column", "malformed JSON: line reported");
	expect_err("", "config.json: invalid JSON", "empty document");
	expect_err("['ociVersion']", "config.json: must be a JSON object", "top level array");
	expect_err(MIN "} trailing", "config.json: invalid JSON", "trailing garbage");
	expect_err(MIN ",'hostname':'a','hostname':'b'}", "duplicate object key",
		   "duplicate keys refused");
	expect_err(MIN ",'hostname':'a\\u0000b'}", "config.json: invalid JSON",
		   "\\u0000 inside a string refused");
	expect_err("{'ociVersion':'1.3.0'}", "config.json: root: missing", "missing root");
	expect_err("{'ociVersion':'1.3.0','root':'rootfs'}", "config.json: root: must be an object",
		   "root not an object");
	expect_err("{'ociVersion':'1.3.0','root':{}}", "config.json: root.path: missing",
		   "missing root.path");
	expect_err("{'ociVersion':'1.3.0','root':{'path':7}}",
		   "config.json: root.path: must be a string", "root.path not a string");
	expect_err("{'ociVersion':'1.3.0','root':{'path':'r','readonly':'yes'}}",
		   "config.json: root.readonly: must be a boolean", "root.readonly not a bool");
	expect_err("{'root':{'path':'rootfs'}}", "config.json: ociVersion: missing",
		   "missing ociVersion");
	expect_err("{'ociVersion':1,'root':{'path':'rootfs'}}",
		   "config.json: ociVersion: must be a string", "ociVersion not a string");
	expect_err(MIN ",'hostname':18446744073709551615}",
		   "config.json: hostname: must be a string",
		   "huge integer where a string belongs");
	expect_err(MIN ",'annotations':{'a':'b','c':1}}",
		   "config.json: annotations.c: must be a string", "annotation value not a string");
	expect_err(MIN ",'annotations':['a']}", "config.json: annotations: must be an object",
		   "annotations not an object");

	struct ward_err err;
	cleanup_free char *json = J(MIN "}");
	CHECK(ward_spec_parse(json, strlen(json), "relative/bundle", &err) == NULL,
	      "relative bundle");
	CHECK_STR_CONTAINS(err.msg, "not an absolute path", "relative bundle message");
	CHECK(ward_spec_parse(NULL, 0, BUNDLE, &err) == NULL, "NULL text refused");
}

static void test_bad_process(void)
{
	expect_err(MIN ",'process':{'args':[],'cwd':'/'}}",
		   "config.json: process.args: must be a non-empty array", "process.args empty");
	expect_err(MIN ",'process':{'args':'sh','cwd':'/'}}",
		   "config.json: process.args: must be a non-empty array",
		   "process.args not array");
	expect_err(MIN ",'process':{'cwd':'/'}}",
		   "config.json: process.args: must be a non-empty array", "process.args missing");
	expect_err(MIN ",'process':{'args':['sh',1],'cwd':'/'}}",
		   "config.json: process.args[1]: must be a string", "process.args non-string");
	expect_err(MIN ",'process':{'args':['sh'],'cwd':'work'}}",
		   "config.json: process.cwd: must be an absolute path", "relative cwd");
	expect_err(MIN ",'process':{'args':['sh']}}", "config.json: process.cwd: missing",
		   "missing cwd");
	expect_err(MIN ",'process':['sh']}", "config.json: process: must be an object",
		   "process not an object");
	expect_err(P("'user':{'uid':'0','gid':0}"),
		   "config.json: process.user.uid: must be a non-negative integer", "uid string");
	expect_err(P("'user':{'uid':-1,'gid':0}"),
		   "config.json: process.user.uid: must be a non-negative integer", "negative uid");
	expect_err(P("'user':{'uid':0,'gid':1.5}"),
		   "config.json: process.user.gid: must be a non-negative integer", "float gid");
	expect_err(P("'user':{'uid':4294967296,'gid':0}"),
		   "config.json: process.user.uid: must be at most 4294967295", "uid above uint32");
	expect_err(P("'user':{'gid':0}"), "config.json: process.user.uid: missing", "missing uid");
	expect_err(P("'user':{'uid':0}"), "config.json: process.user.gid: missing", "missing gid");
	expect_err(P("'user':{'uid':0,'gid':0,'additionalGids':[1,-2]}"),
		   "config.json: process.user.additionalGids[1]: must be a non-negative integer",
		   "negative additional gid");
	expect_err(P("'terminal':'yes'"), "config.json: process.terminal: must be a boolean",
		   "terminal not a bool");
	expect_err(P("'consoleSize':{'height':24}"),
		   "config.json: process.consoleSize.width: missing", "consoleSize without width");
	expect_err(P("'env':['A=1','B']"), "config.json: process.env[1]: must be KEY=VALUE",
		   "env entry without =");
	expect_err(P("'env':'A=1'"), "config.json: process.env: must be an array of strings",
		   "env not an array");
	expect_err(P("'capabilities':{'bounding':'CAP_KILL'}"),
		   "config.json: process.capabilities.bounding: must be an array of strings",
		   "capability set not an array");
	expect_err(P("'rlimits':[{'type':'RLIMIT_NOFILE','hard':1,'soft':1},"
		     "{'type':'RLIMIT_NOFILE','hard':2,'soft':2}]"),
		   "config.json: process.rlimits[1].type: duplicate RLIMIT_NOFILE",
		   "duplicate rlimit");
	expect_err(P("'rlimits':[{'type':'RLIMIT_NOFILE','hard':-1,'soft':1}]"),
		   "config.json: process.rlimits[0].hard: must be a non-negative integer",
		   "negative rlimit");
	expect_err(P("'rlimits':[{'type':'RLIMIT_NOFILE','hard':1}]"),
		   "config.json: process.rlimits[0].soft: missing", "rlimit without soft");
	expect_err(P("'rlimits':[{'type':'RLIMIT_NOFILE','hard':18446744073709551616,'soft':1}]"),
		   "config.json: invalid JSON", "rlimit above uint64");
	expect_err(P("'oomScoreAdj':1001"),
		   "config.json: process.oomScoreAdj: must be an integer between -1000 and 1000",
		   "oomScoreAdj out of range");
	expect_err(P("'oomScoreAdj':'5'"), "config.json: process.oomScoreAdj: must be an integer",
		   "oomScoreAdj not a number");
	expect_err(P("'scheduler':{'nice':1}"), "config.json: process.scheduler.policy: missing",
		   "scheduler without policy");
	expect_err(P("'scheduler':{'policy':'SCHED_OTHER','runtime':-1}"),
		   "config.json: process.scheduler.runtime: must be a non-negative integer",
		   "negative scheduler runtime");
	expect_err(P("'ioPriority':{'priority':1}"),
		   "config.json: process.ioPriority.class: missing", "ioPriority without class");
	expect_err(P("'noNewPrivileges':1"),
		   "config.json: process.noNewPrivileges: must be a boolean",
		   "noNewPrivileges not a bool");
}

static void test_mounts(void)
{
	struct ward_err err;
	struct ward_spec *s;

	expect_err(MIN ",'mounts':{}}", "config.json: mounts: must be an array",
		   "mounts not array");
	expect_err(MIN ",'mounts':['/proc']}", "config.json: mounts[0]: must be an object",
		   "mount not an object");
	expect_err(MIN ",'mounts':[{'destination':1}]}",
		   "config.json: mounts[0].destination: must be a string",
		   "destination not a string");
	expect_err(MIN ",'mounts':[{'destination':'/a'},{'type':'tmpfs'}]}",
		   "config.json: mounts[1].destination: missing", "destination missing");
	expect_err(MIN ",'mounts':[{'destination':''}]}",
		   "config.json: mounts[0].destination: must not be empty", "destination empty");
	expect_err(MIN ",'mounts':[{'destination':'/a','options':['ro',5]}]}",
		   "config.json: mounts[0].options[1]: must be a string", "option not a string");
	expect_err(
	    MIN ",'mounts':[{'destination':'/a','uidMappings':[{'containerID':0,'hostID':1}]}]}",
	    "config.json: mounts[0].uidMappings[0].size: missing", "mount idmap without size");

	s = parse(MIN ",'mounts':["
		      "{'destination':'/a','type':'bind','source':'vol/a'},"
		      "{'destination':'/b','type':'none','source':'b','options':['rbind']},"
		      "{'destination':'/c','source':'./c','options':['bind','ro']},"
		      "{'destination':'/d','type':'bind','source':'/abs/d'},"
		      "{'destination':'/e','type':'tmpfs','source':'tmpfs'}]}",
		  &err);
	CHECK(s != NULL, "bind mounts parse");
	if (s) {
		CHECK(STREQ(s->mounts[0].source, BUNDLE "/vol/a"), "type bind: source resolved");
		CHECK(STREQ(s->mounts[1].source, BUNDLE "/b"), "rbind option: source resolved");
		CHECK(STREQ(s->mounts[2].source, BUNDLE "/./c"), "bind option: source resolved");
		CHECK(STREQ(s->mounts[3].source, "/abs/d"), "absolute bind source unchanged");
		CHECK(STREQ(s->mounts[4].source, "tmpfs"), "non-bind source unchanged");
	}
	ward_spec_free(s);

	/* The bundle "/" gives "/rootfs", not "//rootfs". */
	cleanup_free char *json = J(MIN "}");
	s = ward_spec_parse(json, strlen(json), "/", &err);
	CHECK(s && STREQ(s->root_path, "/rootfs"), "root.path against bundle /");
	ward_spec_free(s);
	s = parse("{'ociVersion':'1.3.0','root':{'path':'/abs/rootfs'}}", &err);
	CHECK(s && STREQ(s->root_path, "/abs/rootfs"), "absolute root.path unchanged");
	ward_spec_free(s);
}

static void test_hooks(void)
{
	expect_err(MIN ",'hooks':{'prestart':[{'path':'hook.sh'}]}}",
		   "config.json: hooks.prestart[0].path: must be an absolute path",
		   "relative hook");
	expect_err(MIN ",'hooks':{'poststop':[{'path':'/a'},{'args':['x']}]}}",
		   "config.json: hooks.poststop[1].path: missing", "hook without path");
	expect_err(MIN ",'hooks':{'createRuntime':[{'path':'/a','timeout':0}]}}",
		   "config.json: hooks.createRuntime[0].timeout: must be an integer greater than 0",
		   "hook timeout 0");
	expect_err(MIN ",'hooks':{'createRuntime':[{'path':'/a','timeout':1.5}]}}",
		   "config.json: hooks.createRuntime[0].timeout: must be an integer greater than 0",
		   "hook timeout float");
	expect_err(MIN ",'hooks':{'startContainer':{'path':'/a'}}}",
		   "config.json: hooks.startContainer: must be an array", "hook list not an array");
	expect_err(MIN ",'hooks':{'poststart':[{'path':'/a','env':['NOEQUALS']}]}}",
		   "config.json: hooks.poststart[0].env[0]: must be KEY=VALUE",
		   "hook env without =");
	expect_ok(MIN ",'hooks':{'someFutureHook':[{'path':'relative'}]}}",
		  "unknown hook kinds ignored");
}

static void test_linux(void)
{
	struct ward_err err;
	struct ward_spec *s;

	expect_err(L("'namespaces':[{'type':'pid'},{'type':'ipc'},{'type':'foo'}]"),
		   "config.json: linux.namespaces[2].type: unknown namespace type \"foo\"",
		   "unknown namespace type");
	expect_err(L("'namespaces':[{'type':'pid'},{'type':'pid','path':'/proc/1/ns/pid'}]"),
		   "config.json: linux.namespaces[1].type: duplicate namespace \"pid\"",
		   "duplicate namespace");
	expect_err(L("'namespaces':[{'type':'network','path':'run/netns/x'}]"),
		   "config.json: linux.namespaces[0].path: must be an absolute path",
		   "relative namespace path");
	expect_err(L("'namespaces':[{'path':'/proc/1/ns/net'}]"),
		   "config.json: linux.namespaces[0].type: missing", "namespace without type");
	expect_err(L("'namespaces':{'type':'pid'}"),
		   "config.json: linux.namespaces: must be an array", "namespaces not an array");
	expect_err(L("'uidMappings':[{'containerID':0,'hostID':1000,'size':1}]"),
		   "config.json: linux.uidMappings: requires a user namespace",
		   "uidMappings without user namespace");
	expect_err(L("'gidMappings':[{'containerID':0,'hostID':1000,'size':1}]"),
		   "config.json: linux.gidMappings: requires a user namespace",
		   "gidMappings without user namespace");
	expect_err(L("'namespaces':[{'type':'user'}]"),
		   "config.json: linux.uidMappings: required for a new user namespace",
		   "new user namespace without mappings");
	expect_err(L("'namespaces':[{'type':'user'}],"
		     "'uidMappings':[{'containerID':0,'hostID':1000,'size':1}]"),
		   "config.json: linux.gidMappings: required for a new user namespace",
		   "new user namespace without gidMappings");
	expect_ok(L("'namespaces':[{'type':'user','path':'/proc/42/ns/user'}]"),
		  "joined user namespace needs no mappings");
	expect_err(L("'uidMappings':[{'containerID':0,'hostID':-1,'size':1}],"
		     "'namespaces':[{'type':'user'}]"),
		   "config.json: linux.uidMappings[0].hostID: must be a non-negative integer",
		   "negative hostID");
	expect_ok(L("'uidMappings':[],'gidMappings':[]"), "empty mappings need no user namespace");
	expect_err(L("'timeOffsets':{'monotonic':{'secs':10}}"),
		   "config.json: linux.timeOffsets: requires a time namespace",
		   "timeOffsets without time namespace");
	expect_err(L("'namespaces':[{'type':'time','path':'/proc/1/ns/time'}],"
		     "'timeOffsets':{'boottime':{'secs':10}}"),
		   "config.json: linux.timeOffsets: cannot be set when joining",
		   "timeOffsets with a joined time namespace");
	expect_err(L("'namespaces':[{'type':'time'}],'timeOffsets':{'realtime':{'secs':1}}"),
		   "config.json: linux.timeOffsets.realtime: unknown clock", "unknown clock");
	expect_err(
	    L("'namespaces':[{'type':'time'}],"
	      "'timeOffsets':{'monotonic':{'nanosecs':1000000000}}"),
	    "config.json: linux.timeOffsets.monotonic.nanosecs: must be less than 1000000000",
	    "nanosecs out of range");
	expect_ok(L("'namespaces':[{'type':'time'}],'timeOffsets':{'monotonic':{'secs':-5}}"),
		  "timeOffsets with a new time namespace");
	expect_err(MIN ",'hostname':'web'}", "config.json: hostname: requires a uts namespace",
		   "hostname without uts namespace");
	/* the tenant decides (container.c): runc names a joined one */
	expect_ok(MIN ",'hostname':'web','linux':{'namespaces':[{'type':'uts',"
		      "'path':'/proc/1/ns/uts'}]}}",
		  "hostname with a joined uts namespace");
	expect_err(MIN ",'domainname':'example.org'}",
		   "config.json: domainname: requires a uts namespace",
		   "domainname without uts namespace");
	expect_ok(MIN ",'hostname':'','linux':{}}", "empty hostname needs no uts namespace");
	expect_ok(MIN ",'hostname':'web','linux':{'namespaces':[{'type':'uts'}]}}",
		  "hostname with a new uts namespace");
	expect_err(L("'devices':[{'type':'x','path':'/dev/x','major':1,'minor':1}]"),
		   "config.json: linux.devices[0].type: unknown device type \"x\"",
		   "bad device type");
	expect_err(L("'devices':[{'type':'cb','path':'/dev/x','major':1,'minor':1}]"),
		   "config.json: linux.devices[0].type: unknown device type \"cb\"",
		   "two-letter device type");
	expect_err(L("'devices':[{'type':'c','path':'/dev/x','minor':1}]"),
		   "config.json: linux.devices[0].major: missing", "char device without major");
	expect_err(L("'devices':[{'type':'b','path':'/dev/x','major':8}]"),
		   "config.json: linux.devices[0].minor: missing", "block device without minor");
	expect_err(L("'devices':[{'type':'c','path':'dev/x','major':1,'minor':1}]"),
		   "config.json: linux.devices[0].path: must be an absolute path",
		   "relative device path");
	expect_err(L("'devices':[{'type':'c','path':'/dev/x','major':-1,'minor':1}]"),
		   "config.json: linux.devices[0].major: must be a non-negative integer",
		   "negative major");
	expect_err(L("'resources':[]"), "config.json: linux.resources: must be an object",
		   "resources not an object");
	expect_err(L("'sysctl':{'net.ipv4.ip_forward':1}"),
		   "config.json: linux.sysctl.net.ipv4.ip_forward: must be a string",
		   "sysctl value not a string");
	expect_err(L("'seccomp':{'syscalls':[]}"),
		   "config.json: linux.seccomp.defaultAction: missing",
		   "seccomp without defaultAction");
	expect_err(L("'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':[],"
		     "'action':'SCMP_ACT_ERRNO'}]}"),
		   "config.json: linux.seccomp.syscalls[0].names: must be a non-empty array",
		   "seccomp rule with no names");
	expect_err(L("'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'action':'x'}]}"),
		   "config.json: linux.seccomp.syscalls[0].names: missing",
		   "seccomp rule without names");
	expect_err(
	    L("'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['read']}]}"),
	    "config.json: linux.seccomp.syscalls[0].action: missing",
	    "seccomp rule without action");
	expect_err(
	    L("'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','syscalls':[{'names':['read'],"
	      "'action':'SCMP_ACT_ALLOW','args':[{'index':6,'value':1,'op':'SCMP_CMP_EQ'}]}]}"),
	    "config.json: linux.seccomp.syscalls[0].args[0].index: must be an integer between 0 "
	    "and 5",
	    "seccomp arg index out of range");
	expect_err(L("'personality':{'flags':[]}"),
		   "config.json: linux.personality.domain: missing", "personality without domain");
	expect_err(L("'maskedPaths':'/proc/kcore'"),
		   "config.json: linux.maskedPaths: must be an array of strings",
		   "maskedPaths not an array");
	expect_err(MIN ",'linux':[]}", "config.json: linux: must be an object",
		   "linux not an object");

	/* linux.resources is typed with the spec: a bad value fails the parse, with the
	 * field's path (before, the text was kept and the value refused at apply). */
	expect_err(L("'resources':{'cpu':{'shares':18446744073709551615,'cpus':'0-3'},"
		     "'memory':{'limit':-1}}"),
		   "config.json: linux.resources.cpu.shares: must be at most 9223372036854775807",
		   "huge integer in resources refused at parse");
	expect_err(L("'resources':{'memory':{'limit':-5}}"),
		   "config.json: linux.resources.memory.limit: -5 is not a limit (-1 or > 0)",
		   "negative memory limit refused at parse");
	expect_err(L("'resources':{'devices':[{'allow':'yes'}]}"),
		   "config.json: linux.resources.devices[0].allow: expected true or false",
		   "bad device rule refused at parse");
	s = parse(L("'resources':{'cpu':{'shares':1024,'cpus':'0-3'},'memory':{'limit':-1}}"),
		  &err);
	CHECK(s && s->linux.resources.cpu.shares.set && s->linux.resources.cpu.shares.v == 1024 &&
		  STREQ(s->linux.resources.cpu.cpus, "0-3") &&
		  s->linux.resources.memory.limit.v == -1,
	      "resources: cpu and memory typed");
	ward_spec_free(s);
}

static void test_unknown_ignored(void)
{
	struct ward_err err;
	struct ward_spec *s =
	    parse("{'ociVersion':'1.3.0','someFuture':{'x':[1,2]},'root':{'path':'r','z':1},"
		  "'process':{'args':['sh'],'cwd':'/','futureField':{'initial':'0'},'q':null},"
		  "'mounts':[{'destination':'/a','extra':true}],"
		  "'linux':{'futureLinux':{'closID':'x'},'netDevices':{},'memoryPolicy':{},"
		  "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW','novel':1}},"
		  "'windows':{'layerFolders':[]},'vm':{}}",
		  &err);
	CHECK(s != NULL, "unknown properties ignored");
	if (!s)
		printf("#   error: %s\n", err.msg);
	ward_spec_free(s);
}

static void test_process_parse(void)
{
	struct ward_err err;
	cleanup_free char *ok = J("{'args':['ls','-l'],'cwd':'/tmp','env':['A=b'],"
				  "'user':{'uid':7,'gid':8},'terminal':false,"
				  "'capabilities':{'bounding':['CAP_KILL']}}");
	cleanup_free char *bad_args = J("{'args':[],'cwd':'/'}");
	cleanup_free char *bad_cwd = J("{'args':['ls'],'cwd':'tmp'}");
	cleanup_free char *bad_json = J("{'args':");
	struct ward_process *p = ward_process_parse(ok, strlen(ok), "process.json", &err);

	CHECK(p && strv_eq(p->args, STRV("ls", "-l")) && STREQ(p->cwd, "/tmp") &&
		  p->user.uid == 7 && p->user.gid == 8 && p->has_capabilities &&
		  strv_eq(p->capabilities.bounding, STRV("CAP_KILL")),
	      "process.json parses");
	ward_process_free(p);

	CHECK(ward_process_parse(bad_args, strlen(bad_args), "process.json", &err) == NULL,
	      "process.json: empty args refused");
	CHECK_STR_CONTAINS(err.msg, "process.json: args: must be a non-empty array",
			   "process.json: field path without process. prefix");
	CHECK(ward_process_parse(bad_cwd, strlen(bad_cwd), "process.json: ", &err) == NULL,
	      "process.json: relative cwd refused");
	CHECK(strncmp(err.msg, "process.json: cwd: must be an absolute path", 43) == 0,
	      "what with trailing colon is not doubled");
	CHECK(ward_process_parse(bad_json, strlen(bad_json), "exec.json", &err) == NULL,
	      "process.json: malformed refused");
	CHECK_STR_CONTAINS(err.msg, "exec.json: invalid JSON at line 1", "what names the file");
}

static void test_load(void)
{
	struct ward_err err;
	char dir[] = "/tmp/ward-test-spec-XXXXXX";
	char path[128];
	cleanup_free char *json =
	    J(MIN ",'mounts':[{'destination':'/v','type':'bind','source':'v'}]}");
	struct ward_spec *s;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	s = load_bundle(dir, &err);
	CHECK(s == NULL, "load without config.json fails");
	CHECK_STR_CONTAINS(err.msg, "open config.json: No such file or directory",
			   "load: missing config.json message");
	snprintf(path, sizeof(path), "%s/config.json", dir);
	CHECK(write_file_at(AT_FDCWD, path, O_CREAT | O_TRUNC, 0600, json, strlen(json), &err) == 0,
	      "write config.json");
	s = load_bundle(dir, &err);
	CHECK(s != NULL, "load bundle");
	if (s) {
		char want[160];
		snprintf(want, sizeof(want), "%s/rootfs", dir);
		CHECK(STREQ(s->root_path, want), "load: root.path against bundle dir");
		snprintf(want, sizeof(want), "%s/v", dir);
		CHECK(STREQ(s->mounts[0].source, want), "load: bind source against bundle dir");
	}
	ward_spec_free(s);
	{
		/* over the cap: refused before it is read, naming the file and the cap */
		int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		CHECK(fd >= 0 && ftruncate(fd, (off_t)WARD_SPEC_MAX_BYTES + 1) == 0,
		      "a sparse config.json one byte over the cap");
		if (fd >= 0)
			close(fd);
		s = load_bundle(dir, &err);
		CHECK(s == NULL, "load: a config.json over 4 MiB is refused");
		CHECK_STR_CONTAINS(err.msg,
				   "config.json: 4194305 bytes, over the 4 MiB cap of a spec",
				   "load: naming the file, its size and the cap");
		ward_spec_free(s);
		unlink(path);
		CHECK(mkfifo(path, 0600) == 0, "a FIFO as config.json");
		s = load_bundle(dir, &err);
		CHECK(s == NULL, "load: a FIFO is refused, without waiting for a writer");
		CHECK_STR_CONTAINS(err.msg, "config.json: not a regular file", "load: saying so");
		ward_spec_free(s);
	}
	{
		json_t *ann = json_object();
		char *big = xcalloc(1, WARD_ANN_VALUE_MAX + 2);
		memset(big, 'a', WARD_ANN_VALUE_MAX);
		json_object_set_new(ann, "k", json_string(big));
		CHECK(ward_spec_check_annotations(ann, &err) == 0,
		      "annotations: a value of exactly 64 KiB passes");
		big[WARD_ANN_VALUE_MAX] = 'a';
		json_object_set_new(ann, "example.com/k", json_string(big));
		CHECK(ward_spec_check_annotations(ann, &err) < 0,
		      "annotations: 64 KiB + 1 is refused");
		CHECK_STR_CONTAINS(err.msg,
				   "annotations.example.com/k: 65537 bytes, over the 64 KiB",
				   "annotations: naming the annotation and the cap");
		json_object_del(ann, "example.com/k");
		big[WARD_ANN_VALUE_MAX] = '\0';
		for (int i = 0; i < 4; i++) {
			char k[16];
			snprintf(k, sizeof(k), "k%d", i);
			json_object_set_new(ann, k, json_string(big));
		}
		CHECK(ward_spec_check_annotations(ann, &err) < 0,
		      "annotations: 5 x 64 KiB are over the total cap");
		CHECK_STR_CONTAINS(err.msg, "over the 256 KiB cap of all annotations",
				   "annotations: saying which cap");
		free(big);
		json_decref(ann);
	}
	unlink(path);
	rmdir(dir);
}

static void test_ns_names(void)
{
	CHECK(ward_ns_type_from_name("pid") == CLONE_NEWPID &&
		  ward_ns_type_from_name("network") == CLONE_NEWNET &&
		  ward_ns_type_from_name("mount") == CLONE_NEWNS &&
		  ward_ns_type_from_name("ipc") == CLONE_NEWIPC &&
		  ward_ns_type_from_name("uts") == CLONE_NEWUTS &&
		  ward_ns_type_from_name("user") == CLONE_NEWUSER &&
		  ward_ns_type_from_name("cgroup") == CLONE_NEWCGROUP &&
		  ward_ns_type_from_name("time") == CLONE_NEWTIME,
	      "namespace names -> CLONE_* flags");
	CHECK(ward_ns_type_from_name("net") == 0 && ward_ns_type_from_name(NULL) == 0,
	      "unknown namespace name -> 0");
	CHECK(STREQ(ward_ns_type_name(CLONE_NEWNS), "mount") &&
		  STREQ(ward_ns_type_name(CLONE_NEWNET), "network") &&
		  ward_ns_type_name(0x1) == NULL,
	      "CLONE_* flag -> config name");
	CHECK(STREQ(ward_ns_proc_name(CLONE_NEWNS), "mnt") &&
		  STREQ(ward_ns_proc_name(CLONE_NEWNET), "net") &&
		  STREQ(ward_ns_proc_name(CLONE_NEWPID), "pid") &&
		  STREQ(ward_ns_proc_name(CLONE_NEWIPC), "ipc") &&
		  STREQ(ward_ns_proc_name(CLONE_NEWUTS), "uts") &&
		  STREQ(ward_ns_proc_name(CLONE_NEWUSER), "user") &&
		  STREQ(ward_ns_proc_name(CLONE_NEWCGROUP), "cgroup") &&
		  STREQ(ward_ns_proc_name(CLONE_NEWTIME), "time") && ward_ns_proc_name(0) == NULL,
	      "CLONE_* flag -> /proc/self/ns name");
	CHECK(ward_spec_ns(NULL, CLONE_NEWPID) == NULL && ward_spec_annotation(NULL, "x") == NULL,
	      "lookups on NULL spec");
	ward_spec_free(NULL);
	ward_process_free(NULL);
}

/* ward_spec_to_json: parse -> serialize -> parse gives the same struct (compared through
 * its serialization), and serialize(parse(x)) is x for the specs ward writes. */
static bool same_json(json_t *a, json_t *b, const char *name)
{
	bool eq = json_equal(a, b);
	if (!eq) {
		cleanup_free char *ta = ward_json_dumps(a, JSON_COMPACT);
		cleanup_free char *tb = ward_json_dumps(b, JSON_COMPACT);
		printf("# %s:\n#   got:  %s\n#   want: %s\n", name, ta, tb);
	}
	return eq;
}

static json_t *round_trip(const char *text, const char *name)
{
	struct ward_err err = {0};
	struct ward_spec *s1 = ward_spec_parse(text, strlen(text), BUNDLE, &err), *s2 = NULL;
	json_t *j1 = NULL, *j2 = NULL;
	cleanup_free char *t1 = NULL;

	if (!s1) {
		printf("#   %s: %s\n", name, err.msg);
		CHECK(false, name);
		return NULL;
	}
	j1 = ward_spec_to_json(s1);
	t1 = ward_json_dumps(j1, JSON_COMPACT);
	s2 = ward_spec_parse(t1, strlen(t1), BUNDLE, &err);
	if (s2)
		j2 = ward_spec_to_json(s2);
	CHECK(s2 && same_json(j2, j1, name), name);
	ward_spec_free(s1);
	ward_spec_free(s2);
	json_decref(j2);
	return j1;
}

static void test_to_json(void)
{
	struct ward_err err = {0};
	cleanup_free char *full = J(full_config);
	json_t *want = ward_json_decode(full, strlen(full), &err);
	json_t *got = round_trip(full, "full config: parse -> serialize -> parse is identical");
	char *def;
	json_t *mounts;

	/* The parser makes the bind mount's relative source absolute against the bundle. */
	mounts = json_object_get(want, "mounts");
	json_object_set_new(json_array_get(mounts, 1), "source", json_string(BUNDLE "/data"));
	/* An empty options list and none are one thing (the parser makes both an empty
	 * vector): written as none. */
	json_object_del(json_array_get(mounts, 2), "options");
	CHECK(got && same_json(got, want, "full"),
	      "full config: serialize(parse(x)) is x, every field, big integers as integers");
	json_decref(got);
	json_decref(want);

	for (int rootless = 0; rootless <= 1; rootless++) {
		def = ward_spec_default_json(rootless, ward_policy_masked_paths,
					     ward_policy_readonly_paths);
		got = round_trip(def, rootless ? "ward spec --rootless: round trip"
					       : "ward spec: round trip");
		want = ward_json_decode(def, strlen(def), &err);
		json_object_set_new(json_object_get(want, "root"), "path",
				    json_string(BUNDLE "/rootfs"));
		CHECK(got && same_json(got, want, "default"),
		      rootless ? "ward spec --rootless: serialize(parse(x)) is x"
			       : "ward spec: serialize(parse(x)) is x");
		json_decref(got);
		json_decref(want);
		free(def);
	}
}

static bool has_path(json_t *v, const char *path);

static void test_resources_to_json(void)
{
	static const char res[] =
	    "{'ociVersion':'1.3.0','root':{'path':'/r'},'linux':{'resources':{"
	    "'devices':[{'allow':false,'access':'rwm'},{'allow':true,'type':'c','major':10,"
	    "'minor':229,'access':'rw'},{'allow':true,'type':'b','major':8,'access':'m'}],"
	    "'memory':{'limit':536870912,'reservation':1024,'swap':1073741824,'kernel':-1,"
	    "'kernelTCP':-1,'swappiness':60,'disableOOMKiller':false,'useHierarchy':true,"
	    "'checkBeforeUpdate':true},"
	    "'cpu':{'shares':1024,'quota':50000,'burst':1000,'period':100000,"
	    "'realtimeRuntime':0,'realtimePeriod':0,'cpus':'0-3','mems':'0','idle':1},"
	    "'pids':{'limit':-1},"
	    "'blockIO':{'weight':500,'leafWeight':300,'weightDevice':[{'major':8,'minor':0,"
	    "'weight':600,'leafWeight':200}],'throttleReadBpsDevice':[{'major':8,'minor':0,'rate':"
	    "1048576}],"
	    "'throttleWriteBpsDevice':[{'major':8,'minor':0,'rate':2048}],'throttleReadIOPSDevice':"
	    "[{'major':8,'minor':16,"
	    "'rate':9223372036854775807}],'throttleWriteIOPSDevice':[{'major':8,'minor':0,'rate':"
	    "100}]},"
	    "'hugepageLimits':[{'pageSize':'2MB','limit':4194304}],"
	    "'network':{'classID':1048577,'priorities':[{'name':'eth0','priority':5}]},"
	    "'rdma':{'mlx5_0':{'hcaHandles':3,'hcaObjects':10000},'mlx5_1':{}},"
	    "'unified':{'memory.high':'max','io.max':'8:0 rbps=1'}}}}";
	struct ward_err err = {0};
	cleanup_free char *text = J(res);
	json_t *want = ward_json_decode(text, strlen(text), &err);
	json_t *got = round_trip(text, "linux.resources: parse -> serialize -> parse is identical");
	size_t missing;

	CHECK(got && same_json(got, want, "resources"),
	      "linux.resources: serialize(parse(x)) is x, every field");
	missing = 0;
	for (size_t i = 0; got && ward_cgroup_res_fields[i]; i++)
		if (!has_path(got, ward_cgroup_res_fields[i])) {
			printf("#   not written: %s\n", ward_cgroup_res_fields[i]);
			missing++;
		}
	CHECK(got && missing == 0,
	      "ward_resources_to_json writes every field of ward_cgroup_res_fields");
	json_decref(got);
	json_decref(want);
}

/* Whether path ("a.b[].c", "*" for any key) names a value in v: some element of each array
 * and some member for "*". */
static bool has_path(json_t *v, const char *path)
{
	size_t n = strcspn(path, ".");
	const char *rest = path[n] ? path + n + 1 : "";
	cleanup_free char *seg = strndup(path, n);
	bool arr = n >= 2 && !strcmp(seg + n - 2, "[]");
	const char *key;
	json_t *m;
	size_t i;

	if (!*path)
		return true;
	if (arr)
		seg[n - 2] = '\0';
	if (!strcmp(seg, "*")) {
		json_object_foreach(v, key, m)
		{
			if (has_path(m, rest))
				return true;
		}
		return false;
	}
	m = json_object_get(v, seg);
	if (!arr)
		return m && has_path(m, rest);
	json_array_foreach(m, i, v)
	{
		if (has_path(v, rest))
			return true;
	}
	return false;
}

/* Total: every field the parser decodes (ward_spec_fields, and linux.resources' list) is
 * written by the serializer, checked on fixtures that give each of them. */
static void test_to_json_total(void)
{
	static const char *const refused[] = {"process.execCPUAffinity", "linux.intelRdt",
					      "linux.netDevices", "linux.memoryPolicy", NULL};
	cleanup_free char *full = J(full_config);
	struct ward_err err = {0};
	json_t *in = ward_json_decode(full, strlen(full), &err), *hooks;
	struct ward_spec *s;
	json_t *got;
	size_t missing = 0;

	/* The full fixture, with every hook member in every hook list and every clock
	 * member. */
	hooks = json_object_get(in, "hooks");
	for (int k = 0; k < WARD_HOOK__COUNT; k++)
		json_object_set_new(hooks, ward_hook_names[k],
				    json_pack("[{s:s,s:[s],s:[s],s:i}]", "path", "/h", "args", "h",
					      "env", "A=1", "timeout", 1));
	json_object_set_new(
	    json_object_get(json_object_get(json_object_get(in, "linux"), "timeOffsets"),
			    "boottime"),
	    "nanosecs", json_integer(7));
	/* ward's own record (own.h), as an effective spec has it */
	json_object_set_new(in, "ward",
			    json_pack("{s:{s:s},s:b,s:s,s:s,s:s}", "podSeccomp", "defaultAction",
				      "SCMP_ACT_ALLOW", "rootfsIdmap", 1, "ids", "tenant:t 100 10",
				      "gpus", "GPU-1", "unenforced", "memory"));
	s = ward_spec_from_json(in, BUNDLE, &err);
	got = s ? ward_spec_to_json(s) : NULL;

	for (size_t i = 0; got && ward_spec_fields[i]; i++) {
		const char *f = ward_spec_fields[i];
		bool skip = !strncmp(f, "annotations.", 12) && strcmp(f, "annotations.*");
		for (size_t k = 0; refused[k]; k++)
			skip |= !strcmp(f, refused[k]);
		if (!skip && !has_path(got, f)) {
			printf("#   not written: %s\n", f);
			missing++;
		}
	}
	CHECK(got && missing == 0, "ward_spec_to_json writes every field of ward_spec_fields");
	json_decref(got);
	json_decref(in);
	ward_spec_free(s);
}

/* The state's effective spec): u64 values above INT64_MAX (Go's
 * RLIM_INFINITY) are written as JSON integers, which the parser reads back, never as the
 * decoder's internal marker strings (a "\u0000" escape no reader accepts). */
static void test_to_text_big_u64(void)
{
	static const char text[] =
	    "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},\"process\":{\"args\":"
	    "[\"sh\"],\"cwd\":\"/\",\"rlimits\":[{\"type\":\"RLIMIT_MEMLOCK\",\"hard\":"
	    "18446744073709551615,\"soft\":9223372036854775808}]}}";
	struct ward_err err = {0};
	struct ward_spec *s1 = ward_spec_parse(text, strlen(text), BUNDLE, &err), *s2 = NULL;
	cleanup_free char *out = NULL;

	CHECK(s1 && s1->process && s1->process->n_rlimits == 1 &&
		  s1->process->rlimits[0].hard == UINT64_MAX &&
		  s1->process->rlimits[0].soft == (uint64_t)INT64_MAX + 1,
	      "rlimits above INT64_MAX parse as u64");
	if (!s1)
		return;
	for (int indent = 0; indent < 2; indent++) {
		free(out);
		out = spec_text(s1, indent ? JSON_INDENT(2) : JSON_COMPACT);
		CHECK(strstr(out, "18446744073709551615") && strstr(out, "9223372036854775808") &&
			  !strstr(out, "\\u0000"),
		      indent ? "to_text (indented): big u64s written as JSON integers"
			     : "to_text: big u64s written as JSON integers");
		s2 = ward_spec_parse(out, strlen(out), BUNDLE, &err);
		CHECK(s2 && s2->process && s2->process->n_rlimits == 1 &&
			  s2->process->rlimits[0].hard == UINT64_MAX &&
			  s2->process->rlimits[0].soft == (uint64_t)INT64_MAX + 1,
		      indent ? "to_text (indented): the parser reads the big u64s back"
			     : "to_text: the parser reads the big u64s back");
		if (!s2)
			printf("#   %s\n", err.msg);
		ward_spec_free(s2);
	}
	ward_spec_free(s1);
}

/* ward_spec_dup: a deep copy (the tenant policy edits one): serialized, the copy is the
 * original, and it lives on when the original is freed (each member its own memory). */
static void test_dup(void)
{
	static const char own[] =
	    "{'ociVersion':'1.3.0','root':{'path':'/r'},'ward':{'podSeccomp':{'defaultAction':"
	    "'SCMP_ACT_ALLOW','syscalls':[{'names':['mount'],'action':'SCMP_ACT_ERRNO'}]},"
	    "'rootfsIdmap':true,'ids':'pod:a/x 1000000 65536','gpus':'GPU-1','unenforced':'cpu'},"
	    "'linux':{'resources':{'devices':[{'allow':false,'access':'rwm'}],'cpu':{'cpus':'0-1',"
	    "'mems':'0'},'blockIO':{'weightDevice':[{'major':8,'minor':0,'weight':600}],"
	    "'throttleReadBpsDevice':[{'major':8,'minor':0,'rate':1}]},'hugepageLimits':[{"
	    "'pageSize':'2MB','limit':4194304}],'network':{'classID':1,'priorities':[{'name':"
	    "'eth0','priority':5}]},'rdma':{'mlx5_0':{'hcaHandles':3}},'unified':{'memory.high':"
	    "'max'}}}}";
	const char *texts[] = {full_config, own};

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct ward_err err = {0};
		cleanup_free char *text = J(texts[i]);
		struct ward_spec *s = ward_spec_parse(text, strlen(text), BUNDLE, &err), *d;
		json_t *want, *got;

		CHECK(s != NULL, i ? "dup: ward's record parses" : "dup: the full config parses");
		if (!s)
			continue;
		if (s->n_mounts)
			s->mounts[0].host_sysfs = true;
		s->linux.host_net_sysctls = true;
		want = ward_spec_to_json(s);
		d = ward_spec_dup(s);
		free(d->annotation_keys ? d->annotation_values[0] : NULL);
		if (d->annotation_keys)
			d->annotation_values[0] = xstrdup("changed");
		if (d->linux.uid_mappings.v)
			d->linux.uid_mappings.v[0].host_id = 1;
		got = ward_spec_to_json(s);
		CHECK(json_equal(got, want),
		      "dup: changing the copy leaves the original as it was");
		json_decref(got);
		ward_spec_free(s);
		if (d->annotation_keys) {
			free(d->annotation_values[0]);
			d->annotation_values[0] = xstrdup("infra");
		}
		if (d->linux.uid_mappings.v)
			d->linux.uid_mappings.v[0].host_id = 100000;
		got = ward_spec_to_json(d);
		CHECK(same_json(got, want, "dup"),
		      i ? "dup: the copy has ward's record and the pod's filter, every resource"
			: "dup: the copy has every field of the full config");
		CHECK((!d->n_mounts || d->mounts[0].host_sysfs) && d->linux.host_net_sysctls,
		      "dup: runtime-only members are copied too");
		CHECK(i || (d->process->capabilities.inheritable &&
			    !d->process->capabilities.inheritable[0] && d->linux.seccomp),
		      "dup: an empty list stays an empty list (not an absent one)");
		CHECK(!i || (!d->process && !d->linux.seccomp && d->linux.seccomp_pod),
		      "dup: absent members stay absent");
		json_decref(got);
		json_decref(want);
		ward_spec_free(d);
	}
}

int main(void)
{
	test_dup();
	test_to_json_total();
	test_to_json();
	test_to_text_big_u64();
	test_resources_to_json();
	test_full();
	test_minimal();
	test_default(false);
	test_default(true);
	test_bad_top();
	test_bad_process();
	test_mounts();
	test_hooks();
	test_linux();
	test_unknown_ignored();
	test_process_parse();
	test_load();
	test_ns_names();
	{
		struct ward_err e = {0};
		const char *j = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},"
				"\"linux\":{\"intelRdt\":{\"closID\":\"x\"}}}";
		struct ward_spec *sp = ward_spec_parse(j, strlen(j), "/b", &e);
		CHECK(sp == NULL, "linux.intelRdt is refused (not supported)");
		CHECK_STR_CONTAINS(e.msg, "linux.intelRdt: not supported",
				   "intelRdt error names the field");
		ward_spec_free(sp);
		j = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},"
		    "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/"
		    "\",\"execCPUAffinity\":{\"initial\":\"0\"}}}";
		sp = ward_spec_parse(j, strlen(j), "/b", &e);
		CHECK(sp == NULL, "process.execCPUAffinity is refused (not supported)");
		CHECK_STR_CONTAINS(e.msg, "process.execCPUAffinity: not supported",
				   "execCPUAffinity error names the field");
		ward_spec_free(sp);
	}
	TAP_DONE();
}
