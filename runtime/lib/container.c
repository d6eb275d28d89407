#include "container.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apparmor.h"
#include "audit.h"
#include "bpfdev.h"
#include "caps.h"
#include "cgroup.h"
#include "cgroup_res.h"
#include "cstorage.h"
#include "hooks.h"
#include "hostmnt.h"
#include "init.h"
#include "log.h"
#include "config.h"
#include "effective.h"
#include "fault.h"
#include "intent.h"
#include "mount.h"
#include "policy.h"
#include "rootfs.h"
#include "ns.h"
#include "process.h"
#include "seccomp.h"
#include "json.h"
#include "spec_json.h"
#include "state.h"
#include "sync.h"
#include "terminal.h"
#include "util.h"

/* ---- validation: everything that can be refused is refused before anything exists ---- */

/* A bind mount with a source: a host path, held open since the spec was checked. */
static bool is_bind(const struct ward_mount *m)
{
	if (!m->source || !*m->source)
		return false;
	if (m->type && !strcmp(m->type, "bind"))
		return true;
	for (size_t i = 0; m->options && m->options[i]; i++)
		if (!strcmp(m->options[i], "bind") || !strcmp(m->options[i], "rbind"))
			return true;
	return false;
}

/* What ward cannot do for any tenant, or does for trusted ones only, refused naming the
 * tenant and the rule (ward(8) "Namespaces"). */
static int validate_tenant_ns(const struct ward_spec *spec, const struct ward_tenant *t,
			      struct ward_err *err)
{
	const struct ward_namespace *mnt = ward_spec_ns(spec, CLONE_NEWNS);

	if (mnt && mnt->path)
		return ward_fail(err, 0,
				 "tenant \"%s\": namespaces: linux.namespaces: joining a mount "
				 "namespace by path is not supported: ward builds the root "
				 "filesystem in a new mount namespace of its own, or for a trusted "
				 "tenant's spec without one in the runtime's (refused for every "
				 "tenant, trusted ones too)",
				 t->name);
	if (!mnt && !t->trusted)
		return ward_fail(err, 0,
				 "tenant \"%s\": namespaces: linux.namespaces: no mount namespace "
				 "(the runtime's own, inherited): the container's mounts would be "
				 "made in the host's mount namespace; only a trusted tenant may",
				 t->name);
	if (!mnt && ward_spec_ns(spec, CLONE_NEWUSER))
		return ward_fail(err, 0,
				 "tenant \"%s\": namespaces: linux.namespaces: no mount namespace "
				 "with a user namespace: the container's root would have no "
				 "privilege over the runtime's mount namespace, where its root "
				 "filesystem is mounted (list a mount namespace, or no user "
				 "namespace)",
				 t->name);
	if (spec->linux.mount_label && *spec->linux.mount_label)
		return ward_fail(err, 0,
				 "tenant \"%s\": selinux: linux.mountLabel: SELinux labels: not "
				 "implemented by ward, so refused rather than ignored (for every "
				 "tenant, trusted ones too)",
				 t->name);
	return 0;
}

/* Is name (the spec's hostname or domainname, NULL or "": not asked, as runc) the one the
 * joined uts namespace has? */
static bool uts_name_same(const char *name, const char *has)
{
	return !name || !*name || !strcmp(name, has);
}

/* A hostname or domainname with the uts namespace joined by path (CRI-O and podman --pod
 * give every container that joins its sandbox's the sandbox's name). A name equal to the
 * namespace's own (read through the fd opened when the spec was checked) is accepted for
 * every tenant and not set again: nothing is written into the shared namespace. Another
 * name would rename the namespace's other members: only a trusted tenant may. */
static int joined_uts_names(struct ward_spec *spec, const struct ward_hostfds *fds,
			    const struct ward_tenant *t, struct ward_err *err)
{
	const struct ward_namespace *uts = ward_spec_ns(spec, CLONE_NEWUTS);
	const struct ward_hostfd *e = ward_hostfds_ns(fds, CLONE_NEWUTS);
	struct utsname u;
	bool host_same, dom_same;

	if (!uts || !uts->path || (!spec->hostname && !spec->domainname))
		return 0;
	if (ward_hostfd_get(e, "linux.namespaces (uts)", err) < 0 ||
	    ward_ns_uts_names(e->fd, &u, err) < 0)
		return ward_wrap(err, "config.json: linux.namespaces: uts %s", uts->path);
	host_same = uts_name_same(spec->hostname, u.nodename);
	dom_same = uts_name_same(spec->domainname, u.domainname);
	if (!t->trusted && !(host_same && dom_same))
		return ward_fail(err, 0,
				 "tenant \"%s\": namespaces: %s: the uts namespace is joined by "
				 "path (%s) and is named \"%s\": naming it \"%s\" would rename its "
				 "other members; only a trusted tenant may (the same name is "
				 "accepted)",
				 t->name, host_same ? "domainname" : "hostname", uts->path,
				 host_same ? u.domainname : u.nodename,
				 host_same ? spec->domainname : spec->hostname);
	if (host_same) {
		free(spec->hostname);
		spec->hostname = NULL;
	}
	if (dom_same) {
		free(spec->domainname);
		spec->domainname = NULL;
	}
	return 0;
}

/* A proc or mqueue mount in a pid or ipc namespace joined by path that the container's user
 * namespace does not own (ward_ns_plan's foreign): the kernel would refuse it to the init,
 * after everything was made. Refused first, naming tenant and rule. */
static int refuse_foreign_mounts(const struct ward_spec *spec, const struct ward_ns_plan *plan,
				 const struct ward_tenant *t, struct ward_err *err)
{
	static const struct {
		int type;
		const char *fstype;
	} need[] = {{CLONE_NEWIPC, "mqueue"}, {CLONE_NEWPID, "proc"}};

	for (size_t k = 0; k < ARRAY_SIZE(need); k++) {
		const char *path = "?";
		if (!(plan->foreign & need[k].type))
			continue;
		for (int j = 0; j < plan->n_join; j++)
			if (plan->join_type[j] == need[k].type)
				path = plan->join_path[j];
		for (size_t i = 0; i < spec->n_mounts; i++) {
			const struct ward_mount *m = &spec->mounts[i];
			if (!m->type || strcmp(m->type, need[k].fstype) || is_bind(m))
				continue;
			return ward_fail(
			    err, 0,
			    "tenant \"%s\": namespaces: mounts[%zu] (%s, type %s): the %s "
			    "namespace "
			    "%s joined by path belongs to a user namespace that is not the "
			    "container's, where its root may not mount %s: join the user namespace "
			    "that owns it (linux.namespaces user with its path), or do not join it",
			    t->name, i, m->destination, m->type, ward_ns_type_name(need[k].type),
			    path, m->type);
		}
	}
	return 0;
}

static int validate_spec(const struct ward_spec *spec, const struct ward_create_opts *o,
			 const struct ward_hostfds *fds, const struct ward_tenant *t,
			 struct ward_err *err)
{
	const struct ward_hostfd *root = ward_hostfds_root(fds);
	struct ward_capset caps;

