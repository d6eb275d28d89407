/* Tenant selection. Data in, data out, except ward_tenant_check_pod and
 * ward_tenant_check_sandbox, which read the state of the other containers (and, for the
 * latter, the sandbox's namespaces in /proc). */
#include "tenant.h"

#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intent.h"
#include "json.h"
#include "spec.h"
#include "state.h"
#include "util.h"

/* The pod's Kubernetes namespace: the namespace annotations, in order, must agree; an
 * empty one is an error. *ns NULL: none present (a bare bundle). *key: the first found. */
static int pod_namespace(const struct ward_config *c, json_t *annotations, const char **ns,
			 const char **key, struct ward_err *err)
{
	*ns = *key = NULL;
	for (size_t i = 0; c->namespace_annotations && c->namespace_annotations[i]; i++) {
		const char *k = c->namespace_annotations[i];
		json_t *v = annotations ? json_object_get(annotations, k) : NULL;
		if (!v)
			continue;
		if (!json_is_string(v) || !*json_string_value(v))
			return ward_fail(err, 0,
					 "annotation %s: the Kubernetes namespace is empty (or not "
					 "a string): cannot choose a tenant",
					 k);
		if (*ns && strcmp(*ns, json_string_value(v)))
			return ward_fail(err, 0,
					 "annotations %s=%s and %s=%s disagree on the Kubernetes "
					 "namespace: cannot choose a tenant",
					 *key, *ns, k, json_string_value(v));
		if (!*ns) {
			*ns = json_string_value(v);
			*key = k;
		}
	}
	return 0;
}

/* The tenant_choice set for a namespace (NULL: none; "" for no namespace), and the key
 * that gave it in *from. */
static char *const *choice_set(const struct ward_config *c, const char *ns, const char **from)
{
	const char *want[] = {ns ? ns : "", ns ? "*" : NULL};

	for (size_t w = 0; w < 2 && want[w]; w++)
		for (size_t i = 0; c->choice_keys && c->choice_keys[i]; i++)
			if (!strcmp(c->choice_keys[i], want[w])) {
				*from = c->choice_keys[i];
				return c->choice_sets[i];
			}
	*from = NULL;
	return NULL;
}

static bool set_has(char *const *set, const char *name)
{
	for (size_t i = 0; set && set[i]; i++)
		if (!strcmp(set[i], "*") || !strcmp(set[i], name))
			return true;
	return false;
}

static const struct ward_tenant *known(const struct ward_config *c, const char *name,
				       struct ward_err *err)
{
	const struct ward_tenant *t = ward_config_tenant(c, name);
	if (!t)
		ward_fail(err, 0,
			  "annotation %s: unknown tenant \"%s\" (no tenants.d/%s.json in %s)",
			  c->tenant_annotation, name, name,
			  c->dir ? c->dir : "the built-in configuration");
	return t;
}

