/* The audit log writer: line format, append, refusal of unsafe directories, failed and short
 * writes reported (RLIMIT_FSIZE: the kernel cuts the write short, then refuses it), --since
 * times. Needs root for the root-owned directory checks (skipped otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "policy.h"
#include "tap.h"
#include "util.h"

static char *slurp(const char *path)
{
	struct ward_err e;
	size_t len;
	return read_file_at(AT_FDCWD, path, &len, &e);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;
	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

static json_t *line_at(const char *text, size_t idx)
{
	const char *p = text;
	for (size_t i = 0; i < idx && p; i++)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	if (!p)
		return NULL;
	return json_loadb(p, strcspn(p, "\n"), 0, NULL);
}

static void test_format_and_append(const char *base)
{
	struct ward_err err = {0};
	cleanup_free char *dir = xasprintf("%s/log", base);
	cleanup_free char *file = xasprintf("%s/log/ten.log", base);
	cleanup_free char *text = NULL;
	json_t *ev = json_pack("{s:s,s:s,s:i,s:s}", "event", "create", "container", "c1", "pid", 42,
			       "tenant", "forged");
	json_t *l0, *l1;
	struct stat st;
	const char *k;
	json_t *v;
	size_t i = 0;
	static const char *const order[] = {"time", "event", "tenant", "container", "pid"};
	bool ordered = true;

	CHECK(ward_audit_write_dir(dir, "ten", ev, &err) == 0, "write: first line");
	json_object_set_new(ev, "event", json_string("start"));
	CHECK(ward_audit_write_dir(dir, "ten", ev, &err) == 0, "write: second line appended");
	text = slurp(file);
	CHECK(text && count_lines(text) == 2 && text[strlen(text) - 1] == '\n',
	      "two newline-terminated lines");
	CHECK(text && !strchr(text, ' '), "compact JSON (no spaces)");
	l0 = line_at(text, 0);
	l1 = line_at(text, 1);
	CHECK(json_is_object(l0) && json_is_object(l1), "each line is a JSON object");
	json_object_foreach(l0, k, v)
	{
		if (i < 5 && strcmp(k, order[i]))
			ordered = false;
		i++;
	}
	CHECK(ordered && i == 5, "keys: time, event, tenant, then the event's own fields");
	CHECK(!strcmp(json_string_value(json_object_get(l0, "tenant")), "ten"),
	      "tenant is the log's, not the event's");
	CHECK(!strcmp(json_string_value(json_object_get(l1, "event")), "start"), "event name");
	{
		const char *t = json_string_value(json_object_get(l0, "time"));
		struct timespec now = {0}, got;
		CHECK(t && strlen(t) == 30 && t[10] == 'T' && t[29] == 'Z' &&
			  ward_audit_parse_time(t, &now, &got, &err) == 0,
		      "time: RFC 3339 UTC with nanoseconds, parseable");
	}
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 07777) == 0700 && st.st_uid == 0,
	      "directory created 0700, root");
	CHECK(stat(file, &st) == 0 && (st.st_mode & 07777) == 0600, "log created 0600");
	json_decref(l0);
	json_decref(l1);

	CHECK(ward_audit_write_dir(dir, NULL, ev, &err) == 0, "no tenant: written");
	{
		cleanup_free char *u = xasprintf("%s/_unknown.log", dir);
		cleanup_free char *ut = slurp(u);
		json_t *o = ut ? line_at(ut, 0) : NULL;
		CHECK(o && json_is_null(json_object_get(o, "tenant")),
		      "no tenant: _unknown.log, tenant null");
		json_decref(o);
	}
	CHECK(ward_audit_write_dir(dir, "../etc", ev, &err) < 0 && strstr(err.msg, "file name"),
	      "a tenant with '/' is refused");
	CHECK(ward_audit_write_dir(dir, ".hidden", ev, &err) < 0, "a tenant starting with '.' is "
								  "refused");
	json_decref(ev);
}

static void test_unsafe_dirs(const char *base)
{
	struct ward_err err = {0};
	cleanup_free char *target = xasprintf("%s/target", base);
	cleanup_free char *link = xasprintf("%s/link", base);
	cleanup_free char *loose = xasprintf("%s/loose", base);
	cleanup_free char *foreign = xasprintf("%s/foreign", base);
	cleanup_free char *logfile = xasprintf("%s/symlog", base);
	cleanup_free char *victim = xasprintf("%s/victim", base);
	cleanup_free char *symlog = xasprintf("%s/symlog/t.log", base);
	json_t *ev = json_pack("{s:s}", "event", "create");
	struct stat st;

	mkdir(target, 0700);
	CHECK(symlink(target, link) == 0, "setup: symlink");
	CHECK(ward_audit_write_dir(link, "t", ev, &err) < 0 && strstr(err.msg, "symbolic link"),
	      "a symlinked audit directory is refused");
	{
		cleanup_free char *f = xasprintf("%s/t.log", target);
		CHECK(stat(f, &st) < 0 && errno == ENOENT, "nothing written through the symlink");
	}
	mkdir(loose, 0700);
	chmod(loose, 0777);
	CHECK(ward_audit_write_dir(loose, "t", ev, &err) < 0 && strstr(err.msg, "writable by"),
	      "a world-writable audit directory is refused");
	mkdir(foreign, 0700);
	CHECK(chown(foreign, 1000, 1000) == 0, "setup: chown");
	CHECK(ward_audit_write_dir(foreign, "t", ev, &err) < 0 &&
		  strstr(err.msg, "owned by uid 1000, not root"),
	      "an audit directory not owned by root is refused");
	CHECK(ward_audit_write_dir("relative/dir", "t", ev, &err) < 0, "a relative dir is refused");
	/* the log itself a symlink (O_NOFOLLOW) */
	mkdir(logfile, 0700);
	CHECK(symlink(victim, symlog) == 0, "setup: symlinked log");
	CHECK(ward_audit_write_dir(logfile, "t", ev, &err) < 0 && err.errnum == ELOOP,
	      "a symlinked log file is refused");
	CHECK(stat(victim, &st) < 0, "the symlink's target was not created");
	json_decref(ev);
}

