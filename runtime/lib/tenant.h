/* Which tenant a pod belongs to: the tenant annotation, else the Kubernetes namespace
 * (annotations containerd's CRI plugin sets) mapped through ward.json "namespaces", else
 * the default tenant, else refused. Containers of one pod must share a tenant (pod.h). */
#ifndef WARD_TENANT_H
#define WARD_TENANT_H

#include <jansson.h>

#include "config.h"
#include "err.h"

/* annotations: the pod spec's "annotations" object (may be NULL). *why (malloc'd) says how
 * the tenant was chosen. */
const struct ward_tenant *ward_tenant_select(const struct ward_config *c, json_t *annotations,
					     char **why, struct ward_err *err);

#endif