	if (!spec->process)
		return ward_fail(err, 0, "config.json: process: missing");
	if (ward_process_refuse_labels(spec->process, "config.json: process", err) < 0)
		return -1;
	if (validate_tenant_ns(spec, t, err) < 0)
		return -1;
	/* The root as it was opened, once, when the spec was checked. */
	if (ward_hostfd_get(root, "config.json: root.path", err) < 0)
		return -1;
	if (!S_ISDIR(root->st.st_mode))
		return ward_fail(err, ENOTDIR, "config.json: root.path: %s", spec->root_path);
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct ward_mount *m = &spec->mounts[i];
		const struct ward_hostfd *e = ward_hostfds_mount(fds, i);
		/* The source is the entry opened for this mount: the name the pod gave, or
		 * what the policy resolved it to. */
		if (is_bind(m) && (!e || (strcmp(m->source, e->name) &&
					  (!e->path || strcmp(m->source, e->path)))))
			return ward_fail(err, 0,
					 "config.json: mounts[%zu] (%s): source %s was not opened "
					 "when the spec was checked",
					 i, m->destination, m->source);
	}
	for (size_t i = 0; i < spec->n_mounts; i++) {
		struct ward_mount_opts mo;
		if (ward_mount_opts_parse(spec->mounts[i].options, &mo, err) < 0)
			return ward_wrap(err, "config.json: mounts[%zu] (%s)", i,
					 spec->mounts[i].destination);
		ward_mount_opts_free(&mo);
	}
	if (ward_process_validate(spec->process, spec->linux.personality, err) < 0)
		return ward_wrap(err, "config.json");
	if (ward_caps_from_spec(&spec->process->capabilities, &caps, err) < 0)
		return ward_wrap(err, "config.json: process.capabilities");
	if (spec->linux.seccomp && ward_seccomp_validate(spec->linux.seccomp, err) < 0)
		return ward_wrap(err, "config.json");
	if (ward_seccomp_validate_at(spec->linux.seccomp_pod, "annotations." WARD_ANN_POD_SECCOMP,
				     err) < 0)
		return ward_wrap(err, "config.json");
	if (spec->process->terminal && !o->console_socket && !o->keep_console)
		return ward_fail(err, 0,
				 "process.terminal is true but no --console-socket was given to "
				 "receive the terminal");
	if (o->systemd_manager)
		return ward_fail(
		    err, 0,
		    "--cgroup-manager systemd is not supported: ward manages cgroup v2 "
		    "through cgroupfs (--cgroup-manager cgroupfs or disabled)");
	/* runc's rule; ward maps that form to the cgroup systemd would use, and makes it */
	if (o->systemd_cgroup && spec->linux.cgroups_path && *spec->linux.cgroups_path &&
	    (spec->linux.cgroups_path[0] == '/' || !strchr(spec->linux.cgroups_path, ':')))
		return ward_fail(err, 0,
				 "config.json: linux.cgroupsPath \"%s\": with --systemd-cgroup it "
				 "must be of the form slice:prefix:name",
				 spec->linux.cgroups_path);
	/* Last: it may load ward-default into the kernel. */
	if (ward_apparmor_prepare(spec->process->apparmor_profile, err) < 0)
		return ward_wrap(err, "config.json: process.apparmorProfile \"%s\"",
				 spec->process->apparmor_profile);
	return 0;
}

/* ---- helpers ---- */

static int write_pid_file(const char *path, pid_t pid, struct ward_err *err)
{
	char buf[32], tmp[PATH_MAX];
	int n = snprintf(buf, sizeof(buf), "%d", (int)pid);
	snprintf(tmp, sizeof(tmp), "%s.ward-tmp", path);
	if (write_file_at(AT_FDCWD, tmp, O_CREAT | O_TRUNC, 0644, buf, (size_t)n, err) < 0)
		return ward_wrap(err, "pid file");
	if (rename(tmp, path) < 0)
		return ward_fail_errno(err, "pid file %s", path);
	return 0;
}

/* Wait (up to timeout_ms, -1 forever) until the process behind pidfd has exited. */
static bool pidfd_wait(int pidfd, int timeout_ms)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	int r;
	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

/* Thaw and kill what is in the cgroup: only what is needed, as both writes take the
 * kernel's global cgroup lock (after `run`, the init has exited and the cgroup is empty
 * and thawed: one read of cgroup.events). An unreadable cgroup.events: both, as before. */
static void kill_and_wait(int pidfd, const char *cgroup)
{
	struct ward_err ignored;
	bool populated = true, frozen = true;
	if (cgroup && *cgroup && !ward_cgroup_events(cgroup, &populated, &frozen))
		populated = frozen = true;
	if (cgroup && *cgroup && frozen)
		ward_cgroup_freeze(cgroup, false, &ignored);
	if (cgroup && *cgroup && populated)
		ward_cgroup_signal_all(cgroup, SIGKILL, &ignored);
	if (pidfd >= 0) {
		ward_pidfd_send_signal(pidfd, SIGKILL);
		pidfd_wait(pidfd, 10000);
	}
}

static void state_from_spec(struct ward_state *st, const struct ward_spec *spec, const char *id,
			    const char *bundle, const char *cgroup,
			    const struct ward_effective *eff)
{
	char ts[64];
	memset(st, 0, sizeof(*st));
	rfc3339_now(ts, sizeof(ts));
	st->id = xstrdup(id);
	st->oci_version = xstrdup(spec->oci_version);
	st->bundle = xstrdup(bundle);
	st->rootfs = xstrdup(spec->root_path);
	st->created = xstrdup(ts);
	st->owner = xstrdup("");
	st->cgroup = xstrdup(cgroup);
	st->tenant = xstrdup(eff->tenant->name);
	if (eff->apparmor_asked && *eff->apparmor_asked)
		st->apparmor_asked = xstrdup(eff->apparmor_asked);
	ward_pod_copy(&st->pod, &eff->pod); /* the pod, for everything after create */
	/* ward's own record (ids, gpus, an idmapped root; the pod's seccomp filter stays in
	 * the effective config.json beside state.json). The annotations are the pod's: the
	 * tenant is st->tenant; ward.dev/tenant only as the pod wrote it, if it did. */
	ward_own_copy(&st->own, &spec->own);
	st->own.present = true;
	st->annotation_keys = xcalloc(strv_len(spec->annotation_keys) + 1, sizeof(char *));
	st->annotation_values = xcalloc(strv_len(spec->annotation_keys) + 1, sizeof(char *));
	for (size_t i = 0, n = 0; spec->annotation_keys && spec->annotation_keys[i]; i++) {
		const char *v = spec->annotation_values[i];
		if (!strcmp(spec->annotation_keys[i], WARD_ANN_TENANT) &&
		    !(v = eff->pod.tenant_ann))
			continue;
		st->annotation_keys[n] = xstrdup(spec->annotation_keys[i]);
		st->annotation_values[n++] = xstrdup(v);
	}
	for (int k = 0; k < WARD_HOOK__COUNT; k++)
		if (spec->hooks[k].n)
			st->hooks |= 1u << k;
}

/* ---- create ---- */

/* An init born in a frozen cgroup stops before it runs, and create would wait for it for
 * ever (a frozen ancestor freezes the new dir as well). Left frozen: not ours to thaw. */
static int frozen_cgroup(const char *cgroup, struct ward_err *err)
{
	if (!ward_cgroup_is_frozen(cgroup))
		return 0;
	return ward_fail(err, 0,
			 "cgroup %s is frozen (its cgroup.freeze or an ancestor's is 1): the "
			 "container's processes would stop before they run; thaw it or give "
			 "another linux.cgroupsPath",
			 cgroup);
}

struct create_run {
	const struct ward_hostfds *fds; /* the host paths, opened once (effective.h) */
	int rootfd;
	const char *id;
	int dirfd;
	char *cgroup;
	int pidfd;
	bool cgroup_made;
	int cgfd;	 /* the container's cgroup */
	void *dev_insns; /* its device program, built before the fork */
	size_t n_dev_insns;
	int devprog; /* ... and loaded (verified) while stage 1 makes the namespaces */
};

static void create_undo(struct create_run *r)
{
	struct ward_err ignored;
	kill_and_wait(r->pidfd, r->cgroup_made ? r->cgroup : NULL);
	if (r->cgroup_made)
		ward_cgroup_destroy(r->cgroup, &ignored);
	if (ward_hostmnt_release(r->dirfd, &ignored) < 0)
		ward_warn("container \"%s\": %s", r->id, ignored.msg);
}

/* The host ID of the container's ID 0 (0 when unmapped: no user namespace). */
static uint32_t host_id(const struct ward_idmaps *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].container_id == 0 && m->v[i].size > 0)
			return m->v[i].host_id;
	return 0;
}

/* How many IDs from the container's 0 up map (the size of the range with its root). */
static uint32_t range_size(const struct ward_idmaps *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].container_id == 0)
			return m->v[i].size;
	return 0;
}

/* Idmapped mounts can only be made from the host's user namespace, and host paths are
 * mounted from the fds opened when the spec was checked (fds): make the root and those
 * mounts here and hand the detached mounts to the init, which attaches them inside the
 * rootfs. */