/* RLIMIT_FSIZE makes the kernel cut a write at the limit (short write) and refuse the
 * next one (EFBIG, SIGXFSZ ignored): both must be reported. */
static void test_failed_writes(const char *base)
{
	struct ward_err err = {0};
	cleanup_free char *dir = xasprintf("%s/full", base);
	cleanup_free char *file = xasprintf("%s/full/t.log", base);
	json_t *ev = json_pack("{s:s,s:s}", "event", "exec", "pad",
			       "0123456789012345678901234567890123456789");
	struct rlimit old, lim;
	struct stat st;
	int rc1, rc2;
	struct ward_err e1 = {0}, e2 = {0};

	CHECK(ward_audit_write_dir(dir, "t", ev, &err) == 0, "setup: one line");
	CHECK(stat(file, &st) == 0, "setup: stat");
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = (rlim_t)st.st_size + 10;
	setrlimit(RLIMIT_FSIZE, &lim);
	rc1 = ward_audit_write_dir(dir, "t", ev, &e1);
	rc2 = ward_audit_write_dir(dir, "t", ev, &e2);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(rc1 < 0 && strstr(e1.msg, "short write (10 of"), "a short write is an error");
	if (rc1 == 0 || !strstr(e1.msg, "short write"))
		printf("#   got: %s\n", e1.msg);
	CHECK(rc2 < 0 && e2.errnum == EFBIG && strstr(e2.msg, "write"),
	      "a refused write is an error with the cause");
	json_decref(ev);
}

