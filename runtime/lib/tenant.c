/* Tenant selection. Data in, data out, except ward_tenant_check_pod, which reads the state
 * of the other containers. */
#include "tenant.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "intent.h"
#include "spec.h"
#include "state.h"
#include "util.h"

static const char *ann(json_t *annotations, const char *key)
{
	json_t *v = annotations && key ? json_object_get(annotations, key) : NULL;
	return json_is_string(v) ? json_string_value(v) : NULL;
}

const struct ward_tenant *ward_tenant_select(const struct ward_config *c, json_t *annotations,
					     char **why, struct ward_err *err)
{
	const struct ward_tenant *t;
	const char *name = ann(annotations, c->tenant_annotation);

	*why = NULL;
	if (name) {
		t = ward_config_tenant(c, name);
		if (!t) {
			ward_fail(err, 0,
				  "annotation %s: unknown tenant \"%s\" (no tenants.d/%s.json in "
				  "%s)",
				  c->tenant_annotation, name, name,
				  c->dir ? c->dir : "the built-in configuration");
			return NULL;
		}
		*why = xasprintf("annotation %s=%s", c->tenant_annotation, name);
		return t;
	}
	for (size_t i = 0; c->namespace_annotations && c->namespace_annotations[i]; i++) {
		const char *ns = ann(annotations, c->namespace_annotations[i]);
		if (!ns)
			continue;
		for (size_t j = 0; c->namespace_keys[j]; j++) {
			if (strcmp(c->namespace_keys[j], ns))
				continue;
			t = ward_config_tenant(c, c->namespace_tenants[j]);
			*why = xasprintf("annotation %s=%s, mapped by ward.json namespaces",
					 c->namespace_annotations[i], ns);
			return t;
		}
		if (c->default_tenant) {
			*why = xasprintf("annotation %s=%s is not mapped in ward.json namespaces: "
					 "default tenant",
					 c->namespace_annotations[i], ns);
			return ward_config_tenant(c, c->default_tenant);
		}
		ward_fail(err, 0,
			  "annotation %s=%s: namespace not mapped to a tenant and no default "
			  "tenant is configured",
			  c->namespace_annotations[i], ns);
		return NULL;
	}
	if (c->default_tenant) {
		*why = xasprintf("no tenant annotation: default tenant");
		return ward_config_tenant(c, c->default_tenant);
	}
	ward_fail(err, 0,
		  "no tenant: the pod has no %s annotation and no default tenant is configured",
		  c->tenant_annotation);
	return NULL;
}

char *ward_tenant_pod_of(json_t *annotations, const char *container_id)
{
	const char *s = ann(annotations, WARD_ANN_SANDBOX_ID);
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
		for (size_t i = 0; st.annotation_keys && st.annotation_keys[i]; i++) {
			if (!strcmp(st.annotation_keys[i], WARD_ANN_SANDBOX_ID))
				*pod = xstrdup(st.annotation_values[i]);
			if (!strcmp(st.annotation_keys[i], WARD_ANN_TENANT))
				*tenant = xstrdup(st.annotation_values[i]);
		}
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

int ward_tenant_check_pod(int rootfd, const char *pod, const char *tenant, struct ward_err *err)
{
	DIR *d = fdopendir(openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dirent *e;
	int rc = 0;

	if (!d)
		return 0; /* an unreadable root fails later, with a better message */
	while (rc == 0 && (e = readdir(d))) {
		cleanup_fd int dfd = -1;
		cleanup_free char *p = NULL;
		cleanup_free char *t = NULL;

		if (e->d_name[0] == '.' || !ward_id_valid(e->d_name))
			continue;
		dfd = openat(rootfd, e->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || member_of(dfd, &p, &t) < 0)
			continue;
		if (!strcmp(p, pod) && strcmp(t, tenant))
			rc = ward_fail(err, 0,
				       "pod \"%s\" already has container \"%s\" of tenant \"%s\": "
				       "all containers of a pod belong to one tenant",
				       pod, e->d_name, t);
	}
	closedir(d);
	return rc;
}

/* mkdir -p; the last component gets mode. */
static int mkdir_p(const char *path, mode_t mode, struct ward_err *err)
{
	cleanup_free char *p = xstrdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return ward_fail_errno(err, "create %s", p);
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return ward_fail_errno(err, "create %s", p);
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
	if (mkdir_p(dir, 0700, err) < 0)
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
