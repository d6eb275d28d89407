/* ward.json + tenants.d/<name>.json -> struct ward_config. Strict: unknown keys and wrong
 * types are errors naming file:line and the key. "defaults" in ward.json is merged under
 * every tenant file; without any config directory the built-in configuration applies. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "caps.h"
#include "cgroup_res.h"
#include "json.h"
#include "process.h"
#include "util.h"

/* containerd's default capability set without CAP_NET_RAW and CAP_MKNOD. */
static const char *const default_caps[] = {
    "CAP_CHOWN",  "CAP_DAC_OVERRIDE", "CAP_FSETID",  "CAP_FOWNER",	     "CAP_SETGID",
    "CAP_SETUID", "CAP_SETFCAP",      "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
    "CAP_KILL",	  "CAP_AUDIT_WRITE",  NULL,
};

static const char *const known_profiles[] = {"default", "strict", "privileged", "unconfined", NULL};
static const char *const host_ns_names[] = {"network", "pid", "ipc", "uts", NULL};

/* Where a file's text and name are, for file:line in errors. */
struct src {
	const char *file; /* "ward.json", "tenants.d/a.json", "built-in" */
	const char *text; /* NULL: no line numbers */
};

/* Line of the first `"key"` followed by ':' in the text (0 if not found). */
static int key_line(const struct src *s, const char *key)
{
	size_t kl = strlen(key);
	const char *p;

	if (!s->text)
		return 0;
	for (p = s->text; (p = strchr(p, '"')); p++) {
		const char *q = p + 1 + kl;
		if (strncmp(p + 1, key, kl) || *q != '"')
			continue;
		for (q++; *q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'; q++)
			;
		if (*q == ':') {
			int line = 1;
			for (const char *c = s->text; c < p; c++)
				line += *c == '\n';
			return line;
		}
	}
	return 0;
}

/* "file:line: key" ("file: key" without a line): where errors about key point. */
static const char *where(char *buf, const struct src *s, const char *key)
{
	int line = key_line(s, key);

	if (line)
		snprintf(buf, WARD_JSON_PATH_MAX, "%s:%d: %s", s->file, line, key);
	else
		snprintf(buf, WARD_JSON_PATH_MAX, "%s: %s", s->file, key);
	return buf;
}

static int fail_at(struct ward_err *err, const struct src *s, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(struct ward_err *err, const struct src *s, const char *key, const char *fmt, ...)
{
	char p[WARD_JSON_PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	ward_failv(err, 0, fmt, ap);
	va_end(ap);
	return ward_wrap(err, "%s", where(p, s, key));
}

static bool in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* A member of a configuration object and where its value goes: one of str, flag, strv and
 * u32, or none for a member that is read by its own code (its key is still allowed). A
 * missing member leaves the destination as it is (the default); anything else, null
 * included, must have the type; errors name "file:line: key". */
struct member {
	const char *key;
	char **str;
	bool *flag;
	char ***strv;
	uint32_t *u32;
};

/* A member whose key is the name of the field of o it fills (KEY_STR(t, seccomp) is
 * {"seccomp", .str = &t->seccomp}). */
#define MEMBER(key, kind, ptr)                                                                     \
	{                                                                                          \
		key, .kind = ptr                                                                   \
	}
#define KEY_STR(o, f)  MEMBER(#f, str, &(o)->f)
#define KEY_FLAG(o, f) MEMBER(#f, flag, &(o)->f)
#define KEY_STRV(o, f) MEMBER(#f, strv, &(o)->f)
#define KEY_U32(o, f)  MEMBER(#f, u32, &(o)->f)

static int get_member(json_t *o, const struct member *m, const struct src *s, struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX];
	json_t *v = json_object_get(o, m->key);

	if (!v)
		return 0;
	where(p, s, m->key);
	if (m->str)
		return ward_json_str(v, p, m->str, err);
	if (m->flag)
		return ward_json_bool(v, p, m->flag, err);
	if (m->strv)
		return ward_json_strv(v, p, 0, m->strv, err);
	return m->u32 ? ward_json_u32(v, p, m->u32, err) : 0;
}

/* v, the value of key, is an object; else the error says what was expected. */
static int want_object(json_t *v, const struct src *s, const char *key, const char *expected,
		       struct ward_err *err)
{
	return json_is_object(v) ? 0 : fail_at(err, s, key, "expected %s", expected);
}

/* The members of m[0..n), in that order; with only_these, any other key of o is an error. */
static int get_members(json_t *o, const struct member *m, size_t n, bool only_these,
		       const struct src *s, struct ward_err *err)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v)
	{
		size_t i;
		for (i = 0; only_these && i < n && strcmp(m[i].key, k); i++)
			;
		if (only_these && i == n)
			return fail_at(err, s, k, "unknown key");
	}
	for (size_t i = 0; i < n; i++)
		if (get_member(o, &m[i], s, err) < 0)
			return -1;
	return 0;
}

/* The object at key, when present, read into m[0..n) (no other key allowed). */
static int get_object(json_t *o, const char *key, const char *expected, const struct member *m,
		      size_t n, const struct src *s, struct ward_err *err)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	if (want_object(v, s, key, expected, err) < 0)
		return -1;
	return get_members(v, m, n, true, s, err);
}

/* A kubelet cgroup root: "/a/b" (cgroupfs) or "a.slice" (systemd; one component), no
 * component empty, "." or "..", not the root itself. */
