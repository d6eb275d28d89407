/* config.json -> struct ward_spec.
 *
 * Structure only: every field is type-checked, required fields are required, paths
 * that must be absolute are, and every error names the field path ("config.json:
 * linux.namespaces[2].type: unknown namespace type "foo""). Unknown properties are
 * ignored (runtime-spec: MUST ignore). JSON null counts as absent, as in Go's decoder.
 * Names owned by other modules (capabilities, seccomp actions, rlimit types, mount
 * options) are checked there; the cross-field checks below can only be done here.
 *
 * On any error the half-filled struct is released with ward_spec_free, so every array
 * is allocated together with its count before its elements are filled in. */
#include "spec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "json.h"
#include "util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* ---- namespace names ---------------------------------------------------------------- */

static const struct {
	const char *name; /* config.json */
	const char *proc; /* /proc/self/ns/<proc> */
	int flag;
} ns_table[] = {
    {"pid", "pid", CLONE_NEWPID},	   {"network", "net", CLONE_NEWNET},
    {"mount", "mnt", CLONE_NEWNS},	   {"ipc", "ipc", CLONE_NEWIPC},
    {"uts", "uts", CLONE_NEWUTS},	   {"user", "user", CLONE_NEWUSER},
    {"cgroup", "cgroup", CLONE_NEWCGROUP}, {"time", "time", CLONE_NEWTIME},
};

int ward_ns_type_from_name(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(ns_table); i++)
		if (strcmp(ns_table[i].name, name) == 0)
			return ns_table[i].flag;
	return 0;
}

const char *ward_ns_type_name(int flag)
{
	for (size_t i = 0; i < ARRAY_SIZE(ns_table); i++)
		if (ns_table[i].flag == flag)
			return ns_table[i].name;
	return NULL;
}

const char *ward_ns_proc_name(int flag)
{
	for (size_t i = 0; i < ARRAY_SIZE(ns_table); i++)
		if (ns_table[i].flag == flag)
			return ns_table[i].proc;
	return NULL;
}

const struct ward_namespace *ward_spec_ns(const struct ward_spec *s, int type)
{
	for (size_t i = 0; s && i < s->linux.n_namespaces; i++)
		if (s->linux.namespaces[i].type == type)
			return &s->linux.namespaces[i];
	return NULL;
}

const char *ward_spec_annotation(const struct ward_spec *s, const char *key)
{
	for (size_t i = 0; s && key && s->annotation_keys && s->annotation_keys[i]; i++)
		if (strcmp(s->annotation_keys[i], key) == 0)
			return s->annotation_values[i];
	return NULL;
}

/* ---- freeing ---------------------------------------------------------------------- */

static void idmaps_free(struct ward_idmaps *m)
{
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

static void process_clear(struct ward_process *p)
{
	strv_free(p->args);
	strv_free(p->env);
	free(p->cwd);
	free(p->user.additional_gids);
	strv_free(p->capabilities.bounding);
	strv_free(p->capabilities.effective);
	strv_free(p->capabilities.inheritable);
	strv_free(p->capabilities.permitted);
	strv_free(p->capabilities.ambient);
	for (size_t i = 0; p->rlimits && i < p->n_rlimits; i++)
		free(p->rlimits[i].type);
	free(p->rlimits);
	free(p->apparmor_profile);
	free(p->selinux_label);
	free(p->io_priority_class);
	free(p->scheduler.policy);
	strv_free(p->scheduler.flags);
}

void ward_process_free(struct ward_process *p)
{
	if (!p)
		return;
	process_clear(p);
	free(p);
}

static void seccomp_free(struct ward_seccomp *sc)
{
	if (!sc)
		return;
	free_all(sc->default_action, sc->listener_path, sc->listener_metadata);
	strv_free_all(sc->architectures, sc->flags);
	for (size_t i = 0; sc->syscalls && i < sc->n_syscalls; i++) {
		struct ward_seccomp_rule *r = &sc->syscalls[i];
		strv_free(r->names);
		free(r->action);
		for (size_t j = 0; r->args && j < r->n_args; j++)
			free(r->args[j].op);
		free(r->args);
	}
	free(sc->syscalls);
	free(sc);
}

static void linux_clear(struct ward_linux *l)
{
	for (size_t i = 0; l->namespaces && i < l->n_namespaces; i++)
		free(l->namespaces[i].path);
	free(l->namespaces);
	idmaps_free(&l->uid_mappings);
	idmaps_free(&l->gid_mappings);
	for (size_t i = 0; l->devices && i < l->n_devices; i++)
		free(l->devices[i].path);
	free_all(l->devices, l->cgroups_path, l->rootfs_propagation, l->mount_label);
	ward_resources_free(&l->resources);
	strv_free_all(l->sysctl_keys, l->sysctl_values, l->masked_paths, l->readonly_paths);
	seccomp_free(l->seccomp);
	seccomp_free(l->seccomp_pod);
	if (l->personality) {
		free(l->personality->domain);
		strv_free(l->personality->flags);
		free(l->personality);
	}
}

void ward_spec_free(struct ward_spec *s)
{
	if (!s)
		return;
	free(s->oci_version);
	free(s->root_path);
	for (size_t i = 0; s->mounts && i < s->n_mounts; i++) {
		struct ward_mount *m = &s->mounts[i];
		free_all(m->destination, m->type, m->source);
		strv_free(m->options);
		idmaps_free(&m->uid_mappings);
		idmaps_free(&m->gid_mappings);
	}
	free(s->mounts);
	ward_process_free(s->process);
	free(s->hostname);
	free(s->domainname);
	for (int k = 0; k < WARD_HOOK__COUNT; k++) {
		struct ward_hooks *h = &s->hooks[k];
		for (size_t i = 0; h->v && i < h->n; i++) {
			free(h->v[i].path);
			strv_free(h->v[i].args);
			strv_free(h->v[i].env);
		}
		free(h->v);
	}
	strv_free(s->annotation_keys);
	strv_free(s->annotation_values);
	linux_clear(&s->linux);
	ward_own_clear(&s->own);
	free(s);
}

/* ---- decoding: the JSON reader (json.h), under the short names of this file ---------- */

#define FP_MAX	      WARD_JSON_PATH_MAX
#define STRV_NONEMPTY WARD_JSON_STRV_NONEMPTY
#define STRV_ENV      WARD_JSON_STRV_ENV
#define decode_object ward_json_decode
#define fp_key	      ward_json_path_key
#define fp_idx	      ward_json_path_idx
#define bad	      ward_json_bad
#define member	      ward_json_member
#define v_str	      ward_json_str
#define v_u64	      ward_json_u64
#define v_u32	      ward_json_u32
#define v_i64	      ward_json_i64
#define v_bool	      ward_json_bool
#define v_strv	      ward_json_strv
#define missing	      ward_json_missing
#define elem_obj      ward_json_elem_obj
#define str_map	      ward_json_str_map
#define req_abs_path  ward_json_req_abs_path
#define opt_str	      ward_json_opt_str
#define opt_u64	      ward_json_opt_u64
#define opt_u32	      ward_json_opt_u32
#define opt_i64	      ward_json_opt_i64
#define opt_int	      ward_json_opt_int
#define opt_bool      ward_json_opt_bool
#define opt_strv      ward_json_opt_strv
#define opt_obj	      ward_json_opt_obj
#define opt_arr	      ward_json_opt_arr
#define req_str	      ward_json_req_str
#define req_u64	      ward_json_req_u64
#define req_u32	      ward_json_req_u32

static bool is_abs(const char *p)
{
	return p && p[0] == '/';
}

/* ---- pieces ------------------------------------------------------------------------- */

/* The optional object member key of o, its field path written to p and *has (has not
 * NULL) set: NULL when absent (*r 0) or not an object (*r -1). */
static json_t *opt_section(json_t *o, const char *parent, const char *key, char *p, bool *has,
			   int *r, struct ward_err *err)
{
	json_t *v = opt_obj(o, parent, key, r, err);

	if (v) {
		fp_key(p, parent, key);
		if (has)
			*has = true;
	}
	return v;
}

/* The optional array member key of o (*arr, NULL when absent (*r 0) or not an array
 * (*r -1)), its field path written to p and its length to *n: a zeroed vector of *n
 * elements of size bytes, NULL without the array. */
static void *opt_vector(json_t *o, const char *parent, const char *key, size_t size, char *p,
			json_t **arr, size_t *n, int *r, struct ward_err *err)
{
	*arr = opt_arr(o, parent, key, r, err);
	*n = json_array_size(*arr);
	if (!*arr)
		return NULL;
	fp_key(p, parent, key);
	return xcalloc(*n, size);
}

/* fn(e, its field path, i, ctx) on each element e of arr (field path p), which must be an
 * object. */
static int each_object(json_t *arr, const char *p, void *ctx,
		       int (*fn)(json_t *, const char *, size_t, void *, struct ward_err *),
		       struct ward_err *err)
{
	char q[FP_MAX];
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *e = elem_obj(arr, i, fp_idx(q, p, i), err);
		if (!e || fn(e, q, i, ctx, err) < 0)
			return -1;
	}
	return 0;
}

