/* configuration -> tenant -> ID range -> policy, plus the host lookups the policy needs. */
#include "effective.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>

#include "apparmor.h"
#include "cstorage.h"
#include "fault.h"
#include "gpu.h"
#include "gpu_lease.h"
#include "intent.h"
#include "json.h"
#include "log.h"
#include "mount.h"
#include "ns.h"
#include "pod.h"
#include "pod_member.h"
#include "policy.h"
#include "process.h"
#include "seccomp_profiles.h"
#include "spec.h"
#include "state.h"
#include "tenant.h"
#include "util.h"

/* ---- host facts for the policy ---------------------------------------------------- */

/* The held namespace fd the pod named by path (opened by ward_hostfds_open). */
static int held_ns(void *arg, const char *path, struct ward_err *err)
{
	const struct ward_hostfd *e = ward_hostfds_find_ns(arg, path);
	return ward_hostfd_get(e, "namespace", err);
}

static int host_ns_is_host(void *arg, const char *path, const char *kind, struct ward_err *err)
{
	int fd = held_ns(arg, path, err);
	int rc;

	if (fd < 0)
		return -1;
	if ((rc = ward_ns_fd_is_host(fd, kind)) < 0)
		return ward_fail_errno(err, "namespace %s", path);
	return rc;
}

/* Lowest host ID and one past the highest, over the lines of a uid_map/gid_map text. */
static int map_envelope(const char *text, uint64_t env[2])
{
	const char *p = text;
	env[0] = UINT64_MAX;
	env[1] = 0;
	while (*p) {
		unsigned long long in, out, n;
		int used;
		if (sscanf(p, " %llu %llu %llu%n", &in, &out, &n, &used) != 3)
			break;
		if (out < env[0])
			env[0] = out;
		if (out + n > env[1])
			env[1] = out + n;
		p += used;
	}
	return env[0] == UINT64_MAX ? -1 : 0;
}

/* Join the user namespace in a child and read its maps as its parent namespace sees them. */
static int host_userns_envelope(void *arg, const char *path, uint64_t uid[2], uint64_t gid[2],
				struct ward_err *err)
{
	int nsfd = held_ns(arg, path, err);
	int pfd[2];
	char buf[2][4096];
	pid_t pid;
	int status;
	size_t n = 0;
	ssize_t r;

	if (nsfd < 0)
		return -1;
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return ward_fail_errno(err, "pipe");
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return ward_fail_errno(err, "fork");
	}
	if (pid == 0) {
		char t[2][4096];
		struct ward_err e;
		size_t l0 = 0, l1 = 0;
		char *a, *b;
		if (setns(nsfd, CLONE_NEWUSER) < 0)
			_exit(2);
		a = read_file_at(AT_FDCWD, "/proc/self/uid_map", &l0, &e);
		b = read_file_at(AT_FDCWD, "/proc/self/gid_map", &l1, &e);
		if (!a || !b || l0 >= sizeof(t[0]) || l1 >= sizeof(t[1]))
			_exit(3);
		memset(t, 0, sizeof(t));
		memcpy(t[0], a, l0);
		memcpy(t[1], b, l1);
		_exit(write_all(pfd[1], t, sizeof(t)) < 0 ? 4 : 0);
	}
	close(pfd[1]);
	while (n < sizeof(buf) && (r = read(pfd[0], (char *)buf + n, sizeof(buf) - n)) > 0)
		n += (size_t)r;
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != sizeof(buf) || !WIFEXITED(status) || WEXITSTATUS(status))
		return ward_fail(err, 0, "cannot read the ID maps of the user namespace %s", path);
	buf[0][sizeof(buf[0]) - 1] = buf[1][sizeof(buf[1]) - 1] = '\0';
	if (map_envelope(buf[0], uid) < 0 || map_envelope(buf[1], gid) < 0)
		return ward_fail(err, 0, "the user namespace %s has no ID maps", path);
	return 0;
}

