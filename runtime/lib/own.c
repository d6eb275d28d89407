#include "own.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

#define F_POD_SECCOMP  "podSeccomp"
#define F_ROOTFS_IDMAP "rootfsIdmap"
#define F_IDS	       "ids"
#define F_GPUS	       "gpus"
#define F_UNENFORCED   "unenforced"

const char *ward_own_spec_str(json_t *spec, const char *field, const char *ann_key)
{
	json_t *own = json_object_get(spec, WARD_OWN_KEY);

	if (json_is_object(own))
		return ward_json_str_at(own, field);
	return ward_json_str_at(json_object_get(spec, "annotations"), ann_key);
}

int ward_own_from_json(json_t *v, struct ward_own *own, json_t **pod_seccomp, struct ward_err *err)
{
	json_t *b, *f;

	*pod_seccomp = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return ward_fail(err, 0, WARD_OWN_KEY ": must be an object");
	own->present = true;
	b = json_object_get(v, F_ROOTFS_IDMAP);
	if (b && !json_is_boolean(b))
		return ward_fail(err, 0, WARD_OWN_KEY "." F_ROOTFS_IDMAP ": must be a boolean");
	own->rootfs_idmap = json_is_true(b);
	f = json_object_get(v, F_POD_SECCOMP);
	if (f && !json_is_null(f)) {
		if (!json_is_object(f))
			return ward_fail(err, 0,
					 WARD_OWN_KEY "." F_POD_SECCOMP ": must be an object");
		*pod_seccomp = f;
	}
	if (ward_json_opt_str(v, WARD_OWN_KEY, F_IDS, &own->ids, err) < 0 ||
	    ward_json_opt_str(v, WARD_OWN_KEY, F_GPUS, &own->gpus, err) < 0 ||
	    ward_json_opt_str(v, WARD_OWN_KEY, F_UNENFORCED, &own->unenforced, err) < 0)
		return -1;
	return 0;
}

json_t *ward_own_to_json(const struct ward_own *own)
{
	json_t *o = json_object();

	if (own->rootfs_idmap)
		json_object_set_new(o, F_ROOTFS_IDMAP, json_true());
	if (own->ids)
		json_object_set_new(o, F_IDS, json_string(own->ids));
	if (own->gpus)
		json_object_set_new(o, F_GPUS, json_string(own->gpus));
	if (own->unenforced)
		json_object_set_new(o, F_UNENFORCED, json_string(own->unenforced));
	return o;
}

void ward_own_from_annotations(struct ward_own *own, char *const *keys, char *const *values)
{
	for (size_t i = 0; keys && keys[i]; i++) {
		char **dst = NULL;
		if (!strcmp(keys[i], WARD_ANN_ROOTFS_IDMAP))
			own->rootfs_idmap = !strcmp(values[i], "true");
		else if (!strcmp(keys[i], WARD_ANN_IDS))
			dst = &own->ids;
		else if (!strcmp(keys[i], WARD_ANN_GPUS))
			dst = &own->gpus;
		else if (!strcmp(keys[i], WARD_ANN_UNENFORCED))
			dst = &own->unenforced;
		if (dst) {
			free(*dst);
			*dst = xstrdup(values[i]);
		}
	}
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void ward_own_copy(struct ward_own *dst, const struct ward_own *src)
{
	dst->present = src->present;
	dst->rootfs_idmap = src->rootfs_idmap;
	dst->ids = dup_or_null(src->ids);
	dst->gpus = dup_or_null(src->gpus);
	dst->unenforced = dup_or_null(src->unenforced);
}

void ward_own_clear(struct ward_own *own)
{
	free(own->ids);
	free(own->gpus);
	free(own->unenforced);
	memset(own, 0, sizeof(*own));
}