const struct ward_tenant *ward_tenant_select(const struct ward_config *c, json_t *annotations,
					     char **why, struct ward_err *err)
{
	const struct ward_tenant *t;
	json_t *tv = annotations && c->tenant_annotation
			 ? json_object_get(annotations, c->tenant_annotation)
			 : NULL;
	const char *name = NULL, *ns, *ns_key, *from;
	char *const *set;

	*why = NULL;
	if (tv && (!json_is_string(tv) || !*json_string_value(tv))) {
		ward_fail(err, 0, "annotation %s: empty (or not a string)", c->tenant_annotation);
		return NULL;
	}
	name = tv ? json_string_value(tv) : NULL;
	if (pod_namespace(c, annotations, &ns, &ns_key, err) < 0)
		return NULL;

	/* A mapped namespace gives its tenant, full stop. */
	for (size_t j = 0; ns && c->namespace_keys[j]; j++) {
		if (strcmp(c->namespace_keys[j], ns))
			continue;
		if (name && strcmp(name, c->namespace_tenants[j])) {
			ward_fail(err, 0,
				  "annotation %s=%s: pods of namespace %s belong to tenant %s "
				  "(ward.json namespaces)",
				  c->tenant_annotation, name, ns, c->namespace_tenants[j]);
			return NULL;
		}
		*why = xasprintf("annotation %s=%s, mapped by ward.json namespaces", ns_key, ns);
		return ward_config_tenant(c, c->namespace_tenants[j]);
	}

	/* Unmapped (or no) namespace: the annotation chooses only within tenant_choice. */
	set = choice_set(c, ns, &from);
	if (name) {
		if (!set_has(set, name)) {
			const char *who = ns ? "pods of namespace "
					     : "a pod without a namespace "
					       "annotation";
			char list[512] = "";
			for (size_t i = 0; set && set[i]; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 i ? ", " : "", set[i]);
			if (set && set[0])
				ward_fail(err, 0,
					  "annotation %s=%s: %s%s may choose only %s (ward.json "
					  "tenant_choice \"%s\")",
					  c->tenant_annotation, name, who, ns ? ns : "", list,
					  from);
			else if (set)
				ward_fail(
				    err, 0,
				    "annotation %s=%s: %s%s may not choose a tenant (ward.json "
				    "tenant_choice \"%s\" is empty)",
				    c->tenant_annotation, name, who, ns ? ns : "", from);
			else
				ward_fail(
				    err, 0,
				    "annotation %s=%s: %s%s may not choose a tenant (ward.json "
				    "tenant_choice has no entry %s)",
				    c->tenant_annotation, name, who, ns ? ns : "",
				    ns ? "for it nor \"*\"" : "\"\"");
			return NULL;
		}
		if (!(t = known(c, name, err)))
			return NULL;
		*why = ns ? xasprintf("annotation %s=%s, allowed for namespace %s by ward.json "
				      "tenant_choice \"%s\"",
				      c->tenant_annotation, name, ns, from)
			  : xasprintf("annotation %s=%s", c->tenant_annotation, name);
		return t;
	}
	if (c->default_tenant) {
		*why = ns ? xasprintf("annotation %s=%s is not mapped in ward.json namespaces: "
				      "default tenant",
				      ns_key, ns)
			  : xasprintf("no tenant annotation: default tenant");
		return ward_config_tenant(c, c->default_tenant);
	}
	if (ns)
		ward_fail(err, 0,
			  "annotation %s=%s: namespace not mapped to a tenant and no default "
			  "tenant is configured",
			  ns_key, ns);
	else
		ward_fail(err, 0,
			  "no tenant: the pod has no %s annotation and no default tenant is "
			  "configured",
			  c->tenant_annotation);
	return NULL;
}

char *ward_tenant_pod_of(json_t *annotations, const char *container_id)
{
	const char *s = ward_json_str_at(annotations, WARD_ANN_SANDBOX_ID);
	return xstrdup(s && *s ? s : container_id);
}

char *ward_tenant_id_owner(const struct ward_tenant *t, const char *pod)
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

/* The pod and tenant of a state dir: its state.json's annotations, else (a create under
 * way or one that died) its intent. 0 if it names both. */
