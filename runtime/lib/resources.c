/* linux.resources -> struct ward_resources. See resources.h. The checks and their order
 * are those the cgroup v2 conversion made on the JSON (cgroup_res.c), so the first error a
 * config reports is the same; but unified is read as a string map first, so there a
 * value that is not a string is reported before a bad key of an earlier member. */
#include "resources.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

#define P "linux.resources"

const char *const ward_res_throttle_names[WARD_RES_N_THROTTLE] = {
    "throttleReadBpsDevice", "throttleWriteBpsDevice", "throttleReadIOPSDevice",
    "throttleWriteIOPSDevice"};

/* Typed getters: JSON null or a missing key is unset; errors name "path.key". */

static int get_obj(json_t *o, const char *key, const char *path, json_t **out, struct ward_err *err)
{
	int r;
	*out = ward_json_opt_obj(o, path, key, &r, err);
	return r;
}

/* A section of linux.resources ("memory"), NULL when absent (*r 0) or bad (*r -1); *has
 * (has not NULL) says whether it is given. */
static json_t *get_section(json_t *res, const char *key, bool *has, int *r, struct ward_err *err)
{
	json_t *o;
	*r = get_obj(res, key, P, &o, err);
	if (has)
		*has = *r >= 0 && o;
	return *r < 0 ? NULL : o;
}

static int get_arr(json_t *o, const char *key, const char *path, json_t **out, struct ward_err *err)
{
	int r;
	*out = ward_json_opt_arr(o, path, key, &r, err);
	return r;
}

/* A zeroed vector for the elements of array v or the members of object v, and a zero one
 * after them (NULL: no v). */
static void *vec_for(json_t *v, size_t size)
{
	size_t n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
	return v ? xcalloc(n + 1, size) : NULL;
}

static int get_i64(json_t *o, const char *key, const char *path, struct ward_res_i64 *out,
		   struct ward_err *err)
{
	int r;
	out->v = 0;
	r = ward_json_opt_i64(o, path, key, INT64_MIN, INT64_MAX, &out->v, err);
	out->set = r > 0;
	return r < 0 ? -1 : 0;
}

/* Unsigned up to max. */
static int get_u64(json_t *o, const char *key, const char *path, uint64_t max,
		   struct ward_res_u64 *out, struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX];
	json_t *v = ward_json_member(o, key);

	out->set = false;
	out->v = 0;
	if (!v)
		return 0;
	if (ward_json_u64(v, ward_json_path_key(p, path, key), max, &out->v, err) < 0)
		return -1;
	out->set = true;
	return 0;
}

static int get_bool(json_t *o, const char *key, const char *path, struct ward_res_bool *out,
		    struct ward_err *err)
{
	int r;
	out->v = false;
	r = ward_json_opt_bool(o, path, key, &out->v, err);
	out->set = r > 0;
	return r < 0 ? -1 : 0;
}

static int get_str(json_t *o, const char *key, const char *path, char **out, struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX];
	json_t *v = ward_json_member(o, key);
	const char *s = NULL;

	*out = NULL;
	if (!v)
		return 0;
	if (ward_json_str_ref(v, ward_json_path_key(p, path, key), &s, err) < 0)
		return -1;
	*out = s ? xstrdup(s) : NULL;
	return 0;
}

/* A value ends up on one line of a cgroup file: no control characters. */
static int plain_value(const char *s, const char *path, struct ward_err *err)
{
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return ward_fail(err, 0, "%s: \"%s\": control characters are not allowed",
					 path, s);
	return 0;
}

/* The ranges of the values `ward update`'s flags set too (ward_resources_check). update:
 * memory.swap without memory.limit is let through (update takes the limit in force). */
