/* Tenant selection. Data in, data out, except ward_tenant_check_pod, which reads the state
 * of the other containers. */
#include "tenant.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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

int ward_tenant_check_pod(int rootfd, const char *pod, const char *tenant, struct ward_err *err)
{
	DIR *d = fdopendir(openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dirent *e;
	int rc = 0;

	if (!d)
		return 0; /* an unreadable root fails later, with a better message */
	while (rc == 0 && (e = readdir(d))) {
		struct ward_state st = {0};
		struct ward_err ignored;
		cleanup_fd int dfd = -1;
		const char *p = NULL, *t = NULL;

		if (e->d_name[0] == '.' || !ward_id_valid(e->d_name))
			continue;
		dfd = openat(rootfd, e->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || ward_state_read(dfd, &st, &ignored) < 0)
			continue;
		for (size_t i = 0; st.annotation_keys && st.annotation_keys[i]; i++) {
			if (!strcmp(st.annotation_keys[i], WARD_ANN_SANDBOX_ID))
				p = st.annotation_values[i];
			if (!strcmp(st.annotation_keys[i], WARD_ANN_TENANT))
				t = st.annotation_values[i];
		}
		if (!p)
			p = st.id;
		if (p && t && !strcmp(p, pod) && strcmp(t, tenant))
			rc = ward_fail(err, 0,
				       "pod \"%s\" already has container \"%s\" of tenant \"%s\": "
				       "all containers of a pod belong to one tenant",
				       pod, st.id, t);
		ward_state_clear(&st);
	}
	closedir(d);
	return rc;
}