static bool kubelet_cgroup_root_ok(const char *r)
{
	size_t n = strlen(r);

	if (r[0] != '/')
		return n > 6 && !strcmp(r + n - 6, ".slice") && !strchr(r, '/');
	for (const char *p = r + 1;; p++) {
		size_t len = strcspn(p, "/");
		if (!len || (len == 1 && p[0] == '.') || (len == 2 && !strncmp(p, "..", 2)))
			return false;
		p += len;
		if (!*p)
			return true;
	}
}

/* ---- tenants ---------------------------------------------------------------------- */

static void tenant_clear(struct ward_tenant *t)
{
	for (size_t i = 0; i < t->n_rlimits; i++)
		free(t->rlimits[i].type);
	free_all(t->name, t->file, t->seccomp, t->seccomp_privileged, t->apparmor, t->rlimits,
		 t->cgroup_json);
	strv_free_all(t->capabilities, t->host_paths, t->root_paths, t->devices, t->host_namespaces,
		      t->hooks, t->gpus);
	memset(t, 0, sizeof(*t));
}

static void tenant_defaults(struct ward_tenant *t)
{
	t->id_mode = WARD_IDS_POD;
	t->seccomp = xstrdup("default");
	t->seccomp_privileged = xstrdup("privileged");
	t->apparmor = xstrdup("ward-default");
	t->capabilities = strv_dup((char *const *)default_caps);
	t->rlimits = xcalloc(1, sizeof(*t->rlimits));
	t->rlimits[0].type = xstrdup("RLIMIT_NOFILE");
	t->rlimits[0].max = 1048576;
	t->n_rlimits = 1;
	t->host_paths = xcalloc(1, sizeof(char *));
	t->root_paths = xcalloc(1, sizeof(char *));
	t->devices = xcalloc(1, sizeof(char *));
	t->host_namespaces = xcalloc(1, sizeof(char *));
	t->hooks = xcalloc(1, sizeof(char *));
	t->gpus = xcalloc(1, sizeof(char *));
	t->idmap_rootfs = true;
	t->idmap_mounts = true;
}

static int parse_ids(json_t *v, struct ward_tenant *t, const struct src *s, struct ward_err *err)
{
	uint32_t start = 0, size = 0;
	const struct member range[] = {{"start", .u32 = &start}, {"size", .u32 = &size}};

	if (json_is_string(v)) {
		if (!strcmp(json_string_value(v), "pod"))
			t->id_mode = WARD_IDS_POD;
		else if (!strcmp(json_string_value(v), "tenant"))
			t->id_mode = WARD_IDS_TENANT;
		else
			return fail_at(err, s, "ids",
				       "\"%s\": expected \"pod\", \"tenant\" or "
				       "{\"start\": N, \"size\": M}",
				       json_string_value(v));
		return 0;
	}
	if (!json_is_object(v))
		return fail_at(err, s, "ids",
			       "expected \"pod\", \"tenant\" or {\"start\", \"size\"}");
	if (get_members(v, range, ARRAY_SIZE(range), true, s, err) < 0)
		return -1;
	if (!json_object_get(v, "start") || !json_object_get(v, "size"))
		return fail_at(err, s, "ids", "a fixed range needs both start and size");
	if (size == 0 || (uint64_t)start + size > (uint64_t)UINT32_MAX)
		return fail_at(err, s, "ids", "range %u+%u is empty or past 2^32-1", start, size);
	t->id_mode = WARD_IDS_RANGE;
	t->range_start = start;
	t->range_size = size;
	return 0;
}

static int parse_rlimits(json_t *v, struct ward_tenant *t, const struct src *s,
			 struct ward_err *err)
{
	const char *k;
	json_t *e;

	if (!json_is_object(v))
		return fail_at(err, s, "rlimits", "expected an object {\"RLIMIT_X\": max}");
	for (size_t i = 0; i < t->n_rlimits; i++)
		free(t->rlimits[i].type);
	free(t->rlimits);
	t->rlimits = xcalloc(json_object_size(v) + 1, sizeof(*t->rlimits));
	t->n_rlimits = 0;
	json_object_foreach(v, k, e)
	{
		if (ward_rlimit_from_name(k) < 0)
			return fail_at(err, s, k, "unknown rlimit");
		if (!json_is_integer(e) || json_integer_value(e) < 0)
			return fail_at(err, s, k, "expected a non-negative integer");
		t->rlimits[t->n_rlimits].type = xstrdup(k);
		t->rlimits[t->n_rlimits++].max = (uint64_t)json_integer_value(e);
	}
	return 0;
}

static int check_profile(const char *key, const char *v, const struct src *s, struct ward_err *err)
{
	if (v[0] == '/' || in_list(known_profiles, v))
		return 0;
	return fail_at(err, s, key,
		       "\"%s\": expected default, strict, privileged, unconfined or an absolute "
		       "path",
		       v);
}

/* A hook allow-list entry: absolute, no ".", ".." or empty component; dir: a trailing '/'
 * (a directory) is allowed. */
static bool hook_path_ok(const char *p, bool dir)
{
	if (p[0] != '/' || !p[1])
		return false;
	for (p++; *p;) {
		size_t len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && !strncmp(p, "..", 2)))
			return false;
		p += len;
		if (*p == '/' && !p[1])
			return dir;
		if (*p)
			p++;
	}
	return true;
}

