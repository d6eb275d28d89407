/* linux.resources -> cgroup v2 files. See cgroup_res.h for the conversions and the
 * missing-controller policy. */
#include "cgroup_res.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cgroup.h"
#include "json.h"
#include "log.h"
#include "util.h"

#define P "linux.resources"

/* ---- conversions -------------------------------------------------------------------- */

uint64_t ward_cpu_shares_to_weight(uint64_t shares)
{
	/* opencontainers/cgroups since 2025 (runc #4785, crun #1721): a quadratic in log2
	 * that maps the v1 minimum, default and maximum (2, 1024, 262144) onto v2's (1, 100,
	 * 10000). The older linear 1 + (shares - 2) * 9999 / 262142 turned the default 1024
	 * into 39, below every systemd service (kubernetes #131216). */
	double l, exponent;
	if (shares == 0)
		return 0;
	if (shares <= 2)
		return 1;
	if (shares >= 262144)
		return 10000;
	l = log2((double)shares);
	exponent = (l * l + 125 * l) / 612.0 - 7.0 / 34.0;
	return (uint64_t)ceil(pow(10, exponent));
}

uint64_t ward_blkio_weight_to_io_weight(uint64_t weight)
{
	if (weight == 0)
		return 0;
	return 1 + (weight - 10) * 9999 / 990;
}

/* ---- the plan ----------------------------------------------------------------------- */

static void add(struct ward_res_plan *plan, const char *controller, const char *field,
		unsigned flags, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void add(struct ward_res_plan *plan, const char *controller, const char *field,
		unsigned flags, const char *file, const char *fmt, ...)
{
	struct ward_res_entry *e;
	va_list ap;
	char *value;
	va_start(ap, fmt);
	if (vasprintf(&value, fmt, ap) < 0)
		abort();
	va_end(ap);
	plan->v = xrealloc(plan->v, (plan->n + 1) * sizeof(*plan->v));
	e = &plan->v[plan->n++];
	memset(e, 0, sizeof(*e));
	e->file = xstrdup(file);
	e->value = value;
	e->controller = controller ? xstrdup(controller) : NULL;
	e->field = xstrdup(field);
	e->flags = flags;
}

void ward_cgroup_res_plan_free(struct ward_res_plan *plan)
{
	for (size_t i = 0; plan->v && i < plan->n; i++) {
		free(plan->v[i].file);
		free(plan->v[i].value);
		free(plan->v[i].controller);
		free(plan->v[i].field);
		free(plan->v[i].alt_file);
		free(plan->v[i].alt_value);
	}
	free(plan->v);
	strv_free(plan->ignored);
	memset(plan, 0, sizeof(*plan));
}

/* Typed getters, this file's shape of the JSON reader (json.h): JSON null or a missing key
 * is absent (*present = false, returns 0); errors name "path.key". */

static int get_obj(json_t *o, const char *key, const char *path, json_t **out, struct ward_err *err)
{
	int r;
	*out = ward_json_opt_obj(o, path, key, &r, err);
	return r;
}

static int get_arr(json_t *o, const char *key, const char *path, json_t **out, struct ward_err *err)
{
	int r;
	*out = ward_json_opt_arr(o, path, key, &r, err);
	return r;
}

static int get_i64(json_t *o, const char *key, const char *path, bool *present, int64_t *out,
		   struct ward_err *err)
{
	int r;
	*out = 0;
	r = ward_json_opt_i64(o, path, key, INT64_MIN, INT64_MAX, out, err);
	*present = r > 0;
	return r < 0 ? -1 : 0;
}

/* Unsigned up to max. */
static int get_u64(json_t *o, const char *key, const char *path, uint64_t max, bool *present,
		   uint64_t *out, struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX];
	json_t *v = ward_json_member(o, key);

	*present = false;
	*out = 0;
	if (!v)
		return 0;
	if (ward_json_u64(v, ward_json_path_key(p, path, key), max, out, err) < 0)
		return -1;
	*present = true;
	return 0;
}

static int get_bool(json_t *o, const char *key, const char *path, bool *present, bool *out,
		    struct ward_err *err)
{
	int r;
	*out = false;
	r = ward_json_opt_bool(o, path, key, out, err);
	*present = r > 0;
	return r < 0 ? -1 : 0;
}

static int get_str(json_t *o, const char *key, const char *path, const char **out,
		   struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX];
	json_t *v = ward_json_member(o, key);

	*out = NULL;
	return v ? ward_json_str_ref(v, ward_json_path_key(p, path, key), out, err) : 0;
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

/* -1 = max, other values as they are. */
static void fmt_max(char *buf, size_t len, int64_t v)
{
	if (v == -1)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%" PRId64, v);
}

/* Knobs cgroup v2 does not have at all: ignored with a warning (runc ignores them too);
 * they tune, they do not confine. */
