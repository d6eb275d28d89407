/* The pod: its identity, tenant, ID slice, namespace-sharing plan and lock (pod.h). Data in,
 * data out, except the checks against the other containers of the state root (their state,
 * and for the sandbox its namespaces in /proc) and the lock. */
#include "pod.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "hostfds.h"
#include "intent.h"
#include "json.h"
#include "spec.h"
#include "state.h"
#include "util.h"

char *ward_pod_of(json_t *annotations, const char *container_id)
{
	const char *s = ward_json_str_at(annotations, WARD_ANN_SANDBOX_ID);
	return xstrdup(s && *s ? s : container_id);
}

char *ward_pod_ids_owner(const struct ward_tenant *t, const char *pod)
{
	switch (t->id_mode) {
	case WARD_IDS_POD:
		return xasprintf("pod:%s/%s", t->name, pod);
	case WARD_IDS_TENANT:
		return xasprintf("tenant:%s", t->name);
	default:
		return NULL;
	}
}

static char *ann_dup(json_t *annotations, const char *key)
{
	json_t *v = annotations ? json_object_get(annotations, key) : NULL;
	return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

int ward_pod_resolve(struct ward_pod *pod, json_t *annotations, const char *container_id,
		     const struct ward_tenant *t, struct ward_err *err)
{
	*pod = (struct ward_pod)WARD_POD_INIT;
	pod->id = ward_pod_of(annotations, container_id);
	pod->is_sandbox = !strcmp(pod->id, container_id);
	pod->k8s_namespace = ann_dup(annotations, WARD_ANN_CRI_NAMESPACE);
	pod->name = ann_dup(annotations, WARD_ANN_CRI_POD);
	pod->uid = ann_dup(annotations, WARD_ANN_CRI_POD_UID);
	pod->tenant = xstrdup(t->name);
	pod->tenant_ann = ann_dup(annotations, WARD_ANN_TENANT);
	/* a trusted tenant's pod runs as its spec says: no slice of ward's */
	pod->ids_owner = t->trusted ? NULL : ward_pod_ids_owner(t, pod->id);
	if (!ward_id_valid(pod->id))
		return ward_fail(err, 0, "annotation %s: invalid pod id \"%s\"",
				 WARD_ANN_SANDBOX_ID, pod->id);
	return 0;
}

/* ---- the lock ------------------------------------------------------------------------- */

/* Where in pods/pods.lock the pod's lock byte is: FNV-1a of its id, 62 bits (a lock may lie
 * beyond the end of the file; two ids meet only by a 64-bit hash collision, and then their
 * creates only wait for each other). */
static off_t pod_lock_offset(const char *pod)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (const unsigned char *c = (const unsigned char *)pod; *c; c++)
		h = (h ^ *c) * 0x100000001b3ull;
	return (off_t)(h & ((1ull << 62) - 1));
}