static int check_memory(const struct ward_res_memory *m, bool update, struct ward_err *err)
{
	const char *p = P ".memory";
	int64_t limit = m->limit.v, reservation = m->reservation.v, swap = m->swap.v;

	if (limit < -1)
		return ward_fail(err, 0, "%s.limit: %" PRId64 " is not a limit (-1 or > 0)", p,
				 limit);
	if (reservation < -1)
		return ward_fail(err, 0, "%s.reservation: %" PRId64 " is not a size (-1 or > 0)", p,
				 reservation);
	if (swap < -1)
		return ward_fail(err, 0, "%s.swap: %" PRId64 " is not a limit (-1 or > 0)", p,
				 swap);
	if (swap > 0 && !(limit == -1 && swap == 0) &&
	    !(update && (!m->limit.set || limit == 0))) { /* update: 0 is the limit in force */
		if (limit <= 0)
			return ward_fail(
			    err, 0, "%s.swap: unable to set a swap limit without a memory limit",
			    p);
		if (swap < limit)
			return ward_fail(err, 0,
					 "%s.swap: %" PRId64 " is below memory.limit %" PRId64
					 " (swap is memory+swap, as in cgroup v1)",
					 p, swap, limit);
	}
	return 0;
}

static int check_cpu(const struct ward_res_cpu *c, struct ward_err *err)
{
	const char *p = P ".cpu";
	if (c->quota.v < -1)
		return ward_fail(err, 0, "%s.quota: %" PRId64 " is not a quota (-1 or > 0)", p,
				 c->quota.v);
	if (c->idle.set && c->idle.v != 0 && c->idle.v != 1)
		return ward_fail(err, 0, "%s.idle: %" PRId64 " is not 0 or 1", p, c->idle.v);
	if (c->cpus && *c->cpus && plain_value(c->cpus, P ".cpu.cpus", err) < 0)
		return -1;
	if (c->mems && *c->mems && plain_value(c->mems, P ".cpu.mems", err) < 0)
		return -1;
	return 0;
}

static bool weight_ok(uint64_t w)
{
	return w >= 10 && w <= 1000;
}

static int check_io_weight(const struct ward_res_block_io *b, struct ward_err *err)
{
	const char *p = P ".blockIO";
	if (b->weight.v != 0 && !weight_ok(b->weight.v))
		return ward_fail(err, 0, "%s.weight: %" PRIu64 " is not in 10..1000", p,
				 b->weight.v);
	return 0;
}

int ward_resources_check(const struct ward_resources *r, struct ward_err *err)
{
	return check_memory(&r->memory, false, err) < 0 || check_cpu(&r->cpu, err) < 0 ||
		       check_io_weight(&r->block_io, err) < 0
		   ? -1
		   : 0;
}

static int parse_memory(json_t *res, struct ward_resources *r, bool update, struct ward_err *err)
{
	struct ward_res_memory *m = &r->memory;
	const char *p = P ".memory";
	int rc;
	json_t *o = get_section(res, "memory", &r->has_memory, &rc, err);

	if (!o)
		return rc;
	if (get_i64(o, "limit", p, &m->limit, err) < 0 ||
	    get_i64(o, "reservation", p, &m->reservation, err) < 0 ||
	    get_i64(o, "swap", p, &m->swap, err) < 0)
		return -1;
	if (check_memory(m, update, err) < 0)
		return -1;
	if (get_bool(o, "checkBeforeUpdate", p, &m->check_before_update, err) < 0 ||
	    get_i64(o, "kernel", p, &m->kernel, err) < 0 ||
	    get_i64(o, "kernelTCP", p, &m->kernel_tcp, err) < 0 ||
	    get_u64(o, "swappiness", p, 100, &m->swappiness, err) < 0 ||
	    get_bool(o, "disableOOMKiller", p, &m->disable_oom_killer, err) < 0 ||
	    get_bool(o, "useHierarchy", p, &m->use_hierarchy, err) < 0)
		return -1;
	return 0;
}