/* Parse the (defaults-merged) tenant object o into t, which holds the built-in defaults. */
static int parse_tenant(json_t *o, struct ward_tenant *t, const struct src *s, struct ward_err *err)
{
	/* ids, rlimits and cgroup: read below */
	const struct member members[] = {
	    {.key = "ids"},
	    KEY_STR(t, seccomp),
	    KEY_STR(t, seccomp_privileged),
	    KEY_STR(t, apparmor),
	    KEY_FLAG(t, allow_pod_apparmor),
	    KEY_STRV(t, capabilities),
	    KEY_FLAG(t, allow_new_privileges),
	    {.key = "rlimits"},
	    KEY_STRV(t, host_paths),
	    KEY_STRV(t, root_paths),
	    KEY_STRV(t, devices),
	    KEY_STRV(t, host_namespaces),
	    KEY_FLAG(t, privileged),
	    KEY_FLAG(t, idmap_rootfs),
	    KEY_FLAG(t, idmap_mounts),
	    {.key = "cgroup"},
	    KEY_STRV(t, gpus),
	    KEY_FLAG(t, trusted),
	    KEY_STRV(t, hooks),
	};
	json_t *v;

	if (!json_is_object(o))
		return ward_fail(err, 0, "%s: expected a JSON object", s->file);
	if (get_members(o, members, ARRAY_SIZE(members), true, s, err) < 0)
		return -1;
	if ((v = json_object_get(o, "ids")) && parse_ids(v, t, s, err) < 0)
		return -1;
	if ((v = json_object_get(o, "rlimits")) && parse_rlimits(v, t, s, err) < 0)
		return -1;
	if (check_profile("seccomp", t->seccomp, s, err) < 0 ||
	    check_profile("seccomp_privileged", t->seccomp_privileged, s, err) < 0)
		return -1;
	if (!strcmp(t->seccomp_privileged, "unconfined"))
		return fail_at(
		    err, s, "seccomp_privileged",
		    "privileged pods always get a filter; \"unconfined\" is not allowed");
	if (!*t->apparmor || strchr(t->apparmor, '\n'))
		return fail_at(err, s, "apparmor", "expected a profile name or \"unconfined\"");
	for (size_t i = 0; t->capabilities[i]; i++)
		if (ward_caps_from_name(t->capabilities[i]) < 0)
			return fail_at(err, s, "capabilities", "unknown capability \"%s\"",
				       t->capabilities[i]);
	for (size_t i = 0; t->host_paths[i]; i++)
		if (t->host_paths[i][0] != '/')
			return fail_at(err, s, "host_paths", "\"%s\" is not an absolute path",
				       t->host_paths[i]);
	for (size_t i = 0; t->root_paths[i]; i++)
		if (t->root_paths[i][0] != '/')
			return fail_at(err, s, "root_paths", "\"%s\" is not an absolute path",
				       t->root_paths[i]);
	for (size_t i = 0; t->devices[i]; i++)
		if (strncmp(t->devices[i], "/dev/", 5))
			return fail_at(err, s, "devices", "\"%s\" is not a path under /dev",
				       t->devices[i]);
	for (size_t i = 0; t->hooks[i]; i++)
		if (!hook_path_ok(t->hooks[i], true))
			return fail_at(err, s, "hooks",
				       "\"%s\" is not an absolute path without \".\", \"..\" or "
				       "empty components",
				       t->hooks[i]);
	for (size_t i = 0; t->host_namespaces[i]; i++)
		if (!in_list(host_ns_names, t->host_namespaces[i]))
			return fail_at(err, s, "host_namespaces",
				       "\"%s\": expected network, pid, ipc or uts",
				       t->host_namespaces[i]);
	if ((v = json_object_get(o, "cgroup"))) {
		struct ward_res_plan plan = {0};
		char *text;
		if (!json_is_object(v))
			return fail_at(err, s, "cgroup",
				       "expected an object shaped like linux.resources");
		if (json_object_get(v, "devices"))
			return fail_at(err, s, "cgroup",
				       "devices: a tenant budget cannot hold device rules");
		text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		if (ward_cgroup_res_plan(text, &plan, err) < 0) {
			free(text);
			return fail_at(err, s, "cgroup", "%s", err->msg);
		}
		ward_cgroup_res_plan_free(&plan);
		free(t->cgroup_json);
		t->cgroup_json = text;
	}
	return 0;
}