/* opt_u32, and in *has whether the member was there. */
static int opt_u32_has(json_t *o, const char *parent, const char *key, uint32_t *out, bool *has,
		       struct ward_err *err)
{
	int r = opt_u32(o, parent, key, out, err);
	*has = r > 0;
	return r;
}

/* fn(section, its field path, proc) on the optional object member key of the process,
 * *has set when it is there. */
static int process_section(json_t *o, const char *parent, const char *key, bool *has,
			   int (*fn)(json_t *, const char *, struct ward_process *,
				     struct ward_err *),
			   struct ward_process *proc, struct ward_err *err)
{
	char p[FP_MAX];
	int r;
	json_t *sec = opt_section(o, parent, key, p, has, &r, err);
	return sec ? fn(sec, p, proc, err) : r;
}

static int parse_idmaps(json_t *o, const char *parent, const char *key, struct ward_idmaps *out,
			struct ward_err *err)
{
	char p[FP_MAX], q[FP_MAX];
	int r;
	json_t *arr;
	out->v = opt_vector(o, parent, key, sizeof(*out->v), p, &arr, &out->n, &r, err);
	if (!arr)
		return r;
	for (size_t i = 0; i < out->n; i++) {
		json_t *e = elem_obj(arr, i, fp_idx(q, p, i), err);
		if (!e || req_u32(e, q, "containerID", &out->v[i].container_id, err) < 0 ||
		    req_u32(e, q, "hostID", &out->v[i].host_id, err) < 0 ||
		    req_u32(e, q, "size", &out->v[i].size, err) < 0)
			return -1;
	}
	return 1;
}

static int parse_user(json_t *o, const char *parent, struct ward_user *u, struct ward_err *err)
{
	char p[FP_MAX], q[FP_MAX];
	int r;
	json_t *user = opt_obj(o, parent, "user", &r, err), *gids;
	if (!user)
		return r; /* absent: uid = gid = 0 */
	fp_key(p, parent, "user");
	if (req_u32(user, p, "uid", &u->uid, err) < 0 || req_u32(user, p, "gid", &u->gid, err) < 0)
		return -1;
	if (opt_u32_has(user, p, "umask", &u->umask, &u->has_umask, err) < 0)
		return -1;
	u->additional_gids = opt_vector(user, p, "additionalGids", sizeof(uint32_t), p, &gids,
					&u->n_additional_gids, &r, err);
	if (r < 0)
		return -1;
	for (size_t i = 0; i < u->n_additional_gids; i++)
		if (v_u32(json_array_get(gids, i), fp_idx(q, p, i), &u->additional_gids[i], err) <
		    0)
			return -1;
	return 0;
}

/* process.capabilities (p its path), read by process_section as the next two. */
static int parse_capabilities(json_t *caps, const char *p, struct ward_process *proc,
			      struct ward_err *err)
{
	struct ward_capabilities *c = &proc->capabilities;
	if (opt_strv(caps, p, "bounding", 0, &c->bounding, err) < 0 ||
	    opt_strv(caps, p, "effective", 0, &c->effective, err) < 0 ||
	    opt_strv(caps, p, "inheritable", 0, &c->inheritable, err) < 0 ||
	    opt_strv(caps, p, "permitted", 0, &c->permitted, err) < 0 ||
	    opt_strv(caps, p, "ambient", 0, &c->ambient, err) < 0)
		return -1;
	return 0;
}

/* process.rlimits[i] (q its path), read by each_object. */
static int parse_rlimit(json_t *e, const char *q, size_t i, void *ctx, struct ward_err *err)
{
	struct ward_process *proc = ctx;
	struct ward_rlimit *rl = &proc->rlimits[i];
	char t[FP_MAX];

	if (req_str(e, q, "type", &rl->type, err) < 0)
		return -1;
	for (size_t j = 0; j < i; j++)
		if (strcmp(proc->rlimits[j].type, rl->type) == 0)
			return bad(err, fp_key(t, q, "type"), "duplicate %s", rl->type);
	if (req_u64(e, q, "hard", &rl->hard, err) < 0 || req_u64(e, q, "soft", &rl->soft, err) < 0)
		return -1;
	return 0;
}

static int parse_rlimits(json_t *o, const char *parent, struct ward_process *proc,
			 struct ward_err *err)
{
	char p[FP_MAX];
	int r;
	json_t *arr;
	proc->rlimits = opt_vector(o, parent, "rlimits", sizeof(*proc->rlimits), p, &arr,
				   &proc->n_rlimits, &r, err);
	return arr ? each_object(arr, p, proc, parse_rlimit, err) : r;
}