static int send_host_mounts(const struct ward_spec *spec, const struct ward_hostfds *fds,
			    int userns_fd, int sock, int dirfd, struct ward_err *err)
{
	int root_fd = ward_hostfd_get(ward_hostfds_root(fds), "root.path", err);
	const struct ward_config *cfg = ward_config_get(err);
	uint32_t ids = range_size(&spec->linux.uid_mappings);
	cleanup_fd int rfd = -1;

	if (root_fd < 0 || !cfg)
		return -1;
	if (range_size(&spec->linux.gid_mappings) < ids)
		ids = range_size(&spec->linux.gid_mappings);
	/* What the engine made in the upper dir goes to the range only in the container's own
	 * containers/storage layer (the policy checked whose it is); any other overlay's used
	 * upper dir keeps its owners. */
	if (!ward_cstorage_is_layer_root(cfg->storage_root, spec->root_path))
		ids = 0;
	rfd = ward_mount_open_rootfs(root_fd, spec->root_path, ward_rootfs_idmapped(spec),
				     userns_fd, host_id(&spec->linux.uid_mappings),
				     host_id(&spec->linux.gid_mappings), ids, err);
	if (rfd < 0)
		return -1;
	/* Without a mount namespace it is attached here, in ours: delete detaches it. */
	if (!ward_spec_ns(spec, CLONE_NEWNS) &&
	    ward_hostmnt_attach(dirfd, root_fd, rfd, spec->root_path, err) < 0)
		return -1;
	if (ward_sync_send_fd(sock, WARD_SYNC_MOUNTFD, rfd, err) < 0)
		return -1;
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct ward_mount *m = &spec->mounts[i];
		cleanup_fd int fd = -1;
		int src_fd = -1;
		if (!ward_mount_needs_host(m))
			continue;
		if (m->host_sysfs) {
			int net = ward_hostfd_get(ward_hostfds_ns(fds, CLONE_NEWNET), "netns", err);
			fd = net < 0 ? -1 : ward_mount_open_netns_sysfs(net, err);
			if (fd < 0 || ward_sync_send_fd(sock, WARD_SYNC_MOUNTFD, fd, err) < 0)
				return ward_wrap(err, "mounts[%zu] (%s)", i, m->destination);
			continue;
		}
		if (is_bind(m) &&
		    (src_fd = ward_hostfd_get(ward_hostfds_mount(fds, i), "source", err)) < 0)
			return ward_wrap(err, "mounts[%zu] (%s)", i, m->destination);
		fd = ward_mount_open(m, src_fd, userns_fd, err);
		if (fd < 0)
			return ward_wrap(err, "mounts[%zu] (%s)", i, m->destination);
		if (ward_sync_send_fd(sock, WARD_SYNC_MOUNTFD, fd, err) < 0)
			return -1;
	}
	return 0;
}

/* The init's next message. An init whose cgroup someone froze after the check (in
 * frozen_cgroup) would never send it: the wait looks at the cgroup every second and gives
 * up once it is frozen, so create never waits for ever. */
static int expect_from_init(const struct create_run *r, int sock, enum ward_sync_msg type,
			    struct ward_sync *m, int *fd, struct ward_err *err)
{
	if (ward_cgroup_wait_fd(sock, r->cgroup, false, err) < 0)
		return err->errnum ? ward_wrap(err, "sync")
				   : ward_fail(err, 0,
					       "cgroup %s was frozen while the container was being "
					       "created: its init cannot go on",
					       r->cgroup);
	return ward_sync_expect(sock, type, m, fd, err);
}

/* The device program is verified (BPF_PROG_LOAD, the verifier's ~0.2 ms) while stage 1
 * makes the container's namespaces, and attached before the init is told to go on
 * (WARD_SYNC_GO). An init cloned straight into its namespaces (ward_init_direct_ok: it
 * joins nothing, its mount namespace is a copy of ours) is told to go on first and the
 * program is verified while it sets its names and brings lo up (step 2 of init.h), and
 * attached before the runtime sends it its root (send_host_mounts), the first thing of the
 * container it touches: until then it runs ward's own code, which opens no device and
 * sees only the host's paths. Stage 2 of the other path may be in a joined mount
 * namespace another container shapes: it goes on only once the program is in force. */
static int load_device_program(struct create_run *r, struct ward_err *err)
{
	if (r->cgfd < 0)
		return 0; /* --cgroup-manager disabled: no cgroup, no program (said at create) */
	r->devprog = ward_bpfdev_load_insns(r->dev_insns, r->n_dev_insns, err);
	return r->devprog < 0 ? ward_wrap(err, "config.json: linux.resources.devices") : 0;
}

/* The create line, where ward-audit-hook ran (the last createRuntime hook): once
 * everything but the container's program is in place. Not written: no container. */
static int audit_create(const struct ward_state *st, struct ward_err *err)
{
	const struct ward_config *cfg;

	if (!st->audit)
		return 0;
	cfg = ward_config_get(err);
	if (!cfg || ward_audit_lifecycle(cfg, st->audit, "create", st->pid, -1, err) < 0)
		return ward_wrap(err, "audit");
	return 0;
}

/* The runtime's side of the init handshake (see init.h for the other side), up to the
 * init's mounts: its id maps, its pid, its limits, its device program, the mounts made
 * on the host side. The init makes its root filesystem after this; create_until_ready
 * waits for it. */
static int create_until_mounts(struct create_run *r, const struct ward_spec *spec,
			       struct ward_state *st, int sock, pid_t stage1, bool direct,
			       struct ward_err *err)
{
	const struct ward_namespace *userns = ward_spec_ns(spec, CLONE_NEWUSER);
	struct ward_sync m;
	int status;
	pid_t init;
	cleanup_fd int userns_fd = -1;

	/* Direct (init.h): stage1 is the init itself, in its new user namespace from birth;
	 * it waits for its maps without asking. */
	if (userns && !userns->path) {
		if (!direct && expect_from_init(r, sock, WARD_SYNC_USERNS, &m, NULL, err) < 0)
			return -1;
		if (ward_userns_write_maps(stage1, &spec->linux.uid_mappings,
					   &spec->linux.gid_mappings, err) < 0)
			return ward_wrap(err, "user namespace");
		ward_fault_point("create.userns");
		if (ward_sync_send(sock, WARD_SYNC_USERNS_DONE, 0, err) < 0)
			return -1;
	}
	if (!direct && load_device_program(r, err) < 0)
		return -1;
	/* The container's user namespace, for the idmapped mounts we make on its behalf: one
	 * joined by path is the fd held since the spec was checked. */
	if (userns && userns->path) {
		int held = ward_hostfd_get(ward_hostfds_ns(r->fds, CLONE_NEWUSER),
					   "the container's user namespace", err);
		if (held < 0 || (userns_fd = fcntl(held, F_DUPFD_CLOEXEC, 3)) < 0)
			return held < 0 ? -1
					: ward_fail_errno(err, "the container's user namespace");
	} else if (userns) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)stage1);
		userns_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (userns_fd < 0)
			return ward_fail_errno(err, "open the container's user namespace");
	}
	if (direct) {
		init = stage1;
	} else {
		if (expect_from_init(r, sock, WARD_SYNC_PID, &m, NULL, err) < 0)
			return -1;
		init = m.value;
		waitpid(stage1, &status, 0);
	}
	r->pidfd = ward_pidfd_open(init, 0);
	if (r->pidfd < 0)
		return ward_fail_errno(err, "pidfd of container init");
	st->pid = init;
	st->pid_start = proc_start_time(init);
	ward_fault_point("create.pid");

	/* Stage 1 was born in the container's cgroup (clone3 CLONE_INTO_CGROUP), so the
	 * init is in it before it runs anything of the container. */
	if (ward_oom_score_apply(spec->process, init, err) < 0)
		return -1;
	/* as runc does: in its user namespace the init could not raise them */
	ward_rlimits_raise_hard(spec->process, init);
	if (direct && ward_sync_send(sock, WARD_SYNC_GO, init, err) < 0)
		return -1;
	if (direct && load_device_program(r, err) < 0)
		return -1;
	if (r->cgfd >= 0 && ward_bpfdev_attach(r->cgfd, r->devprog, err) < 0)
		return ward_wrap(err, "config.json: linux.resources.devices");
	ward_fault_point("create.devices");
	if (!direct && ward_sync_send(sock, WARD_SYNC_GO, init, err) < 0)
		return -1;
	if (send_host_mounts(spec, r->fds, userns_fd, sock, r->dirfd, err) < 0)
		return -1;
	ward_fault_point("create.mounts");
	return 0;
}

/* The rest of the handshake, while and once the init makes its root filesystem: the
 * hooks, the console, "ready". */