static void v1_only(struct ward_res_plan *plan, const char *field, const char *why)
{
	char *msg = xasprintf("%s: %s; ignored", field, why);
	plan->ignored = strv_append(plan->ignored, msg);
	free(msg);
}

static int plan_memory(json_t *res, struct ward_res_plan *plan, struct ward_err *err)
{
	const char *p = P ".memory";
	json_t *m;
	bool has_limit, has_res, has_swap, has, b;
	int64_t limit, reservation, swap, v;
	uint64_t u;
	char buf[32];

	if (get_obj(res, "memory", P, &m, err) < 0)
		return -1;
	if (!m)
		return 0;
	if (get_i64(m, "limit", p, &has_limit, &limit, err) < 0 ||
	    get_i64(m, "reservation", p, &has_res, &reservation, err) < 0 ||
	    get_i64(m, "swap", p, &has_swap, &swap, err) < 0)
		return -1;
	if (limit < -1)
		return ward_fail(err, 0, "%s.limit: %" PRId64 " is not a limit (-1 or > 0)", p,
				 limit);
	if (reservation < -1)
		return ward_fail(err, 0, "%s.reservation: %" PRId64 " is not a size (-1 or > 0)", p,
				 reservation);
	if (swap < -1)
		return ward_fail(err, 0, "%s.swap: %" PRId64 " is not a limit (-1 or > 0)", p,
				 swap);
	plan->memory_limit = limit;

	/* memory.swap.max first: runc's ConvertMemorySwapToCgroupV2Value. The OCI value is
	 * v1's memory+swap; v2 limits swap alone. */
	if (limit == -1 && swap == 0) {
		/* memory unlimited and swap not given: both unlimited, as v1 did */
		add(plan, "memory", P ".memory.swap", WARD_RES_DEFAULT | WARD_RES_OPTIONAL,
		    "memory.swap.max", "max");
	} else if (swap == -1) {
		add(plan, "memory", P ".memory.swap", WARD_RES_DEFAULT | WARD_RES_OPTIONAL,
		    "memory.swap.max", "max");
	} else if (swap > 0) {
		if (limit <= 0)
			return ward_fail(
			    err, 0, "%s.swap: unable to set a swap limit without a memory limit",
			    p);
		if (swap < limit)
			return ward_fail(err, 0,
					 "%s.swap: %" PRId64 " is below memory.limit %" PRId64
					 " (swap is memory+swap, as in cgroup v1)",
					 p, swap, limit);
		/* swap == limit: no swap at all; "0" may be written without swap accounting */
		add(plan, "memory", P ".memory.swap", swap == limit ? WARD_RES_OPTIONAL : 0,
		    "memory.swap.max", "%" PRId64, swap - limit);
	}
	if (limit != 0) {
		fmt_max(buf, sizeof(buf), limit);
		add(plan, "memory", P ".memory.limit", limit == -1 ? WARD_RES_DEFAULT : 0,
		    "memory.max", "%s", buf);
	}
	if (reservation != 0) {
		fmt_max(buf, sizeof(buf), reservation);
		add(plan, "memory", P ".memory.reservation", 0, "memory.low", "%s", buf);
	}
	if (get_bool(m, "checkBeforeUpdate", p, &has, &plan->check_before_update, err) < 0)
		return -1;

	if (get_i64(m, "kernel", p, &has, &v, err) < 0)
		return -1;
	if (has && v != 0)
		v1_only(plan, P ".memory.kernel",
			"kernel memory limits are deprecated and not in cgroup v2");
	if (get_i64(m, "kernelTCP", p, &has, &v, err) < 0)
		return -1;
	if (has && v != 0)
		v1_only(plan, P ".memory.kernelTCP", "kernel TCP limits are not in cgroup v2");
	if (get_u64(m, "swappiness", p, 100, &has, &u, err) < 0)
		return -1;
	if (has)
		v1_only(plan, P ".memory.swappiness", "cgroup v2 has no per-cgroup swappiness");
	if (get_bool(m, "disableOOMKiller", p, &has, &b, err) < 0)
		return -1;
	if (has && b)
		v1_only(plan, P ".memory.disableOOMKiller",
			"cgroup v2 cannot disable the OOM killer");
	if (get_bool(m, "useHierarchy", p, &has, &b, err) < 0)
		return -1;
	return 0;
}