static int parse_io_priority(json_t *io, const char *p, struct ward_process *proc,
			     struct ward_err *err)
{
	if (req_str(io, p, "class", &proc->io_priority_class, err) < 0 ||
	    opt_int(io, p, "priority", INT_MIN, INT_MAX, &proc->io_priority, err) < 0)
		return -1;
	return 0;
}

static int parse_scheduler(json_t *sch, const char *p, struct ward_process *proc,
			   struct ward_err *err)
{
	struct ward_scheduler *s = &proc->scheduler;
	if (req_str(sch, p, "policy", &s->policy, err) < 0 ||
	    opt_int(sch, p, "nice", INT32_MIN, INT32_MAX, &s->nice, err) < 0 ||
	    opt_int(sch, p, "priority", INT32_MIN, INT32_MAX, &s->priority, err) < 0 ||
	    opt_strv(sch, p, "flags", 0, &s->flags, err) < 0 ||
	    opt_u64(sch, p, "runtime", &s->runtime, err) < 0 ||
	    opt_u64(sch, p, "deadline", &s->deadline, err) < 0 ||
	    opt_u64(sch, p, "period", &s->period, err) < 0)
		return -1;
	return 0;
}

/* parent is "process" in config.json, "" for a process.json of its own. */
/* Fields of the spec ward does not implement: the spec says an unsupported value must
 * fail rather than be ignored (null and empty values are fine). */
static int refuse_unsupported(json_t *o, const char *parent, const char *const *keys,
			      struct ward_err *err)
{
	char p[FP_MAX];
	for (size_t i = 0; keys[i]; i++) {
		json_t *v = json_object_get(o, keys[i]);
		if (!v || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0))
			continue;
		return bad(err, fp_key(p, parent, keys[i]), "not supported by ward");
	}
	return 0;
}

static int parse_process(json_t *o, const char *parent, struct ward_process *proc,
			 struct ward_err *err)
{
	char p[FP_MAX];
	int r;
	json_t *cs, *args;

	if (refuse_unsupported(o, parent, (const char *const[]){"execCPUAffinity", NULL}, err) <
		0 ||
	    opt_bool(o, parent, "terminal", &proc->terminal, err) < 0)
		return -1;
	cs = opt_section(o, parent, "consoleSize", p, &proc->has_console_size, &r, err);
	if (r < 0)
		return -1;
	if (cs && (req_u32(cs, p, "height", &proc->console_height, err) < 0 ||
		   req_u32(cs, p, "width", &proc->console_width, err) < 0))
		return -1;
	if (parse_user(o, parent, &proc->user, err) < 0)
		return -1;

	args = member(o, "args");
	fp_key(p, parent, "args");
	if (!args || !json_is_array(args) || json_array_size(args) == 0)
		return bad(err, p, "must be a non-empty array");
	if (v_strv(args, p, STRV_NONEMPTY, &proc->args, err) < 0)
		return -1;

	if (opt_strv(o, parent, "env", STRV_ENV, &proc->env, err) < 0 ||
	    req_abs_path(o, parent, "cwd", &proc->cwd, err) < 0 ||
	    process_section(o, parent, "capabilities", &proc->has_capabilities, parse_capabilities,
			    proc, err) < 0 ||
	    parse_rlimits(o, parent, proc, err) < 0 ||
	    opt_bool(o, parent, "noNewPrivileges", &proc->no_new_privileges, err) < 0 ||
	    opt_str(o, parent, "apparmorProfile", &proc->apparmor_profile, err) < 0 ||
	    opt_str(o, parent, "selinuxLabel", &proc->selinux_label, err) < 0)
		return -1;
	r = opt_int(o, parent, "oomScoreAdj", -1000, 1000, &proc->oom_score_adj, err);
	if (r < 0)
		return -1;
	proc->has_oom_score_adj = r > 0;
	if (process_section(o, parent, "ioPriority", &proc->has_io_priority, parse_io_priority,
			    proc, err) < 0 ||
	    process_section(o, parent, "scheduler", &proc->has_scheduler, parse_scheduler, proc,
			    err) < 0)
		return -1;
	return 0;
}

bool ward_mount_is_bind(const struct ward_mount *m)
{
	if (m->type && strcmp(m->type, "bind") == 0)
		return true;
	for (size_t i = 0; m->options && m->options[i]; i++)
		if (strcmp(m->options[i], "bind") == 0 || strcmp(m->options[i], "rbind") == 0)
			return true;
	return false;
}

/* resolve: relative bind sources made absolute against the bundle (not for the pod's spec
 * the policy takes, which resolves them itself and names them as the pod wrote them). */
static int parse_mounts(json_t *o, const char *bundle, bool resolve, struct ward_spec *s,
			struct ward_err *err)
{
	char p[FP_MAX];
	int r;
	json_t *arr = opt_arr(o, "", "mounts", &r, err);
	if (!arr)
		return r;
	s->n_mounts = json_array_size(arr);
	s->mounts = xcalloc(s->n_mounts, sizeof(*s->mounts));
	for (size_t i = 0; i < s->n_mounts; i++) {
		struct ward_mount *m = &s->mounts[i];
		json_t *e = elem_obj(arr, i, fp_idx(p, "mounts", i), err);
		if (!e || req_str(e, p, "destination", &m->destination, err) < 0)
			return -1;
		if (m->destination[0] == '\0') {
			char q[FP_MAX];
			return bad(err, fp_key(q, p, "destination"), "must not be empty");
		}
		if (opt_str(e, p, "type", &m->type, err) < 0 ||
		    opt_str(e, p, "source", &m->source, err) < 0 ||
		    opt_strv(e, p, "options", 0, &m->options, err) < 0 ||
		    parse_idmaps(e, p, "uidMappings", &m->uid_mappings, err) < 0 ||
		    parse_idmaps(e, p, "gidMappings", &m->gid_mappings, err) < 0)
			return -1;
		if (!m->options)
			m->options = xcalloc(1, sizeof(char *));
		if (resolve && m->source && m->source[0] && !is_abs(m->source) &&
		    ward_mount_is_bind(m)) {
			char *abs = path_join(bundle, m->source);
			free(m->source);
			m->source = abs;
		}
	}
	return 0;
}

const char *const ward_hook_names[WARD_HOOK__COUNT] = {
    [WARD_HOOK_PRESTART] = "prestart",
    [WARD_HOOK_CREATE_RUNTIME] = "createRuntime",
    [WARD_HOOK_CREATE_CONTAINER] = "createContainer",
    [WARD_HOOK_START_CONTAINER] = "startContainer",
    [WARD_HOOK_POSTSTART] = "poststart",
    [WARD_HOOK_POSTSTOP] = "poststop",
};