static int create_until_ready(struct create_run *r, const struct ward_spec *spec,
			      const struct ward_create_opts *o, struct ward_state *st, int sock,
			      int *master, struct ward_err *err)
{
	struct ward_sync m;
	cleanup_free char *hook_json = NULL;

	/* prestart/createRuntime hooks, here, while the init waits with its mounts ready; with
	 * no hook to run, here or in the init, it does not wait (the same test on the same
	 * spec, init.c). */
	if (ward_init_hook_pause(spec)) {
		if (expect_from_init(r, sock, WARD_SYNC_HOOKS, &m, NULL, err) < 0)
			return -1;
		/* The state in place while the hooks run (a hook that reads the state dir finds
		 * it; `ward state` itself waits for create's lock). */
		if (ward_state_commit(r->dirfd, err) < 0)
			return -1;
		/* The environment is made (lifecycle step 2 is over): hooks see "created", as
		 * crun's do and runtime-tools' hooks_stdin expects. */
		hook_json = ward_state_json(st, WARD_CREATED, false);
		if (ward_hooks_run(&spec->hooks[WARD_HOOK_PRESTART], WARD_HOOK_PRESTART, hook_json,
				   err) < 0 ||
		    ward_hooks_run(&spec->hooks[WARD_HOOK_CREATE_RUNTIME], WARD_HOOK_CREATE_RUNTIME,
				   hook_json, err) < 0)
			return -1;
		if (audit_create(st, err) < 0)
			return -1;
		ward_fault_point("create.hooks");
		if (ward_sync_send(sock, WARD_SYNC_HOOKS_DONE, 0, err) < 0)
			return -1;
	}
	if (spec->process->terminal) {
		int fd;
		if (expect_from_init(r, sock, WARD_SYNC_CONSOLE, &m, &fd, err) < 0)
			return -1;
		if (o->console_socket) {
			int rc = ward_console_send(o->console_socket, fd, err);
			close(fd);
			if (rc < 0)
				return -1;
		} else {
			*master = fd;
		}
	}
	if (expect_from_init(r, sock, WARD_SYNC_READY, &m, NULL, err) < 0)
		return -1;
	if (!ward_init_hook_pause(spec)) {
		if (audit_create(st, err) < 0)
			return -1;
		ward_fault_point("create.hooks");
	}
	ward_fault_point("create.ready");
	/* Created: the state written aside (save_state) in place, unless the hooks had it */
	if (!ward_init_hook_pause(spec) && ward_state_commit(r->dirfd, err) < 0)
		return -1;
	ward_fault_point("create.state");
	return 0;
}

/* The container's seccomp filters, compiled (or read from the cache) while the init makes
 * its mounts, handed to it in a memfd: it installs them last, before exec. */
static int send_filters(const struct ward_spec *spec, int sock, struct ward_seccomp_filters *sf,
			struct ward_err *err)
{
	cleanup_fd int fd = -1;

	if (ward_seccomp_prepare(&spec->linux, sf, err) < 0)
		return ward_wrap(err, "seccomp");
	fd = ward_seccomp_filters_to_fd(sf, err);
	if (fd < 0)
		return ward_wrap(err, "seccomp");
	return ward_sync_send_fd(sock, WARD_SYNC_SECCOMP, fd, err);
}

/* The state dir's config.json: the policy's typed result serialized once (spec_json.h),
 * what ward enforces, every field it models, nothing it does not; the audit lines' fields,
 * from the same; then the state, written aside: it is put in place (one rename) only once
 * the container is created, so a create killed before that stays a failed create for gc
 * and `delete -f`. Done while the init makes its root filesystem. */
static int save_state(int dirfd, struct ward_spec **saved, const struct ward_effective *eff,
		      const char *id, const char *bundle, struct ward_state *st,
		      struct ward_err *err)
{
	json_t *j = ward_spec_to_json(*saved);
	cleanup_free char *text = ward_json_dumps(j, JSON_COMPACT); /* u64s > INT64_MAX */

	if (!text)
		abort(); /* only on OOM */
	st->audit = ward_audit_lifecycle_base(j, &eff->pod, id, bundle, eff->audit_seccomp);
	json_decref(j);
	ward_spec_free(*saved);
	*saved = NULL;
	if (write_file_at(dirfd, WARD_CONFIG_JSON, O_CREAT | O_TRUNC, 0600, text, strlen(text),
			  err) < 0 ||
	    ward_state_write_staged(dirfd, st, err) < 0)
		return -1;
	ward_fault_point("create.saved");
	return 0;
}

/* Limits let pass by missing_controllers: warn are listed in the state's own record. */
static void note_unenforced(struct ward_state *st)
{
	char *const *u = ward_cgroup_res_unenforced();
	cleanup_free char *list = NULL;

	for (size_t i = 0; u && u[i]; i++) {
		char *l = xasprintf("%s%s%s", list ? list : "", list ? ", " : "", u[i]);
		free(list);
		list = l;
	}
	if (!list)
		return;
	free(st->own.unenforced);
	st->own.unenforced = xstrdup(list);
}

/* containerd makes a shim v2 bundle 0700 and opens it to the container's root (group: its
 * host gid, mode 0710) only when config.json itself has a user namespace. ward adds one by
 * policy, so it does the same for a bundle in containerd's layout, through the fd it opened
 * (containerd-shim-runc-v2 with BinaryName = ward: the root is <bundle>/rootfs, which the
 * container's root must reach). Nothing for other bundles: their modes are the caller's. */
static int open_bundle_to_root(const char *bundle, const char *id, const struct ward_spec *spec,
			       struct ward_err *err)
{
	uint32_t gid = host_id(&spec->linux.gid_mappings);
	cleanup_free char *cstate = NULL;
	cleanup_fd int fd = -1;
	struct stat st;

	if (!gid || !spec->linux.uid_mappings.n)
		return 0;
	cstate = ward_bundle_containerd_state(bundle, id);
	if (!cstate)
		return 0;
	fd = open(bundle, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return ward_fail_errno(err, "bundle %s", bundle);
	if ((st.st_mode & S_IXOTH) || (st.st_gid == gid && (st.st_mode & S_IXGRP)))
		return 0;
	if (fchown(fd, (uid_t)-1, gid) < 0 || fchmod(fd, (st.st_mode & 07700) | S_IXGRP) < 0)
		return ward_fail_errno(
		    err, "bundle %s: let the container's root (host gid %u) search it", bundle,
		    gid);
	return 0;
}

/* root.path as the real path of the root held open (for the state and the mount point);
 * the root is mounted from that fd, not from this name. */
static int canonical_root(struct ward_spec *spec, const struct ward_hostfds *fds,
			  struct ward_err *err)
{
	const struct ward_hostfd *root = ward_hostfds_root(fds);
	if (ward_hostfd_get(root, "config.json: root.path", err) < 0)
		return -1;
	free(spec->root_path);
	spec->root_path = xstrdup(root->path);
	return 0;
}

/* The policy's own-layer rule (containers/storage) matches the layer to the container id,
 * which is unique per ward state root only: an engine under another state root over the same
 * storage may name another engine's container. The layer is bound to the pod's IDs too
 * (cstorage.h): a layer another pod's container ran in is refused, naming tenant and rule.
 * A trusted tenant's pods run as their spec says. */
static int storage_layer_owner(const struct ward_spec *spec, const struct ward_hostfds *fds,
			       const struct ward_effective *eff, const struct ward_config *cfg,
			       struct ward_err *err)
{
	const struct ward_hostfd *root = ward_hostfds_root(fds);
	char why[160];