static int plan_cpu(json_t *res, struct ward_res_plan *plan, struct ward_err *err)
{
	const char *p = P ".cpu";
	json_t *c;
	bool has_shares, has_quota, has_period, has_burst, has_idle, has;
	uint64_t shares, period, burst, u;
	int64_t quota, idle, v;
	const char *cpus, *mems;

	if (get_obj(res, "cpu", P, &c, err) < 0)
		return -1;
	if (!c)
		return 0;
	if (get_u64(c, "shares", p, UINT64_MAX >> 1, &has_shares, &shares, err) < 0 ||
	    get_i64(c, "quota", p, &has_quota, &quota, err) < 0 ||
	    get_u64(c, "period", p, UINT64_MAX >> 1, &has_period, &period, err) < 0 ||
	    get_u64(c, "burst", p, UINT64_MAX >> 1, &has_burst, &burst, err) < 0 ||
	    get_i64(c, "idle", p, &has_idle, &idle, err) < 0 ||
	    get_str(c, "cpus", p, &cpus, err) < 0 || get_str(c, "mems", p, &mems, err) < 0)
		return -1;

	if (shares != 0) {
		uint64_t w = ward_cpu_shares_to_weight(shares);
		/* 1024 shares (v1's default) -> 100, v2's default: needs no cpu controller */
		add(plan, "cpu", P ".cpu.shares", w == 100 ? WARD_RES_DEFAULT : 0, "cpu.weight",
		    "%" PRIu64, w);
	}
	/* Burst before cpu.max: lowering both needs the burst first, raising both the quota
	 * first, so a failing burst is tried again after cpu.max (as runc). */
	if (has_burst)
		add(plan, "cpu", P ".cpu.burst",
		    (burst == 0 ? WARD_RES_DEFAULT : 0) | WARD_RES_RETRY_LAST, "cpu.max.burst",
		    "%" PRIu64, burst);
	if (quota < -1)
		return ward_fail(err, 0, "%s.quota: %" PRId64 " is not a quota (-1 or > 0)", p,
				 quota);
	if (quota != 0 || period != 0) {
		char q[32];
		/* "max 100000" is a new cgroup's cpu.max */
		bool def = quota <= 0 && (period == 0 || period == 100000);
		if (quota > 0)
			snprintf(q, sizeof(q), "%" PRId64, quota);
		else
			snprintf(q, sizeof(q), "max");
		if (period != 0)
			add(plan, "cpu", quota != 0 ? P ".cpu.quota" : P ".cpu.period",
			    def ? WARD_RES_DEFAULT : 0, "cpu.max", "%s %" PRIu64, q, period);
		else
			add(plan, "cpu", P ".cpu.quota", def ? WARD_RES_DEFAULT : 0, "cpu.max",
			    "%s", q);
	}
	if (has_idle) {
		if (idle != 0 && idle != 1)
			return ward_fail(err, 0, "%s.idle: %" PRId64 " is not 0 or 1", p, idle);
		add(plan, "cpu", P ".cpu.idle", idle == 0 ? WARD_RES_DEFAULT : 0, "cpu.idle",
		    "%" PRId64, idle);
	}
	if (cpus && *cpus) {
		if (plain_value(cpus, P ".cpu.cpus", err) < 0)
			return -1;
		add(plan, "cpuset", P ".cpu.cpus", 0, "cpuset.cpus", "%s", cpus);
	}
	if (mems && *mems) {
		if (plain_value(mems, P ".cpu.mems", err) < 0)
			return -1;
		add(plan, "cpuset", P ".cpu.mems", 0, "cpuset.mems", "%s", mems);
	}
	if (get_i64(c, "realtimeRuntime", p, &has, &v, err) < 0)
		return -1;
	if (has && v != 0)
		v1_only(plan, P ".cpu.realtimeRuntime",
			"cgroup v2 has no real-time group scheduling");
	if (get_u64(c, "realtimePeriod", p, UINT64_MAX >> 1, &has, &u, err) < 0)
		return -1;
	if (has && u != 0)
		v1_only(plan, P ".cpu.realtimePeriod",
			"cgroup v2 has no real-time group scheduling");
	return 0;
}

static int plan_pids(json_t *res, struct ward_res_plan *plan, struct ward_err *err)
{
	json_t *o;
	bool has;
	int64_t limit;
	if (get_obj(res, "pids", P, &o, err) < 0)
		return -1;
	if (!o)
		return 0;
	if (get_i64(o, "limit", P ".pids", &has, &limit, err) < 0)
		return -1;
	if (!has)
		return 0;
	/* runtime-spec: -1 (and runc: any value <= 0) means unlimited */
	if (limit <= 0)
		add(plan, "pids", P ".pids.limit", WARD_RES_DEFAULT, "pids.max", "max");
	else
		add(plan, "pids", P ".pids.limit", 0, "pids.max", "%" PRId64, limit);
	return 0;
}