/* pod: the pod's spec before the policy, whose hook paths need not be absolute here: the
 * tenant policy refuses what is not a clean absolute path, naming tenant and rule. */
static int parse_hooks(json_t *o, bool pod, struct ward_spec *s, struct ward_err *err)
{
	char p[FP_MAX], q[FP_MAX];
	int r;
	json_t *hooks = opt_obj(o, "", "hooks", &r, err);
	if (!hooks)
		return r;
	for (int k = 0; k < WARD_HOOK__COUNT; k++) {
		struct ward_hooks *h = &s->hooks[k];
		json_t *arr = opt_arr(hooks, "hooks", ward_hook_names[k], &r, err);
		if (r < 0)
			return -1;
		if (!arr)
			continue;
		fp_key(p, "hooks", ward_hook_names[k]);
		h->n = json_array_size(arr);
		h->v = xcalloc(h->n, sizeof(*h->v));
		for (size_t i = 0; i < h->n; i++) {
			struct ward_hook *hk = &h->v[i];
			json_t *e = elem_obj(arr, i, fp_idx(q, p, i), err);
			if (!e ||
			    (pod ? req_str(e, q, "path", &hk->path, err)
				 : req_abs_path(e, q, "path", &hk->path, err)) < 0 ||
			    opt_strv(e, q, "args", 0, &hk->args, err) < 0 ||
			    opt_strv(e, q, "env", STRV_ENV, &hk->env, err) < 0)
				return -1;
			if (member(e, "timeout")) {
				char tp[FP_MAX];
				json_t *v = member(e, "timeout");
				if (!json_is_integer(v) || json_integer_value(v) <= 0 ||
				    json_integer_value(v) > INT_MAX)
					return bad(err, fp_key(tp, q, "timeout"),
						   "must be an integer greater than 0");
				hk->timeout = (int)json_integer_value(v);
			}
		}
	}
	return 0;
}

static int parse_namespaces(json_t *o, const char *parent, struct ward_linux *l,
			    struct ward_err *err)
{
	char p[FP_MAX], q[FP_MAX], t[FP_MAX];
	int r;
	json_t *arr;
	l->namespaces = opt_vector(o, parent, "namespaces", sizeof(*l->namespaces), p, &arr,
				   &l->n_namespaces, &r, err);
	if (!arr)
		return r;
	for (size_t i = 0; i < l->n_namespaces; i++) {
		struct ward_namespace *ns = &l->namespaces[i];
		cleanup_free char *type = NULL;
		json_t *e = elem_obj(arr, i, fp_idx(q, p, i), err);
		if (!e || req_str(e, q, "type", &type, err) < 0)
			return -1;
		ns->type = ward_ns_type_from_name(type);
		if (!ns->type)
			return bad(err, fp_key(t, q, "type"), "unknown namespace type \"%s\"",
				   type);
		for (size_t j = 0; j < i; j++)
			if (l->namespaces[j].type == ns->type)
				return bad(err, fp_key(t, q, "type"),
					   "duplicate namespace \"%s\" (also %s[%zu])", type, p, j);
		if (opt_str(e, q, "path", &ns->path, err) < 0)
			return -1;
		if (ns->path && !is_abs(ns->path))
			return bad(err, fp_key(t, q, "path"),
				   "must be an absolute path, got \"%s\"", ns->path);
	}
	return 0;
}

static int parse_time_offsets(json_t *o, const char *parent, struct ward_linux *l,
			      struct ward_err *err)
{
	char p[FP_MAX], q[FP_MAX];
	const char *clock;
	json_t *v;
	int r;
	json_t *obj = opt_section(o, parent, "timeOffsets", p, NULL, &r, err);
	if (!obj)
		return r;
	json_object_foreach(obj, clock, v)
	{
		struct ward_time_offset *to;
		fp_key(q, p, clock);
		if (strcmp(clock, "monotonic") == 0)
			to = &l->time_monotonic;
		else if (strcmp(clock, "boottime") == 0)
			to = &l->time_boottime;
		else
			return bad(err, q, "unknown clock (monotonic or boottime)");
		if (json_is_null(v))
			continue;
		if (!json_is_object(v))
			return bad(err, q, "must be an object");
		if (opt_i64(v, q, "secs", INT64_MIN, INT64_MAX, &to->secs, err) < 0)
			return -1;
		if (opt_u32(v, q, "nanosecs", &to->nanosecs, err) < 0)
			return -1;
		if (to->nanosecs >= 1000000000u) {
			char n[FP_MAX];
			return bad(err, fp_key(n, q, "nanosecs"), "must be less than 1000000000");
		}
		to->set = true;
	}
	return 0;
}

/* linux.devices[i] (q its path), read by each_object. */
static int parse_device(json_t *e, const char *q, size_t i, void *ctx, struct ward_err *err)
{
	struct ward_linux *l = ctx;
	struct ward_device *d = &l->devices[i];
	cleanup_free char *type = NULL;
	char t[FP_MAX];
	uint32_t num = 0;
	int r;

	if (req_str(e, q, "type", &type, err) < 0)
		return -1;
	if (strlen(type) != 1 || !strchr("cbup", type[0]))
		return bad(err, fp_key(t, q, "type"), "unknown device type \"%s\" (c, b, u or p)",
			   type);
	d->type = type[0];
	if (req_abs_path(e, q, "path", &d->path, err) < 0)
		return -1;
	/* major/minor: required except for FIFOs; makedev() takes 32-bit values. */
	if ((r = opt_u32(e, q, "major", &num, err)) < 0)
		return -1;
	if (r == 0 && d->type != 'p')
		return missing(err, q, "major");
	d->major = num;
	num = 0;
	if ((r = opt_u32(e, q, "minor", &num, err)) < 0)
		return -1;
	if (r == 0 && d->type != 'p')
		return missing(err, q, "minor");
	d->minor = num;
	if (opt_u32_has(e, q, "fileMode", &d->file_mode, &d->has_file_mode, err) < 0 ||
	    opt_u32_has(e, q, "uid", &d->uid, &d->has_uid, err) < 0 ||
	    opt_u32_has(e, q, "gid", &d->gid, &d->has_gid, err) < 0)
		return -1;
	return 0;
}

static int parse_devices(json_t *o, const char *parent, struct ward_linux *l, struct ward_err *err)
{
	char p[FP_MAX];
	int r;
	json_t *arr;
	l->devices =
	    opt_vector(o, parent, "devices", sizeof(*l->devices), p, &arr, &l->n_devices, &r, err);
	return arr ? each_object(arr, p, l, parse_device, err) : r;
}

