/* intent.json: what a container holds on the host (see intent.h). */
#include "intent.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "util.h"

#define INTENT_TMP WARD_INTENT_JSON ".tmp"

static void set_opt(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

int ward_intent_write(int dirfd, const struct ward_intent *in, struct ward_err *err)
{
	json_t *o = json_object();
	cleanup_free char *text = NULL;

	set_opt(o, "tenant", in->tenant);
	set_opt(o, "pod", in->pod);
	set_opt(o, "bundle", in->bundle);
	if (in->ids_owner)
		json_object_set_new(o, "ids",
				    json_pack("{s:s,s:I,s:I}", "owner", in->ids_owner, "start",
					      (json_int_t)in->ids_start, "size",
					      (json_int_t)in->ids_size));
	if (in->gpus) {
		json_t *a = json_array();
		for (size_t i = 0; in->gpus[i]; i++)
			json_array_append_new(a, json_string(in->gpus[i]));
		json_object_set_new(o, "gpus", a);
	}
	set_opt(o, "cgroup", in->cgroup);
	json_object_set_new(o, "ran", json_boolean(in->ran));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (write_file_at(dirfd, INTENT_TMP, O_CREAT | O_TRUNC, 0600, text, strlen(text), err) < 0)
		return ward_wrap(err, "intent");
	if (renameat(dirfd, INTENT_TMP, dirfd, WARD_INTENT_JSON) < 0)
		return ward_fail_errno(err, "rename %s", WARD_INTENT_JSON);
	return 0;
}

int ward_intent_read(int dirfd, struct ward_intent *in, struct ward_err *err)
{
	size_t len;
	cleanup_free char *text = NULL;
	json_error_t je;
	json_t *o, *ids, *gpus, *v;
	size_t i;

	memset(in, 0, sizeof(*in));
	text = read_file_at(dirfd, WARD_INTENT_JSON, &len, err);
	if (!text)
		return -1;
	o = json_loadb(text, len, 0, &je);
	if (!json_is_object(o)) {
		json_decref(o);
		return ward_fail(err, EINVAL, "%s: corrupt: %s", WARD_INTENT_JSON, je.text);
	}
	in->tenant = ward_json_str_or(o, "tenant", NULL);
	in->pod = ward_json_str_or(o, "pod", NULL);
	in->bundle = ward_json_str_or(o, "bundle", NULL);
	in->cgroup = ward_json_str_or(o, "cgroup", NULL);
	in->ran = json_is_true(json_object_get(o, "ran"));
	ids = json_object_get(o, "ids");
	if (json_is_object(ids)) {
		in->ids_owner = ward_json_str_or(ids, "owner", NULL);
		in->ids_start = (uint32_t)json_integer_value(json_object_get(ids, "start"));
		in->ids_size = (uint32_t)json_integer_value(json_object_get(ids, "size"));
	}
	gpus = json_object_get(o, "gpus");
	if (json_is_array(gpus)) {
		in->gpus = xcalloc(1, sizeof(char *));
		json_array_foreach(gpus, i, v) if (json_is_string(v)) in->gpus =
		    strv_append(in->gpus, json_string_value(v));
	}
	json_decref(o);
	return 0;
}

void ward_intent_clear(struct ward_intent *in)
{
	free_all(in->tenant, in->pod, in->bundle, in->ids_owner, in->cgroup);
	strv_free(in->gpus);
	memset(in, 0, sizeof(*in));
}
