/* ward's own record of what its policy decided for a container: the pod's own seccomp
 * filter kept beside the tenant's, an idmapped root, the ID range, the GPUs leased, the
 * limits not enforced. Kept in ward-owned places, never in the pod's annotations: the
 * effective spec's top-level "ward" object (a key a pod's config.json cannot have: the
 * policy refuses it, a trusted tenant's is dropped) and state.json's own "ward" object.
 * The state's annotations, and the hooks' stdin state, are the pod's.
 *
 * An older ward wrote these as annotations (WARD_ANN_*); its containers are read through
 * the fallbacks below, which read the annotations only when the "ward" object is absent. */
#ifndef WARD_OWN_H
#define WARD_OWN_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"

#define WARD_OWN_KEY "ward" /* the top-level key, in the effective spec and in state.json */

/* ward.dev/ annotations: the tenant (the policy writes it into the effective spec); the
 * others are ward's own record (below), written as annotations only by an older ward. */
#define WARD_ANN_TENANT	      "ward.dev/tenant"
#define WARD_ANN_POD_SECCOMP  "ward.dev/pod-seccomp"  /* JSON of the pod's own filter */
#define WARD_ANN_ROOTFS_IDMAP "ward.dev/rootfs-idmap" /* "true": idmapped rootfs */
#define WARD_ANN_UNENFORCED   "ward.dev/unenforced"   /* state: limits not enforced */
#define WARD_ANN_IDS	      "ward.dev/ids"	      /* "owner start size" of the ID range */
#define WARD_ANN_GPUS	      "ward.dev/gpus"	      /* "uuid,uuid": the GPUs leased */
#define WARD_ANN_EXIT_STATUS  "ward.dev/exit-status"  /* poststop state: the init's exit */

struct ward_own {
	bool present;	   /* read from a "ward" object (false: an older container's) */
	bool rootfs_idmap; /* the policy idmaps the root to the pod's range */
	char *ids;	   /* "owner start size": the container's ID range, NULL: none */
	char *gpus;	   /* "uuid,uuid": the GPUs leased, NULL: none */
	char *unenforced;  /* state: "a, b": limits not enforced, NULL: none */
};

/* A string of the effective spec's (JSON) own record: field of its "ward" object, or for
 * an older one (no "ward" object) the annotation ann_key. NULL if absent. */
const char *ward_own_spec_str(json_t *spec, const char *field, const char *ann_key);

/* Parse a "ward" object (may be NULL: own->present stays false). The pod's seccomp filter
 * ("podSeccomp") is left in *pod_seccomp (borrowed, may be NULL) for the spec parser. */
int ward_own_from_json(json_t *v, struct ward_own *own, json_t **pod_seccomp, struct ward_err *err);
/* The record as a "ward" object (without podSeccomp, which the spec serializer adds). */
json_t *ward_own_to_json(const struct ward_own *own);
/* An older container's record, from its annotations (parallel NULL-terminated vectors). */
void ward_own_from_annotations(struct ward_own *own, char *const *keys, char *const *values);
void ward_own_copy(struct ward_own *dst, const struct ward_own *src);
void ward_own_clear(struct ward_own *own);

#endif