static int host_storage_layer(void *arg, const char *graph_root, const char *run_root,
			      const char *id, char **layer, struct ward_err *err)
{
	(void)arg;
	return ward_cstorage_layer(graph_root, run_root, id, layer, err);
}

/* What the held fd of path (root.path or a bind source) is: its real path and mode. A
 * name the table does not hold is opened once here, and answered from that fd. */
static char *host_resolve(void *arg, const char *path, mode_t *mode, struct ward_err *err)
{
	const struct ward_hostfd *e = ward_hostfds_find(arg, path);
	cleanup_fd int fd = -1;
	struct stat st;
	char *real;

	if (e) {
		if (e->fd < 0) {
			if (e->errnum == EXDEV)
				ward_fail(err, 0,
					  "%s resolves to an object of another mount namespace "
					  "(through /proc/PID/root)",
					  path);
			else
				ward_fail(err, e->errnum, "%s", path);
			return NULL;
		}
		*mode = e->st.st_mode;
		return xstrdup(e->path);
	}
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !(real = ward_fd_real_path(fd))) {
		ward_fail_errno(err, "%s", path);
		return NULL;
	}
	*mode = st.st_mode;
	return real;
}

static int host_device(void *arg, const char *path, char *type, int64_t *major, int64_t *minor,
		       struct ward_err *err)
{
	cleanup_fd int fd = open(path, O_PATH | O_CLOEXEC);
	struct stat st;

	(void)arg;
	if (fd < 0 || fstat(fd, &st) < 0)
		return ward_fail_errno(err, "host device %s", path);
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
		return ward_fail(err, 0, "host %s is not a device node", path);
	*type = S_ISCHR(st.st_mode) ? 'c' : 'b';
	*major = major(st.st_rdev);
	*minor = minor(st.st_rdev);
	return 0;
}

/* Whether the filesystem of a bind source (its held fd, else one opened here) can be
 * idmapped: not a tmpfs on a kernel before 6.3. Unknown: yes (create then says what fails). */
static int host_idmappable(void *arg, const char *path)
{
	const struct ward_hostfd *e = ward_hostfds_find(arg, path);
	cleanup_fd int own = -1;
	struct statfs sf;
	int fd = e ? e->fd : (own = open(path, O_PATH | O_CLOEXEC));

	if (fd < 0 || fstatfs(fd, &sf) < 0 || (unsigned long)sf.f_type != TMPFS_MAGIC)
		return 1;
	return ward_mount_tmpfs_idmappable();
}

/* The runtime's own limit, which a container inherits when its spec sets none. */
static int host_rlimit(void *arg, const char *type, uint64_t lim[2])
{
	int res = ward_rlimit_from_name(type);
	struct rlimit rl;

	(void)arg;
	if (res < 0 || getrlimit(res, &rl) < 0)
		return -1;
	lim[0] = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	lim[1] = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_max;
	return 0;
}

/* ---- the ID pool ------------------------------------------------------------------- */

void ward_idpool_from_config(const struct ward_config *cfg, struct ward_idpool *p)
{
	struct ward_idrange *res = xcalloc(cfg->n_tenants + 1, sizeof(*res));
	size_t n = 0;

	for (size_t i = 0; i < cfg->n_tenants; i++)
		if (cfg->tenants[i].id_mode == WARD_IDS_RANGE)
			res[n++] = (struct ward_idrange){cfg->tenants[i].range_start,
							 cfg->tenants[i].range_size};
	*p = (struct ward_idpool){.lib_dir = cfg->lib_dir,
				  .base = cfg->pool_base,
				  .size = cfg->pool_size,
				  .reserved = res,
				  .n_reserved = n};
}

void ward_idpool_config_free(struct ward_idpool *p)
{
	free((void *)p->reserved);
	p->reserved = NULL;
}

