/* Unit tests: `ward check`'s verdict (facts about a host + configuration -> errors and
 * warnings) on made-up hosts, so every branch is covered whatever the machine running the
 * tests has; the renderings (text's last line, JSON's fields). The probe itself is covered
 * by tests/check.bats on the real host. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hostcheck.h"
#include "tap.h"
#include "util.h"

static struct ward_host_fs fs_ok = {.path = (char *)"/var/lib/ward",
				    .role = (char *)"ID pool",
				    .probed = (char *)"/var/lib",
				    .fstype = (char *)"ext4",
				    .mount_point = (char *)"/",
				    .idmap = true};

/* A host with everything. */
static struct ward_host full_host(void)
{
	struct ward_host h = {
	    .kernel = "6.8.0",
	    .root = true,
	    .userns = true,
	    .max_user_namespaces = 1000,
	    .fs = &fs_ok,
	    .n_fs = 1,
	    .seccomp = true,
	    .seccomp_actions = {true, true, true},
	    .seccomp_flags = {true, true, true, true, true, true},
	    .apparmor = true,
	    .apparmor_profiles = (char *)"ward-default (enforce)\nother (complain)\n",
	    .cgroup_root = (char *)"/sys/fs/cgroup",
	    .controllers = {true, true, true, true, true, true},
	    .cgroup_available = (char *)"cpuset cpu io memory hugetlb pids rdma misc",
	    .cgroup_freeze = 1,
	    .cgroup_kill = 1,
	    .bpf_devices = true,
	    .lib_dir = (char *)"/var/lib/ward",
	    .pool_ok = true,
	};
	return h;
}

static struct ward_config *conf(const char *global, const char *tenant, const char *json)
{
	struct ward_err err = {0};
	const char *names[] = {tenant}, *jsons[] = {json};
	struct ward_config *c = ward_config_parse(global, names, jsons, tenant ? 1 : 0, &err);
	if (!c)
		printf("# config: %s\n", err.msg);
	return c;
}

static char *joined(char **v)
{
	char *s = xstrdup("");
	for (size_t i = 0; v && v[i]; i++) {
		char *n = xasprintf("%s%s\n", s, v[i]);
		free(s);
		s = n;
	}
	return s;
}

/* The verdict for h and c; *errors and *warnings joined with newlines. */
static void judge(const struct ward_host *h, const struct ward_config *c, char **errors,
		  char **warnings, size_t *n_err, size_t *n_warn)
{
	struct ward_verdict v;
	ward_host_verdict(h, c, "bad config", &v);
	*errors = joined(v.errors);
	*warnings = joined(v.warnings);
	*n_err = strv_len(v.errors);
	*n_warn = strv_len(v.warnings);
	ward_verdict_free(&v);
}

static void test_full_host(void)
{
	struct ward_host h = full_host();
	struct ward_config *c = conf(NULL, NULL, NULL);
	cleanup_free char *e = NULL;
	cleanup_free char *w = NULL;
	size_t ne, nw;

	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(ne == 0 && nw == 0, "full host, built-in configuration: no errors, no warnings");
	ward_config_free(c);
}

