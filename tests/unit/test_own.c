/* ward's own record (own.h): kept out of the pod's annotations, in the effective spec's
 * and state.json's "ward" objects; an older ward's annotations read as a fallback only. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "json.h"
#include "own.h"
#include "spec.h"
#include "spec_json.h"
#include "state.h"
#include "tap.h"
#include "util.h"

#define BUNDLE "/run/bundles/web-1"
#define POLICY_SPEC                                                                                \
	"{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},\"annotations\":{"               \
	"\"org.example\":\"x\",\"ward.dev/tenant\":\"default\","                                   \
	"\"ward.dev/pod-seccomp\":\"{\\\"defaultAction\\\":\\\"SCMP_ACT_ALLOW\\\"}\","             \
	"\"ward.dev/rootfs-idmap\":\"true\",\"ward.dev/ids\":\"pod:default/p 100000 65536\","      \
	"\"ward.dev/gpus\":\"GPU-a,GPU-b\"}}"

/* The spec's text as create writes it to the state. */
static char *spec_text(const struct ward_spec *s)
{
	json_t *o = ward_spec_to_json(s);
	char *text = ward_json_dumps(o, JSON_COMPACT);

	json_decref(o);
	return text;
}

static json_t *load(const char *text)
{
	return json_loads(text, 0, NULL);
}

/* An effective spec as the policy makes it: ward's record in "ward", the pod's annotations
 * (ward.dev/ keys too) as it wrote them. */
#define RECORD_SPEC                                                                                \
	"{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},\"annotations\":{"               \
	"\"org.example\":\"x\",\"ward.dev/tenant\":\"default\",\"ward.dev/gpus\":\"GPU-mine\"},"   \
	"\"ward\":{\"podSeccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"},\"rootfsIdmap\":true,"    \
	"\"ids\":\"pod:default/p 100000 65536\",\"gpus\":\"GPU-a,GPU-b\"}}"

static void test_record(void)
{
	struct ward_err err = {0};
	json_t *spec = load(RECORD_SPEC);
	struct ward_spec *s;
	char *text;

	CHECK(!strcmp(ward_own_spec_str(spec, "gpus", WARD_ANN_GPUS), "GPU-a,GPU-b"),
	      "spec_str: the record, not the pod's annotation");
	s = ward_spec_from_json(spec, BUNDLE, &err);
	CHECK(s && s->own.present && s->own.rootfs_idmap && s->linux.seccomp_pod &&
		  !strcmp(s->own.ids, "pod:default/p 100000 65536") &&
		  !strcmp(s->own.gpus, "GPU-a,GPU-b") &&
		  !strcmp(ward_spec_annotation(s, WARD_ANN_GPUS), "GPU-mine"),
	      "parse: typed fields from the record, not from the pod's annotations");
	text = s ? spec_text(s) : NULL;
	CHECK(text && strstr(text, "\"ward\":{") && strstr(text, "\"podSeccomp\":{"),
	      "serialize: the record is written");
	free(text);
	ward_spec_free(s);
	json_decref(spec);

	/* No policy values (a trusted tenant): an empty record, still there. */
	spec = load("{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},"
		    "\"annotations\":{\"ward.dev/ids\":\"evil 0 1\"},\"ward\":{}}");
	s = ward_spec_from_json(spec, BUNDLE, &err);
	CHECK(s && s->own.present && !s->own.ids,
	      "a pod's ward.dev/ids beside a record is only an annotation");
	ward_spec_free(s);
	json_decref(spec);
}

/* An older ward's effective spec: no "ward" object, the record in the annotations. */
static void test_old_spec(void)
{
	struct ward_err err = {0};
	struct ward_spec *s = ward_spec_parse(POLICY_SPEC, strlen(POLICY_SPEC), BUNDLE, &err);

	CHECK(s && !s->own.present && s->own.rootfs_idmap && s->linux.seccomp_pod && s->own.ids &&
		  !strcmp(s->own.gpus, "GPU-a,GPU-b"),
	      "an older effective spec: the record from its annotations");
	ward_spec_free(s);
	{
		static const char bad[] =
		    "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"r\"},\"ward\":[]}";
		s = ward_spec_parse(bad, strlen(bad), BUNDLE, &err);
	}
	CHECK(!s && strstr(err.msg, "ward: must be an object"), "a bad record is named");
	ward_spec_free(s);
}

static void test_state(void)
{
	struct ward_err err = {0};
	struct ward_state st;
	char *json;

	/* an older ward's state.json: the record in its annotations */
	CHECK(ward_state_parse("{\"id\":\"c\",\"annotations\":{\"ward.dev/ids\":\"tenant:t 1 2\","
			       "\"ward.dev/unenforced\":\"memory\",\"a\":\"b\"}}",
			       &st, &err) == 0,
	      "an older state.json parses");
	CHECK(!st.own.present && !strcmp(st.own.ids, "tenant:t 1 2") &&
		  !strcmp(st.own.unenforced, "memory") && ward_state_policy_made(&st),
	      "an older state.json: the record from its annotations");
	ward_state_clear(&st);

	/* this ward's: the annotations are the pod's, whatever keys it used */
	CHECK(ward_state_parse("{\"id\":\"c\",\"ward\":{\"gpus\":\"GPU-a\"},\"annotations\":{"
			       "\"ward.dev/ids\":\"evil 0 1\",\"a\":\"b\"}}",
			       &st, &err) == 0,
	      "a state.json with a record parses");
	CHECK(st.own.present && !st.own.ids && !strcmp(st.own.gpus, "GPU-a") &&
		  !ward_state_policy_made(&st),
	      "with a record, a pod's ward.dev/ids annotation is only an annotation");
	st.has_exit_status = true;
	st.exit_status = 3;
	json = ward_state_json(&st, WARD_STOPPED, false);
	CHECK_STR_CONTAINS(json, "\"annotations\":{\"ward.dev/ids\":\"evil 0 1\",\"a\":\"b\"}",
			   "the state's annotations are the pod's");
	CHECK_STR_CONTAINS(json, "\"ward\":{\"gpus\":\"GPU-a\",\"exitStatus\":3}",
			   "ward's fields, and the exit status, in ward's own object");
	free(json);
	ward_state_clear(&st);
	CHECK(ward_state_parse("{\"id\":\"c\",\"ward\":{\"ids\":7}}", &st, &err) < 0 &&
		  strstr(err.msg, "ward.ids: must be a string"),
	      "a bad record in state.json is named");
	ward_state_clear(&st);
}

int main(void)
{
	test_record();
	test_old_spec();
	test_state();
	TAP_DONE();
}
