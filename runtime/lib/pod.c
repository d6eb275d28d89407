/* The pod: its identity, tenant, ID slice, namespace-sharing plan and lock (pod.h). Data in,
 * data out, except the lock. The checks against the other containers of the state root
 * are pod_member.c's. */
#include "pod.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "json.h"
#include "spec.h"
#include "util.h"

/* The annotation that names the container's sandbox, NULL: none. */
static const char *sandbox_key(json_t *annotations)
{
	static const char *const keys[] = {WARD_ANN_SANDBOX_ID, WARD_ANN_CRIO_SANDBOX_ID};
	const char *s;

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if ((s = ward_json_str_at(annotations, keys[i])) && *s)
			return keys[i];
	return NULL;
}

char *ward_pod_of(json_t *annotations, const char *container_id)
{
	const char *k = sandbox_key(annotations);
	return xstrdup(k ? ward_json_str_at(annotations, k) : container_id);
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

/* containerd's CRI annotation, else the older one CRI-O and dockershim set. */
static char *cri_dup(json_t *annotations, const char *key, const char *older)
{
	char *v = ward_json_str_or(annotations, key, NULL);
	return v ? v : ward_json_str_or(annotations, older, NULL);
}

int ward_pod_resolve(struct ward_pod *pod, json_t *annotations, const char *container_id,
		     const struct ward_tenant *t, struct ward_err *err)
{
	*pod = (struct ward_pod)WARD_POD_INIT;
	pod->id = ward_pod_of(annotations, container_id);
	pod->sandbox_key = sandbox_key(annotations);
	if (!pod->sandbox_key)
		pod->sandbox_key = WARD_ANN_SANDBOX_ID;
	pod->is_sandbox = !strcmp(pod->id, container_id);
	pod->k8s_namespace = cri_dup(annotations, WARD_ANN_CRI_NAMESPACE, WARD_ANN_POD_NAMESPACE);
	pod->name = cri_dup(annotations, WARD_ANN_CRI_POD, WARD_ANN_POD_NAME);
	pod->uid = cri_dup(annotations, WARD_ANN_CRI_POD_UID, WARD_ANN_POD_UID);
	pod->tenant = xstrdup(t->name);
	pod->tenant_ann = ward_json_str_or(annotations, WARD_ANN_TENANT, NULL);
	/* a trusted tenant's pod runs as its spec says: no slice of ward's */
	pod->ids_owner = t->trusted ? NULL : ward_pod_ids_owner(t, pod->id);
	if (!ward_id_valid(pod->id))
		return ward_fail(err, 0, "annotation %s: invalid pod id \"%s\"", pod->sandbox_key,
				 pod->id);
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

/* ---- state.json ----------------------------------------------------------------------- */

static const struct {
	int type;
	const char *name;
} share_names[] = {{CLONE_NEWUSER, "user"},
		   {CLONE_NEWIPC, "ipc"},
		   {CLONE_NEWUTS, "uts"},
		   {CLONE_NEWNET, "network"}};

json_t *ward_pod_identity_json(const struct ward_pod *pod)
{
	json_t *o = json_object();

	if (pod->k8s_namespace)
		json_object_set_new(o, "namespace", json_string(pod->k8s_namespace));
	if (pod->name)
		json_object_set_new(o, "name", json_string(pod->name));
	if (pod->uid)
		json_object_set_new(o, "uid", json_string(pod->uid));
	return o;
}

json_t *ward_pod_to_json(const struct ward_pod *pod)
{
	json_t *o = json_object(), *from = json_array(), *ident;

	json_object_set_new(o, "id", json_string(pod->id ? pod->id : ""));
	json_object_set_new(o, "sandbox", json_boolean(pod->is_sandbox));
	ident = ward_pod_identity_json(pod);
	json_object_update(o, ident);
	json_decref(ident);
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
	if (pod->userdata)
		json_object_set_new(o, "userdata", json_true());
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
	pod->userdata = json_is_true(json_object_get(o, "userdata"));
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
	free_all(pod->id, pod->k8s_namespace, pod->name, pod->uid, pod->tenant, pod->tenant_ann,
		 pod->ids_owner, pod->userns);
	*pod = (struct ward_pod)WARD_POD_INIT;
}