static void test_apparmor(void)
{
	struct ward_host h = full_host();
	struct ward_config *req = conf("{\"apparmor\": \"required\"}", NULL, NULL);
	struct ward_config *opt = conf(NULL, NULL, NULL);
	struct ward_config *unconf =
	    conf("{\"apparmor\": \"required\"}", "a", "{\"apparmor\": \"unconfined\"}");
	struct ward_config *other = conf(NULL, "a", "{\"apparmor\": \"tenant-a\"}");
	char *e, *w;
	size_t ne, nw;

	CHECK(req && opt && unconf && other, "configurations parse");
	h.apparmor = false;
	h.apparmor_profiles = NULL;
	h.apparmor_detail = (char *)"not in this kernel";
	judge(&h, req, &e, &w, &ne, &nw);
	CHECK(ne == 1, "apparmor required, host without: one error");
	CHECK_STR_CONTAINS(e, "AppArmor is \"required\"", "the error names AppArmor");
	CHECK_STR_CONTAINS(e, "not in this kernel", "the error says why");
	free(e);
	free(w);

	judge(&h, opt, &e, &w, &ne, &nw);
	CHECK(ne == 0 && nw == 1, "apparmor optional, host without: a warning only");
	CHECK_STR_CONTAINS(w, "profiles (\"ward-default\") are not applied",
			   "the warning names the profile");
	free(e);
	free(w);

	h = full_host();
	judge(&h, unconf, &e, &w, &ne, &nw);
	CHECK(ne == 0 && nw == 0, "apparmor required and enabled: fine");
	free(e);
	free(w);

	judge(&h, other, &e, &w, &ne, &nw);
	CHECK(ne == 1, "a tenant profile that is not loaded: error");
	CHECK_STR_CONTAINS(e,
			   "tenant \"a\" (tenants.d/a.json): AppArmor profile \"tenant-a\" is "
			   "not loaded",
			   "the error names tenant and profile");
	free(e);
	free(w);

	h.apparmor_profiles = (char *)"other (enforce)\n";
	judge(&h, opt, &e, &w, &ne, &nw);
	CHECK(ne == 0 && nw == 1, "ward-default not loaded yet: a warning (ward loads it)");
	free(e);
	free(w);

	ward_config_free(req);
	ward_config_free(opt);
	ward_config_free(unconf);
	ward_config_free(other);
}

static void test_budgets(void)
{
	struct ward_host h = full_host();
	struct ward_config *err_c = conf(NULL, "team-a",
					 "{\"cgroup\": {\"memory\": {\"limit\": 1073741824}, "
					 "\"pids\": {\"limit\": 100}}}");
	struct ward_config *warn_c = conf("{\"missing_controllers\": \"warn\"}", "team-a",
					  "{\"cgroup\": {\"memory\": {\"limit\": 1073741824}}}");
	struct ward_config *dflt = conf(NULL, "team-a",
					"{\"cgroup\": {\"pids\": {\"limit\": 0}, \"cpu\": "
					"{\"shares\": 1024}}}");
	struct ward_config *unified =
	    conf(NULL, "team-a", "{\"cgroup\": {\"unified\": {\"io.weight\": \"50\"}}}");
	char *e, *w;
	size_t ne, nw;

	CHECK(err_c && warn_c && dflt && unified, "configurations parse");
	judge(&h, err_c, &e, &w, &ne, &nw);
	CHECK(ne == 0, "budget with every controller present: fine");
	free(e);
	free(w);

	h.controllers[0] = false; /* memory */
	h.controller_detail[0] = (char *)"bound to a cgroup v1 hierarchy: hybrid host";
	h.cgroup_available = (char *)"cpuset cpu io hugetlb pids";
	judge(&h, err_c, &e, &w, &ne, &nw);
	CHECK(ne == 1, "memory budget without memory: one error (pids is there)");
	CHECK_STR_CONTAINS(e,
			   "tenant \"team-a\" (tenants.d/team-a.json): budget cgroup.memory.limit "
			   "needs the memory controller",
			   "the error names tenant, field and controller");
	CHECK_STR_CONTAINS(e, "hybrid host", "the error says why the controller is missing");
	CHECK_STR_CONTAINS(w, "cgroup v2 controllers missing: memory", "missing controller warned");
	free(e);
	free(w);

	judge(&h, warn_c, &e, &w, &ne, &nw);
	CHECK(ne == 0, "missing_controllers warn: no error");
	CHECK_STR_CONTAINS(w,
			   "tenant \"team-a\" (tenants.d/team-a.json): budget cgroup.memory.limit "
			   "is not applied",
			   "missing_controllers warn: a warning naming the tenant");
	free(e);
	free(w);

	h.controllers[2] = false; /* pids */
	h.controllers[1] = false; /* cpu */
	h.cgroup_available = (char *)"cpuset io hugetlb";
	judge(&h, dflt, &e, &w, &ne, &nw);
	CHECK(ne == 0, "budget values equal to the kernel defaults need no controller");
	free(e);
	free(w);

	h.controllers[3] = false; /* io */
	h.cgroup_available = (char *)"";
	judge(&h, unified, &e, &w, &ne, &nw);
	CHECK(ne == 1, "unified io.weight budget without io: error");
	CHECK_STR_CONTAINS(e, "needs the io controller", "the error names io");
	free(e);
	free(w);

	ward_config_free(err_c);
	ward_config_free(warn_c);
	ward_config_free(dflt);
	ward_config_free(unified);
}