/* linux.seccomp.syscalls[i].args[k] (q its path), read by each_object. */
static int parse_seccomp_arg(json_t *ae, const char *q, size_t k, void *ctx, struct ward_err *err)
{
	struct ward_seccomp_arg *a = &((struct ward_seccomp_rule *)ctx)->args[k];
	int64_t x;

	/* A syscall has six arguments; libseccomp rejects index >= 6 anyway. */
	if (!member(ae, "index"))
		return missing(err, q, "index");
	if (opt_i64(ae, q, "index", 0, 5, &x, err) < 0)
		return -1;
	a->index = (unsigned)x;
	if (req_u64(ae, q, "value", &a->value, err) < 0 ||
	    opt_u64(ae, q, "valueTwo", &a->value_two, err) < 0 ||
	    req_str(ae, q, "op", &a->op, err) < 0)
		return -1;
	return 0;
}

/* linux.seccomp.syscalls[i] (path), read by each_object. */
static int parse_seccomp_rule(json_t *e, const char *path, size_t i, void *ctx,
			      struct ward_err *err)
{
	struct ward_seccomp_rule *rule = &((struct ward_seccomp *)ctx)->syscalls[i];
	char p[FP_MAX];
	int r;
	json_t *args;

	if (!member(e, "names"))
		return missing(err, path, "names");
	if (opt_strv(e, path, "names", STRV_NONEMPTY, &rule->names, err) < 0 ||
	    req_str(e, path, "action", &rule->action, err) < 0)
		return -1;
	if (opt_u32_has(e, path, "errnoRet", &rule->errno_ret, &rule->has_errno_ret, err) < 0)
		return -1;
	rule->args =
	    opt_vector(e, path, "args", sizeof(*rule->args), p, &args, &rule->n_args, &r, err);
	return args ? each_object(args, p, rule, parse_seccomp_arg, err) : r;
}

static int parse_seccomp(json_t *o, const char *parent, struct ward_linux *l, struct ward_err *err)
{
	char p[FP_MAX], q[FP_MAX];
	int r;
	struct ward_seccomp *sc;
	json_t *sys, *obj = opt_section(o, parent, "seccomp", p, NULL, &r, err);
	if (!obj)
		return r;
	sc = l->seccomp = xcalloc(1, sizeof(*sc));
	if (req_str(obj, p, "defaultAction", &sc->default_action, err) < 0)
		return -1;
	if (opt_u32_has(obj, p, "defaultErrnoRet", &sc->default_errno_ret,
			&sc->has_default_errno_ret, err) < 0)
		return -1;
	if (opt_strv(obj, p, "architectures", 0, &sc->architectures, err) < 0 ||
	    opt_strv(obj, p, "flags", 0, &sc->flags, err) < 0 ||
	    opt_str(obj, p, "listenerPath", &sc->listener_path, err) < 0 ||
	    opt_str(obj, p, "listenerMetadata", &sc->listener_metadata, err) < 0)
		return -1;
	if (sc->listener_path && !is_abs(sc->listener_path))
		return bad(err, fp_key(q, p, "listenerPath"),
			   "must be an absolute path, got \"%s\"", sc->listener_path);
	sc->syscalls = opt_vector(obj, p, "syscalls", sizeof(*sc->syscalls), p, &sys,
				  &sc->n_syscalls, &r, err);
	return sys ? each_object(sys, p, sc, parse_seccomp_rule, err) : r;
}

static int parse_personality(json_t *o, const char *parent, struct ward_linux *l,
			     struct ward_err *err)
{
	char p[FP_MAX];
	int r;
	json_t *obj = opt_section(o, parent, "personality", p, NULL, &r, err);
	if (!obj)
		return r;
	l->personality = xcalloc(1, sizeof(*l->personality));
	if (req_str(obj, p, "domain", &l->personality->domain, err) < 0 ||
	    opt_strv(obj, p, "flags", 0, &l->personality->flags, err) < 0)
		return -1;
	return 0;
}

static int parse_linux(json_t *o, struct ward_linux *l, struct ward_err *err)
{
	static const char *const unsupported[] = {"intelRdt", "netDevices", "memoryPolicy", NULL};
	const char *p = "linux";
	int r;
	json_t *res;
	json_t *lx = opt_obj(o, "", "linux", &r, err);
	if (!lx)
		return r;
	if (refuse_unsupported(lx, p, unsupported, err) < 0)
		return -1;
	if (parse_namespaces(lx, p, l, err) < 0 ||
	    parse_idmaps(lx, p, "uidMappings", &l->uid_mappings, err) < 0 ||
	    parse_idmaps(lx, p, "gidMappings", &l->gid_mappings, err) < 0 ||
	    parse_time_offsets(lx, p, l, err) < 0 || parse_devices(lx, p, l, err) < 0 ||
	    opt_str(lx, p, "cgroupsPath", &l->cgroups_path, err) < 0)
		return -1;
	res = opt_obj(lx, p, "resources", &r, err);
	if (r < 0)
		return -1;
	if (res) {
		if (ward_resources_from_json(res, &l->resources, err) < 0)
			return -1;
		l->has_resources = true;
	}
	if (str_map(lx, p, "sysctl", &l->sysctl_keys, &l->sysctl_values, err) < 0 ||
	    parse_seccomp(lx, p, l, err) < 0 ||
	    opt_str(lx, p, "rootfsPropagation", &l->rootfs_propagation, err) < 0 ||
	    opt_strv(lx, p, "maskedPaths", 0, &l->masked_paths, err) < 0 ||
	    opt_strv(lx, p, "readonlyPaths", 0, &l->readonly_paths, err) < 0 ||
	    opt_str(lx, p, "mountLabel", &l->mount_label, err) < 0 ||
	    parse_personality(lx, p, l, err) < 0)
		return -1;
	return 0;
}

/* Cross-field checks that need the whole document. */
int ward_spec_check(const struct ward_spec *s, struct ward_err *err)
{
	const struct ward_namespace *user = ward_spec_ns(s, CLONE_NEWUSER);
	const struct ward_namespace *uts = ward_spec_ns(s, CLONE_NEWUTS);
	const struct ward_namespace *tns = ward_spec_ns(s, CLONE_NEWTIME);
	const struct ward_linux *l = &s->linux;

	if (!user && l->uid_mappings.n > 0)
		return ward_fail(err, 0, "linux.uidMappings: requires a user namespace");
	if (!user && l->gid_mappings.n > 0)
		return ward_fail(err, 0, "linux.gidMappings: requires a user namespace");
	if (user && !user->path) {
		/* A new user namespace without maps runs everything as the overflow id. */
		if (l->uid_mappings.n == 0)
			return ward_fail(err, 0,
					 "linux.uidMappings: required for a new user namespace");
		if (l->gid_mappings.n == 0)
			return ward_fail(err, 0,
					 "linux.gidMappings: required for a new user namespace");
	}
	if (l->time_monotonic.set || l->time_boottime.set) {
		if (!tns)
			return ward_fail(err, 0, "linux.timeOffsets: requires a time namespace");
		if (tns->path)
			return ward_fail(err, 0,
					 "linux.timeOffsets: cannot be set when joining an "
					 "existing time namespace");
	}
	/* Without a uts entry the name would be the host's. A joined one (renaming its other
	 * members too) is the tenant's call: container.c refuses it for untrusted tenants. */
	if (s->hostname && s->hostname[0] && !uts)
		return ward_fail(err, 0, "hostname: requires a uts namespace");
	if (s->domainname && s->domainname[0] && !uts)
		return ward_fail(err, 0, "domainname: requires a uts namespace");
	return 0;
}