static int get_dev(json_t *d, const char *path, int64_t *major, int64_t *minor,
		   struct ward_err *err)
{
	bool has_major, has_minor;
	if (get_i64(d, "major", path, &has_major, major, err) < 0 ||
	    get_i64(d, "minor", path, &has_minor, minor, err) < 0)
		return -1;
	if (!has_major || !has_minor)
		return ward_fail(err, 0, "%s: major and minor are required", path);
	if (*major < 0 || *major > 0xfff || *minor < 0 || *minor > 0xfffff)
		return ward_fail(err, 0, "%s: %" PRId64 ":%" PRId64 " is not a device number", path,
				 *major, *minor);
	return 0;
}

static bool weight_ok(uint64_t w)
{
	return w >= 10 && w <= 1000;
}

/* One io.max line per device, all four limits of that device together. */
struct io_max {
	int64_t major, minor;
	uint64_t v[4]; /* rbps wbps riops wiops; 0 = not given */
	bool given[4];
	char field[160];
};

static int plan_io(json_t *res, struct ward_res_plan *plan, struct ward_err *err)
{
	static const char *const throttle[4] = {"throttleReadBpsDevice", "throttleWriteBpsDevice",
						"throttleReadIOPSDevice",
						"throttleWriteIOPSDevice"};
	static const char *const keys[4] = {"rbps", "wbps", "riops", "wiops"};
	const char *p = P ".blockIO";
	json_t *b, *arr, *d;
	bool has;
	uint64_t weight, leaf;
	size_t i;
	cleanup_free struct io_max *max = NULL;
	size_t n_max = 0;

	if (get_obj(res, "blockIO", P, &b, err) < 0)
		return -1;
	if (!b)
		return 0;
	if (get_u64(b, "weight", p, 65535, &has, &weight, err) < 0 ||
	    get_u64(b, "leafWeight", p, 65535, &has, &leaf, err) < 0)
		return -1;
	if (weight != 0) {
		if (!weight_ok(weight))
			return ward_fail(err, 0, "%s.weight: %" PRIu64 " is not in 10..1000", p,
					 weight);
		add(plan, "io", P ".blockIO.weight", 0, "io.weight", "default %" PRIu64,
		    ward_blkio_weight_to_io_weight(weight));
		plan->v[plan->n - 1].alt_file = xstrdup("io.bfq.weight");
		plan->v[plan->n - 1].alt_value = xasprintf("default %" PRIu64, weight);
	}
	if (leaf != 0)
		v1_only(plan, P ".blockIO.leafWeight", "cgroup v2 has no leaf weights");

	if (get_arr(b, "weightDevice", p, &arr, err) < 0)
		return -1;
	json_array_foreach(arr, i, d)
	{
		char path[128];
		int64_t major, minor;
		snprintf(path, sizeof(path), "%s.weightDevice[%zu]", p, i);
		if (!json_is_object(d))
			return ward_json_bad(err, path, "must be an object");
		if (get_dev(d, path, &major, &minor, err) < 0 ||
		    get_u64(d, "weight", path, 65535, &has, &weight, err) < 0 ||
		    get_u64(d, "leafWeight", path, 65535, &has, &leaf, err) < 0)
			return -1;
		if (leaf != 0)
			v1_only(plan, path, "cgroup v2 has no leaf weights");
		if (weight == 0)
			continue;
		if (!weight_ok(weight))
			return ward_fail(err, 0, "%s.weight: %" PRIu64 " is not in 10..1000", path,
					 weight);
		add(plan, "io", path, 0, "io.weight", "%" PRId64 ":%" PRId64 " %" PRIu64, major,
		    minor, ward_blkio_weight_to_io_weight(weight));
		plan->v[plan->n - 1].alt_file = xstrdup("io.bfq.weight");
		plan->v[plan->n - 1].alt_value =
		    xasprintf("%" PRId64 ":%" PRId64 " %" PRIu64, major, minor, weight);
	}

	for (int k = 0; k < 4; k++) {
		if (get_arr(b, throttle[k], p, &arr, err) < 0)
			return -1;
		json_array_foreach(arr, i, d)
		{
			char path[128];
			int64_t major, minor;
			uint64_t rate;
			size_t j;
			snprintf(path, sizeof(path), "%s.%s[%zu]", p, throttle[k], i);
			if (!json_is_object(d))
				return ward_json_bad(err, path, "must be an object");
			if (get_dev(d, path, &major, &minor, err) < 0 ||
			    get_u64(d, "rate", path, UINT64_MAX >> 1, &has, &rate, err) < 0)
				return -1;
			if (!has)
				return ward_fail(err, 0, "%s.rate: missing", path);
			for (j = 0; j < n_max; j++)
				if (max[j].major == major && max[j].minor == minor)
					break;
			if (j == n_max) {
				max = xrealloc(max, (n_max + 1) * sizeof(*max));
				memset(&max[j], 0, sizeof(*max));
				max[j].major = major;
				max[j].minor = minor;
				snprintf(max[j].field, sizeof(max[j].field), "%s", path);
				n_max++;
			}
			max[j].v[k] = rate;
			max[j].given[k] = true;
		}
	}
	for (size_t j = 0; j < n_max; j++) {
		char line[256];
		size_t len = (size_t)snprintf(line, sizeof(line), "%" PRId64 ":%" PRId64,
					      max[j].major, max[j].minor);
		for (int k = 0; k < 4; k++) {
			if (!max[j].given[k])
				continue;
			/* 0 lifts the limit, as writing 0 did in v1 */
			if (max[j].v[k] == 0)
				len += (size_t)snprintf(line + len, sizeof(line) - len, " %s=max",
							keys[k]);
			else
				len += (size_t)snprintf(line + len, sizeof(line) - len,
							" %s=%" PRIu64, keys[k], max[j].v[k]);
		}
		add(plan, "io", max[j].field, 0, "io.max", "%s", line);
	}
	return 0;
}