static int parse_cpu(json_t *res, struct ward_resources *r, struct ward_err *err)
{
	const char *p = P ".cpu";
	struct ward_res_cpu *c = &r->cpu;
	int rc;
	json_t *o = get_section(res, "cpu", &r->has_cpu, &rc, err);

	if (!o)
		return rc;
	if (get_u64(o, "shares", p, UINT64_MAX >> 1, &c->shares, err) < 0 ||
	    get_i64(o, "quota", p, &c->quota, err) < 0 ||
	    get_u64(o, "period", p, UINT64_MAX >> 1, &c->period, err) < 0 ||
	    get_u64(o, "burst", p, UINT64_MAX >> 1, &c->burst, err) < 0 ||
	    get_i64(o, "idle", p, &c->idle, err) < 0 || get_str(o, "cpus", p, &c->cpus, err) < 0 ||
	    get_str(o, "mems", p, &c->mems, err) < 0)
		return -1;
	if (check_cpu(c, err) < 0)
		return -1;
	if (get_i64(o, "realtimeRuntime", p, &c->realtime_runtime, err) < 0 ||
	    get_u64(o, "realtimePeriod", p, UINT64_MAX >> 1, &c->realtime_period, err) < 0)
		return -1;
	return 0;
}

static int parse_pids(json_t *res, struct ward_resources *r, struct ward_err *err)
{
	int rc;
	json_t *o = get_section(res, "pids", &r->has_pids, &rc, err);
	if (!o)
		return rc;
	return get_i64(o, "limit", P ".pids", &r->pids_limit, err);
}

static int get_dev(json_t *d, const char *path, int64_t *major, int64_t *minor,
		   struct ward_err *err)
{
	struct ward_res_i64 ma, mi;
	if (get_i64(d, "major", path, &ma, err) < 0 || get_i64(d, "minor", path, &mi, err) < 0)
		return -1;
	*major = ma.v;
	*minor = mi.v;
	if (!ma.set || !mi.set)
		return ward_fail(err, 0, "%s: major and minor are required", path);
	if (*major < 0 || *major > 0xfff || *minor < 0 || *minor > 0xfffff)
		return ward_fail(err, 0, "%s: %" PRId64 ":%" PRId64 " is not a device number", path,
				 *major, *minor);
	return 0;
}

static int parse_io(json_t *res, struct ward_resources *r, struct ward_err *err)
{
	const char *p = P ".blockIO";
	struct ward_res_block_io *b = &r->block_io;
	json_t *arr, *d;
	size_t i;
	int rc;
	json_t *o = get_section(res, "blockIO", &r->has_block_io, &rc, err);

	if (!o)
		return rc;
	if (get_u64(o, "weight", p, 65535, &b->weight, err) < 0 ||
	    get_u64(o, "leafWeight", p, 65535, &b->leaf_weight, err) < 0)
		return -1;
	if (check_io_weight(b, err) < 0)
		return -1;

	if (get_arr(o, "weightDevice", p, &arr, err) < 0)
		return -1;
	b->weight_device = vec_for(arr, sizeof(*b->weight_device));
	for (i = 0; i < json_array_size(arr); i++) {
		struct ward_res_weight_device *w = &b->weight_device[i];
		char path[128];
		snprintf(path, sizeof(path), "%s.weightDevice[%zu]", p, i);
		if (!(d = ward_json_elem_obj(arr, i, path, err)) ||
		    get_dev(d, path, &w->major, &w->minor, err) < 0 ||
		    get_u64(d, "weight", path, 65535, &w->weight, err) < 0 ||
		    get_u64(d, "leafWeight", path, 65535, &w->leaf_weight, err) < 0)
			return -1;
		b->n_weight_device = i + 1;
		if (w->weight.v != 0 && !weight_ok(w->weight.v))
			return ward_fail(err, 0, "%s.weight: %" PRIu64 " is not in 10..1000", path,
					 w->weight.v);
	}

	for (int k = 0; k < WARD_RES_N_THROTTLE; k++) {
		if (get_arr(o, ward_res_throttle_names[k], p, &arr, err) < 0)
			return -1;
		b->throttle[k] = vec_for(arr, sizeof(*b->throttle[k]));
		for (i = 0; i < json_array_size(arr); i++) {
			struct ward_res_throttle_device *t = &b->throttle[k][i];
			struct ward_res_u64 rate;
			char path[128];
			snprintf(path, sizeof(path), "%s.%s[%zu]", p, ward_res_throttle_names[k],
				 i);
			if (!(d = ward_json_elem_obj(arr, i, path, err)) ||
			    get_dev(d, path, &t->major, &t->minor, err) < 0 ||
			    get_u64(d, "rate", path, UINT64_MAX >> 1, &rate, err) < 0)
				return -1;
			if (!rate.set)
				return ward_fail(err, 0, "%s.rate: missing", path);
			t->rate = rate.v;
			b->n_throttle[k] = i + 1;
		}
	}
	return 0;
}