	if (eff->tenant->trusted ||
	    !ward_cstorage_is_layer_root(cfg->storage_root, spec->root_path))
		return 0;
	if (ward_hostfd_get(root, "config.json: root.path", err) < 0)
		return -1;
	if (ward_cstorage_layer_owner_ok(root->fd, eff->pod.ids.start, eff->pod.ids.size, why,
					 sizeof(why)))
		return 0;
	return ward_fail(err, 0,
			 "tenant \"%s\": root_paths: root.path %s: the containers/storage layer "
			 "is %s: a container of another pod ran in it (another engine's container "
			 "of the same id?)",
			 eff->tenant->name, spec->root_path, why);
}

/* Log what the tenant policy changed: warnings always, the rest with --debug. */
static void log_policy_notes(const struct ward_effective *e)
{
	ward_debug("tenant \"%s\" (%s); host IDs %u-%u", e->tenant->name, e->why, e->pod.ids.start,
		   e->pod.ids.start + e->pod.ids.size - 1);
	for (size_t i = 0; e->notes && e->notes[i]; i++) {
		if (!strncmp(e->notes[i], WARD_NOTE_NO_APPARMOR, strlen(WARD_NOTE_NO_APPARMOR)))
			ward_warn_once_per_boot("apparmor", "%s",
						e->notes[i] + 9); /* ward check too */
		else if (!strncmp(e->notes[i], "warning: ", 9))
			ward_warn("%s", e->notes[i] + 9);
		else
			ward_debug("policy: %s", e->notes[i]);
	}
}

/* A non-trusted pod's cgroup outside /ward/ is its kubelet pod cgroup plus its id (policy.c
 * rule_cgroup). That pod cgroup is this pod's alone: no container of another pod is in it
 * (a sandbox's pod uid is its own annotation: one naming another pod's uid is refused
 * here). Like runc, ward makes the pod cgroup if kubelet has not; kubelet removes it. */
static int kubelet_pod_check(int rootfd, const char *id, const struct ward_effective *eff,
			     const char *cgroups_path, const char *cgroup, struct ward_err *err)
{
	cleanup_free char *parent = xstrdup(cgroup);

	if (eff->tenant->trusted || !cgroups_path || !strncmp(cgroups_path, "/ward/", 6))
		return 0;
	*strrchr(parent, '/') = '\0';
	if (ward_state_check_pod_cgroup(rootfd, id, eff->pod.id, parent, err) < 0)
		return ward_wrap(err, "tenant \"%s\": cgroup", eff->tenant->name);
	return 0;
}

/* linux.resources, typed in the spec (resources.h): the cgroup files, and the device
 * program's instructions (loaded and attached during the handshake: load_device_program). */
static int apply_resources(struct create_run *r, const struct ward_spec *spec, bool missing_warn,
			   struct ward_err *err)
{
	const struct ward_resources *res = &spec->linux.resources;
	bool devices = spec->linux.has_resources && res->has_devices; /* else the defaults */

	if (ward_cgroup_res_apply(r->cgroup, spec->linux.has_resources ? res : NULL, false,
				  missing_warn, err) < 0)
		return -1;
	if (ward_bpfdev_build(devices ? res->devices : NULL, devices ? res->n_devices : 0,
			      &r->dev_insns, &r->n_dev_insns, err) < 0)
		return ward_wrap(err, "linux.resources.devices");
	return 0;
}

/* Socket activation, as runc: the process learns of its LISTEN_FDS fds (from 3) and is
 * their LISTEN_PID, 1 (the pid namespace's init; runc says 1 also without one). */
static void add_listen_env(struct ward_spec *spec, int n)
{
	char buf[32];

	char **env = spec->process->env;
	size_t w = 0;

	if (n <= 0)
		return;
	/* ours replace any the spec has (an image's), as runc sets them */
	for (size_t i = 0; env && env[i]; i++) {
		if (!strncmp(env[i], "LISTEN_FDS=", 11) || !strncmp(env[i], "LISTEN_PID=", 11) ||
		    !strncmp(env[i], "LISTEN_FDNAMES=", 15))
			free(env[i]);
		else
			env[w++] = env[i];
	}
	if (env)
		env[w] = NULL;
	snprintf(buf, sizeof(buf), "LISTEN_FDS=%d", n);
	spec->process->env = strv_append(spec->process->env, buf);
	spec->process->env = strv_append(spec->process->env, "LISTEN_PID=1");
}

/* The container's cgroup: made (never one that is frozen), the tenant's budget, then the
 * limits and the device program, all in force before the init is born in it. */
static int make_cgroup(struct create_run *r, const struct ward_effective *eff,
		       const struct ward_spec *spec, const struct ward_config *cfg,
		       struct ward_err *err)
{
	if (frozen_cgroup(r->cgroup, err) < 0)
		return -1; /* before it is ours to remove */
	if (ward_cgroup_create(r->cgroup, err) < 0)
		return -1;
	r->cgroup_made = true;
	ward_fault_point("create.cgroup");
	/* The tenant's budget, once the container's cgroup pins the tenant's. */
	if (!eff->tenant->trusted &&
	    ward_cgroup_budget_apply(r->cgroup, eff->tenant->name, cfg->missing_controllers_warn,
				     eff->tenant->cgroup_json, err) < 0)
		return -1;
	ward_fault_point("create.budget");
	r->cgfd = ward_cgroup_open(r->cgroup, err);
	if (r->cgfd < 0)
		return -1;
	if (frozen_cgroup(r->cgroup, err) < 0)
		return -1; /* a dir ward made: the caller's undo removes it */
	/* Limits are in force before the init is born in the cgroup; the device program
	 * before it runs anything of the container (load_device_program). */
	if (apply_resources(r, spec, cfg->missing_controllers_warn, err) < 0)
		return ward_wrap(err, "config.json");
	ward_fault_point("create.limits");
	return 0;
}

/* crun's --cgroup-manager disabled: no cgroup at all; the init stays in the cgroup of the
 * process that ran create. Only for a trusted tenant: a tenant's budget and its pods'
 * device program live in the container's cgroup. Limits are refused, never dropped; a
 * device list cannot be enforced without a cgroup, and that is said. */
static int cgroup_disabled_check(const struct ward_effective *eff, const struct ward_spec *spec,
				 const char *id, struct ward_err *err)
{
	const struct ward_resources *res = &spec->linux.resources;
	const char *limit;
	bool devices;

	if (!eff->tenant->trusted)
		return ward_fail(
		    err, 0,
		    "tenant \"%s\": rule cgroup: --cgroup-manager disabled is refused: "
		    "the tenant's containers run in a cgroup of their own, under its "
		    "budget and device program (only a trusted tenant's may run "
		    "without one)",
		    eff->tenant->name);
	/* Only a value is a limit: engines send empty sections ("memory": {}). */
	limit = spec->linux.has_resources ? ward_resources_first_value(res) : NULL;
	devices = spec->linux.has_resources && res->n_devices > 0;
	if (limit)
		return ward_fail(err, 0,
				 "config.json: linux.resources: with --cgroup-manager disabled the "
				 "container has no cgroup, so its limits cannot be applied (%s; "
				 "remove them, or use --cgroup-manager cgroupfs)",
				 limit);
	if (devices)
		ward_warn("container \"%s\": --cgroup-manager disabled: no cgroup, so "
			  "linux.resources.devices is not enforced (no device program)",
			  id);
	return 0;
}

int ward_container_create(int rootfd, const struct ward_create_opts *o, struct ward_created *out,
			  struct ward_err *err)
{
	char bundle[PATH_MAX];
	const struct ward_config *cfg;
	struct ward_effective eff = {0};
	struct ward_spec *spec = NULL;
	struct ward_ns_plan plan = {0};
	struct ward_state st = {0};
	struct ward_seccomp_filters sf = {0};
	struct ward_intent intent = {0};
	struct create_run r = {
	    .rootfd = rootfd, .id = o->id, .dirfd = -1, .pidfd = -1, .cgfd = -1, .devprog = -1};
	struct ward_spec *saved = NULL;
	cleanup_fd int fifo = -1;
	int sp[2] = {-1, -1};
	int master = -1;
	int rc = -1;
	pid_t stage1;
	bool direct;