/* Without the cpu controller in cgroup v2 (a hybrid host), every CRI pod sandbox asks for
 * cpu.shares 2: the first warning says Kubernetes pods are all refused, or, with
 * missing_controllers "warn", run without those limits; with cpu there, no such line. */
static void test_kubernetes(void)
{
	struct ward_host h = full_host();
	struct ward_config *c = conf(NULL, NULL, NULL);
	struct ward_config *warn_c = conf("{\"missing_controllers\": \"warn\"}", NULL, NULL);
	char *e, *w;
	size_t ne, nw;

	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(!strstr(w, "Kubernetes"), "cpu controller present: no Kubernetes warning");
	free(e);
	free(w);
	h.controllers[1] = false; /* cpu */
	h.controllers[0] = false; /* memory */
	h.apparmor = false;
	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(ne == 0, "no cpu controller: still no error (the pods' limits decide)");
	CHECK(!strncmp(w,
		       "Kubernetes: every pod is refused on this host: containerd's CRI plugin "
		       "gives each pod sandbox cpu.shares 2",
		       106),
	      "no cpu controller: the FIRST warning says every Kubernetes pod is refused");
	CHECK_STR_CONTAINS(w, "\"missing_controllers\": \"warn\"", "... and what to set");
	free(e);
	free(w);
	judge(&h, warn_c, &e, &w, &ne, &nw);
	CHECK(!strncmp(w, "Kubernetes: pods run, but the limits they ask for",
		       strlen("Kubernetes: pods run, but the limits they ask for")),
	      "missing_controllers warn: the first warning says pods run without those limits");
	free(e);
	free(w);
	ward_config_free(c);
	ward_config_free(warn_c);
}

static void test_always_needed(void)
{
	struct ward_host h;
	struct ward_config *c = conf(NULL, NULL, NULL);
	struct ward_config *unconf = conf(NULL, "a", "{\"seccomp\": \"unconfined\"}");
	struct ward_config *priv =
	    conf(NULL, "a", "{\"seccomp\": \"unconfined\", \"privileged\": true}");
	char *e, *w;
	size_t ne, nw;

	h = full_host();
	h.userns = false;
	h.userns_detail = (char *)"unshare(CLONE_NEWUSER): Operation not permitted";
	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(ne == 1, "no user namespaces: error");
	CHECK_STR_CONTAINS(e, "user namespaces are unavailable (unshare(CLONE_NEWUSER): Operation",
			   "the error says why");
	free(e);
	free(w);

	h = full_host();
	h.bpf_devices = false;
	h.bpf_detail = (char *)"bpf: Operation not permitted";
	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(ne == 1, "no device BPF programs: error");
	CHECK_STR_CONTAINS(e, "device BPF programs are unavailable", "the error names BPF");
	free(e);
	free(w);

	h = full_host();
	h.cgroup_root = NULL;
	h.cgroup_detail = (char *)"no cgroup2 mount";
	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(ne == 1, "no cgroup v2: error");
	free(e);
	free(w);

	h = full_host();
	h.pool_ok = false;
	h.pool_detail = (char *)"/var/lib/ward/idpool.json is corrupt: line 1";
	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(ne == 1, "unusable ID pool: error");
	CHECK_STR_CONTAINS(e, "idpool.json is corrupt", "the error names the pool file");
	free(e);
	free(w);

	h = full_host();
	h.seccomp = false;
	h.seccomp_detail = (char *)"kernel without seccomp filters";
	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(ne == 1, "no seccomp filters, tenant with a profile: error");
	CHECK_STR_CONTAINS(e, "tenant \"default\" (built-in): seccomp profile \"default\" cannot",
			   "the error names tenant and profile");
	free(e);
	free(w);
	CHECK(unconf && priv, "configurations parse");
	judge(&h, unconf, &e, &w, &ne, &nw);
	/* the built-in default tenant still has a profile, "a" has none */
	CHECK(ne == 1 && !strstr(e, "tenant \"a\""),
	      "no seccomp filters: a tenant without a profile is no error");
	free(e);
	free(w);
	judge(&h, priv, &e, &w, &ne, &nw);
	CHECK(ne == 2 &&
		  strstr(e, "tenant \"a\" (tenants.d/a.json): seccomp profile \"privileged\""),
	      "no seccomp filters: a tenant allowing privileged pods needs seccomp_privileged");
	free(e);
	free(w);

	h = full_host();
	h.seccomp_actions[2] = false; /* USER_NOTIF: ward does not use it */
	h.seccomp_flags[5] = false;
	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(ne == 0 && nw == 0, "no SCMP_ACT_NOTIFY, no WAIT_KILLABLE_RECV: fine");
	free(e);
	free(w);

	struct ward_host_fs tmpfs = {.path = (char *)"/run/ward",
				     .role = (char *)"state root",
				     .probed = (char *)"/run",
				     .fstype = (char *)"tmpfs",
				     .mount_point = (char *)"/run",
				     .detail =
					 (char *)"kernel 6.1 lacks tmpfs idmap (added in 6.3)"};
	h = full_host();
	h.fs = &tmpfs;
	h.cgroup_freeze = 0;
	judge(&h, c, &e, &w, &ne, &nw);
	CHECK(ne == 0 && nw == 2, "no idmap on the state fs, no cgroup.freeze: warnings only");
	CHECK_STR_CONTAINS(w,
			   "no idmapped mounts on tmpfs (/run/ward, state root): kernel 6.1 lacks",
			   "the idmap warning names fs, path and reason");
	CHECK_STR_CONTAINS(w, "cgroup.freeze is missing", "the freeze warning");
	free(e);
	free(w);

	judge(&h, NULL, &e, &w, &ne, &nw);
	CHECK(ne == 1, "configuration that does not load: error");
	CHECK_STR_CONTAINS(e, "configuration: bad config", "the error carries the config error");
	free(e);
	free(w);

	ward_config_free(c);
	ward_config_free(unconf);
	ward_config_free(priv);
}