int ward_pod_lock_at(const char *lib_dir, const char *pod, struct ward_err *err)
{
	cleanup_free char *dir = NULL;
	cleanup_fd int dfd = -1;
	cleanup_fd int fd = -1;
	struct stat st;

	if (!lib_dir || lib_dir[0] != '/')
		return ward_fail(err, EINVAL, "pod lock: lib_dir \"%s\" is not an absolute path",
				 lib_dir ? lib_dir : "");
	if (!ward_id_valid(pod))
		return ward_fail(err, EINVAL, "pod lock: invalid pod id \"%s\"", pod);
	dir = xasprintf("%s/pods", lib_dir);
	if (ward_mkdir_p(dir, 0700, err) < 0)
		return ward_wrap(err, "pod lock");
	/* The directory is opened once and checked through the fd: root's, not a link. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return ward_fail_errno(err, "pod lock: open %s", dir);
	if (fstat(dfd, &st) < 0)
		return ward_fail_errno(err, "pod lock: %s", dir);
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return ward_fail(err, EPERM,
				 "pod lock: %s is not owned by us or is writable by others", dir);
	/* One file for every pod, one byte of it per pod (an open file description lock, which
	 * goes with the fd as flock's does): no file per pod, which ext4 created slowly and
	 * nothing removed. */
	fd = openat(dfd, WARD_POD_LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return ward_fail_errno(err, "pod lock: open %s/%s", dir, WARD_POD_LOCK_FILE);
	struct flock fl = {
	    .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = pod_lock_offset(pod), .l_len = 1};
	while (fcntl(fd, F_OFD_SETLKW, &fl) < 0)
		if (errno != EINTR)
			return ward_fail_errno(err, "pod lock: lock pod \"%s\" in %s/%s", pod, dir,
					       WARD_POD_LOCK_FILE);
	return steal_fd(fd);
}

int ward_pod_lock(struct ward_pod *pod, const char *lib_dir, struct ward_err *err)
{
	ward_pod_unlock(pod);
	pod->lockfd = ward_pod_lock_at(lib_dir, pod->id, err);
	pod->locked = pod->lockfd >= 0;
	return pod->locked ? 0 : -1;
}

void ward_pod_unlock(struct ward_pod *pod)
{
	if (pod->locked)
		close_fdp(&pod->lockfd);
	pod->locked = false;
	pod->lockfd = -1;
}

/* ---- the pod's members ---------------------------------------------------------------- */

/* The pod and tenant of a state dir: its state.json, else (a create under way or one that
 * died) its intent. 0 if it names both. */
static int member_of(int dfd, char **pod, char **tenant)
{
	struct ward_state st = {0};
	struct ward_intent in = {0};
	struct ward_err ignored;

	*pod = *tenant = NULL;
	if (ward_state_read(dfd, &st, &ignored) == 0) {
		const char *t = ward_state_tenant(&st);
		*pod = xstrdup(ward_state_pod(&st));
		if (t)
			*tenant = xstrdup(t);
		ward_state_clear(&st);
	} else if (ignored.errnum == ENOENT && ward_intent_read(dfd, &in, &ignored) == 0) {
		*pod = in.pod;
		*tenant = in.tenant;
		in.pod = in.tenant = NULL;
		ward_intent_clear(&in);
	}
	if (*pod && *tenant)
		return 0;
	free(*pod);
	free(*tenant);
	*pod = *tenant = NULL;
	return -1;
}

struct pod_check {
	const char *pod, *tenant;
	struct ward_err *err;
};

static int check_pod_one(int dfd, const char *id, void *arg)
{
	struct pod_check *c = arg;
	cleanup_free char *p = NULL;
	cleanup_free char *t = NULL;

	if (member_of(dfd, &p, &t) < 0 || strcmp(p, c->pod) || !strcmp(t, c->tenant))
		return 0;
	return ward_fail(c->err, 0,
			 "pod \"%s\" already has container \"%s\" of tenant \"%s\": "
			 "all containers of a pod belong to one tenant",
			 c->pod, id, t);
}

int ward_pod_check_tenant(int rootfd, const char *pod, const char *tenant, struct ward_err *err)
{
	struct pod_check c = {.pod = pod, .tenant = tenant, .err = err};
	return ward_state_each(rootfd, NULL, check_pod_one, &c);
}

/* ---- the sandbox ---------------------------------------------------------------------- */

/* Is the namespace the held fd is the one /proc/<pid>/ns/<kind> is? By identity (st_dev,
 * st_ino of the nsfs inodes) of the fd that create will join (hostfds.c), never the name
 * again: the one place namespaces are compared here. */
static bool ns_same(int fd, pid_t pid, const char *kind)
{
	char theirs[64];
	struct stat a, b;

	snprintf(theirs, sizeof(theirs), "/proc/%d/ns/%s", (int)pid, kind);
	return fd >= 0 && fstat(fd, &a) == 0 && stat(theirs, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* The sandbox's state (in st), or -1 if there is none in the state root. */
static int sandbox_open(int rootfd, const char *pod, struct ward_state *st)
{
	struct ward_err ignored = {0};
	cleanup_fd int dfd = -1;

	if (!ward_id_valid(pod) ||
	    (dfd = openat(rootfd, pod, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    ward_state_read(dfd, st, &ignored) < 0)
		return -1;
	return 0;
}

int ward_pod_check_sandbox(int rootfd, const char *id, struct ward_pod *pod,
			   const struct ward_hostfds *fds, struct ward_err *err)
{
	static const struct {
		int type;
		const char *proc;
	} kinds[] = {{CLONE_NEWIPC, "ipc"}, {CLONE_NEWUTS, "uts"}, {CLONE_NEWNET, "net"}};
	struct ward_state st = {0};
	cleanup_fd int pidfd = -1;
	const char *why = NULL;
	int joined = 0;

	if (!strcmp(pod->id, id))
		return 0; /* the sandbox itself, or a container alone */
	if (sandbox_open(rootfd, pod->id, &st) < 0) {
		why = "no such container in this state root";
		goto refuse;
	}
	if (strcmp(ward_state_pod(&st), pod->id)) {
		why = "that container is not a pod sandbox (it belongs to another pod)";
		goto refuse;
	}
	if ((pidfd = ward_state_pidfd(&st)) < 0) {
		why = "the sandbox container is not running";
		goto refuse;
	}
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		const struct ward_hostfd *e = ward_hostfds_ns(fds, kinds[k].type);
		if (e && ns_same(e->fd, st.pid, kinds[k].proc))
			joined |= kinds[k].type;
	}
	/* The pid named the sandbox's init throughout: it is still alive. */
	if (joined && ward_pidfd_send_signal(pidfd, 0) == 0) {
		pod->from_sandbox |= joined;
		ward_state_clear(&st);
		return 0;
	}
	why = "it joins none of the sandbox's ipc, uts or network namespaces";
refuse:
	ward_state_clear(&st);
	return ward_fail(err, 0,
			 "container \"%s\": annotation %s=%s: the container does not join pod %s's "
			 "namespaces (%s)",
			 id, WARD_ANN_SANDBOX_ID, pod->id, pod->id, why);
}

int ward_pod_sandbox_userns(int rootfd, const char *id, struct ward_pod *pod,
			    struct ward_hostfds *fds, struct ward_err *err)
{
	struct ward_state st = {0};
	cleanup_fd int pidfd = -1;
	cleanup_free char *name = NULL;
	const struct ward_hostfd *e;

	free(pod->userns);
	pod->userns = NULL;
	if (!strcmp(pod->id, id) || ward_hostfds_ns(fds, CLONE_NEWUSER))
		return 0;
	if (sandbox_open(rootfd, pod->id, &st) < 0 || (pidfd = ward_state_pidfd(&st)) < 0) {
		ward_state_clear(&st);
		return ward_fail(err, 0,
				 "container \"%s\": pod %s: the sandbox is not running: "
				 "cannot join its user namespace",
				 id, pod->id);
	}
	name = xasprintf("/proc/%d/ns/user", (int)st.pid);
	if (ward_hostfds_add_ns(fds, CLONE_NEWUSER, "user", name, err) < 0) {
		ward_state_clear(&st);
		return ward_wrap(err, "container \"%s\": pod %s's user namespace", id, pod->id);
	}
	/* Held now; the pid still named the sandbox's init once it was (pidfd, not the pid). */
	e = ward_hostfds_ns(fds, CLONE_NEWUSER);
	if (!e || !ns_same(e->fd, st.pid, "user") || ward_pidfd_send_signal(pidfd, 0) < 0) {
		ward_state_clear(&st);
		return ward_fail(err, 0,
				 "container \"%s\": pod %s: the sandbox exited while its "
				 "user namespace was opened",
				 id, pod->id);
	}
	ward_state_clear(&st);
	pod->userns = steal_ptr(name);
	pod->from_sandbox |= CLONE_NEWUSER;
	return 0;
}

char *ward_pod_sandbox_uid(int rootfd, const char *id, const char *pod)
{
	struct ward_state st = {0};
	const char *uid;
	char *r;

	if (rootfd < 0 || !strcmp(pod, id))
		return NULL;
	if (sandbox_open(rootfd, pod, &st) < 0) {
		ward_state_clear(&st);
		return xstrdup("");
	}
	uid = st.pod.id ? st.pod.uid : NULL;
	for (size_t i = 0; !st.pod.id && st.annotation_keys && st.annotation_keys[i]; i++)
		if (!strcmp(st.annotation_keys[i], WARD_ANN_CRI_POD_UID))
			uid = st.annotation_values[i];
	r = xstrdup(uid ? uid : "");
	ward_state_clear(&st);
	return r;
}

/* ---- state.json ----------------------------------------------------------------------- */

static const struct {
	int type;
	const char *name;
} share_names[] = {{CLONE_NEWUSER, "user"},
		   {CLONE_NEWIPC, "ipc"},
		   {CLONE_NEWUTS, "uts"},
		   {CLONE_NEWNET, "network"}};

json_t *ward_pod_to_json(const struct ward_pod *pod)
{
	json_t *o = json_object(), *from = json_array();

	json_object_set_new(o, "id", json_string(pod->id ? pod->id : ""));
	json_object_set_new(o, "sandbox", json_boolean(pod->is_sandbox));
	if (pod->k8s_namespace)
		json_object_set_new(o, "namespace", json_string(pod->k8s_namespace));
	if (pod->name)
		json_object_set_new(o, "name", json_string(pod->name));
	if (pod->uid)
		json_object_set_new(o, "uid", json_string(pod->uid));
	if (pod->tenant)
		json_object_set_new(o, "tenant", json_string(pod->tenant));
	json_object_set_new(o, "ids",
			    json_pack("{s:s?,s:I,s:I}", "owner", pod->ids_owner, "start",
				      (json_int_t)pod->ids.start, "size",
				      (json_int_t)pod->ids.size));
	for (size_t i = 0; i < ARRAY_SIZE(share_names); i++)
		if (pod->from_sandbox & share_names[i].type)
			json_array_append_new(from, json_string(share_names[i].name));
	json_object_set_new(o, "from_sandbox", from);
	if (pod->userns)
		json_object_set_new(o, "userns", json_string(pod->userns));
	return o;
}

void ward_pod_from_json(json_t *o, struct ward_pod *pod)
{
	json_t *ids = json_object_get(o, "ids"), *from = json_object_get(o, "from_sandbox"), *v;
	const char *id = json_is_object(o) ? ward_json_str_at(o, "id") : NULL;
	size_t i;

	*pod = (struct ward_pod)WARD_POD_INIT;
	if (!id || !ward_id_valid(id))
		return;
	pod->id = xstrdup(id);
	pod->is_sandbox = json_is_true(json_object_get(o, "sandbox"));
	pod->k8s_namespace = ward_json_str_or(o, "namespace", NULL);
	pod->name = ward_json_str_or(o, "name", NULL);
	pod->uid = ward_json_str_or(o, "uid", NULL);
	pod->tenant = ward_json_str_or(o, "tenant", NULL);
	pod->userns = ward_json_str_or(o, "userns", NULL);
	if (json_is_object(ids)) {
		pod->ids_owner = ward_json_str_or(ids, "owner", NULL);
		pod->ids.start = (uint32_t)json_integer_value(json_object_get(ids, "start"));
		pod->ids.size = (uint32_t)json_integer_value(json_object_get(ids, "size"));
	}
	json_array_foreach(from, i, v)
	{
		for (size_t k = 0; k < ARRAY_SIZE(share_names); k++)
			if (json_is_string(v) && !strcmp(json_string_value(v), share_names[k].name))
				pod->from_sandbox |= share_names[k].type;
	}
}

void ward_pod_copy(struct ward_pod *dst, const struct ward_pod *src)
{
	json_t *o = ward_pod_to_json(src);

	ward_pod_from_json(o, dst);
	json_decref(o);
}

void ward_pod_clear(struct ward_pod *pod)
{
	ward_pod_unlock(pod);
	free(pod->id);
	free(pod->k8s_namespace);
	free(pod->name);
	free(pod->uid);
	free(pod->tenant);
	free(pod->tenant_ann);
	free(pod->ids_owner);
	free(pod->userns);
	*pod = (struct ward_pod)WARD_POD_INIT;
}