static void test_times(void)
{
	struct ward_err err = {0};
	struct timespec now = {.tv_sec = 1000000, .tv_nsec = 5}, t;

	CHECK(ward_audit_parse_time("10m", &now, &t, &err) == 0 && t.tv_sec == 1000000 - 600,
	      "since 10m");
	CHECK(ward_audit_parse_time("2h", &now, &t, &err) == 0 && t.tv_sec == 1000000 - 7200,
	      "since 2h");
	CHECK(ward_audit_parse_time("1d", &now, &t, &err) == 0 && t.tv_sec == 1000000 - 86400,
	      "since 1d");
	CHECK(ward_audit_parse_time("1970-01-01T00:00:10Z", &now, &t, &err) == 0 &&
		  t.tv_sec == 10 && t.tv_nsec == 0,
	      "RFC 3339, Z");
	CHECK(ward_audit_parse_time("1970-01-01T01:00:10.5+01:00", &now, &t, &err) == 0 &&
		  t.tv_sec == 10 && t.tv_nsec == 500000000,
	      "RFC 3339, fraction and offset");
	CHECK(ward_audit_parse_time("2026-11-21T09:38:08.120533633Z", &now, &t, &err) == 0 &&
		  t.tv_nsec == 120533633,
	      "RFC 3339, nanoseconds");
	CHECK(ward_audit_parse_time("yesterday", &now, &t, &err) < 0 &&
		  strstr(err.msg, "expected an RFC 3339 time"),
	      "garbage refused");
	CHECK(ward_audit_parse_time("2026-11-21T09:38:08", &now, &t, &err) < 0,
	      "RFC 3339 without a zone refused");
	CHECK(ward_audit_parse_time("10x", &now, &t, &err) < 0, "unknown unit refused");
}

/* The configuration's audit_dir (ward's own lines, and ward-audit-hook for engines that
 * register it in their config.json themselves). */
static void test_config_audit_dir(void)
{
	struct ward_err err = {0};
	struct ward_config *cfg = ward_config_parse(
	    "{\"audit_dir\": \"/srv/audit\", \"audit_hook\": \"/opt/ward-audit-hook\"}", NULL, NULL,
	    0, &err);

	CHECK(cfg && !strcmp(cfg->audit_dir, "/srv/audit") &&
		  !strcmp(cfg->audit_hook, "/opt/ward-audit-hook"),
	      "config: audit_dir and audit_hook");
	ward_config_free(cfg);
	cfg = ward_config_parse("{\"audit_dir\": \"var/log\"}", NULL, NULL, 0, &err);
	CHECK(!cfg && strstr(err.msg, "audit_dir: must be an absolute path"),
	      "config: a relative audit_dir refused");
	ward_config_free(cfg);
}