static bool tenant_name_ok(const char *n)
{
	if (!*n || strlen(n) > 64 || n[0] == '.' || n[0] == '-')
		return false;
	for (const char *p = n; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return false;
	return true;
}

/* ---- the global file ---------------------------------------------------------------- */

/* The value of key is an absolute path (and not / itself where not_root). */
static int abs_path(const struct src *s, const char *key, const char *path, bool not_root,
		    struct ward_err *err)
{
	if (not_root && (path[0] != '/' || !strcmp(path, "/")))
		return fail_at(err, s, key, "must be an absolute path other than /");
	if (path[0] != '/')
		return fail_at(err, s, key, "must be an absolute path");
	return 0;
}

static int parse_gpu(json_t *o, struct ward_gpu_config *g, const struct src *s,
		     struct ward_err *err)
{
	const struct member members[] = {
	    KEY_STR(g, proc_root),     KEY_STR(g, dev_root),	     KEY_STRV(g, cdi_dirs),
	    KEY_STR(g, hook),	       KEY_STR(g, libcuda),	     KEY_U32(g, wipe_timeout),
	    KEY_U32(g, wipe_slack_mb), KEY_U32(g, wipe_held_max_mb),
	};

	if (want_object(o, s, "gpu", "an object", err) < 0 ||
	    get_members(o, members, ARRAY_SIZE(members), true, s, err) < 0 ||
	    abs_path(s, "proc_root", g->proc_root, false, err) < 0 ||
	    abs_path(s, "dev_root", g->dev_root, false, err) < 0 ||
	    abs_path(s, "hook", g->hook, false, err) < 0)
		return -1;
	for (size_t i = 0; g->cdi_dirs[i]; i++)
		if (g->cdi_dirs[i][0] != '/')
			return fail_at(err, s, "cdi_dirs", "%s: must be an absolute path",
				       g->cdi_dirs[i]);
	if (!g->wipe_timeout)
		return fail_at(err, s, "wipe_timeout", "must be at least 1 second");
	return 0;
}

/* The choice set of key k (NULL: none). */
static char ***choice_slot(struct ward_config *c, const char *k)
{
	for (size_t i = 0; c->choice_keys && c->choice_keys[i]; i++)
		if (!strcmp(c->choice_keys[i], k))
			return &c->choice_sets[i];
	return NULL;
}

/* "tenant_choice": {"<namespace>" | "*" | "": ["tenant", ...] | "*"}. An entry replaces the
 * built-in one of the same key. */
static int parse_choice(json_t *v, struct ward_config *c, const struct src *s, struct ward_err *err)
{
	const char *k;
	json_t *e;

	if (want_object(v, s, "tenant_choice", "an object {\"namespace\": [\"tenant\", ...]}",
			err) < 0)
		return -1;
	json_object_foreach(v, k, e)
	{
		char **set = xcalloc(1, sizeof(char *)), ***slot;
		size_t i;
		json_t *t;

		if (json_is_string(e) && !strcmp(json_string_value(e), "*")) {
			set = strv_append(set, "*");
		} else if (json_is_array(e)) {
			json_array_foreach(e, i, t)
			{
				if (!json_is_string(t) || !strcmp(json_string_value(t), "*")) {
					strv_free(set);
					return fail_at(err, s, k,
						       "element %zu: expected a tenant name", i);
				}
				set = strv_append(set, json_string_value(t));
			}
		} else {
			strv_free(set);
			return fail_at(err, s, k,
				       "expected an array of tenant names or \"*\" (any tenant)");
		}
		if ((slot = choice_slot(c, k))) {
			strv_free(*slot);
			*slot = set;
			continue;
		}
		size_t n = strv_len(c->choice_keys);
		c->choice_keys = strv_append(c->choice_keys, k);
		c->choice_sets = xrealloc(c->choice_sets, (n + 2) * sizeof(*c->choice_sets));
		c->choice_sets[n] = set;
		c->choice_sets[n + 1] = NULL;
	}
	return 0;
}

static int parse_global(json_t *o, struct ward_config *c, json_t **defaults, const struct src *s,
			struct ward_err *err)
{
	cleanup_free char *apparmor = NULL;
	cleanup_free char *missing = NULL;
	/* the members without a destination: read below */
	const struct member members[] = {
	    {"state_root", .str = &c->state_root},
	    {"lib_dir", .str = &c->lib_dir},
	    {.key = "id_pool"},
	    {.key = "default_tenant"},
	    {"tenant_annotation", .str = &c->tenant_annotation},
	    {"namespace_annotations", .strv = &c->namespace_annotations},
	    {.key = "namespaces"},
	    {.key = "tenant_choice"},
	    {"apparmor", .str = &apparmor},
	    {"missing_controllers", .str = &missing},
	    {.key = "gpu"},
	    {"audit_dir", .str = &c->audit_dir},
	    {"audit_hook", .str = &c->audit_hook},
	    {.key = "defaults"},
	    {.key = "containerd"},
	    {"kubelet_root_dir", .str = &c->kubelet_root_dir},
	    {.key = "kubelet_cgroup_root"},
	    {.key = "containers_storage"},
	    {"docker_root", .str = &c->docker_root},
	};
	const struct member pool[] = {{"base", .u32 = &c->pool_base},
				      {"size", .u32 = &c->pool_size}};
	const struct member containerd[] = {{"root", .str = &c->containerd_root},
					    {"state", .str = &c->containerd_state}};
	const struct member storage[] = {{"root", .str = &c->storage_root},
					 {"runroot", .str = &c->storage_runroot}};
	json_t *v;

	if (!json_is_object(o))
		return ward_fail(err, 0, "%s: expected a JSON object", s->file);
	if (get_members(o, members, ARRAY_SIZE(members), true, s, err) < 0)
		return -1;
	if (c->state_root && c->state_root[0] != '/')
		return fail_at(err, s, "state_root", "must be an absolute path");
	if (c->lib_dir[0] != '/')
		return fail_at(err, s, "lib_dir", "must be an absolute path");
	if ((v = json_object_get(o, "id_pool"))) {
		if (!json_is_object(v))
			return fail_at(err, s, "id_pool", "expected {\"base\": N, \"size\": M}");
		if (get_members(v, pool, ARRAY_SIZE(pool), true, s, err) < 0)
			return -1;
		if (c->pool_base < WARD_SLICE)
			return fail_at(err, s, "base",
				       "%u: the pool must start at 65536 or above (host IDs below "
				       "it are never mapped)",
				       c->pool_base);
		if (c->pool_size < WARD_SLICE || c->pool_size % WARD_SLICE ||
		    (uint64_t)c->pool_base + c->pool_size > (uint64_t)UINT32_MAX)
			return fail_at(
			    err, s, "size",
			    "%u: expected a non-zero multiple of 65536 ending below 2^32",
			    c->pool_size);
	}
	if ((v = json_object_get(o, "default_tenant"))) {
		free(c->default_tenant);
		c->default_tenant = NULL;
		if (json_is_string(v))
			c->default_tenant = xstrdup(json_string_value(v));
		else if (!json_is_null(v))
			return fail_at(err, s, "default_tenant", "expected a tenant name or null");
	}
	if ((v = json_object_get(o, "namespaces"))) {
		const char *k;
		json_t *e;
		if (want_object(v, s, "namespaces", "an object {\"namespace\": \"tenant\"}", err) <
		    0)
			return -1;
		json_object_foreach(v, k, e)
		{
			if (!json_is_string(e))
				return fail_at(err, s, k, "expected a tenant name");
			c->namespace_keys = strv_append(c->namespace_keys, k);
			c->namespace_tenants =
			    strv_append(c->namespace_tenants, json_string_value(e));
		}
	}
	if ((v = json_object_get(o, "tenant_choice")) && parse_choice(v, c, s, err) < 0)
		return -1;
	if (apparmor) {
		bool ok = !strcmp(apparmor, "required") || !strcmp(apparmor, "optional");
		c->apparmor =
		    !strcmp(apparmor, "required") ? WARD_NEED_REQUIRED : WARD_NEED_OPTIONAL;
		if (!ok)
			return fail_at(err, s, "apparmor", "expected \"required\" or \"optional\"");
	}
	if (missing) {
		bool ok = !strcmp(missing, "warn") || !strcmp(missing, "error");
		c->missing_controllers_warn = !strcmp(missing, "warn");
		if (!ok)
			return fail_at(err, s, "missing_controllers",
				       "expected \"error\" or \"warn\"");
	}
	if ((v = json_object_get(o, "gpu")) && parse_gpu(v, &c->gpu, s, err) < 0)
		return -1;
	if (abs_path(s, "audit_dir", c->audit_dir, false, err) < 0 ||
	    abs_path(s, "audit_hook", c->audit_hook, false, err) < 0)
		return -1;
	if (get_object(o, "containerd", "{\"root\": DIR, \"state\": DIR}", containerd,
		       ARRAY_SIZE(containerd), s, err) < 0 ||
	    get_object(o, "containers_storage", "{\"root\": DIR, \"runroot\": DIR}", storage,
		       ARRAY_SIZE(storage), s, err) < 0)
		return -1;
	if (abs_path(s, "root", c->storage_root, true, err) < 0 ||
	    abs_path(s, "runroot", c->storage_runroot, true, err) < 0 ||
	    abs_path(s, "docker_root", c->docker_root, true, err) < 0 ||
	    abs_path(s, "root", c->containerd_root, true, err) < 0 ||
	    abs_path(s, "state", c->containerd_state, true, err) < 0 ||
	    abs_path(s, "kubelet_root_dir", c->kubelet_root_dir, true, err) < 0)
		return -1;
	if (json_is_string(json_object_get(o, "kubelet_cgroup_root"))) {
		strv_free(c->kubelet_cgroup_roots);
		c->kubelet_cgroup_roots = xcalloc(1, sizeof(char *));
		c->kubelet_cgroup_roots =
		    strv_append(c->kubelet_cgroup_roots,
				json_string_value(json_object_get(o, "kubelet_cgroup_root")));
	} else if (get_member(
		       o, &(struct member){"kubelet_cgroup_root", .strv = &c->kubelet_cgroup_roots},
		       s, err) < 0)
		return -1;
	for (size_t i = 0; c->kubelet_cgroup_roots[i]; i++)
		if (!kubelet_cgroup_root_ok(c->kubelet_cgroup_roots[i]))
			return fail_at(
			    err, s, "kubelet_cgroup_root",
			    "\"%s\": expected a cgroup path below the root (\"/kubepods\") "
			    "or a systemd slice (\"kubepods.slice\"), no empty, \".\" or "
			    "\"..\" component",
			    c->kubelet_cgroup_roots[i]);
	if ((v = json_object_get(o, "defaults"))) {
		if (!json_is_object(v))
			return fail_at(err, s, "defaults", "expected a tenant object");
		if (json_object_get(v, "trusted"))
			return fail_at(err, s, "trusted",
				       "\"defaults\" cannot make every tenant trusted; set it in "
				       "the one tenant file that needs it");
		*defaults = json_incref(v);
	}
	return 0;
}

/* The directory of the running binary (argv[0] with symlinks resolved), or NULL: asked
 * once per process, for every default hook. */
static const char *self_dir(void)
{
	static char *dir;
	static bool done;
	char *slash;

	if (done)
		return dir;
	done = true;
	if (!strchr(program_invocation_name, '/') ||
	    !(dir = realpath(program_invocation_name, NULL)))
		return NULL;
	if (!(slash = strrchr(dir, '/'))) {
		free(dir);
		return dir = NULL;
	}
	*slash = '\0';
	return dir;
}

/* A hook binary: the installed one (WARD_BINDIR), else the one beside the ward binary that
 * runs (a build tree; ward runs from a sealed memfd, so its path is argv[0]), else the
 * installed path anyway (missing: the hook fails and so does create). */
static char *default_hook(const char *name)
{
	char *installed = xasprintf("%s/%s", WARD_BINDIR, name);
	const char *self;
	char *beside;

	if (access(installed, X_OK) == 0 || !(self = self_dir()))
		return installed;
	beside = xasprintf("%s/%s", self, name);
	if (access(beside, X_OK) < 0) {
		free(beside);
		return installed;
	}
	free(installed);
	return beside;
}

static struct ward_config *config_new(void)
{
	static const char *const ns_ann[] = {"io.kubernetes.cri.sandbox-namespace",
					     WARD_ANN_POD_NAMESPACE, NULL};
	static const char *const cdi_dirs[] = {"/etc/cdi", "/var/run/cdi", NULL};
	struct ward_config *c = xcalloc(1, sizeof(*c));
	c->lib_dir = xstrdup(WARD_LIB_DEFAULT_DIR);
	c->pool_base = WARD_POOL_DEFAULT_BASE;
	c->pool_size = WARD_POOL_DEFAULT_SIZE;
	c->default_tenant = xstrdup("default");
	c->tenant_annotation = xstrdup("ward.dev/tenant");
	c->namespace_annotations = strv_dup((char *const *)ns_ann);
	c->namespace_keys = xcalloc(1, sizeof(char *));
	c->namespace_tenants = xcalloc(1, sizeof(char *));
	/* A bare bundle (no namespace annotation) comes from host root: it may choose. */
	c->choice_keys = strv_append(xcalloc(1, sizeof(char *)), "");
	c->choice_sets = xcalloc(2, sizeof(*c->choice_sets));
	c->choice_sets[0] = strv_append(xcalloc(1, sizeof(char *)), "*");
	c->apparmor = WARD_NEED_OPTIONAL;
	c->gpu.proc_root = xstrdup("/proc");
	c->gpu.dev_root = xstrdup("/dev");
	c->gpu.cdi_dirs = strv_dup((char *const *)cdi_dirs);
	c->gpu.hook = default_hook("ward-gpu-hook");
	c->gpu.libcuda = xstrdup("libcuda.so.1");
	c->gpu.wipe_timeout = 600;
	c->gpu.wipe_slack_mb = 64;
	c->gpu.wipe_held_max_mb = 1024;
	c->audit_dir = xstrdup(WARD_AUDIT_DEFAULT_DIR);
	c->audit_hook = default_hook("ward-audit-hook");
	c->containerd_root = xstrdup("/var/lib/containerd");
	c->containerd_state = xstrdup("/run/containerd");
	c->kubelet_root_dir = xstrdup("/var/lib/kubelet");
	c->storage_root = xstrdup("/var/lib/containers/storage");
	c->storage_runroot = xstrdup("/run/containers/storage");
	c->docker_root = xstrdup("/var/lib/docker");
	c->kubelet_cgroup_roots =
	    strv_append(strv_append(xcalloc(1, sizeof(char *)), "/kubepods"), "kubepods.slice");
	return c;
}

void ward_config_free(struct ward_config *c)
{
	if (!c)
		return;
	free_all(c->dir, c->state_root, c->lib_dir, c->default_tenant, c->tenant_annotation,
		 c->gpu.proc_root, c->gpu.dev_root, c->gpu.hook, c->gpu.libcuda, c->audit_dir,
		 c->audit_hook, c->containerd_root, c->containerd_state, c->kubelet_root_dir,
		 c->storage_root, c->storage_runroot, c->docker_root);
	for (size_t i = 0; c->choice_keys && c->choice_keys[i]; i++)
		strv_free(c->choice_sets[i]);
	free(c->choice_sets);
	strv_free_all(c->gpu.cdi_dirs, c->kubelet_cgroup_roots, c->namespace_annotations,
		      c->namespace_keys, c->namespace_tenants, c->choice_keys);
	for (size_t i = 0; i < c->n_tenants; i++)
		tenant_clear(&c->tenants[i]);
	free(c->tenants);
	free(c);
}

const struct ward_tenant *ward_config_tenant(const struct ward_config *c, const char *name)
{
	for (size_t i = 0; name && i < c->n_tenants; i++)
		if (strcmp(c->tenants[i].name, name) == 0)
			return &c->tenants[i];
	return NULL;
}

static int add_tenant(struct ward_config *c, const char *name, const char *file, json_t *obj,
		      json_t *defaults, const char *text, struct ward_err *err)
{
	struct src s = {file, text};
	struct src ds = {"ward.json: defaults", NULL};
	struct ward_tenant *t;
	json_t *merged;
	int rc;

	if (!tenant_name_ok(name))
		return ward_fail(
		    err, 0,
		    "%s: \"%s\" is not a valid tenant name (letters, digits, '-', '_', "
		    "'.', at most 64)",
		    file, name);
	if (ward_config_tenant(c, name))
		return ward_fail(err, 0, "%s: tenant \"%s\" is defined twice", file, name);
	c->tenants = xrealloc(c->tenants, (c->n_tenants + 1) * sizeof(*c->tenants));
	t = &c->tenants[c->n_tenants];
	memset(t, 0, sizeof(*t));
	tenant_defaults(t);
	t->name = xstrdup(name);
	t->file = xstrdup(file);
	c->n_tenants++;
	if (defaults && parse_tenant(defaults, t, &ds, err) < 0)
		return -1;
	if (!obj)
		return 0;
	merged = json_deep_copy(obj);
	rc = parse_tenant(merged, t, &s, err);
	json_decref(merged);
	return rc;
}

/* Fixed ranges must not overlap each other, nor start below the pool base. */
static int check_ranges(const struct ward_config *c, struct ward_err *err)
{
	for (size_t i = 0; i < c->n_tenants; i++) {
		const struct ward_tenant *a = &c->tenants[i];
		if (a->id_mode != WARD_IDS_RANGE)
			continue;
		if (a->range_start < c->pool_base)
			return ward_fail(err, 0,
					 "%s: ids: range %u+%u starts below the pool base %u (host "
					 "IDs below it are never mapped)",
					 a->file, a->range_start, a->range_size, c->pool_base);
		for (size_t j = i + 1; j < c->n_tenants; j++) {
			const struct ward_tenant *b = &c->tenants[j];
			if (b->id_mode != WARD_IDS_RANGE)
				continue;
			if ((uint64_t)a->range_start < (uint64_t)b->range_start + b->range_size &&
			    (uint64_t)b->range_start < (uint64_t)a->range_start + a->range_size)
				return ward_fail(err, 0,
						 "tenants \"%s\" (%s) and \"%s\" (%s): ID ranges "
						 "%u+%u and %u+%u "
						 "overlap",
						 a->name, a->file, b->name, b->file, a->range_start,
						 a->range_size, b->range_start, b->range_size);
		}
	}
	return 0;
}

static int finish(struct ward_config *c, json_t *defaults, struct ward_err *err)
{
	/* The default tenant exists implicitly unless a file defines it. */
	if (c->default_tenant && !ward_config_tenant(c, c->default_tenant) &&
	    add_tenant(c, c->default_tenant, "built-in", NULL, defaults, NULL, err) < 0)
		return -1;
	for (size_t i = 0; c->namespace_tenants[i]; i++)
		if (!ward_config_tenant(c, c->namespace_tenants[i]))
			return ward_fail(
			    err, 0, "ward.json: namespaces: \"%s\" maps to unknown tenant \"%s\"",
			    c->namespace_keys[i], c->namespace_tenants[i]);
	for (size_t i = 0; c->choice_keys[i]; i++) {
		for (size_t j = 0; c->choice_sets[i][j]; j++)
			if (strcmp(c->choice_sets[i][j], "*") &&
			    !ward_config_tenant(c, c->choice_sets[i][j]))
				return ward_fail(err, 0,
						 "ward.json: tenant_choice: \"%s\" names unknown "
						 "tenant \"%s\"",
						 c->choice_keys[i], c->choice_sets[i][j]);
		for (size_t j = 0; c->namespace_keys[j]; j++)
			if (!strcmp(c->choice_keys[i], c->namespace_keys[j]))
				return ward_fail(
				    err, 0,
				    "ward.json: tenant_choice: namespace \"%s\" is mapped to "
				    "tenant \"%s\" (namespaces): its pods cannot choose",
				    c->choice_keys[i], c->namespace_tenants[j]);
	}
	return check_ranges(c, err);
}

static json_t *decode(const char *text, const char *file, struct ward_err *err)
{
	json_error_t je;
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!o)
		ward_fail(err, 0, "%s:%d: %s", file, je.line, je.text);
	return o;
}