bool ward_res_page_size_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");
	return n > 0 && n < 8 && s[0] != '0' &&
	       (!strcmp(s + n, "KB") || !strcmp(s + n, "MB") || !strcmp(s + n, "GB"));
}

static int parse_hugetlb(json_t *res, struct ward_resources *r, struct ward_err *err)
{
	json_t *arr, *h;
	if (get_arr(res, "hugepageLimits", P, &arr, err) < 0)
		return -1;
	r->hugepage_limits = vec_for(arr, sizeof(*r->hugepage_limits));
	for (size_t i = 0; i < json_array_size(arr); i++) {
		struct ward_res_hugepage *hp = &r->hugepage_limits[i];
		struct ward_res_u64 limit;
		char path[96];
		snprintf(path, sizeof(path), P ".hugepageLimits[%zu]", i);
		if (!(h = ward_json_elem_obj(arr, i, path, err)))
			return -1;
		r->n_hugepage_limits = i + 1;
		if (get_str(h, "pageSize", path, &hp->page_size, err) < 0 ||
		    get_u64(h, "limit", path, UINT64_MAX >> 1, &limit, err) < 0)
			return -1;
		if (!hp->page_size || !ward_res_page_size_ok(hp->page_size))
			return ward_fail(err, 0,
					 "%s.pageSize: \"%s\" is not a page size such as 2MB", path,
					 hp->page_size ? hp->page_size : "");
		if (!limit.set)
			return ward_fail(err, 0, "%s.limit: missing", path);
		hp->limit = limit.v;
	}
	return 0;
}