	out->pid = 0;
	out->console_master = -1;
	out->dirfd = -1;
	memset(&out->st, 0, sizeof(out->st));
	if (!ward_id_valid(o->id))
		return ward_fail(err, 0, "invalid container ID format: \"%s\"", o->id);
	if (!realpath(o->bundle ? o->bundle : ".", bundle))
		return ward_fail_errno(err, "bundle %s", o->bundle ? o->bundle : ".");
	cfg = ward_config_get(err);
	if (!cfg)
		return -1;
	/* The state dir first: it is the lock that makes the id ours. */
	r.dirfd = ward_state_create(rootfd, o->id, err);
	if (r.dirfd < 0)
		return -1;
	ward_fault_point("create.statedir");
	/* Each allocation is named in the state dir's intent.json before it is made. */
	if (ward_effective_build_at(cfg, bundle, o->id, rootfd, r.dirfd, &intent, false, &eff,
				    err) < 0) {
		ward_audit_refused(cfg, bundle, o->id, err->msg);
		goto out_undo;
	}
	log_policy_notes(&eff);
	/* The one read and decoding of config.json (effective.c), the policy's typed result
	 * used as it is; the state dir keeps it serialized once (spec_json.h): what ward
	 * enforces, every field it models, nothing it does not. */
	spec = steal_ptr(eff.spec);
	/* as the policy made it (create adjusts spec below for the init): written out while
	 * the init makes its mounts (save_state) */
	saved = ward_spec_dup(spec);
	r.fds = &eff.fds;
	add_listen_env(spec, o->listen_fds);
	if (validate_spec(spec, o, r.fds, eff.tenant, err) < 0 ||
	    joined_uts_names(spec, r.fds, eff.tenant, err) < 0) {
		ward_audit_refused(cfg, bundle, o->id, err->msg); /* its tenant rules */
		goto out_undo;
	}
	if (canonical_root(spec, r.fds, err) < 0 ||
	    open_bundle_to_root(bundle, o->id, spec, err) < 0)
		goto out_undo;
	if (storage_layer_owner(spec, r.fds, &eff, cfg, err) < 0) {
		ward_audit_refused(cfg, bundle, o->id, err->msg);
		goto out_undo;
	}
	if (o->cgroup_disabled) {
		if (cgroup_disabled_check(&eff, spec, o->id, err) < 0) {
			ward_audit_refused(cfg, bundle, o->id, err->msg);
			goto out_undo;
		}
		r.cgroup = xstrdup("");
	} else {
		r.cgroup = ward_cgroup_path_for(spec->linux.cgroups_path, o->id, err);
		if (!r.cgroup || ward_state_check_cgroup(rootfd, o->id, r.cgroup, err) < 0 ||
		    kubelet_pod_check(rootfd, o->id, &eff, spec->linux.cgroups_path, r.cgroup,
				      err) < 0)
			goto out_undo;
	}
	if (ward_ns_plan(spec, r.fds, &plan, err) < 0 ||
	    ward_ns_check_sysctls(spec, &plan, err) < 0)
		goto out_undo;
	if (refuse_foreign_mounts(spec, &plan, eff.tenant, err) < 0) {
		ward_audit_refused(cfg, bundle, o->id, err->msg);
		goto out_undo;
	}
	/* sysfs in a netns the container's user namespace does not own: the kernel refuses
	 * it to the init; the runtime mounts that netns's sysfs read-only (send_host_mounts). */
	for (size_t i = 0; plan.net_foreign && i < spec->n_mounts; i++)
		if (spec->mounts[i].type && !strcmp(spec->mounts[i].type, "sysfs") &&
		    !is_bind(&spec->mounts[i]))
			spec->mounts[i].host_sysfs = true;
	/* Its net.* sysctls (CRI's safe sysctls) likewise: the pod's root may not write them. */
	spec->linux.host_net_sysctls = plan.net_foreign;

	/* From here on, failures undo what exists. */
	state_from_spec(&st, spec, o->id, bundle, r.cgroup, &eff);
	if (mkfifoat(r.dirfd, WARD_EXEC_FIFO, 0600) < 0) {
		ward_fail_errno(err, "create exec fifo");
		goto out_undo;
	}
	fifo = openat(r.dirfd, WARD_EXEC_FIFO, O_RDWR | O_CLOEXEC);
	if (fifo < 0) {
		ward_fail_errno(err, "open exec fifo");
		goto out_undo;
	}
	ward_fault_point("create.config");
	intent.cgroup = o->cgroup_disabled ? NULL : xstrdup(r.cgroup);
	if (ward_intent_write(r.dirfd, &intent, err) < 0)
		goto out_undo;
	ward_fault_point("create.cgroup-named");
	if (!o->cgroup_disabled && make_cgroup(&r, &eff, spec, cfg, err) < 0)
		goto out_undo;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		ward_fail_errno(err, "socketpair");
		goto out_undo;
	}
	note_unenforced(&st);
	/* From the fork on, something of the container may run: its GPUs count as used. */
	intent.ran = true;
	if (ward_intent_write(r.dirfd, &intent, err) < 0)
		goto out_undo;
	/* The init cloned straight into its namespaces where nothing is joined (init.h),
	 * else stage 1; both born in the container's cgroup where clone3 can. */
	direct = ward_init_direct_ok(&plan);
	stage1 = direct ? ward_clone_into_cgroup(r.cgfd, plan.new_flags & ~CLONE_NEWCGROUP)
			: ward_fork_into_cgroup(r.cgfd);
	if (stage1 < 0 && errno == ENOSYS) {
		direct = false;
		stage1 = fork();
	}
	if (stage1 < 0) {
		ward_fail_errno(err,
				direct ? "clone the container init into its namespaces" : "fork");
		goto out_undo;
	}
	if (stage1 == 0) {
		struct ward_init_args a = {.spec = spec,
					   .plan = &plan,
					   .state = &st,
					   .sync_fd = sp[1],
					   .fifo_fd = fifo,
					   .log_fd = ward_log_fd(),
					   .no_pivot = o->no_pivot,
					   .no_new_keyring = o->no_new_keyring,
					   .preserve_fds = o->listen_fds + o->preserve_fds};
		close(sp[0]);
		close(r.dirfd);
		if (direct)
			ward_init_direct(&a);
		ward_init_stage1(&a);
	}
	close(sp[1]);
	sp[1] = -1;
	ward_fault_point("create.fork");
	if (create_until_mounts(&r, spec, &st, sp[0], stage1, direct, err) < 0 ||
	    save_state(r.dirfd, &saved, &eff, o->id, bundle, &st, err) < 0 ||
	    send_filters(spec, sp[0], &sf, err) < 0 ||
	    create_until_ready(&r, spec, o, &st, sp[0], &master, err) < 0) {
		/* Reap stage 1 if it is still ours. */
		waitpid(stage1, NULL, WNOHANG);
		goto out_undo;
	}
	if (o->pid_file && write_pid_file(o->pid_file, st.pid, err) < 0)
		goto out_undo;
	out->pid = st.pid;
	out->console_master = master;
	master = -1;
	if (o->keep_open) {
		out->dirfd = steal_fd(r.dirfd);
		out->st = st;
		memset(&st, 0, sizeof(st));
	}
	rc = 0;
	goto out_close;

out_undo:
	create_undo(&r);
	ward_effective_undo(cfg, &eff, o->id);
	{
		struct ward_err ignored;
		ward_state_remove(rootfd, o->id, &ignored);
	}
out_close:
	close_fdp(&master);
	close_fdp(&sp[0]);
	close_fdp(&sp[1]);
	close_fdp(&r.pidfd);
	close_fdp(&r.dirfd);
	close_fdp(&r.cgfd);
	close_fdp(&r.devprog);
	free(r.dev_insns);
	ward_state_clear(&st);
	ward_intent_clear(&intent);
	ward_ns_plan_close(&plan);
	free(r.cgroup);
	ward_spec_free(spec);
	ward_spec_free(saved);
	ward_seccomp_filters_free(&sf);
	ward_effective_clear(&eff);
	return rc;
}

/* ---- the others: open state under the lock, derive status, act ---- */

struct opened {
	int dirfd;
	struct ward_state st;
	enum ward_status status;
};

static int open_container(int rootfd, const char *id, bool exclusive, struct opened *c,
			  struct ward_err *err)
{
	if (!ward_id_valid(id))
		return ward_fail(err, 0, "invalid container ID format: \"%s\"", id);
	c->dirfd = ward_state_open(rootfd, id, exclusive, err);
	if (c->dirfd < 0)
		return -1;
	if (ward_state_read(c->dirfd, &c->st, err) < 0) {
		close(c->dirfd);
		c->dirfd = -1;
		if (err->errnum == ENOENT) /* being created, or a crashed create */
			return ward_fail(err, 0, "container \"%s\" does not exist", id);
		return ward_wrap(err, "container \"%s\"", id);
	}
	c->status = ward_state_status(c->dirfd, &c->st);
	return 0;
}

static void close_container(struct opened *c)
{
	if (c->dirfd >= 0)
		close(c->dirfd);
	ward_state_clear(&c->st);
}

/* The end of start and delete: the container and its saved spec closed; rc passed on. */
static int close_all(struct opened *c, struct ward_spec *spec, int rc)
{
	ward_spec_free(spec);
	close_container(c);
	return rc;
}

static struct ward_spec *saved_spec(const struct opened *c, struct ward_err *err)
{
	size_t len;
	cleanup_free char *text = read_file_at(c->dirfd, WARD_CONFIG_JSON, &len, err);
	if (!text)
		return NULL;
	return ward_spec_parse(text, len, c->st.bundle, err);
}