/* ward's own record (own.h): the "ward" object, or an older ward's annotations. The pod's
 * own seccomp filter, kept by the tenant policy beside the tenant's, is parsed here. */
static int parse_own(json_t *o, struct ward_spec *s, struct ward_err *err)
{
	const char *text = NULL, *what = WARD_OWN_KEY ".podSeccomp";
	struct ward_linux tmp = {0};
	json_t *wrap, *f = NULL;
	int rc;

	if (ward_own_from_json(json_object_get(o, WARD_OWN_KEY), &s->own, &f, err) < 0)
		return -1;
	if (!s->own.present) {
		ward_own_from_annotations(&s->own, s->annotation_keys, s->annotation_values);
		text = ward_spec_annotation(s, WARD_ANN_POD_SECCOMP);
		what = "annotations." WARD_ANN_POD_SECCOMP;
		if (text && !(f = decode_object(text, strlen(text), err)))
			return ward_wrap(err, "%s", what);
	} else if (f) {
		json_incref(f);
	}
	if (!f)
		return 0;
	wrap = json_pack("{s:o}", "seccomp", f);
	rc = parse_seccomp(wrap, what, &tmp, err);
	json_decref(wrap);
	s->linux.seccomp_pod = tmp.seccomp;
	return rc;
}

/* pod: the pod's spec as the tenant policy takes it (ward_spec_pod_from_json): no
 * cross-field checks, relative paths as written, no record of ward's (the policy writes
 * it; an older ward's annotations are the pod's there). */
static int parse_spec(json_t *o, const char *bundle, bool pod, struct ward_spec *s,
		      struct ward_err *err)
{
	int r;
	json_t *root, *proc;

	if (req_str(o, "", "ociVersion", &s->oci_version, err) < 0)
		return -1;
	root = opt_obj(o, "", "root", &r, err);
	if (r < 0)
		return -1;
	if (!root)
		return missing(err, "", "root");
	if (req_str(root, "root", "path", &s->root_path, err) < 0 ||
	    opt_bool(root, "root", "readonly", &s->root_readonly, err) < 0)
		return -1;
	if (s->root_path[0] == '\0')
		return ward_fail(err, 0, "root.path: must not be empty");
	if (!pod && !is_abs(s->root_path)) {
		char *abs = path_join(bundle, s->root_path);
		free(s->root_path);
		s->root_path = abs;
	}
	if (parse_mounts(o, bundle, !pod, s, err) < 0)
		return -1;
	proc = opt_obj(o, "", "process", &r, err);
	if (r < 0)
		return -1;
	if (proc) {
		s->process = xcalloc(1, sizeof(*s->process));
		if (parse_process(proc, "process", s->process, err) < 0)
			return -1;
	}
	if (opt_str(o, "", "hostname", &s->hostname, err) < 0 ||
	    opt_str(o, "", "domainname", &s->domainname, err) < 0 ||
	    parse_hooks(o, pod, s, err) < 0 ||
	    str_map(o, "", "annotations", &s->annotation_keys, &s->annotation_values, err) < 0 ||
	    parse_linux(o, &s->linux, err) < 0 || (!pod && parse_own(o, s, err) < 0))
		return -1;
	return pod ? 0 : ward_spec_check(s, err);
}

/* What the decoders above read, field by field (spec.h). A decoder that reads a new field
 * adds it here, and the tenant policy's table must then decide it. */