int ward_effective_release_ids(const struct ward_config *cfg, const char *ids_annotation,
			       const char *id, struct ward_err *err)
{
	char owner[512];
	struct ward_idpool p;
	int rc;

	if (!ids_annotation || sscanf(ids_annotation, "%511s", owner) != 1 ||
	    !strcmp(owner, "fixed"))
		return 0;
	ward_idpool_from_config(cfg, &p);
	rc = ward_idpool_release(&p, owner, id, err);
	ward_idpool_config_free(&p);
	return rc;
}

/* ---- the whole ------------------------------------------------------------------------ */

/* config.json of the bundle directory bundle_fd (opened once: what the userdata check
 * compares is the directory the spec came from). */
static json_t *load_pod(int bundle_fd, const char *bundle, struct ward_err *err)
{
	size_t len;
	cleanup_free char *text = ward_spec_read_bundle(bundle_fd, bundle, &len, err);
	json_t *o;

	if (!text)
		return NULL;
	/* The spec parser's reader: duplicate keys refused, integers above INT64_MAX (Go's
	 * RLIM_INFINITY, 18446744073709551615) kept for the unsigned fields. */
	o = ward_json_decode(text, len, err);
	if (!o)
		ward_wrap(err, "config.json");
	else if (ward_spec_check_annotations(json_object_get(o, "annotations"), err) < 0) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static char *profile_text(const char *name, struct ward_err *err)
{
	if (!strcmp(name, "unconfined"))
		return NULL;
	return ward_seccomp_profile_load(name, err);
}

/* A trusted tenant's pod runs as its spec says; only the tenant is recorded. ward's own
 * record is ward's to write: the pod's "ward" object is replaced by an empty one, so the
 * decoder reads neither it nor an older ward's ward.dev/ annotations as a record. */
static struct ward_spec *trusted_spec(const struct ward_tenant *t, json_t *pod, const char *bundle,
				      char ***notes, struct ward_err *err)
{
	struct ward_spec *spec;
	json_t *copy = json_deep_copy(pod);
	char *n;

	json_object_set_new(copy, WARD_OWN_KEY, json_object());
	spec = ward_spec_from_json(copy, bundle, err);
	json_decref(copy);
	if (!spec)
		return NULL;
	ward_spec_set_annotation(spec, WARD_ANN_TENANT, t->name);
	n = xasprintf("tenant \"%s\" is trusted (tenants.d): the pod runs as its spec says, "
		      "without ward's policy",
		      t->name);
	*notes = strv_append(*notes ? *notes : xcalloc(1, sizeof(char *)), n);
	free(n);
	return spec;
}

/* The GPUs a pod asks for and, only then, the host's inventory. */
static int gpu_facts(const struct ward_config *cfg, json_t *pod, struct ward_gpu_request *req,
		     struct ward_gpu_inventory **inv, struct ward_err *err)
{
	struct ward_gpu_roots roots = {
	    .proc = cfg->gpu.proc_root, .dev = cfg->gpu.dev_root, .cdi_dirs = cfg->gpu.cdi_dirs};

	*inv = NULL;
	if (ward_gpu_request_from_json(pod, req, err) < 0)
		return -1;
	if (!req->refs || !req->refs[0])
		return 0;
	*inv = ward_gpu_inventory_load(&roots, err);
	return *inv ? 0 : ward_wrap(err, "GPU inventory");
}

/* The granted GPUs (ward's own "ward.gpus") are leased before the container exists. */
static int gpu_lease(const struct ward_config *cfg, struct ward_effective *out, const char *id,
		     int dirfd, struct ward_intent *intent, struct ward_err *err)
{
	const char *list = out->spec->own.gpus;
	cleanup_strv char **uuids = NULL;
	cleanup_free char *copy = NULL;
	char *save = NULL;

	if (!list || !out->state_root)
		return 0;
	copy = xstrdup(list);
	uuids = xcalloc(1, sizeof(char *));
	for (char *u = strtok_r(copy, ",", &save); u; u = strtok_r(NULL, ",", &save))
		uuids = strv_append(uuids, u);
	if (intent) { /* named before they are leased: a create killed in between leaks none */
		strv_free(intent->gpus);
		intent->gpus = strv_dup(uuids);
		if (ward_intent_write(dirfd, intent, err) < 0)
			return -1;
	}
	if (ward_gpu_lease(cfg->lib_dir, out->state_root, out->tenant->name, id, out->pod.id, uuids,
			   strv_len(uuids), err) < 0)
		return ward_wrap(err, "tenant \"%s\": gpus", out->tenant->name);
	out->gpus_leased = true;
	ward_fault_point("create.gpus");
	return 0;
}

/* containerd's state dir when the bundle is <state>/io.containerd.runtime.v2.task/<ns>/<id>
 * (containerd's shim v2 layout), read from the directory itself (the fd's path, symlinks
 * resolved), never from a string of the pod's; else NULL. malloc'd. */
char *ward_bundle_containerd_state(const char *bundle, const char *id)
{
	static const char task[] = "/io.containerd.runtime.v2.task";
	cleanup_fd int fd = -1;
	cleanup_free char *real = NULL;
	char *last, *ns;
	size_t n;

	/* A bundle whose name is not in that layout is not asked of the kernel (callers pass
	 * its real path): the name can only say no, the fd's path must say yes. */
	if (!strstr(bundle, task))
		return NULL;
	fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	real = fd < 0 ? NULL : ward_fd_real_path(fd);
	if (!real || !(last = strrchr(real, '/')) || strcmp(last + 1, id))
		return NULL;
	*last = '\0';
	if (!(ns = strrchr(real, '/')) || !ns[1] || !strcmp(ns + 1, ".") || !strcmp(ns + 1, ".."))
		return NULL;
	*ns = '\0';
	n = strlen(real);
	if (n <= sizeof(task) - 1 || strcmp(real + n - (sizeof(task) - 1), task))
		return NULL;
	real[n - (sizeof(task) - 1)] = '\0';
	return xstrdup(real);
}

int ward_effective_build(const struct ward_config *cfg, const char *bundle, const char *id,
			 int rootfd, bool dry_run, struct ward_effective *out, struct ward_err *err)
{
	return ward_effective_build_at(cfg, bundle, id, rootfd, -1, NULL, dry_run, out, err);
}

/* The pod's tenant check, under the pod's lock, and the intent that makes this container a
 * member of the pod before the lock goes. */
static int check_pod(const struct ward_config *cfg, int rootfd, int dirfd,
		     struct ward_intent *intent, struct ward_effective *out, const char *bundle,
		     struct ward_err *err)
{
	int rc = -1;

	if (rootfd < 0)
		return 0;
	if (intent && ward_pod_lock(&out->pod, cfg->lib_dir, err) < 0)
		return -1;
	if (ward_pod_check_tenant(rootfd, out->pod.id, out->tenant->name, err) < 0)
		goto out;
	rc = 0;
	if (!intent)
		goto out;
	intent->tenant = xstrdup(out->tenant->name);
	intent->pod = xstrdup(out->pod.id);
	intent->bundle = xstrdup(bundle);
	/* The ID-pool owner it is about to become a user of, named in the same write: nothing
	 * is allocated between the two (release of a user not held is a no-op). */
	if (!out->tenant->trusted && out->pod.ids_owner)
		intent->ids_owner = xstrdup(out->pod.ids_owner);
	rc = ward_intent_write(dirfd, intent, err);
	if (rc == 0)
		ward_fault_point("create.intent");
out:
	ward_pod_unlock(&out->pod);
	return rc;
}

int ward_effective_build_at(const struct ward_config *cfg, const char *bundle, const char *id,
			    int rootfd, int dirfd, struct ward_intent *intent, bool dry_run,
			    struct ward_effective *out, struct ward_err *err)
{
	struct ward_gpu_request gpu_req = {0};
	struct ward_gpu_inventory *gpu_inv = NULL;
	cleanup_free char *sc = NULL;
	cleanup_free char *sc_priv = NULL;
	cleanup_free char *cstate = NULL;
	cleanup_free char *pod_uid = NULL;
	struct ward_policy_in in = {0};
	struct ward_idpool pool;
	cleanup_fd int bundle_fd = -1;
	json_t *pod;
	int rc;

	struct ward_policy_host host = {
	    .ns_is_host = host_ns_is_host,
	    .userns_envelope = host_userns_envelope,
	    .resolve = host_resolve,
	    .device = host_device,
	    .arg = &out->fds,
	    .rlimit = host_rlimit,
	    .storage_layer = host_storage_layer,
	};

	memset(out, 0, sizeof(*out));
	out->fds.root = -1;
	out->pod = (struct ward_pod)WARD_POD_INIT;
	bundle_fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	pod = load_pod(bundle_fd, bundle, err);
	if (!pod)
		return -1;
	out->apparmor_asked =
	    ward_json_str_or(json_object_get(pod, "process"), "apparmorProfile", NULL);
	/* Each host path the pod names, opened once, before anything else is decided. */
	if (ward_hostfds_open(pod, bundle_fd, bundle, &out->fds, err) < 0)
		goto fail;
	out->tenant = ward_tenant_select(cfg, json_object_get(pod, "annotations"), &out->why, err);
	if (!out->tenant)
		goto fail;
	/* The pod, resolved once: what create, the state and everything after read. */
	if (ward_pod_resolve(&out->pod, json_object_get(pod, "annotations"), id, out->tenant, err) <
	    0)
		goto fail;
	if (rootfd >= 0)
		ward_pod_alone_unless_member(rootfd, id, &out->pod, &out->fds, out->tenant);
	out->pod.userdata = ward_cstorage_bundle_is_userdata(bundle_fd, cfg->storage_root,
							     cfg->storage_runroot, id);
	if (check_pod(cfg, rootfd, dirfd, intent, out, bundle, err) < 0)
		goto fail;
	if (rootfd >= 0 && ward_pod_check_sandbox(rootfd, id, &out->pod, &out->fds, err) < 0)
		goto fail;
	if (rootfd >= 0 && !out->tenant->trusted &&
	    ward_pod_sandbox_userns(rootfd, id, &out->pod, &out->fds, err) < 0)
		goto fail;
	if (rootfd >= 0)
		out->state_root = ward_fd_real_path(rootfd);
	if (out->tenant->trusted) {
		/* Trusted pods run as their spec says, and are audited like every other. */
		out->spec = trusted_spec(out->tenant, pod, bundle, &out->notes, err);
		if (!out->spec)
			goto fail;
		json_decref(pod);
		return 0;
	}
	if (gpu_facts(cfg, pod, &gpu_req, &gpu_inv, err) < 0)
		goto fail_tenant;
	if (strcmp(out->tenant->seccomp, "unconfined") &&
	    !(sc = profile_text(out->tenant->seccomp, err)))
		goto fail_tenant;
	if (!(sc_priv = profile_text(out->tenant->seccomp_privileged, err)))
		goto fail_tenant;

	/* The ID range: fixed, the tenant's slice, or the pod's. */
	if (!out->pod.ids_owner) {
		out->pod.ids =
		    (struct ward_idrange){out->tenant->range_start, out->tenant->range_size};
	} else {
		/* The intent names the owner already (check_pod). */
		ward_idpool_from_config(cfg, &pool);
		rc = ward_idpool_acquire(&pool, out->pod.ids_owner, id, 1, &out->pod.ids, err);
		if (rc == 0 && dry_run)
			ward_idpool_release(&pool, out->pod.ids_owner, id, err);
		ward_idpool_config_free(&pool);
		if (rc < 0)
			goto fail_tenant;
		out->ids_acquired = !dry_run;
		if (intent) { /* the range, for the record: written with the next intent */
			ward_fault_point("create.ids");
			intent->ids_start = out->pod.ids.start;
			intent->ids_size = out->pod.ids.size;
		}
	}

	cstate = ward_bundle_containerd_state(bundle, id);
	/* A member's pod uid is its sandbox's (the policy checks the claim against it). */
	pod_uid = ward_pod_sandbox_uid(rootfd, id, out->pod.id);
	if (pod_uid) {
		free(out->pod.uid);
		out->pod.uid = xstrdup(pod_uid);
	}
	in = (struct ward_policy_in){
	    .cfg = cfg,
	    .tenant = out->tenant,
	    .container_id = id,
	    .bundle = bundle,
	    .ids = out->pod.ids,
	    .ids_owner = out->pod.ids_owner,
	    .apparmor_enabled = ward_apparmor_enabled(),
	    .seccomp_json = sc,
	    .seccomp_priv_json = sc_priv,
	    .host = &host,
	    .gpu_req = &gpu_req,
	    .gpu_inv = gpu_inv,
	    .state_root = out->state_root,
	    .bundle_containerd_state = cstate,
	    .pod_uid = pod_uid,
	    .pod_userns = out->pod.userns,
	    .idmappable = host_idmappable,
	    .userdata_ids = {out->pod.userdata ? id : NULL,
			     out->pod.sandbox_userdata ? out->pod.id : NULL}};
	/* The every-field gate, the one decoding into the typed spec, the policy on it. */
	out->spec = ward_policy_apply_json(&in, pod, &out->notes, &out->audit_seccomp, err);
	if (!out->spec || (!dry_run && gpu_lease(cfg, out, id, dirfd, intent, err) < 0)) {
		ward_effective_undo(cfg, out, id);
		goto fail;
	}
	ward_gpu_request_clear(&gpu_req);
	ward_gpu_inventory_free(gpu_inv);
	json_decref(pod);
	return 0;

fail_tenant:
	ward_wrap(err, "tenant \"%s\"", out->tenant->name);
fail:
	ward_gpu_request_clear(&gpu_req);
	ward_gpu_inventory_free(gpu_inv);
	json_decref(pod);
	ward_effective_clear(out);
	return -1;
}

void ward_effective_undo(const struct ward_config *cfg, struct ward_effective *e, const char *id)
{
	struct ward_idpool pool;
	struct ward_err ignored;

	/* Nothing of the container ran: the GPUs are still clean. */
	if (e->gpus_leased &&
	    ward_gpu_unlease(cfg->lib_dir, e->state_root, id, false, NULL, &ignored) < 0)
		ward_warn("container \"%s\": give back its GPUs: %s", id, ignored.msg);
	e->gpus_leased = false;
	if (!e->ids_acquired)
		return;
	ward_idpool_from_config(cfg, &pool);
	ward_idpool_release(&pool, e->pod.ids_owner, id, &ignored);
	ward_idpool_config_free(&pool);
	e->ids_acquired = false;
}

void ward_effective_clear(struct ward_effective *e)
{
	ward_spec_free(e->spec);
	free(e->why);
	ward_pod_clear(&e->pod);
	free(e->state_root);
	free(e->apparmor_asked);
	strv_free(e->notes);
	ward_hostfds_close(&e->fds);
	memset(e, 0, sizeof(*e));
	e->fds.root = -1;
	e->pod = (struct ward_pod)WARD_POD_INIT;
}

int ward_effective_release_intent(const struct ward_config *cfg, const char *state_root,
				  const char *id, const struct ward_intent *intent,
				  struct ward_err *err)
{
	struct ward_idpool pool;
	struct ward_err e2;
	int rc = 0;

	if (intent->ids_owner) {
		ward_idpool_from_config(cfg, &pool);
		rc = ward_idpool_release(&pool, intent->ids_owner, id, err);
		ward_idpool_config_free(&pool);
	}
	ward_fault_point("delete.ids");
	/* Dirty unless nothing of the container ran: never handed out unwiped. */
	if (intent->gpus && intent->gpus[0] && state_root &&
	    ward_gpu_unlease(cfg->lib_dir, state_root, id, intent->ran, NULL, rc < 0 ? &e2 : err) <
		0)
		rc = -1;
	ward_fault_point("delete.gpus");
	return rc;
}