/* "2MB", "1GB", "64KB": what the kernel names its hugetlb.<size>.* files after. */
static bool page_size_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");
	return n > 0 && n < 8 && s[0] != '0' &&
	       (!strcmp(s + n, "KB") || !strcmp(s + n, "MB") || !strcmp(s + n, "GB"));
}

static int plan_hugetlb(json_t *res, struct ward_res_plan *plan, struct ward_err *err)
{
	json_t *arr, *h;
	size_t i;
	if (get_arr(res, "hugepageLimits", P, &arr, err) < 0)
		return -1;
	json_array_foreach(arr, i, h)
	{
		char path[96], file[64];
		const char *size;
		bool has;
		uint64_t limit;
		snprintf(path, sizeof(path), P ".hugepageLimits[%zu]", i);
		if (!json_is_object(h))
			return ward_json_bad(err, path, "must be an object");
		if (get_str(h, "pageSize", path, &size, err) < 0 ||
		    get_u64(h, "limit", path, UINT64_MAX >> 1, &has, &limit, err) < 0)
			return -1;
		if (!size || !page_size_ok(size))
			return ward_fail(err, 0,
					 "%s.pageSize: \"%s\" is not a page size such as 2MB", path,
					 size ? size : "");
		if (!has)
			return ward_fail(err, 0, "%s.limit: missing", path);
		snprintf(file, sizeof(file), "hugetlb.%s.max", size);
		add(plan, "hugetlb", path, 0, file, "%" PRIu64, limit);
		/* reservations too (kernel >= 5.7), as runc: else a reserved-but-unfaulted
		 * mapping escapes the limit */
		snprintf(file, sizeof(file), "hugetlb.%s.rsvd.max", size);
		add(plan, "hugetlb", path, WARD_RES_OPTIONAL, file, "%" PRIu64, limit);
	}
	return 0;
}

static int plan_rdma(json_t *res, struct ward_res_plan *plan, struct ward_err *err)
{
	json_t *o, *d;
	const char *dev;
	if (get_obj(res, "rdma", P, &o, err) < 0)
		return -1;
	json_object_foreach(o, dev, d)
	{
		char path[160], line[256];
		bool has_h, has_o;
		uint64_t handles, objects;
		size_t len;
		snprintf(path, sizeof(path), P ".rdma.%s", dev);
		if (!*dev || strpbrk(dev, " \t\n=") || plain_value(dev, path, err) < 0)
			return ward_fail(err, 0, "%s: not a device name", path);
		if (!json_is_object(d))
			return ward_json_bad(err, path, "must be an object");
		if (get_u64(d, "hcaHandles", path, UINT32_MAX, &has_h, &handles, err) < 0 ||
		    get_u64(d, "hcaObjects", path, UINT32_MAX, &has_o, &objects, err) < 0)
			return -1;
		if (!has_h && !has_o)
			continue;
		len = (size_t)snprintf(line, sizeof(line), "%s", dev);
		if (has_h)
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						" hca_handle=%" PRIu64, handles);
		if (has_o)
			snprintf(line + len, sizeof(line) - len, " hca_object=%" PRIu64, objects);
		add(plan, "rdma", path, 0, "rdma.max", "%s", line);
	}
	return 0;
}