const char *const ward_spec_fields[] = {
    /* parse_spec */
    "ociVersion", "root", "root.path", "root.readonly", "hostname", "domainname", "annotations",
    "annotations.*", "annotations." WARD_ANN_POD_SECCOMP,
    /* parse_own (own.h): ward's own record */
    WARD_OWN_KEY, WARD_OWN_KEY ".podSeccomp", WARD_OWN_KEY ".rootfsIdmap", WARD_OWN_KEY ".ids",
    WARD_OWN_KEY ".gpus", WARD_OWN_KEY ".unenforced",
    /* parse_mounts, parse_idmaps */
    "mounts", "mounts[].destination", "mounts[].type", "mounts[].source", "mounts[].options",
    "mounts[].uidMappings", "mounts[].uidMappings[].containerID", "mounts[].uidMappings[].hostID",
    "mounts[].uidMappings[].size", "mounts[].gidMappings", "mounts[].gidMappings[].containerID",
    "mounts[].gidMappings[].hostID", "mounts[].gidMappings[].size",
    /* parse_process, parse_user, parse_capabilities, parse_rlimits, parse_io_priority,
     * parse_scheduler */
    "process", "process.execCPUAffinity", "process.terminal", "process.consoleSize",
    "process.consoleSize.height", "process.consoleSize.width", "process.user", "process.user.uid",
    "process.user.gid", "process.user.umask", "process.user.additionalGids", "process.args",
    "process.env", "process.cwd", "process.capabilities", "process.capabilities.bounding",
    "process.capabilities.effective", "process.capabilities.inheritable",
    "process.capabilities.permitted", "process.capabilities.ambient", "process.rlimits",
    "process.rlimits[].type", "process.rlimits[].hard", "process.rlimits[].soft",
    "process.noNewPrivileges", "process.apparmorProfile", "process.selinuxLabel",
    "process.oomScoreAdj", "process.ioPriority", "process.ioPriority.class",
    "process.ioPriority.priority", "process.scheduler", "process.scheduler.policy",
    "process.scheduler.nice", "process.scheduler.priority", "process.scheduler.flags",
    "process.scheduler.runtime", "process.scheduler.deadline", "process.scheduler.period",
    /* parse_hooks */
    "hooks", "hooks.prestart", "hooks.prestart[].path", "hooks.prestart[].args",
    "hooks.prestart[].env", "hooks.prestart[].timeout", "hooks.createRuntime",
    "hooks.createRuntime[].path", "hooks.createRuntime[].args", "hooks.createRuntime[].env",
    "hooks.createRuntime[].timeout", "hooks.createContainer", "hooks.createContainer[].path",
    "hooks.createContainer[].args", "hooks.createContainer[].env",
    "hooks.createContainer[].timeout", "hooks.startContainer", "hooks.startContainer[].path",
    "hooks.startContainer[].args", "hooks.startContainer[].env", "hooks.startContainer[].timeout",
    "hooks.poststart", "hooks.poststart[].path", "hooks.poststart[].args", "hooks.poststart[].env",
    "hooks.poststart[].timeout", "hooks.poststop", "hooks.poststop[].path", "hooks.poststop[].args",
    "hooks.poststop[].env", "hooks.poststop[].timeout",
    /* parse_linux (linux.resources is typed by resources.c, its fields listed there) */
    "linux", "linux.intelRdt", "linux.netDevices", "linux.memoryPolicy", "linux.namespaces",
    "linux.namespaces[].type", "linux.namespaces[].path", "linux.uidMappings",
    "linux.uidMappings[].containerID", "linux.uidMappings[].hostID", "linux.uidMappings[].size",
    "linux.gidMappings", "linux.gidMappings[].containerID", "linux.gidMappings[].hostID",
    "linux.gidMappings[].size", "linux.timeOffsets", "linux.timeOffsets.monotonic",
    "linux.timeOffsets.monotonic.secs", "linux.timeOffsets.monotonic.nanosecs",
    "linux.timeOffsets.boottime", "linux.timeOffsets.boottime.secs",
    "linux.timeOffsets.boottime.nanosecs", "linux.devices", "linux.devices[].type",
    "linux.devices[].path", "linux.devices[].major", "linux.devices[].minor",
    "linux.devices[].fileMode", "linux.devices[].uid", "linux.devices[].gid", "linux.cgroupsPath",
    "linux.resources", "linux.sysctl", "linux.sysctl.*", "linux.rootfsPropagation",
    "linux.maskedPaths", "linux.readonlyPaths", "linux.mountLabel",
    /* parse_seccomp, parse_seccomp_rule */
    "linux.seccomp", "linux.seccomp.defaultAction", "linux.seccomp.defaultErrnoRet",
    "linux.seccomp.architectures", "linux.seccomp.flags", "linux.seccomp.listenerPath",
    "linux.seccomp.listenerMetadata", "linux.seccomp.syscalls", "linux.seccomp.syscalls[].names",
    "linux.seccomp.syscalls[].action", "linux.seccomp.syscalls[].errnoRet",
    "linux.seccomp.syscalls[].args", "linux.seccomp.syscalls[].args[].index",
    "linux.seccomp.syscalls[].args[].value", "linux.seccomp.syscalls[].args[].valueTwo",
    "linux.seccomp.syscalls[].args[].op",
    /* parse_personality */
    "linux.personality", "linux.personality.domain", "linux.personality.flags", NULL};

/* ---- entry points ----------------------------------------------------------------- */

char *ward_spec_read_at(int dirfd, const char *name, size_t *len, struct ward_err *err)
{
	/* O_NONBLOCK: a FIFO in its place must not hang the runtime (refused below). */
	cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	size_t n = 0;
	struct stat st;
	char *buf;

	if (fd < 0) {
		ward_fail_errno(err, "open %s", name);
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		ward_fail_errno(err, "%s", name);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		ward_fail(err, 0, "%s: not a regular file", name);
		return NULL;
	}
	if ((uintmax_t)st.st_size > WARD_SPEC_MAX_BYTES) {
		ward_fail(err, 0, "%s: %jd bytes, over the %zu MiB cap of a spec", name,
			  (intmax_t)st.st_size, WARD_SPEC_MAX_BYTES >> 20);
		return NULL;
	}
	/* What fstat said, plus one byte to see a file that grew: never more than the cap. */
	buf = xmalloc((size_t)st.st_size + 2);
	for (;;) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ward_fail_errno(err, "read %s", name);
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > (size_t)st.st_size) {
			ward_fail(err, 0, "%s: changed while it was read", name);
			free(buf);
			return NULL;
		}
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int ward_spec_check_annotations(const void *annotations, struct ward_err *err)
{
	json_t *ann = (json_t *)annotations, *v;
	size_t total = 0;
	const char *k;

	if (!json_is_object(ann))
		return 0;
	json_object_foreach(ann, k, v)
	{
		size_t len = json_is_string(v) ? json_string_length(v) : 0;
		if (len > WARD_ANN_VALUE_MAX)
			return ward_fail(
			    err, 0,
			    "config.json: annotations.%.200s: %zu bytes, over the %zu KiB "
			    "cap of one annotation",
			    k, len, WARD_ANN_VALUE_MAX >> 10);
		total += strlen(k) + len;
	}
	if (total > WARD_ANN_TOTAL_MAX)
		return ward_fail(err, 0,
				 "config.json: annotations: %zu bytes of keys and values, over the "
				 "%zu KiB cap of all annotations",
				 total, WARD_ANN_TOTAL_MAX >> 10);
	return 0;
}

static struct ward_spec *from_json(const void *root, const char *bundle, bool pod,
				   struct ward_err *err)
{
	json_t *o = (json_t *)root;
	struct ward_spec *s;

	if (!is_abs(bundle)) {
		ward_fail(err, EINVAL, "config.json: bundle \"%s\" is not an absolute path",
			  bundle ? bundle : "(null)");
		return NULL;
	}
	if (!json_is_object(o)) {
		ward_fail(err, 0, "config.json: must be a JSON object");
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	if (parse_spec(o, bundle, pod, s, err) < 0) {
		ward_spec_free(s);
		ward_wrap(err, "config.json");
		return NULL;
	}
	return s;
}

struct ward_spec *ward_spec_from_json(const void *root, const char *bundle, struct ward_err *err)
{
	return from_json(root, bundle, false, err);
}

struct ward_spec *ward_spec_pod_from_json(const void *root, const char *bundle,
					  struct ward_err *err)
{
	return from_json(root, bundle, true, err);
}

struct ward_seccomp *ward_seccomp_parse(const char *text, const char *what, struct ward_err *err)
{
	struct ward_linux tmp = {0};
	json_t *f = decode_object(text, strlen(text), err), *wrap;
	int rc;

	if (!f) {
		ward_wrap(err, "%s", what);
		return NULL;
	}
	wrap = json_pack("{s:o}", "seccomp", f);
	rc = parse_seccomp(wrap, what, &tmp, err);
	json_decref(wrap);
	if (rc < 0) {
		seccomp_free(tmp.seccomp);
		return NULL;
	}
	return tmp.seccomp;
}

void ward_seccomp_free(struct ward_seccomp *sc)
{
	seccomp_free(sc);
}

struct ward_spec *ward_spec_parse(const char *json, size_t len, const char *bundle,
				  struct ward_err *err)
{
	struct ward_spec *s;
	json_t *o;

