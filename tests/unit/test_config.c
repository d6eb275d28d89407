/* Unit tests: ward.json and tenants.d parsing (strict keys with file:line), defaults,
 * overlapping ranges, and tenant selection from annotations. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "tap.h"
#include "pod.h"
#include "tenant.h"

static struct ward_config *parse1(const char *global, const char *name, const char *tenant,
				  struct ward_err *err)
{
	const char *names[] = {name}, *texts[] = {tenant};
	return ward_config_parse(global, names, texts, name ? 1 : 0, err);
}

static void test_builtin(void)
{
	struct ward_err err = {0};
	struct ward_config *c = ward_config_parse(NULL, NULL, NULL, 0, &err);
	const struct ward_tenant *t;

	CHECK(c != NULL, "the built-in configuration parses");
	if (!c)
		return;
	t = ward_config_tenant(c, "default");
	CHECK(t && !strcmp(t->file, "built-in"), "it has a built-in default tenant");
	CHECK(c->pool_base == 524288 && c->pool_size % 65536 == 0,
	      "the built-in pool starts at 524288 in 65536-slices");
	CHECK(t && t->id_mode == WARD_IDS_POD, "default tenant: a range per pod");
	CHECK(t && !strcmp(t->seccomp, "default") && !strcmp(t->apparmor, "ward-default"),
	      "default tenant: default seccomp and ward-default AppArmor");
	CHECK(t && !t->privileged && !t->allow_new_privileges && t->idmap_rootfs,
	      "default tenant: no privileged pods, no new privileges, idmapped rootfs");
	{
		bool raw = false, mknod = false, chown = false;
		for (size_t i = 0; t && t->capabilities[i]; i++) {
			raw |= !strcmp(t->capabilities[i], "CAP_NET_RAW");
			mknod |= !strcmp(t->capabilities[i], "CAP_MKNOD");
			chown |= !strcmp(t->capabilities[i], "CAP_CHOWN");
		}
		CHECK(chown && !raw && !mknod,
		      "default capabilities: containerd's without NET_RAW and MKNOD");
	}
	CHECK(c->apparmor == WARD_NEED_OPTIONAL && !c->missing_controllers_warn,
	      "apparmor optional, missing controllers refused");
	ward_config_free(c);
}

static void test_errors(void)
{
	struct ward_err err = {0};
	struct ward_config *c;

	c = parse1("{\n  \"apparmor\": \"required\",\n  \"bogus\": 1\n}", NULL, NULL, &err);
	CHECK(!c, "an unknown key in ward.json is an error");
	CHECK_STR_CONTAINS(err.msg, "ward.json:3: bogus: unknown key", "with file:line and key");

	c = parse1(NULL, "a", "{\n\"seccomp\": \"default\",\n\n  \"capabilites\": []\n}", &err);
	CHECK(!c, "a misspelt tenant key is an error");
	CHECK_STR_CONTAINS(err.msg, "tenants.d/a.json:4: capabilites: unknown key",
			   "naming tenants.d/a.json:4");

	c = parse1(NULL, "a", "{\"privileged\": \"yes\"}", &err);
	CHECK(!c, "a wrong type is an error");
	CHECK_STR_CONTAINS(err.msg, "privileged: must be a boolean", "saying what is expected");

	c = parse1(NULL, "a", "{\"capabilities\": [\"CAP_BOGUS\"]}", &err);
	CHECK(!c, "an unknown capability is an error");
	CHECK_STR_CONTAINS(err.msg, "CAP_BOGUS", "naming it");

	c = parse1(NULL, "a", "{\"seccomp\": \"lax\"}", &err);
	CHECK(!c, "an unknown seccomp profile is an error");

	c = parse1(NULL, "a", "{\"seccomp_privileged\": \"unconfined\"}", &err);
	CHECK(!c, "privileged pods cannot be unconfined");

	c = parse1(NULL, "a", "{\"host_namespaces\": [\"mount\"]}", &err);
	CHECK(!c, "only network/pid/ipc/uts can be shared");

	for (const char *const *h =
		 (const char *const[]){"bin/hook", "/usr/../tmp/x", "/a/./b", "/a//b", "/", NULL};
	     *h; h++) {
		char text[128], name[128];
		snprintf(text, sizeof(text), "{\"hooks\": [\"%s\"]}", *h);
		c = parse1(NULL, "a", text, &err);
		snprintf(name, sizeof(name), "hooks: \"%s\" is refused", *h);
		CHECK(!c, name);
		CHECK_STR_CONTAINS(err.msg, "hooks: ", "  naming the key");
		ward_config_free(c);
	}
	c = parse1(NULL, "a", "{\"hooks\": [\"/usr/libexec/oci/hooks.d/\", \"/usr/bin/x\"]}", &err);
	CHECK(c && ward_config_tenant(c, "a")->hooks[1] &&
		  !strcmp(ward_config_tenant(c, "a")->hooks[0], "/usr/libexec/oci/hooks.d/"),
	      "hooks: absolute files and directories ('/' at the end) are allowed");
	ward_config_free(c);
	c = parse1(NULL, "a", "{}", &err);
	CHECK(c && ward_config_tenant(c, "a")->hooks && !ward_config_tenant(c, "a")->hooks[0],
	      "hooks: empty by default");
	ward_config_free(c);

	c = parse1(NULL, "a", "{\"cgroup\": {\"memory\": {\"limit\": \"lots\"}}}", &err);
	CHECK(!c, "a malformed budget is an error");
	CHECK_STR_CONTAINS(err.msg, "cgroup", "naming the budget");

	c = parse1(NULL, "a", "{\"ids\": {\"start\": 1000, \"size\": 65536}}", &err);
	CHECK(!c, "a fixed range below the pool base is refused");
	CHECK_STR_CONTAINS(err.msg, "below the pool base", "saying why");

	c = parse1(NULL, "a", "{\"x\": 1", &err);
	CHECK(!c, "broken JSON is an error");
	CHECK_STR_CONTAINS(err.msg, "tenants.d/a.json:1", "with file:line");

	c = parse1("{\"namespaces\": {\"team\": \"nobody\"}}", NULL, NULL, &err);
	CHECK(!c, "a namespace mapped to an unknown tenant is an error");

	c = parse1("{\"id_pool\": {\"base\": 0, \"size\": 65536}}", NULL, NULL, &err);
	CHECK(!c, "a pool starting at host ID 0 is refused");

	c = parse1("{\"defaults\": {\"trusted\": true}}", NULL, NULL, &err);
	CHECK(!c, "defaults cannot make every tenant trusted");
	CHECK_STR_CONTAINS(err.msg, "ward.json:1: trusted:", "naming the key");
}

static void test_overlap(void)
{
	const char *names[] = {"a", "b"};
	const char *texts[] = {"{\"ids\": {\"start\": 1000000, \"size\": 65536}}",
			       "{\"ids\": {\"start\": 1060000, \"size\": 65536}}"};
	struct ward_err err = {0};
	struct ward_config *c = ward_config_parse(NULL, names, texts, 2, &err);

	CHECK(!c, "tenants with overlapping fixed ranges are refused");
	CHECK_STR_CONTAINS(err.msg, "overlap", "saying they overlap");
	CHECK_STR_CONTAINS(err.msg, "\"a\"", "naming one tenant");
	CHECK_STR_CONTAINS(err.msg, "\"b\"", "and the other");
	texts[1] = "{\"ids\": {\"start\": 1065536, \"size\": 65536}}";
	c = ward_config_parse(NULL, names, texts, 2, &err);
	CHECK(c != NULL, "adjacent fixed ranges are fine");
	ward_config_free(c);
}

static void test_defaults_merge(void)
{
	struct ward_err err = {0};
	struct ward_config *c =
	    parse1("{\"defaults\": {\"seccomp\": \"strict\", \"host_paths\": [\"/srv\"]},"
		   " \"missing_controllers\": \"warn\", \"default_tenant\": null}",
		   "a", "{\"host_paths\": [\"/data/a\"]}", &err);
	const struct ward_tenant *t;

	CHECK(c != NULL, "defaults + tenant parse");
	if (!c)
		return;
	t = ward_config_tenant(c, "a");
	CHECK(t && !strcmp(t->seccomp, "strict"), "a tenant inherits ward.json defaults");
	CHECK(t && !strcmp(t->host_paths[0], "/data/a") && !t->host_paths[1],
	      "and its own keys win");
	CHECK(!ward_config_tenant(c, "default"), "default_tenant null: no implicit default");
	CHECK(c->missing_controllers_warn, "missing_controllers warn");
	ward_config_free(c);
}

static void test_select(void)
{
	const char *names[] = {"a", "b"};
	const char *texts[] = {"{}", "{}"};
	struct ward_err err = {0};
	struct ward_config *c =
	    ward_config_parse("{\"namespaces\": {\"team-b\": \"b\"}}", names, texts, 2, &err);
	json_t *ann;
	char *why = NULL;
	const struct ward_tenant *t;

	CHECK(c != NULL, "config with namespace mapping parses");
	if (!c)
		return;
	ann = json_pack("{s:s}", "ward.dev/tenant", "a");
	t = ward_tenant_select(c, ann, &why, &err);
	CHECK(t && !strcmp(t->name, "a"), "the tenant annotation selects the tenant");
	CHECK_STR_CONTAINS(why, "ward.dev/tenant=a", "and says so");
	free(why);
	json_decref(ann);

	ann = json_pack("{s:s}", "io.kubernetes.cri.sandbox-namespace", "team-b");
	t = ward_tenant_select(c, ann, &why, &err);
	CHECK(t && !strcmp(t->name, "b"), "a mapped Kubernetes namespace selects its tenant");
	free(why);
	json_decref(ann);

	ann = json_pack("{s:s}", "io.kubernetes.pod.namespace", "other");
	t = ward_tenant_select(c, ann, &why, &err);
	CHECK(t && !strcmp(t->name, "default"), "an unmapped namespace gets the default tenant");
	free(why);
	json_decref(ann);

	/* The mapping is authoritative: the tenant annotation cannot take a pod elsewhere. */
	ann = json_pack("{s:s,s:s}", "io.kubernetes.cri.sandbox-namespace", "team-b",
			"ward.dev/tenant", "a");
	t = ward_tenant_select(c, ann, &why, &err);
	CHECK(!t, "a mapped namespace's pod naming another tenant is refused");
	CHECK_STR_CONTAINS(err.msg,
			   "annotation ward.dev/tenant=a: pods of namespace team-b belong to "
			   "tenant b (ward.json namespaces)",
			   "naming the annotation, the namespace and its tenant");
	json_decref(ann);
	ann = json_pack("{s:s,s:s}", "io.kubernetes.cri.sandbox-namespace", "team-b",
			"ward.dev/tenant", "b");
	t = ward_tenant_select(c, ann, &why, &err);
	CHECK(t && !strcmp(t->name, "b"), "naming the mapped tenant itself is fine");
	free(why);
	json_decref(ann);

	/* The namespace annotations must agree, and none may be empty. */
	ann = json_pack("{s:s,s:s}", "io.kubernetes.cri.sandbox-namespace", "other",
			"io.kubernetes.pod.namespace", "team-b");
	t = ward_tenant_select(c, ann, &why, &err);
	CHECK(!t, "conflicting namespace annotations are refused");
	CHECK_STR_CONTAINS(err.msg, "disagree", "saying they disagree");
	json_decref(ann);
	ann = json_pack("{s:s}", "io.kubernetes.cri.sandbox-namespace", "");
	t = ward_tenant_select(c, ann, &why, &err);
	CHECK(!t, "an empty namespace annotation is refused, not the default tenant");
	CHECK_STR_CONTAINS(err.msg, "empty", "saying it is empty");
	json_decref(ann);

	/* An unmapped namespace may not choose without tenant_choice. */
	ann = json_pack("{s:s,s:s}", "io.kubernetes.cri.sandbox-namespace", "other",
			"ward.dev/tenant", "a");
	t = ward_tenant_select(c, ann, &why, &err);
	CHECK(!t, "an unmapped namespace cannot choose by default");
	CHECK_STR_CONTAINS(err.msg, "may not choose a tenant", "saying so");
	json_decref(ann);

	ann = json_pack("{s:s}", "ward.dev/tenant", "zzz");
	t = ward_tenant_select(c, ann, &why, &err);
	CHECK(!t, "an unknown tenant is refused");
	CHECK_STR_CONTAINS(err.msg, "unknown tenant \"zzz\"", "naming it");
	json_decref(ann);
	ward_config_free(c);

	/* tenant_choice: per namespace, "*" for any unmapped one, "" for bare bundles. */
	c = ward_config_parse("{\"namespaces\": {\"team-b\": \"b\"}, \"tenant_choice\": "
			      "{\"lab\": [\"a\"], \"*\": [\"b\"], \"\": [\"b\"]}}",
			      names, texts, 2, &err);
	CHECK(c != NULL, "tenant_choice parses");
	if (c) {
		ann = json_pack("{s:s,s:s}", "io.kubernetes.cri.sandbox-namespace", "lab",
				"ward.dev/tenant", "a");
		t = ward_tenant_select(c, ann, &why, &err);
		CHECK(t && !strcmp(t->name, "a"), "a namespace chooses from its set");
		CHECK_STR_CONTAINS(why, "tenant_choice", "and why says so");
		free(why);
		json_decref(ann);
		ann = json_pack("{s:s,s:s}", "io.kubernetes.cri.sandbox-namespace", "lab",
				"ward.dev/tenant", "b");
		t = ward_tenant_select(c, ann, &why, &err);
		CHECK(!t, "a tenant outside the namespace's set is refused");
		CHECK_STR_CONTAINS(err.msg, "pods of namespace lab may choose only a",
				   "naming the set");
		json_decref(ann);
		ann = json_pack("{s:s,s:s}", "io.kubernetes.cri.sandbox-namespace", "x",
				"ward.dev/tenant", "b");
		t = ward_tenant_select(c, ann, &why, &err);
		CHECK(t && !strcmp(t->name, "b"), "\"*\" is the set of unmapped namespaces");
		free(why);
		json_decref(ann);
		ann = json_pack("{s:s}", "ward.dev/tenant", "a");
		t = ward_tenant_select(c, ann, &why, &err);
		CHECK(!t, "\"\" restricts bare bundles");
		CHECK_STR_CONTAINS(err.msg, "without a namespace annotation may choose only b",
				   "saying so");
		json_decref(ann);
		ann = json_pack("{s:s}", "io.kubernetes.cri.sandbox-namespace", "lab");
		t = ward_tenant_select(c, ann, &why, &err);
		CHECK(t && !strcmp(t->name, "default"),
		      "an unmapped namespace without the annotation gets the default tenant");
		free(why);
		json_decref(ann);
		ward_config_free(c);
	}
	c = ward_config_parse("{\"tenant_choice\": {\"\": []}}", names, texts, 2, &err);
	ann = json_pack("{s:s}", "ward.dev/tenant", "a");
	t = c ? ward_tenant_select(c, ann, &why, &err) : NULL;
	CHECK(c && !t, "tenant_choice \"\": [] keeps bare bundles from choosing");
	CHECK_STR_CONTAINS(err.msg, "tenant_choice \"\" is empty", "saying so");
	json_decref(ann);
	ward_config_free(c);
	c = ward_config_parse("{\"tenant_choice\": {\"lab\": [\"zzz\"]}}", names, texts, 2, &err);
	CHECK(!c, "tenant_choice naming an unknown tenant is an error");
	CHECK_STR_CONTAINS(err.msg, "unknown tenant \"zzz\"", "naming it");
	c = ward_config_parse("{\"namespaces\": {\"team-b\": \"b\"}, \"tenant_choice\": "
			      "{\"team-b\": \"*\"}}",
			      names, texts, 2, &err);
	CHECK(!c, "tenant_choice for a mapped namespace is an error");
	CHECK_STR_CONTAINS(err.msg, "its pods cannot choose", "saying why");

	c = parse1("{\"default_tenant\": null}", "a", "{}", &err);
	t = c ? ward_tenant_select(c, NULL, &why, &err) : NULL;
	CHECK(c && !t, "no annotation and no default tenant: refused");
	CHECK_STR_CONTAINS(err.msg, "no default tenant", "saying why");
	ward_config_free(c);

	why = ward_pod_of(NULL, "c1");
	CHECK(!strcmp(why, "c1"), "a container alone is its own pod");
	free(why);
}

int main(void)
{
	test_builtin();
	test_errors();
	test_overlap();
	test_defaults_merge();
	test_select();
	TAP_DONE();
}