static int plan_network(json_t *res, struct ward_res_plan *plan, struct ward_err *err)
{
	json_t *o, *prio;
	bool has;
	uint64_t classid;
	if (get_obj(res, "network", P, &o, err) < 0)
		return -1;
	if (!o)
		return 0;
	if (get_u64(o, "classID", P ".network", UINT32_MAX, &has, &classid, err) < 0 ||
	    get_arr(o, "priorities", P ".network", &prio, err) < 0)
		return -1;
	if (has)
		v1_only(plan, P ".network.classID", "net_cls is a cgroup v1 controller");
	if (prio && json_array_size(prio))
		v1_only(plan, P ".network.priorities", "net_prio is a cgroup v1 controller");
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

static int plan_unified(json_t *res, struct ward_res_plan *plan, struct ward_err *err)
{
	json_t *o, *v;
	const char *key;
	if (get_obj(res, "unified", P, &o, err) < 0)
		return -1;
	json_object_foreach(o, key, v)
	{
		char path[320], controller[64];
		const char *why;
		size_t clen;
		snprintf(path, sizeof(path), P ".unified.%s", key);
		if (!ward_cgroup_res_unified_key_ok(key, &why))
			return ward_fail(err, 0, "%s: %s", path, why);
		if (!json_is_string(v))
			return ward_json_bad(err, path, "must be a string");
		clen = strcspn(key, ".");
		if (clen >= sizeof(controller))
			return ward_fail(err, 0, "%s: not a controller file", path);
		memcpy(controller, key, clen);
		controller[clen] = '\0';
		add(plan, strcmp(controller, "cgroup") ? controller : NULL, path, 0, key, "%s",
		    json_string_value(v));
	}
	return 0;
}

/* What plan_memory ... plan_unified read (cgroup_res.h). */
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

int ward_cgroup_res_plan(const char *resources_json, struct ward_res_plan *plan,
			 struct ward_err *err)
{
	json_error_t jerr;
	json_t *res;
	int rc;

	memset(plan, 0, sizeof(*plan));
	if (!resources_json)
		return 0;
	res = json_loads(resources_json, JSON_DECODE_ANY, &jerr);
	if (!res)
		return ward_fail(err, 0, "%s: invalid JSON: %s (line %d)", P, jerr.text, jerr.line);
	if (json_is_null(res)) {
		json_decref(res);
		return 0;
	}
	if (!json_is_object(res)) {
		json_decref(res);
		return ward_json_bad(err, P, "must be an object");
	}
	rc = plan_memory(res, plan, err) < 0 || plan_cpu(res, plan, err) < 0 ||
		     plan_pids(res, plan, err) < 0 || plan_io(res, plan, err) < 0 ||
		     plan_hugetlb(res, plan, err) < 0 || plan_rdma(res, plan, err) < 0 ||
		     plan_network(res, plan, err) < 0 || plan_unified(res, plan, err) < 0
		 ? -1
		 : 0;
	json_decref(res);
	if (rc < 0)
		ward_cgroup_res_plan_free(plan);
	return rc;
}

/* ---- applying ----------------------------------------------------------------------- */

/* Does the whitespace-separated list contain word? */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; p && *p;) {
		p += strspn(p, " \t\n");
		size_t len = strcspn(p, " \t\n");
		if (len == n && !strncmp(p, word, n))
			return true;
		p += len;
	}
	return false;
}

/* Why the hierarchy lacks a controller, from /proc/cgroups (hierarchy id != 0: bound to a
 * v1 hierarchy). */
static void missing_hint(const char *controller, char *buf, size_t len)
{
	FILE *f = fopen("/proc/cgroups", "re");
	char name[64];
	int hier, num, enabled;
	snprintf(buf, len, "%s", "");
	if (!strcmp(controller, "net_cls") || !strcmp(controller, "net_prio") ||
	    !strcmp(controller, "devices") || !strcmp(controller, "freezer") ||
	    !strcmp(controller, "cpuacct")) {
		snprintf(buf, len, " (it exists only in cgroup v1)");
		if (f)
			fclose(f);
		return;
	}
	if (!f)
		return;
	if (fscanf(f, "%*[^\n]\n") < 0) {
		fclose(f);
		return;
	}
	snprintf(buf, len, " (this kernel has no %s controller)", controller);
	while (fscanf(f, "%63s %d %d %d", name, &hier, &num, &enabled) == 4) {
		/* /proc/cgroups still calls io by its v1 name */
		if (strcmp(name, controller) &&
		    !(!strcmp(controller, "io") && !strcmp(name, "blkio")))
			continue;
		if (!enabled)
			snprintf(buf, len, " (it is disabled on the kernel command line)");
		else if (hier != 0)
			snprintf(buf, len, " (hybrid host: it is bound to cgroup v1)");
		else
			snprintf(buf, len, "%s", "");
		break;
	}
	fclose(f);
}

/* The limits this process let pass unenforced (missing_controllers: warn). */
static char **unenforced;

char *const *ward_cgroup_res_unenforced(void)
{
	return unenforced;
}

/* Add "+ctrl" for each needed controller missing from the subtree_control of every
 * ancestor, from the v2 root down to the parent of path. */
static int enable_controllers(const char *root, const char *path, char **needed, size_t n,
			      struct ward_err *err)
{
	size_t rlen = strlen(root);
	cleanup_free char *dir = xstrdup(path);
	char *end = dir + rlen;