	if (!is_abs(bundle)) {
		ward_fail(err, EINVAL, "config.json: bundle \"%s\" is not an absolute path",
			  bundle ? bundle : "(null)");
		return NULL;
	}
	o = decode_object(json, len, err);
	if (!o) {
		ward_wrap(err, "config.json");
		return NULL;
	}
	s = ward_spec_from_json(o, bundle, err);
	json_decref(o);
	return s;
}

char *ward_spec_read_bundle(int bundle_fd, const char *bundle, size_t *len, struct ward_err *err)
{
	char *text;

	if (bundle_fd < 0) {
		ward_fail_errno(err, "open bundle %s", bundle);
		return NULL;
	}
	text = ward_spec_read_at(bundle_fd, "config.json", len, err);
	if (!text)
		ward_wrap(err, "bundle %s", bundle);
	return text;
}

struct ward_process *ward_process_parse(const char *json, size_t len, const char *what,
					struct ward_err *err)
{
	struct ward_process *p;
	json_t *o;
	size_t n;

	if (!what || !*what)
		what = "process.json";
	n = strlen(what); /* accept "process.json" and "process.json: " alike */
	while (n > 0 && (what[n - 1] == ' ' || what[n - 1] == ':'))
		n--;
	o = decode_object(json, len, err);
	if (!o) {
		ward_wrap(err, "%.*s", (int)n, what);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	if (parse_process(o, "", p, err) < 0) {
		json_decref(o);
		ward_process_free(p);
		ward_wrap(err, "%.*s", (int)n, what);
		return NULL;
	}
	json_decref(o);
	return p;
}

/* ---- default config.json ------------------------------------------------------------- */

static json_t *strv_json(const char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *mount_json(const char *dest, const char *type, const char *src,
			  const char *const *opts)
{
	json_t *m = json_pack("{s:s, s:s, s:s}", "destination", dest, "type", type, "source", src);
	if (opts)
		json_object_set_new(m, "options", strv_json(opts));
	return m;
}

static json_t *idmap_json(uint32_t host_id)
{
	return json_pack("[{s:i, s:I, s:i}]", "containerID", 0, "hostID", (json_int_t)host_id,
			 "size", 1);
}

/* What `runc spec` writes (runc 1.2+: no ambient/inheritable capabilities, cgroup
 * namespace), with the masked and read-only paths given. */
char *ward_spec_default_json(bool rootless, const char *const *masked, const char *const *readonly)
{
	static const char *const caps[] = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE",
					   NULL};
	static const char *const env[] = {
	    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm",
	    NULL};
	static const char *const dev_opts[] = {"nosuid", "strictatime", "mode=755", "size=65536k",
					       NULL};
	static const char *const pts_opts[] = {
	    "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL};
	static const char *const shm_opts[] = {"nosuid",    "noexec",	   "nodev",
					       "mode=1777", "size=65536k", NULL};
	static const char *const mq_opts[] = {"nosuid", "noexec", "nodev", NULL};
	static const char *const sys_opts[] = {"nosuid", "noexec", "nodev", "ro", NULL};
	static const char *const sys_rbind_opts[] = {"rbind", "nosuid", "noexec",
						     "nodev", "ro",	NULL};
	static const char *const cg_opts[] = {"nosuid", "noexec", "nodev", "relatime", "ro", NULL};
	static const char *const ns_root[] = {"pid",   "network", "ipc", "uts",
					      "mount", "cgroup",  NULL};
	static const char *const ns_rootless[] = {"pid",    "ipc",  "uts", "mount",
						  "cgroup", "user", NULL};
	const char *const *ns = rootless ? ns_rootless : ns_root;
	json_t *doc, *process, *mounts, *lx, *nss;
	char *text, *r;

	process = json_pack("{s:b, s:{s:i, s:i}, s:o, s:o, s:s, s:{s:o, s:o, s:o}, "
			    "s:[{s:s, s:i, s:i}], s:b}",
			    "terminal", 1, "user", "uid", 0, "gid", 0, "args",
			    strv_json((const char *const[]){"sh", NULL}), "env", strv_json(env),
			    "cwd", "/", "capabilities", "bounding", strv_json(caps), "effective",
			    strv_json(caps), "permitted", strv_json(caps), "rlimits", "type",
			    "RLIMIT_NOFILE", "hard", 1024, "soft", 1024, "noNewPrivileges", 1);

	mounts = json_array();
	json_array_append_new(mounts, mount_json("/proc", "proc", "proc", NULL));
	json_array_append_new(mounts, mount_json("/dev", "tmpfs", "tmpfs", dev_opts));
	if (rootless) {
		/* no gid=5: the group may not be mapped */
		static const char *const pts_rootless[] = {
		    "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL};
		json_array_append_new(mounts,
				      mount_json("/dev/pts", "devpts", "devpts", pts_rootless));
	} else {
		json_array_append_new(mounts, mount_json("/dev/pts", "devpts", "devpts", pts_opts));
	}
	json_array_append_new(mounts, mount_json("/dev/shm", "tmpfs", "shm", shm_opts));
	json_array_append_new(mounts, mount_json("/dev/mqueue", "mqueue", "mqueue", mq_opts));
	if (rootless) /* sysfs cannot be mounted without owning the network namespace */
		json_array_append_new(mounts, mount_json("/sys", "none", "/sys", sys_rbind_opts));
	else
		json_array_append_new(mounts, mount_json("/sys", "sysfs", "sysfs", sys_opts));
	json_array_append_new(mounts, mount_json("/sys/fs/cgroup", "cgroup", "cgroup", cg_opts));

	lx = json_object();
	if (rootless) {
		json_object_set_new(lx, "uidMappings", idmap_json((uint32_t)geteuid()));
		json_object_set_new(lx, "gidMappings", idmap_json((uint32_t)getegid()));
	} else {
		json_object_set_new(
		    lx, "resources",
		    json_pack("{s:[{s:b, s:s}]}", "devices", "allow", 0, "access", "rwm"));
	}
	nss = json_array();
	for (size_t i = 0; ns[i]; i++)
		json_array_append_new(nss, json_pack("{s:s}", "type", ns[i]));
	json_object_set_new(lx, "namespaces", nss);
	json_object_set_new(lx, "maskedPaths", strv_json(masked));
	json_object_set_new(lx, "readonlyPaths", strv_json(readonly));

	doc = json_pack("{s:s, s:o, s:{s:s, s:b}, s:s, s:o, s:o}", "ociVersion", WARD_OCI_VERSION,
			"process", process, "root", "path", "rootfs", "readonly", 1, "hostname",
			"ward", "mounts", mounts, "linux", lx);
	if (!doc)
		abort(); /* a bad format string or OOM: a bug, not a runtime condition */
	text = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	if (!text)
		abort();
	r = xasprintf("%s\n", text);
	free(text);
	return r;
}
