/* Tenant selection. Data in, data out (the pod's checks against the state root are in
 * pod.c). */
#include "tenant.h"

#include <stdio.h>
#include <string.h>

#include "json.h"
#include "spec.h"
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