/* start, on the container opened (locked) with its state: closes it. */
static int start_opened(struct opened c, const char *id, struct ward_err *err)
{
	struct ward_spec *spec = NULL;
	cleanup_fd int rd = -1;
	cleanup_fd int wr = -1;
	cleanup_fd int pidfd = -1;
	cleanup_free char *json = NULL;
	char msg[1100];
	ssize_t n;
	int rc = -1;

	if (c.status == WARD_STOPPED) {
		ward_fail(err, 0, "cannot start a container that has stopped");
		goto out;
	}
	if (c.status != WARD_CREATED) {
		ward_fail(err, 0,
			  "cannot start a container that has already started: container \"%s\" is "
			  "not created (%s)",
			  id, ward_status_name(c.status));
		goto out;
	}
	if (c.st.hooks & (1u << WARD_HOOK_POSTSTART)) {
		spec = saved_spec(&c, err);
		if (!spec)
			goto out;
	}
	pidfd = ward_state_pidfd(&c.st);
	/* Reader first, so the fifo reports hangup once the init (the only other
	 * writer) has closed it by exec'ing. */
	rd = openat(c.dirfd, WARD_EXEC_FIFO, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	wr = openat(c.dirfd, WARD_EXEC_FIFO, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (rd < 0 || wr < 0 || write(wr, "0", 1) != 1) {
		ward_fail_errno(err, "cannot start container \"%s\": exec fifo", id);
		goto out;
	}
	close(wr);
	wr = -1;
	/* Wait for the hangup alone (events 0: poll reports POLLHUP unasked), not for POLLIN:
	 * our own byte makes the fifo readable until the init takes it, which would turn this
	 * into a loop of sleeps. */
	for (;;) {
		struct pollfd p[2] = {{.fd = rd, .events = 0}, {.fd = pidfd, .events = POLLIN}};
		if (poll(p, pidfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
			break;
		if ((p[0].revents & (POLLHUP | POLLERR)) || (p[1].revents & POLLIN))
			break;
	}
	unlinkat(c.dirfd, WARD_EXEC_FIFO, 0);
	/* Started means the init took our byte (the program may have exited already) and
	 * left no error behind in the fifo. */
	n = read(rd, msg, sizeof(msg) - 1);
	if (n > 0) {
		msg[n] = '\0';
		if (msg[0] == 'E')
			ward_fail(err, 0, "cannot start container \"%s\": %s", id, msg + 1);
		else
			ward_fail(err, 0, "cannot start container \"%s\": container process exited",
				  id);
		kill_and_wait(pidfd, c.st.cgroup);
		goto out;
	}
	if (spec) {
		json = ward_state_json(&c.st, WARD_RUNNING, false);
		if (ward_hooks_run(&spec->hooks[WARD_HOOK_POSTSTART], WARD_HOOK_POSTSTART, json,
				   err) < 0) {
			/* runtime-spec 1.3: a failing poststart hook stops the container. */
			kill_and_wait(pidfd, c.st.cgroup);
			goto out;
		}
	}
	/* The start line, after the poststart hooks; an unaudited container does not run. */
	if (c.st.audit) {
		const struct ward_config *cfg = ward_config_get(err);
		if (!cfg || ward_audit_lifecycle(cfg, c.st.audit, "start", c.st.pid, -1, err) < 0) {
			ward_wrap(err, "container \"%s\" stopped: audit", id);
			kill_and_wait(pidfd, c.st.cgroup);
			goto out;
		}
	}
	rc = 0;
out:
	return close_all(&c, spec, rc);
}

int ward_container_start(int rootfd, const char *id, struct ward_err *err)
{
	struct opened c = {.dirfd = -1};

	if (open_container(rootfd, id, true, &c, err) < 0)
		return -1;
	return start_opened(c, id, err);
}

int ward_container_start_created(struct ward_created *created, const char *id, struct ward_err *err)
{
	struct opened c = {.dirfd = created->dirfd, .st = created->st, .status = WARD_CREATED};

	created->dirfd = -1;
	memset(&created->st, 0, sizeof(created->st));
	return start_opened(c, id, err);
}

int ward_container_kill(int rootfd, const char *id, int sig, bool all, struct ward_err *err)
{
	struct opened c = {.dirfd = -1};
	cleanup_fd int pidfd = -1;
	int rc = -1;

	if (open_container(rootfd, id, false, &c, err) < 0)
		return -1;
	pidfd = ward_state_pidfd(&c.st);
	if (pidfd < 0 && !ward_state_alive(&c.st)) {
		if (all) /* runc: --all on a stopped container is not an error */
			rc = 0;
		else
			ward_fail(err, 0, "container not running");
		goto out;
	}
	if (all && c.st.cgroup[0]) {
		if (ward_cgroup_signal_all(c.st.cgroup, sig, err) < 0)
			goto out;
	} else if ((pidfd >= 0 ? ward_pidfd_send_signal(pidfd, sig) : kill(c.st.pid, sig)) < 0) {
		ward_fail_errno(err, "kill container \"%s\"", id);
		goto out;
	}
	rc = 0;
out:
	close_container(&c);
	return rc;
}

/* The container's hold on its pod's ID range goes with it. Returns st's "OWNER START SIZE"
 * when it was given back (delete_rest then need not take the pool's lock again), or NULL. */
static const char *release_ids(const struct ward_state *st)
{
	struct ward_err e;
	const struct ward_config *cfg = ward_config_get(&e);

	if (!cfg || !st->own.ids)
		return NULL;
	if (ward_effective_release_ids(cfg, st->own.ids, st->id, &e) < 0) {
		ward_warn("container \"%s\": %s", st->id, e.msg);
		return NULL;
	}
	return st->own.ids;
}

/* ids ("OWNER START SIZE") names owner. */
static bool ids_of_owner(const char *ids, const char *owner)
{
	size_t n = strlen(owner);
	return ids && !strncmp(ids, owner, n) && ids[n] == ' ';
}

int ward_container_delete(int rootfd, const char *id, bool force, struct ward_err *err)
{
	return ward_container_delete_status(rootfd, id, force, -1, err);
}

/* The end of every delete: give back what the intent names (ID-pool hold, GPU leases),
 * then remove the state: state.json first, the intent with the dir last, so a delete killed
 * at any point leaves a dir that the next `delete -f` finishes. Every step is idempotent.
 * ids_released: the hold release_ids gave back already ("OWNER START SIZE"), or NULL. */
static int delete_rest(int rootfd, int dirfd, const char *id, const char *ids_released,
		       struct ward_err *err)
{
	struct ward_intent in = {0};
	struct ward_err e2;
	const struct ward_config *cfg;
	cleanup_free char *root = NULL;

	if (ward_intent_read(dirfd, &in, &e2) == 0) {
		cfg = ward_config_get(err);
		if (!cfg) {
			ward_intent_clear(&in);
			return ward_wrap(err, "container \"%s\"", id);
		}
		if (in.ids_owner && ids_of_owner(ids_released, in.ids_owner)) {
			free(in.ids_owner); /* given back already */
			in.ids_owner = NULL;
		}
		root = ward_fd_real_path(rootfd); /* for the GPU ledger under it */
		if (ward_effective_release_intent(cfg, root, id, &in, err) < 0) {
			ward_intent_clear(&in);
			return ward_wrap(err, "container \"%s\"", id);
		}
		ward_intent_clear(&in);
	}
	/* The rootfs mounts of a container without a mount namespace of its own. */
	if (ward_hostmnt_release(dirfd, err) < 0)
		return ward_wrap(err, "container \"%s\"", id);
	if (ward_state_unlink(dirfd, id, err) < 0)
		return -1;
	ward_fault_point("delete.state");
	return ward_state_remove(rootfd, id, err);
}

static bool cgroup_busy(const char *cgroup)
{
	struct ward_err ignored;
	pid_t *pids = NULL;
	size_t n = 0;

	if (ward_cgroup_pids(cgroup, &pids, &n, &ignored) < 0)
		return false;
	free(pids);
	return n > 0;
}

/* delete of a state dir without (a readable) state.json: a create that died (or a delete
 * that did) left at most an intent. Only --force undoes it: kill what is in the cgroup,
 * remove the cgroup, give back the ID-pool hold and the GPUs, remove the dir. 1: the
 * container exists after all (its create finished while we waited): delete it. */
static int delete_unfinished(int rootfd, const char *id, bool force, struct ward_err *err)
{
	struct ward_state st = {0};
	struct ward_intent in = {0};
	struct ward_err e2;
	cleanup_fd int dirfd = -1;
	int rc = -1;

	dirfd = ward_state_open(rootfd, id, true, &e2);
	if (dirfd < 0)
		return force ? 0 : -1; /* gone meanwhile: nothing to delete */
	/* A create that was under way has finished while we waited for its lock. */
	if (ward_state_read(dirfd, &st, &e2) == 0) {
		ward_state_clear(&st);
		return 1;
	}
	if (ward_intent_read(dirfd, &in, &e2) < 0) {
		if (force) { /* nothing is allocated before the intent: clear the stale dir */
			if (ward_hostmnt_release(dirfd, err) < 0)
				return ward_wrap(err, "container \"%s\"", id);
			return ward_state_remove(rootfd, id, err);
		}
		if (faccessat(dirfd, WARD_STATE_JSON, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			return -1; /* err: state.json is corrupt */
	}
	if (!force) {
		ward_fail(err, 0,
			  "container \"%s\" is a failed create (its create or delete did not "
			  "finish): `ward delete -f %s` removes what it left",
			  id, id);
		goto out;
	}
	if (in.cgroup && !in.ran && cgroup_busy(in.cgroup)) {
		/* Nothing of ours ever ran in it: its processes are another's (the create was
		 * killed before it found the cgroup taken). Not ours to kill or remove. */
		ward_warn("container \"%s\": cgroup %s has processes of another container: left",
			  id, in.cgroup);
	} else if (in.cgroup) {
		kill_and_wait(-1, in.cgroup);
		ward_fault_point("delete.kill");
		if (ward_cgroup_destroy(in.cgroup, err) < 0) {
			ward_wrap(err, "container \"%s\"", id);
			goto out;
		}
		ward_fault_point("delete.cgroup");
	}
	rc = delete_rest(rootfd, dirfd, id, NULL, err);
out:
	ward_intent_clear(&in);
	return rc;
}

int ward_container_delete_status(int rootfd, const char *id, bool force, int exit_status,
				 struct ward_err *err)
{
	struct opened c = {.dirfd = -1};
	struct ward_spec *spec = NULL;
	cleanup_fd int pidfd = -1;
	struct ward_err hook_err = {0};
	cleanup_free char *json = NULL;
	int rc = -1;

	if (open_container(rootfd, id, true, &c, err) < 0) {
		if (!ward_id_valid(id))
			return -1;
		rc = delete_unfinished(rootfd, id, force, err);
		if (rc <= 0 || open_container(rootfd, id, true, &c, err) < 0)
			return rc <= 0 ? rc : -1;
	}
	if ((c.status == WARD_RUNNING || c.status == WARD_PAUSED) && !force) {
		ward_fail(err, 0, "cannot delete container \"%s\" that is not stopped: %s", id,
			  ward_status_name(c.status));
		goto out;
	}
	if (c.st.hooks & (1u << WARD_HOOK_POSTSTOP))
		spec = saved_spec(&c, err);
	pidfd = ward_state_pidfd(&c.st);
	if (pidfd >= 0 || c.st.cgroup[0])
		kill_and_wait(pidfd, c.st.cgroup);
	ward_fault_point("delete.kill");
	if (spec) {
		/* ward's own "ward.exitStatus": the OCI state has no field for it. */
		c.st.has_exit_status = exit_status >= 0;
		c.st.exit_status = exit_status;
		json = ward_state_json(&c.st, WARD_STOPPED, false);
		if (ward_hooks_run(&spec->hooks[WARD_HOOK_POSTSTOP], WARD_HOOK_POSTSTOP, json,
				   &hook_err) < 0)
			ward_warn("container \"%s\": %s", id, hook_err.msg);
	}
	/* The exit and delete lines, after the poststop hooks (the GPU release's lines); no
	 * pid, as the hook's (the poststop state of a stopped container has pid 0). */
	if (c.st.audit) {
		const struct ward_config *cfg = ward_config_get(&hook_err);
		if (!cfg || ward_audit_lifecycle2(cfg, c.st.audit, "exit", "delete", 0, exit_status,
						  &hook_err) < 0)
			ward_warn("container \"%s\": audit: %s", id, hook_err.msg);
	}
	ward_fault_point("delete.hooks");
	if (ward_cgroup_destroy(c.st.cgroup, err) < 0)
		goto out;
	ward_fault_point("delete.cgroup");
	if (delete_rest(rootfd, c.dirfd, id, release_ids(&c.st), err) < 0)
		goto out;
	rc = 0;
out:
	return close_all(&c, spec, rc);
}

static bool stopped(int rootfd, const char *id)
{
	struct opened c = {.dirfd = -1};
	struct ward_err ignored;
	bool r;

	if (open_container(rootfd, id, false, &c, &ignored) < 0)
		return false;
	r = c.status == WARD_STOPPED;
	close_container(&c);
	return r;
}

int ward_container_gc(int rootfd, bool all, char ***removed, struct ward_err *err)
{
	DIR *d = fdopendir(openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dirent *de;
	int rc = 0;

	*removed = xcalloc(1, sizeof(char *));
	if (!d)
		return ward_fail_errno(err, "gc: open the state root");
	while ((de = readdir(d))) {
		struct ward_err e = {0};
		bool locked;

		/* A create killed before its dir got its name: nothing was allocated yet. */
		if (!strncmp(de->d_name, WARD_STATE_NEW_PREFIX, strlen(WARD_STATE_NEW_PREFIX))) {
			if (ward_state_abandoned(rootfd, de->d_name, &locked))
				ward_state_remove(rootfd, de->d_name, &e);
			continue;
		}
		if (!ward_id_valid(de->d_name))
			continue;
		if (!ward_state_abandoned(rootfd, de->d_name, &locked) &&
		    (locked || !all || !stopped(rootfd, de->d_name)))
			continue;
		if (ward_container_delete(rootfd, de->d_name, true, &e) < 0) {
			ward_warn("gc: %s", e.msg);
			rc = -1;
			continue;
		}
		*removed = strv_append(*removed, de->d_name);
	}
	closedir(d);
	if (rc < 0)
		return ward_fail(err, 0, "gc: not every container could be removed");
	return 0;
}

int ward_container_pause(int rootfd, const char *id, bool pause, struct ward_err *err)
{
	struct opened c = {.dirfd = -1};
	int rc = -1;
	if (open_container(rootfd, id, true, &c, err) < 0)
		return -1;
	if (pause && c.status != WARD_RUNNING && c.status != WARD_CREATED)
		ward_fail(err, 0, "container not running");
	else if (!pause && c.status != WARD_PAUSED)
		ward_fail(err, 0, "container not paused");
	else if (!c.st.cgroup[0])
		ward_fail(err, 0, "cgroup not exist");
	else
		rc = ward_cgroup_freeze(c.st.cgroup, pause, err);
	close_container(&c);
	return rc;
}

char *ward_container_state_json(int rootfd, const char *id, struct ward_err *err)
{
	struct opened c = {.dirfd = -1};
	char *json;
	if (open_container(rootfd, id, false, &c, err) < 0)
		return NULL;
	json = ward_state_json(&c.st, c.status, true);
	close_container(&c);
	return json;
}

int ward_container_pids(int rootfd, const char *id, pid_t **pids, size_t *n, struct ward_err *err)
{
	struct opened c = {.dirfd = -1};
	int rc = 0;
	*pids = NULL;
	*n = 0;
	if (open_container(rootfd, id, false, &c, err) < 0)
		return -1;
	if (c.status != WARD_STOPPED) {
		if (c.st.cgroup[0])
			rc = ward_cgroup_pids(c.st.cgroup, pids, n, err);
		else {
			*pids = xmalloc(sizeof(pid_t));
			(*pids)[0] = c.st.pid;
			*n = 1;
		}
	}
	close_container(&c);
	return rc;
}

/* ---- foreground wait ---- */

int ward_wait_foreground(pid_t pid, int master)
{
	sigset_t set;
	cleanup_fd int sfd = -1;
	int status = 0;
	static const int fwd[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(fwd); i++)
		sigaddset(&set, fwd[i]);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (master >= 0) {
		/* The proxy returns when the terminal hangs up, i.e. the process exited. */
		ward_pty_proxy(master);
	}
	for (;;) {
		struct signalfd_siginfo si;
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno == ECHILD)
			return 255;
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD && si.ssi_signo != SIGWINCH)
			kill(pid, (int)si.ssi_signo);
		/* Reap other orphans reparented to us (we are a subreaper). */
		while ((w = waitpid(-1, &status, WNOHANG)) > 0)
			if (w == pid)
				goto done;
	}
done:
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