static void test_render(void)
{
	struct ward_host h = full_host();
	struct ward_config *c = conf("{\"apparmor\": \"required\"}", NULL, NULL);
	struct ward_verdict v;
	cleanup_free char *text = NULL;
	cleanup_free char *js = NULL;
	json_t *j;

	h.apparmor = false;
	h.apparmor_detail = (char *)"not in this kernel";
	ward_host_verdict(&h, c, NULL, &v);
	text = ward_host_text(&h, &v, "/etc/ward");
	CHECK_STR_CONTAINS(text, "\nAppArmor: no (not in this kernel); disables AppArmor profiles",
			   "text: the missing item says what it disables");
	CHECK_STR_CONTAINS(text, "\ncannot enforce: AppArmor is \"required\"", "text: the error");
	CHECK(text &&
		  strstr(text, "\nverdict: the configured policy CANNOT be enforced on this "
			       "host (1 problem, 0 warnings)\n") &&
		  strstr(text, "verdict:")[strcspn(strstr(text, "verdict:"), "\n") + 1] == '\0',
	      "text: the last line is the verdict");
	js = ward_host_json(&h, &v, "/etc/ward");
	j = js ? json_loads(js, 0, NULL) : NULL;
	CHECK(j != NULL, "json: parses");
	CHECK(json_is_false(json_object_get(j, "enforceable")), "json: enforceable false");
	CHECK(json_array_size(json_object_get(j, "errors")) == 1, "json: one error");
	CHECK(json_is_false(json_object_get(json_object_get(j, "apparmor"), "ok")),
	      "json: apparmor.ok false");
	CHECK(json_is_true(json_object_get(
		  json_object_get(json_object_get(j, "cgroup"), "controllers"), "memory")),
	      "json: cgroup.controllers.memory true");
	json_decref(j);
	ward_verdict_free(&v);
	ward_config_free(c);
}

int main(void)
{
	test_full_host();
	test_apparmor();
	test_budgets();
	test_kubernetes();
	test_always_needed();
	test_render();
	TAP_DONE();
}