static void test_lifecycle(const char *base)
{
	struct ward_err err = {0};
	cleanup_free char *conf = xasprintf("{\"audit_dir\": \"%s/lc\"}", base);
	cleanup_free char *file = xasprintf("%s/lc/ten.log", base);
	cleanup_free char *b = NULL;
	cleanup_free char *text = NULL;
	cleanup_free char *keys = NULL;
	struct ward_config *cfg = ward_config_parse(conf, NULL, NULL, 0, &err);
	json_t *spec = json_loads(
	    "{\"annotations\": {\"ward.dev/tenant\": \"ten\", \"ward.dev/ids\": \"pod:ten/p 524288 "
	    "65536\", \"io.kubernetes.cri.sandbox-name\": \"web\"}, \"process\": "
	    "{\"apparmorProfile\": \"ward-default\", \"capabilities\": {\"bounding\": "
	    "[\"CAP_KILL\"]}}}",
	    0, NULL);
	struct ward_pod pod = {
	    .tenant = "ten", .k8s_namespace = "ns1", .name = "web", .uid = "u-1"};
	struct ward_pod nopod = {0};
	json_t *l, *k = json_array();
	const char *key;
	json_t *v;

	CHECK(cfg != NULL, "config with audit_dir");
	if (!cfg)
		return;
	b = ward_audit_lifecycle_base(spec, &pod, "c1", "/bundle", "default");
	CHECK(b && ward_audit_lifecycle(cfg, b, "create", 42, -1, &err) == 0 &&
		  ward_audit_lifecycle(cfg, b, "exit", 42, 3, &err) == 0 &&
		  ward_audit_lifecycle(cfg, b, "exit", 0, -1, &err) == 0,
	      "lifecycle lines written");
	text = slurp(file);
	CHECK(text && count_lines(text) == 3, "three lines in the tenant's log");
	l = text ? line_at(text, 0) : NULL;
	json_object_foreach(l, key, v) json_array_append_new(k, json_string(key));
	keys = json_dumps(k, JSON_COMPACT);
	CHECK(keys && !strcmp(keys, "[\"time\",\"event\",\"tenant\",\"container\",\"bundle\","
				    "\"pod\",\"host_ids\",\"apparmor\",\"capabilities\","
				    "\"seccomp\",\"pid\"]"),
	      "create: ward-audit-hook's keys in its order");
	CHECK(l && !strcmp(json_string_value(json_object_get(l, "tenant")), "ten") &&
		  json_integer_value(json_object_get(l, "pid")) == 42 &&
		  !strcmp(json_string_value(json_object_get(l, "seccomp")), "default") &&
		  json_integer_value(json_object_get(json_object_get(l, "host_ids"), "start")) ==
		      524288,
	      "create: tenant, pid, seccomp, host IDs");
	json_decref(l);
	l = text ? line_at(text, 1) : NULL;
	CHECK(l && json_integer_value(json_object_get(l, "exit_status")) == 3, "exit: the status");
	json_decref(l);
	l = text ? line_at(text, 2) : NULL;
	CHECK(l && json_is_null(json_object_get(l, "exit_status")) && !json_object_get(l, "pid"),
	      "exit: null when unknown, no pid when there is none");
	json_decref(l);
	CHECK(ward_audit_lifecycle(cfg, "not json", "start", 1, -1, &err) < 0 &&
		  strstr(err.msg, "no usable audit fields"),
	      "a broken base is an error, not a line");
	free(b);
	json_decref(spec);
	spec = json_object();
	b = ward_audit_lifecycle_base(spec, &nopod, "c2", "/bundle", NULL);
	CHECK(b && strstr(b, "\"tenant\":null") && strstr(b, "\"seccomp\":\"pod\""),
	      "no tenant: null (the _unknown log); no profile name: \"pod\"");
	free(b);
	/* The tenant and the pod are the pod's (create resolved them), never an annotation
	 * read again: a spec whose annotations name another tenant and pod changes nothing. */
	json_decref(spec);
	spec = json_loads("{\"annotations\": {\"ward.dev/tenant\": \"other\", "
			  "\"io.kubernetes.cri.sandbox-namespace\": \"theirs\", "
			  "\"io.kubernetes.cri.sandbox-name\": \"x\"}}",
			  0, NULL);
	b = ward_audit_lifecycle_base(spec, &pod, "c3", "/bundle", "default");
	CHECK(b && strstr(b, "\"tenant\":\"ten\"") && !strstr(b, "other") &&
		  strstr(b, "\"pod\":{\"namespace\":\"ns1\",\"name\":\"web\",\"uid\":\"u-1\"}") &&
		  !strstr(b, "theirs"),
	      "tenant and pod from the pod, not the spec's annotations");
	json_decref(k);
	json_decref(spec);
	ward_config_free(cfg);
}

int main(void)
{
	char base[] = "/tmp/ward-test-audit-XXXXXX";

	test_times();
	test_config_audit_dir();
	if (geteuid() != 0 || !mkdtemp(base)) {
		printf("ok %d - # SKIP the writer tests need root\n", ++tap_n);
		TAP_DONE();
	}
	test_format_and_append(base);
	test_unsafe_dirs(base);
	test_failed_writes(base);
	test_lifecycle(base);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", base);
	}
	TAP_DONE();
}