	if (n == 0)
		return 0;
	if (strncmp(path, root, rlen) || (path[rlen] != '/'))
		return ward_fail(err, 0, "cgroup %s is not below the cgroup v2 root %s", path,
				 root);
	for (;;) {
		char *slash;
		cleanup_fd int dfd = -1;
		cleanup_free char *cur = NULL;
		char add_list[512];
		size_t len = 0;

		*end = '\0'; /* dir is now the ancestor to enable in */
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return ward_fail_errno(err, "open cgroup %s", dir);
		cur = read_file_at(dfd, "cgroup.subtree_control", NULL, err);
		if (!cur)
			return ward_wrap(err, "cgroup %s", dir);
		add_list[0] = '\0';
		for (size_t i = 0; i < n; i++)
			if (!has_word(cur, needed[i]))
				len += (size_t)snprintf(add_list + len, sizeof(add_list) - len,
							"%s+%s", len ? " " : "", needed[i]);
		if (len && write_file_at(dfd, "cgroup.subtree_control", O_TRUNC, 0, add_list, len,
					 err) < 0)
			return ward_wrap(err, "enable %s in cgroup %s", add_list, dir);
		*end = '/';
		slash = strchr(end + 1, '/');
		if (!slash)
			break; /* the next one would be the container's own cgroup */
		end = slash;
	}
	return 0;
}

static int write_entry(int dfd, const struct ward_res_entry *e, struct ward_err *err)
{
	if (e->alt_file && faccessat(dfd, e->alt_file, F_OK, 0) == 0) {
		if (write_file_at(dfd, e->alt_file, O_TRUNC, 0, e->alt_value, strlen(e->alt_value),
				  err) < 0)
			return ward_wrap(err, "%s: %s=\"%s\"", e->field, e->alt_file, e->alt_value);
		return 0;
	}
	if (write_file_at(dfd, e->file, O_TRUNC, 0, e->value, strlen(e->value), err) < 0) {
		if (err->errnum == ENOENT && (e->flags & WARD_RES_OPTIONAL))
			return 0;
		return ward_wrap(err, "%s: %s=\"%s\"", e->field, e->file, e->value);
	}
	return 0;
}

static int check_memory_usage(int dfd, int64_t limit, struct ward_err *err)
{
	cleanup_free char *text = NULL;
	uint64_t current;
	if (limit <= 0)
		return 0;
	text = read_file_at(dfd, "memory.current", NULL, err);
	if (!text)
		return ward_wrap(err, P ".memory.checkBeforeUpdate");
	text[strcspn(text, "\n")] = '\0';
	if (parse_u64(text, &current) < 0)
		return ward_fail(err, 0, P ".memory.checkBeforeUpdate: memory.current: \"%s\"",
				 text);
	if ((uint64_t)limit <= current)
		return ward_fail(err, 0,
				 P ".memory.limit: %" PRId64
				   " is not above the current usage %" PRIu64
				   " (memory.checkBeforeUpdate)",
				 limit, current);
	return 0;
}