static int member_of(int dfd, char **pod, char **tenant)
{
	struct ward_state st = {0};
	struct ward_intent in = {0};
	struct ward_err ignored;

	*pod = *tenant = NULL;
	if (ward_state_read(dfd, &st, &ignored) == 0) {
		const char *t = ward_state_tenant(&st);
		for (size_t i = 0; st.annotation_keys && st.annotation_keys[i]; i++)
			if (!strcmp(st.annotation_keys[i], WARD_ANN_SANDBOX_ID))
				*pod = xstrdup(st.annotation_values[i]);
		if (t)
			*tenant = xstrdup(t);
		if (!*pod)
			*pod = xstrdup(st.id);
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

int ward_tenant_check_pod(int rootfd, const char *pod, const char *tenant, struct ward_err *err)
{
	struct pod_check c = {.pod = pod, .tenant = tenant, .err = err};
	return ward_state_each(rootfd, NULL, check_pod_one, &c);
}

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

int ward_tenant_check_sandbox(int rootfd, const char *id, const char *pod,
			      const struct ward_hostfds *fds, struct ward_err *err)
{
	static const struct {
		int type;
		const char *proc;
	} kinds[] = {{CLONE_NEWIPC, "ipc"}, {CLONE_NEWUTS, "uts"}, {CLONE_NEWNET, "net"}};
	struct ward_state st = {0};
	struct ward_err ignored = {0};
	cleanup_fd int dfd = -1;
	cleanup_fd int pidfd = -1;
	const char *why = NULL, *own = NULL;
	bool joined = false;
	size_t i;

	if (!strcmp(pod, id))
		return 0; /* the sandbox itself, or a container alone */
	if (!ward_id_valid(pod) ||
	    (dfd = openat(rootfd, pod, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    ward_state_read(dfd, &st, &ignored) < 0) {
		why = "no such container in this state root";
		goto refuse;
	}
	for (i = 0; st.annotation_keys && st.annotation_keys[i]; i++)
		if (!strcmp(st.annotation_keys[i], WARD_ANN_SANDBOX_ID))
			own = st.annotation_values[i];
	if (own && strcmp(own, pod)) {
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
			joined = true;
	}
	/* The pid named the sandbox's init throughout: it is still alive. */
	if (joined && ward_pidfd_send_signal(pidfd, 0) == 0) {
		ward_state_clear(&st);
		return 0;
	}
	why = "it joins none of the sandbox's ipc, uts or network namespaces";
refuse:
	ward_state_clear(&st);
	return ward_fail(err, 0,
			 "container \"%s\": annotation %s=%s: the container does not join pod %s's "
			 "namespaces (%s)",
			 id, WARD_ANN_SANDBOX_ID, pod, pod, why);
}

int ward_tenant_sandbox_userns(int rootfd, const char *id, const char *pod,
			       struct ward_hostfds *fds, char **path, struct ward_err *err)
{
	struct ward_state st = {0};
	struct ward_err ignored = {0};
	cleanup_fd int dfd = -1;
	cleanup_fd int pidfd = -1;
	cleanup_free char *name = NULL;
	const struct ward_hostfd *e;

	*path = NULL;
	if (!strcmp(pod, id) || ward_hostfds_ns(fds, CLONE_NEWUSER))
		return 0;
	if (!ward_id_valid(pod) ||
	    (dfd = openat(rootfd, pod, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    ward_state_read(dfd, &st, &ignored) < 0 || (pidfd = ward_state_pidfd(&st)) < 0) {
		ward_state_clear(&st);
		return ward_fail(err, 0,
				 "container \"%s\": pod %s: the sandbox is not running: "
				 "cannot join its user namespace",
				 id, pod);
	}
	name = xasprintf("/proc/%d/ns/user", (int)st.pid);
	if (ward_hostfds_add_ns(fds, CLONE_NEWUSER, "user", name, err) < 0) {
		ward_state_clear(&st);
		return ward_wrap(err, "container \"%s\": pod %s's user namespace", id, pod);
	}
	/* Held now; the pid still named the sandbox's init once it was (pidfd, not the pid). */
	e = ward_hostfds_ns(fds, CLONE_NEWUSER);
	if (!e || !ns_same(e->fd, st.pid, "user") || ward_pidfd_send_signal(pidfd, 0) < 0) {
		ward_state_clear(&st);
		return ward_fail(err, 0,
				 "container \"%s\": pod %s: the sandbox exited while its "
				 "user namespace was opened",
				 id, pod);
	}
	ward_state_clear(&st);
	*path = steal_ptr(name);
	return 0;
}

int ward_tenant_lock_pod(const char *lib_dir, const char *pod, struct ward_err *err)
{
	cleanup_free char *dir = NULL;
	cleanup_fd int dfd = -1;
	cleanup_fd int fd = -1;
	cleanup_free char *name = NULL;
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
	name = xasprintf("%s.lock", pod);
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return ward_fail_errno(err, "pod lock: open %s/%s", dir, name);
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return ward_fail_errno(err, "pod lock: lock %s/%s", dir, name);
	return steal_fd(fd);
}