struct ward_config *ward_config_parse(const char *global_json, const char *const *tenant_names,
				      const char *const *tenant_jsons, size_t n,
				      struct ward_err *err)
{
	struct ward_config *c = config_new();
	json_t *defaults = NULL;

	if (global_json) {
		struct src s = {"ward.json", global_json};
		json_t *o = decode(global_json, "ward.json", err);
		int rc = o ? parse_global(o, c, &defaults, &s, err) : -1;
		json_decref(o);
		if (rc < 0)
			goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		char file[128];
		json_t *o;
		int rc;
		snprintf(file, sizeof(file), "tenants.d/%s.json", tenant_names[i]);
		o = decode(tenant_jsons[i], file, err);
		rc = o ? add_tenant(c, tenant_names[i], file, o, defaults, tenant_jsons[i], err)
		       : -1;
		json_decref(o);
		if (rc < 0)
			goto fail;
	}
	if (finish(c, defaults, err) < 0)
		goto fail;
	json_decref(defaults);
	return c;
fail:
	json_decref(defaults);
	ward_config_free(c);
	return NULL;
}

static char *read_text(int dirfd, const char *path, struct ward_err *err)
{
	size_t len;
	char *t = read_file_at(dirfd, path, &len, err);
	if (t && strlen(t) != len) {
		free(t);
		ward_fail(err, 0, "%s: contains a NUL byte", path);
		return NULL;
	}
	return t;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct ward_config *load_dir(const char *dir, struct ward_err *err)
{
	cleanup_fd int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_fd int tfd = -1;
	cleanup_free char *global = NULL;
	cleanup_strv char **names = NULL;
	cleanup_strv char **texts = NULL;
	struct ward_config *c;
	size_t n = 0;

	if (dfd < 0) {
		ward_fail_errno(err, "configuration directory %s", dir);
		return NULL;
	}
	if (faccessat(dfd, "ward.json", F_OK, 0) == 0) {
		global = read_text(dfd, "ward.json", err);
		if (!global) {
			ward_wrap(err, "%s", dir);
			return NULL;
		}
	}
	names = xcalloc(1, sizeof(char *));
	texts = xcalloc(1, sizeof(char *));
	tfd = openat(dfd, "tenants.d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tfd < 0 && errno != ENOENT) {
		ward_fail_errno(err, "%s/tenants.d", dir);
		return NULL;
	}
	if (tfd >= 0) {
		DIR *d = fdopendir(dup(tfd));
		struct dirent *e;
		if (!d) {
			ward_fail_errno(err, "%s/tenants.d", dir);
			return NULL;
		}
		while ((e = readdir(d))) {
			size_t l = strlen(e->d_name);
			if (e->d_name[0] == '.' || l <= 5 || strcmp(e->d_name + l - 5, ".json"))
				continue;
			names = strv_append(names, e->d_name);
			names[n++][l - 5] = '\0';
		}
		closedir(d);
		qsort(names, n, sizeof(char *), name_cmp);
		for (size_t i = 0; i < n; i++) {
			char path[NAME_MAX + 16];
			char *t;
			snprintf(path, sizeof(path), "%s.json", names[i]);
			t = read_text(tfd, path, err);
			if (!t) {
				ward_wrap(err, "%s/tenants.d", dir);
				return NULL;
			}
			texts = strv_append(texts, t);
			free(t);
		}
	}
	c = ward_config_parse(global, (const char *const *)names, (const char *const *)texts, n,
			      err);
	if (!c) {
		ward_wrap(err, "configuration %s", dir);
		return NULL;
	}
	c->dir = xstrdup(dir);
	return c;
}

struct ward_config *ward_config_load(const char *dir, struct ward_err *err)
{
	struct stat st;

	if (!dir || !*dir)
		dir = getenv("WARD_CONFIG");
	if (dir && *dir)
		return load_dir(dir, err);
	if (stat(WARD_CONFIG_DEFAULT_DIR, &st) == 0)
		return load_dir(WARD_CONFIG_DEFAULT_DIR, err);
	return ward_config_parse(NULL, NULL, NULL, 0, err);
}

/* ---- output and the process-wide instance ------------------------------------------ */

char *ward_tenant_json(const struct ward_tenant *t)
{
	json_t *o = json_object(), *a;
	char *r;

	json_object_set_new(o, "name", json_string(t->name));
	json_object_set_new(o, "defined_in", json_string(t->file));
	json_object_set_new(o, "trusted", json_boolean(t->trusted));
	if (t->id_mode == WARD_IDS_RANGE)
		json_object_set_new(o, "ids",
				    json_pack("{s:I,s:I}", "start", (json_int_t)t->range_start,
					      "size", (json_int_t)t->range_size));
	else
		json_object_set_new(o, "ids",
				    json_string(t->id_mode == WARD_IDS_POD ? "pod" : "tenant"));
	json_object_set_new(o, "seccomp", json_string(t->seccomp));
	json_object_set_new(o, "seccomp_privileged", json_string(t->seccomp_privileged));
	json_object_set_new(o, "apparmor", json_string(t->apparmor));
	json_object_set_new(o, "allow_pod_apparmor", json_boolean(t->allow_pod_apparmor));
#define STRV(key, v)                                                                               \
	a = json_array();                                                                          \
	for (size_t i = 0; (v) && (v)[i]; i++)                                                     \
		json_array_append_new(a, json_string((v)[i]));                                     \
	json_object_set_new(o, key, a)
	STRV("capabilities", t->capabilities);
	json_object_set_new(o, "allow_new_privileges", json_boolean(t->allow_new_privileges));
	a = json_object();
	for (size_t i = 0; i < t->n_rlimits; i++)
		json_object_set_new(a, t->rlimits[i].type,
				    json_integer((json_int_t)t->rlimits[i].max));
	json_object_set_new(o, "rlimits", a);
	STRV("host_paths", t->host_paths);
	STRV("root_paths", t->root_paths);
	STRV("devices", t->devices);
	STRV("host_namespaces", t->host_namespaces);
	STRV("hooks", t->hooks);
	json_object_set_new(o, "privileged", json_boolean(t->privileged));
	json_object_set_new(o, "idmap_rootfs", json_boolean(t->idmap_rootfs));
	json_object_set_new(o, "idmap_mounts", json_boolean(t->idmap_mounts));
	if (t->cgroup_json)
		json_object_set_new(o, "cgroup", json_loads(t->cgroup_json, 0, NULL));
	STRV("gpus", t->gpus);
#undef STRV
	r = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return r;
}

static char *config_dir_set;
static struct ward_config *config_loaded;

void ward_config_set_dir(const char *dir)
{
	free(config_dir_set);
	config_dir_set = dir ? xstrdup(dir) : NULL;
	ward_config_free(config_loaded); /* read again on the next ward_config_get */
	config_loaded = NULL;
}

const struct ward_config *ward_config_get(struct ward_err *err)
{
	if (!config_loaded)
		config_loaded = ward_config_load(config_dir_set, err);
	return config_loaded;
}
