/* libFuzzer target: the tenant policy (ward_policy_apply) on a fuzzed config.json, for two
 * fixed tenants (one with host paths, a device, a host namespace and an rlimit cap; one
 * that may run privileged pods), with ward's built-in seccomp profiles and a fake host as
 * tests/unit/test_policy.c has it. An effective spec the policy returns is parsed again
 * (ward_spec_parse), as create does. */
#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>

#include "config.h"
#include "fuzz.h"
#include "gpu.h"
#include "policy.h"
#include "seccomp_profiles.h"
#include "spec.h"
#include "util.h"

static int fake_ns_is_host(void *arg, const char *path, const char *kind, struct ward_err *err)
{
	(void)arg;
	(void)kind;
	(void)err;
	return !strncmp(path, "/proc/1/", 8);
}

static int fake_envelope(void *arg, const char *path, uint64_t uid[2], uint64_t gid[2],
			 struct ward_err *err)
{
	(void)arg;
	(void)err;
	uint64_t base = strstr(path, "inside") ? 1000000 : 2000000;
	uid[0] = gid[0] = base;
	uid[1] = gid[1] = base + 65536;
	return 0;
}

static char *fake_resolve(void *arg, const char *path, mode_t *mode, struct ward_err *err)
{
	(void)arg;
	if (strstr(path, "missing")) {
		ward_fail(err, ENOENT, "%s", path);
		return NULL;
	}
	*mode = S_IFDIR | 0755;
	if (!strcmp(path, "/srv/a/link"))
		return xstrdup("/etc");
	if (!strcmp(path, "/srv/a/disk"))
		*mode = S_IFBLK | 0600;
	else if (!strcmp(path, "/srv/a/file"))
		*mode = S_IFREG | 0644;
	return xstrdup(path);
}

static int fake_device(void *arg, const char *path, char *type, int64_t *major, int64_t *minor,
		       struct ward_err *err)
{
	(void)arg;
	(void)err;
	*type = 'c';
	*major = !strcmp(path, "/dev/fuse") ? 10 : 195;
	*minor = !strcmp(path, "/dev/fuse") ? 229 : 0;
	return 0;
}

static const struct ward_policy_host fake = {fake_ns_is_host, fake_envelope, fake_resolve,
					     fake_device, NULL};

static struct ward_config *cfg;
static char *profile, *profile_priv;

static void setup(void)
{
	static const char *names[] = {"a", "p"};
	static const char *tenants[] = {
	    "{\"host_paths\": [\"/srv/a\"], \"devices\": [\"/dev/fuse\"], \"host_namespaces\": "
	    "[\"network\"], \"rlimits\": {\"RLIMIT_NOFILE\": 4096}}",
	    "{\"privileged\": true, \"allow_pod_apparmor\": true, \"allow_new_privileges\": true}"};
	struct ward_err err = {0};

	cfg = ward_config_parse(NULL, names, tenants, 2, &err);
	profile = ward_seccomp_profile_load("default", &err);
	profile_priv = ward_seccomp_profile_load("privileged", &err);
	if (!cfg || !profile || !profile_priv)
		abort();
}

static void apply(const char *tenant, json_t *pod, const struct ward_gpu_request *req,
		  bool apparmor)
{
	struct ward_policy_in in = {.cfg = cfg,
				    .tenant = ward_config_tenant(cfg, tenant),
				    .container_id = "c1",
				    .bundle = "/b",
				    .ids = {1000000, 65536},
				    .ids_owner = "pod:a/c1",
				    .apparmor_enabled = apparmor,
				    .seccomp_json = profile,
				    .seccomp_priv_json = profile_priv,
				    .host = &fake,
				    .gpu_req = req,
				    .state_root = "/run/ward"};
	struct ward_err err = {0};
	char **notes = NULL;
	json_t *copy = json_deep_copy(pod);
	json_t *spec = ward_policy_apply(&in, copy, &notes, &err);

	if (spec) {
		char *text = json_dumps(spec, JSON_COMPACT);
		ward_spec_free(ward_spec_parse(text, strlen(text), "/b", &err));
		free(text);
		json_decref(spec);
	}
	strv_free(notes);
	json_decref(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ward_gpu_request req = {0};
	struct ward_err err = {0};
	json_t *pod;
	char *text;

	if (!cfg)
		setup();
	/* As effective.c reads the pod: duplicate keys refused, an object. */
	pod = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(pod)) {
		json_decref(pod);
		return 0;
	}
	text = json_dumps(pod, JSON_COMPACT);
	if (text && ward_gpu_request_parse(text, &req, &err) == 0) {
		apply("a", pod, &req, false);
		apply("p", pod, &req, true);
		ward_gpu_request_clear(&req);
	}
	free(text);
	json_decref(pod);
	return 0;
}