int ward_cgroup_res_apply_at(const char *v2_root, const char *path, const char *resources_json,
			     bool update, bool warn, struct ward_err *err)
{
	struct ward_res_plan plan;
	cleanup_free char *avail = NULL;
	cleanup_free char **needed = NULL;
	cleanup_free bool *skip = NULL;
	cleanup_fd int rootfd = -1;
	cleanup_fd int dfd = -1;
	size_t n_needed = 0;
	int rc = -1;

	if (ward_cgroup_res_plan(resources_json, &plan, err) < 0)
		return -1;
	for (size_t i = 0; plan.ignored && plan.ignored[i]; i++)
		ward_warn("%s", plan.ignored[i]);
	if (plan.n == 0) {
		ward_cgroup_res_plan_free(&plan);
		return 0;
	}
	rootfd = open(v2_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		ward_fail_errno(err, "open cgroup v2 root %s", v2_root);
		goto out;
	}
	avail = read_file_at(rootfd, "cgroup.controllers", NULL, err);
	if (!avail) {
		ward_wrap(err, "cgroup v2 root %s", v2_root);
		goto out;
	}
	skip = xcalloc(plan.n, sizeof(*skip));
	needed = xcalloc(plan.n + 1, sizeof(*needed));
	for (size_t i = 0; i < plan.n; i++) {
		const struct ward_res_entry *e = &plan.v[i];
		char hint[96];
		bool dup = false;
		if (!e->controller)
			continue;
		if (!has_word(avail, e->controller)) {
			skip[i] = true;
			if (e->flags & WARD_RES_DEFAULT)
				continue; /* asks for what the container has anyway */
			missing_hint(e->controller, hint, sizeof(hint));
			if (!warn) {
				/* what to do: engines set some limits by default (podman's
				 * pids-limit 2048) */
				ward_fail(err, 0,
					  "%s: the %s controller is not available in the cgroup v2 "
					  "hierarchy at %s%s; to run without this limit, leave it "
					  "unset%s or set \"missing_controllers\": \"warn\" in "
					  "ward.json",
					  e->field, e->controller, v2_root, hint,
					  !strcmp(e->controller, "pids")
					      ? " (podman: --pids-limit 0)"
					      : "");
				goto out;
			}
			ward_warn("%s: the %s controller is not available in the cgroup v2 "
				  "hierarchy at %s%s; %s=\"%s\" is not applied "
				  "(missing_controllers: warn)",
				  e->field, e->controller, v2_root, hint, e->file, e->value);
			{
				char *u = xasprintf("%s (%s)", e->field, e->controller);
				unenforced = strv_append(unenforced, u);
				free(u);
			}
			continue;
		}
		for (size_t j = 0; j < n_needed; j++)
			dup = dup || !strcmp(needed[j], e->controller);
		if (!dup)
			needed[n_needed++] = e->controller;
	}
	if (enable_controllers(v2_root, path, needed, n_needed, err) < 0)
		goto out;
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ward_fail_errno(err, "open cgroup %s", path);
		goto out;
	}
	if (update && plan.check_before_update && has_word(avail, "memory") &&
	    check_memory_usage(dfd, plan.memory_limit, err) < 0)
		goto out;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < plan.n; i++) {
			const struct ward_res_entry *e = &plan.v[i];
			if (skip[i])
				continue;
			if (pass == 0 && (e->flags & WARD_RES_RETRY_LAST)) {
				struct ward_err first;
				if (write_entry(dfd, e, &first) == 0)
					skip[i] = true;
				continue;
			}
			if (pass == 1 && !(e->flags & WARD_RES_RETRY_LAST))
				continue;
			if (write_entry(dfd, e, err) < 0)
				goto out;
		}
	}
	rc = 0;
out:
	ward_cgroup_res_plan_free(&plan);
	return rc;
}

/* cpu, memory, io and pids accounting for a new container (its usage in `ward events
 * --stats`, which CRI's ContainerStats reads for every container, with limits or without),
 * as runc enables every controller: each one the v2 root offers, added in every ancestor
 * where it can be. Best effort: an ancestor with processes of its own refuses a domain
 * controller, and accounting alone is no reason to fail a container. */
static void enable_accounting(const char *root, const char *path)
{
	static const char *const acct[] = {"cpu", "memory", "io", "pids"};
	struct ward_err e = {0};
	cleanup_fd int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *avail =
	    rootfd < 0 ? NULL : read_file_at(rootfd, "cgroup.controllers", NULL, &e);

	for (size_t i = 0; avail && i < ARRAY_SIZE(acct); i++) {
		char *one[] = {(char *)acct[i]};
		if (has_word(avail, acct[i]) && enable_controllers(root, path, one, 1, &e) < 0) {
			ward_debug("cgroup %s: no %s accounting: %s", path, acct[i], e.msg);
			ward_err_clear(&e);
		}
	}
}

int ward_cgroup_res_apply(const char *path, const char *resources_json, bool update,
			  bool missing_warn, struct ward_err *err)
{
	const char *root;
	if (!update) {
		struct ward_err ignored = {0};
		if ((root = ward_cgroup_v2_root(&ignored)))
			enable_accounting(root, path);
	}
	if (!resources_json)
		return 0;
	root = ward_cgroup_v2_root(err);
	if (!root)
		return -1;
	return ward_cgroup_res_apply_at(root, path, resources_json, update, missing_warn, err);
}

int ward_cgroup_budget_apply(const char *container_cgroup, const char *tenant, bool missing_warn,
			     const char *budget_json, struct ward_err *err)
{
	struct ward_err e2;
	const char *root = ward_cgroup_v2_root(&e2);
	cleanup_free char *dir = NULL;
	size_t before = strv_len(unenforced);

	if (!budget_json)
		return 0;
	if (!root)
		return ward_fail(err, 0, "%s", e2.msg);
	dir = xasprintf("%s/ward/%s", root, tenant);
	if (strncmp(container_cgroup, dir, strlen(dir)) || container_cgroup[strlen(dir)] != '/')
		return ward_fail(err, EINVAL, "cgroup %s is not below the tenant's %s",
				 container_cgroup, dir);
	if (ward_cgroup_res_apply(dir, budget_json, false, missing_warn, err) < 0)
		return ward_wrap(err, "tenant \"%s\": cgroup budget", tenant);
	for (size_t i = before; unenforced && unenforced[i]; i++) {
		char *u = xasprintf("tenant budget %s", unenforced[i]);
		free(unenforced[i]);
		unenforced[i] = u;
	}
	return 0;
}