static int parse_rdma(json_t *res, struct ward_resources *r, struct ward_err *err)
{
	const char *dev;
	int rc;
	json_t *d, *o = get_section(res, "rdma", NULL, &rc, err);
	if (!o)
		return rc;
	r->rdma = vec_for(o, sizeof(*r->rdma));
	json_object_foreach(o, dev, d)
	{
		struct ward_res_rdma *x = &r->rdma[r->n_rdma];
		char path[160];
		snprintf(path, sizeof(path), P ".rdma.%s", dev);
		if (!*dev || strpbrk(dev, " \t\n=") || plain_value(dev, path, err) < 0)
			return ward_fail(err, 0, "%s: not a device name", path);
		if (!json_is_object(d))
			return ward_json_bad(err, path, "must be an object");
		x->device = xstrdup(dev);
		r->n_rdma++;
		if (get_u64(d, "hcaHandles", path, UINT32_MAX, &x->hca_handles, err) < 0 ||
		    get_u64(d, "hcaObjects", path, UINT32_MAX, &x->hca_objects, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_network(json_t *res, struct ward_resources *r, struct ward_err *err)
{
	json_t *prio;
	int rc;
	json_t *o = get_section(res, "network", &r->has_network, &rc, err);
	if (!o)
		return rc;
	if (get_u64(o, "classID", P ".network", UINT32_MAX, &r->network.class_id, err) < 0 ||
	    get_arr(o, "priorities", P ".network", &prio, err) < 0)
		return -1;
	r->network.priorities = vec_for(prio, sizeof(*r->network.priorities));
	for (size_t i = 0; i < json_array_size(prio); i++) {
		struct ward_res_net_prio *np = &r->network.priorities[i];
		struct ward_res_u64 v;
		char path[96];
		json_t *e;
		snprintf(path, sizeof(path), P ".network.priorities[%zu]", i);
		if (!(e = ward_json_elem_obj(prio, i, path, err)))
			return -1;
		r->network.n_priorities = i + 1;
		if (get_str(e, "name", path, &np->name, err) < 0 ||
		    get_u64(e, "priority", path, UINT32_MAX, &v, err) < 0)
			return -1;
		if (!np->name)
			return ward_fail(err, 0, "%s.name: missing", path);
		np->priority = (uint32_t)v.v;
	}
	return 0;
}

bool ward_cgroup_res_unified_key_ok(const char *key, const char **why)
{
	static const char *const core_ok[] = {"cgroup.max.depth", "cgroup.max.descendants"};
	*why = NULL;
	if (!*key || !strcmp(key, ".") || !strcmp(key, "..") || strchr(key, '/'))
		*why = "not a file name of the cgroup directory";
	else if (key[strspn(key,
			    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")])
		*why = "a cgroup file name has only letters, digits, '.', '_' and '-'";
	else if (!strchr(key, '.') || key[0] == '.')
		*why = "not a controller file (CONTROLLER.FILE)";
	else if (!strncmp(key, "cgroup.", 7)) {
		for (size_t i = 0; i < ARRAY_SIZE(core_ok); i++)
			if (!strcmp(key, core_ok[i]))
				return true;
		*why = "cgroup core files (cgroup.procs, cgroup.subtree_control, cgroup.freeze, "
		       "cgroup.kill, ...) are managed by ward";
	}
	return *why == NULL;
}

/* A string map (read as linux.sysctl is), each key a file ward may write. */
static int parse_unified(json_t *res, struct ward_resources *r, struct ward_err *err)
{
	if (ward_json_str_map(res, P, "unified", &r->unified_keys, &r->unified_values, err) < 0)
		return -1;
	for (; r->unified_keys && r->unified_keys[r->n_unified]; r->n_unified++) {
		const char *why, *key = r->unified_keys[r->n_unified];
		char path[WARD_JSON_PATH_MAX];
		ward_json_path_key(path, P ".unified", key);
		if (!ward_cgroup_res_unified_key_ok(key, &why))
			return ward_fail(err, 0, "%s: %s", path, why);
		if (strcspn(key, ".") >= 64)
			return ward_fail(err, 0, "%s: not a controller file", path);
	}
	return 0;
}

/* What parse_memory ... parse_unified read (declared in cgroup_res.h). */
#define R_	    "linux.resources."
#define R_DEV(list) R_ "blockIO." list, R_ "blockIO." list "[].major", R_ "blockIO." list "[].minor"
const char *const ward_cgroup_res_fields[] = {"linux.resources",
					      R_ "memory",
					      R_ "memory.limit",
					      R_ "memory.reservation",
					      R_ "memory.swap",
					      R_ "memory.checkBeforeUpdate",
					      R_ "memory.kernel",
					      R_ "memory.kernelTCP",
					      R_ "memory.swappiness",
					      R_ "memory.disableOOMKiller",
					      R_ "memory.useHierarchy",
					      R_ "cpu",
					      R_ "cpu.shares",
					      R_ "cpu.quota",
					      R_ "cpu.period",
					      R_ "cpu.burst",
					      R_ "cpu.idle",
					      R_ "cpu.cpus",
					      R_ "cpu.mems",
					      R_ "cpu.realtimeRuntime",
					      R_ "cpu.realtimePeriod",
					      R_ "pids",
					      R_ "pids.limit",
					      R_ "blockIO",
					      R_ "blockIO.weight",
					      R_ "blockIO.leafWeight",
					      R_DEV("weightDevice"),
					      R_ "blockIO.weightDevice[].weight",
					      R_ "blockIO.weightDevice[].leafWeight",
					      R_DEV("throttleReadBpsDevice"),
					      R_ "blockIO.throttleReadBpsDevice[].rate",
					      R_DEV("throttleWriteBpsDevice"),
					      R_ "blockIO.throttleWriteBpsDevice[].rate",
					      R_DEV("throttleReadIOPSDevice"),
					      R_ "blockIO.throttleReadIOPSDevice[].rate",
					      R_DEV("throttleWriteIOPSDevice"),
					      R_ "blockIO.throttleWriteIOPSDevice[].rate",
					      R_ "hugepageLimits",
					      R_ "hugepageLimits[].pageSize",
					      R_ "hugepageLimits[].limit",
					      R_ "rdma",
					      R_ "rdma.*",
					      R_ "rdma.*.hcaHandles",
					      R_ "rdma.*.hcaObjects",
					      R_ "network",
					      R_ "unified",
					      R_ "unified.*",
					      NULL};
#undef R_DEV
#undef R_

static int from_json(json_t *res, struct ward_resources *out, bool update, struct ward_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!res || json_is_null(res))
		return 0;
	if (!json_is_object(res))
		return ward_json_bad(err, P, "must be an object");
	if (parse_memory(res, out, update, err) < 0 || parse_cpu(res, out, err) < 0 ||
	    parse_pids(res, out, err) < 0 || parse_io(res, out, err) < 0 ||
	    parse_hugetlb(res, out, err) < 0 || parse_rdma(res, out, err) < 0 ||
	    parse_network(res, out, err) < 0 || parse_unified(res, out, err) < 0 ||
	    ward_bpfdev_rules_from(res, &out->devices, &out->n_devices, &out->has_devices, err) <
		0) {
		ward_resources_free(out);
		return -1;
	}
	return 0;
}

static int parse(const char *text, struct ward_resources *out, bool update, struct ward_err *err)
{
	json_error_t jerr;
	json_t *res;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!text)
		return 0;
	res = json_loads(text, JSON_DECODE_ANY, &jerr);
	if (!res)
		return ward_fail(err, 0, "%s: invalid JSON: %s (line %d)", P, jerr.text, jerr.line);
	rc = from_json(res, out, update, err);
	json_decref(res);
	return rc;
}

int ward_resources_from_json(json_t *res, struct ward_resources *out, struct ward_err *err)
{
	return from_json(res, out, false, err);
}

int ward_resources_parse(const char *text, struct ward_resources *out, struct ward_err *err)
{
	return parse(text, out, false, err);
}

int ward_resources_parse_update(const char *text, struct ward_resources *out, struct ward_err *err)
{
	return parse(text, out, true, err);
}

void ward_resources_free(struct ward_resources *r)
{
	free(r->cpu.cpus);
	free(r->cpu.mems);
	free(r->block_io.weight_device);
	for (int k = 0; k < WARD_RES_N_THROTTLE; k++)
		free(r->block_io.throttle[k]);
	for (size_t i = 0; i < r->n_hugepage_limits; i++)
		free(r->hugepage_limits[i].page_size);
	free(r->hugepage_limits);
	for (size_t i = 0; i < r->n_rdma; i++)
		free(r->rdma[i].device);
	free(r->rdma);
	for (size_t i = 0; i < r->network.n_priorities; i++)
		free(r->network.priorities[i].name);
	free(r->network.priorities);
	strv_free(r->unified_keys);
	strv_free(r->unified_values);
	free(r->devices);
	memset(r, 0, sizeof(*r));
}

/* An rdma device or a weightDevice entry with a value: one whose values are all absent or
 * null sets nothing (cgroup_res.c writes nothing for it). */
static bool rdma_set(const struct ward_resources *r)
{
	for (size_t i = 0; i < r->n_rdma; i++)
		if (r->rdma[i].hca_handles.set || r->rdma[i].hca_objects.set)
			return true;
	return false;
}

static bool weight_device_set(const struct ward_res_block_io *b)
{
	for (size_t i = 0; i < b->n_weight_device; i++)
		if (b->weight_device[i].weight.set || b->weight_device[i].leaf_weight.set)
			return true;
	return false;
}

const char *ward_resources_first_value(const struct ward_resources *r)
{
	const struct ward_res_memory *m = &r->memory;
	const struct ward_res_cpu *c = &r->cpu;
	const struct ward_res_block_io *b = &r->block_io;
	const struct {
		bool set;
		const char *field;
	} v[] = {
	    {m->limit.set, P ".memory.limit"},
	    {m->reservation.set, P ".memory.reservation"},
	    {m->swap.set, P ".memory.swap"},
	    {m->kernel.set, P ".memory.kernel"},
	    {m->kernel_tcp.set, P ".memory.kernelTCP"},
	    {m->swappiness.set, P ".memory.swappiness"},
	    {m->disable_oom_killer.set, P ".memory.disableOOMKiller"},
	    {m->use_hierarchy.set, P ".memory.useHierarchy"},
	    {m->check_before_update.set, P ".memory.checkBeforeUpdate"},
	    {c->shares.set, P ".cpu.shares"},
	    {c->quota.set, P ".cpu.quota"},
	    {c->period.set, P ".cpu.period"},
	    {c->burst.set, P ".cpu.burst"},
	    {c->realtime_runtime.set, P ".cpu.realtimeRuntime"},
	    {c->realtime_period.set, P ".cpu.realtimePeriod"},
	    {c->idle.set, P ".cpu.idle"},
	    {c->cpus && *c->cpus, P ".cpu.cpus"},
	    {c->mems && *c->mems, P ".cpu.mems"},
	    {r->pids_limit.set, P ".pids.limit"},
	    {b->weight.set, P ".blockIO.weight"},
	    {b->leaf_weight.set, P ".blockIO.leafWeight"},
	    {weight_device_set(b), P ".blockIO.weightDevice"},
	    {b->n_throttle[WARD_RES_READ_BPS] > 0, P ".blockIO.throttleReadBpsDevice"},
	    {b->n_throttle[WARD_RES_WRITE_BPS] > 0, P ".blockIO.throttleWriteBpsDevice"},
	    {b->n_throttle[WARD_RES_READ_IOPS] > 0, P ".blockIO.throttleReadIOPSDevice"},
	    {b->n_throttle[WARD_RES_WRITE_IOPS] > 0, P ".blockIO.throttleWriteIOPSDevice"},
	    {r->n_hugepage_limits > 0, P ".hugepageLimits"},
	    {rdma_set(r), P ".rdma"},
	    {r->network.class_id.set, P ".network.classID"},
	    {r->network.n_priorities > 0, P ".network.priorities"},
	    {r->n_unified > 0, P ".unified"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		if (v[i].set)
			return v[i].field;
	return NULL;
}

/* The list of n elements of size bytes at p, copied: NULL (absent) stays NULL, a list given
 * empty stays given (one zeroed element, as the parser's vec_for makes it). */
static void *copy_n(const void *p, size_t n, size_t size)
{
	return p ? memcpy(xcalloc(n + 1, size), p, n * size) : NULL;
}

void ward_resources_dup(struct ward_resources *d, const struct ward_resources *s)
{
	*d = *s;
	d->cpu.cpus = s->cpu.cpus ? xstrdup(s->cpu.cpus) : NULL;
	d->cpu.mems = s->cpu.mems ? xstrdup(s->cpu.mems) : NULL;
	d->block_io.weight_device = copy_n(s->block_io.weight_device, s->block_io.n_weight_device,
					   sizeof(*s->block_io.weight_device));
	for (int k = 0; k < WARD_RES_N_THROTTLE; k++)
		d->block_io.throttle[k] = copy_n(s->block_io.throttle[k], s->block_io.n_throttle[k],
						 sizeof(*s->block_io.throttle[k]));
	d->hugepage_limits =
	    copy_n(s->hugepage_limits, s->n_hugepage_limits, sizeof(*s->hugepage_limits));
	for (size_t i = 0; i < s->n_hugepage_limits; i++)
		d->hugepage_limits[i].page_size = xstrdup(s->hugepage_limits[i].page_size);
	d->rdma = copy_n(s->rdma, s->n_rdma, sizeof(*s->rdma));
	for (size_t i = 0; i < s->n_rdma; i++)
		d->rdma[i].device = xstrdup(s->rdma[i].device);
	d->network.priorities =
	    copy_n(s->network.priorities, s->network.n_priorities, sizeof(*s->network.priorities));
	for (size_t i = 0; i < s->network.n_priorities; i++)
		d->network.priorities[i].name = xstrdup(s->network.priorities[i].name);
	d->unified_keys = s->unified_keys ? strv_dup(s->unified_keys) : NULL;
	d->unified_values = s->unified_values ? strv_dup(s->unified_values) : NULL;
	d->devices = copy_n(s->devices, s->n_devices, sizeof(*s->devices));
}
