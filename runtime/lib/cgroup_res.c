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

#include "cgroup.h"
#include "log.h"
#include "resources.h"
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
		struct ward_res_entry *w = &plan->v[i];
		free_all(w->file, w->value, w->controller, w->field, w->alt_file, w->alt_value);
	}
	free(plan->v);
	strv_free(plan->ignored);
	memset(plan, 0, sizeof(*plan));
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

/* The plan_* below convert a parsed struct (resources.c checked every value). */

static void plan_memory(const struct ward_resources *r, struct ward_res_plan *plan)
{
	const struct ward_res_memory *m = &r->memory;
	int64_t limit = m->limit.v, reservation = m->reservation.v, swap = m->swap.v;
	char buf[32];

	if (!r->has_memory)
		return;
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
	plan->check_before_update = m->check_before_update.v;

	if (m->kernel.set && m->kernel.v != 0)
		v1_only(plan, P ".memory.kernel",
			"kernel memory limits are deprecated and not in cgroup v2");
	if (m->kernel_tcp.set && m->kernel_tcp.v != 0)
		v1_only(plan, P ".memory.kernelTCP", "kernel TCP limits are not in cgroup v2");
	if (m->swappiness.set)
		v1_only(plan, P ".memory.swappiness", "cgroup v2 has no per-cgroup swappiness");
	if (m->disable_oom_killer.set && m->disable_oom_killer.v)
		v1_only(plan, P ".memory.disableOOMKiller",
			"cgroup v2 cannot disable the OOM killer");
}

static void plan_cpu(const struct ward_resources *r, struct ward_res_plan *plan)
{
	const struct ward_res_cpu *c = &r->cpu;
	uint64_t shares = c->shares.v, period = c->period.v, burst = c->burst.v;
	int64_t quota = c->quota.v, idle = c->idle.v;

	if (!r->has_cpu)
		return;
	if (shares != 0) {
		uint64_t w = ward_cpu_shares_to_weight(shares);
		/* 1024 shares (v1's default) -> 100, v2's default: needs no cpu controller */
		add(plan, "cpu", P ".cpu.shares", w == 100 ? WARD_RES_DEFAULT : 0, "cpu.weight",
		    "%" PRIu64, w);
	}
	/* Burst before cpu.max: lowering both needs the burst first, raising both the quota
	 * first, so a failing burst is tried again after cpu.max (as runc). */
	if (c->burst.set)
		add(plan, "cpu", P ".cpu.burst",
		    (burst == 0 ? WARD_RES_DEFAULT : 0) | WARD_RES_RETRY_LAST, "cpu.max.burst",
		    "%" PRIu64, burst);
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
	if (c->idle.set)
		add(plan, "cpu", P ".cpu.idle", idle == 0 ? WARD_RES_DEFAULT : 0, "cpu.idle",
		    "%" PRId64, idle);
	if (c->cpus && *c->cpus)
		add(plan, "cpuset", P ".cpu.cpus", 0, "cpuset.cpus", "%s", c->cpus);
	if (c->mems && *c->mems)
		add(plan, "cpuset", P ".cpu.mems", 0, "cpuset.mems", "%s", c->mems);
	if (c->realtime_runtime.set && c->realtime_runtime.v != 0)
		v1_only(plan, P ".cpu.realtimeRuntime",
			"cgroup v2 has no real-time group scheduling");
	if (c->realtime_period.set && c->realtime_period.v != 0)
		v1_only(plan, P ".cpu.realtimePeriod",
			"cgroup v2 has no real-time group scheduling");
}

static void plan_pids(const struct ward_resources *r, struct ward_res_plan *plan)
{
	int64_t limit = r->pids_limit.v;
	if (!r->pids_limit.set)
		return;
	/* runtime-spec: -1 (and runc: any value <= 0) means unlimited */
	if (limit <= 0)
		add(plan, "pids", P ".pids.limit", WARD_RES_DEFAULT, "pids.max", "max");
	else
		add(plan, "pids", P ".pids.limit", 0, "pids.max", "%" PRId64, limit);
}

/* One io.max line per device, all four limits of that device together. */
struct io_max {
	int64_t major, minor;
	uint64_t v[4]; /* rbps wbps riops wiops; 0 = not given */
	bool given[4];
	char field[160];
};

static void plan_io(const struct ward_resources *r, struct ward_res_plan *plan)
{
	static const char *const keys[4] = {"rbps", "wbps", "riops", "wiops"};
	const char *p = P ".blockIO";
	const struct ward_res_block_io *b = &r->block_io;
	cleanup_free struct io_max *max = NULL;
	size_t n_max = 0;

	if (!r->has_block_io)
		return;
	if (b->weight.v != 0) {
		add(plan, "io", P ".blockIO.weight", 0, "io.weight", "default %" PRIu64,
		    ward_blkio_weight_to_io_weight(b->weight.v));
		plan->v[plan->n - 1].alt_file = xstrdup("io.bfq.weight");
		plan->v[plan->n - 1].alt_value = xasprintf("default %" PRIu64, b->weight.v);
	}
	if (b->leaf_weight.v != 0)
		v1_only(plan, P ".blockIO.leafWeight", "cgroup v2 has no leaf weights");

	for (size_t i = 0; i < b->n_weight_device; i++) {
		const struct ward_res_weight_device *d = &b->weight_device[i];
		char path[128];
		snprintf(path, sizeof(path), "%s.weightDevice[%zu]", p, i);
		if (d->leaf_weight.v != 0)
			v1_only(plan, path, "cgroup v2 has no leaf weights");
		if (d->weight.v == 0)
			continue;
		add(plan, "io", path, 0, "io.weight", "%" PRId64 ":%" PRId64 " %" PRIu64, d->major,
		    d->minor, ward_blkio_weight_to_io_weight(d->weight.v));
		plan->v[plan->n - 1].alt_file = xstrdup("io.bfq.weight");
		plan->v[plan->n - 1].alt_value =
		    xasprintf("%" PRId64 ":%" PRId64 " %" PRIu64, d->major, d->minor, d->weight.v);
	}

	for (int k = 0; k < WARD_RES_N_THROTTLE; k++) {
		for (size_t i = 0; i < b->n_throttle[k]; i++) {
			const struct ward_res_throttle_device *d = &b->throttle[k][i];
			size_t j;
			for (j = 0; j < n_max; j++)
				if (max[j].major == d->major && max[j].minor == d->minor)
					break;
			if (j == n_max) {
				max = xrealloc(max, (n_max + 1) * sizeof(*max));
				memset(&max[j], 0, sizeof(*max));
				max[j].major = d->major;
				max[j].minor = d->minor;
				snprintf(max[j].field, sizeof(max[j].field), "%s.%s[%zu]", p,
					 ward_res_throttle_names[k], i);
				n_max++;
			}
			max[j].v[k] = d->rate;
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
}

static void plan_hugetlb(const struct ward_resources *r, struct ward_res_plan *plan)
{
	for (size_t i = 0; i < r->n_hugepage_limits; i++) {
		const struct ward_res_hugepage *h = &r->hugepage_limits[i];
		char path[96], file[64];
		snprintf(path, sizeof(path), P ".hugepageLimits[%zu]", i);
		snprintf(file, sizeof(file), "hugetlb.%s.max", h->page_size);
		add(plan, "hugetlb", path, 0, file, "%" PRIu64, h->limit);
		/* reservations too (kernel >= 5.7), as runc: else a reserved-but-unfaulted
		 * mapping escapes the limit */
		snprintf(file, sizeof(file), "hugetlb.%s.rsvd.max", h->page_size);
		add(plan, "hugetlb", path, WARD_RES_OPTIONAL, file, "%" PRIu64, h->limit);
	}
}

static void plan_rdma(const struct ward_resources *r, struct ward_res_plan *plan)
{
	for (size_t i = 0; i < r->n_rdma; i++) {
		const struct ward_res_rdma *d = &r->rdma[i];
		char path[160], line[256];
		size_t len;
		if (!d->hca_handles.set && !d->hca_objects.set)
			continue;
		snprintf(path, sizeof(path), P ".rdma.%s", d->device);
		len = (size_t)snprintf(line, sizeof(line), "%s", d->device);
		if (d->hca_handles.set)
			len += (size_t)snprintf(line + len, sizeof(line) - len,
						" hca_handle=%" PRIu64, d->hca_handles.v);
		if (d->hca_objects.set)
			snprintf(line + len, sizeof(line) - len, " hca_object=%" PRIu64,
				 d->hca_objects.v);
		add(plan, "rdma", path, 0, "rdma.max", "%s", line);
	}
}

static void plan_network(const struct ward_resources *r, struct ward_res_plan *plan)
{
	if (r->network.class_id.set)
		v1_only(plan, P ".network.classID", "net_cls is a cgroup v1 controller");
	if (r->network.n_priorities)
		v1_only(plan, P ".network.priorities", "net_prio is a cgroup v1 controller");
}

static void plan_unified(const struct ward_resources *r, struct ward_res_plan *plan)
{
	for (size_t i = 0; i < r->n_unified; i++) {
		const char *key = r->unified_keys[i];
		char path[320], controller[64];
		size_t clen = strcspn(key, ".");
		snprintf(path, sizeof(path), P ".unified.%s", key);
		memcpy(controller, key, clen);
		controller[clen] = '\0';
		add(plan, strcmp(controller, "cgroup") ? controller : NULL, path, 0, key, "%s",
		    r->unified_values[i]);
	}
}

void ward_cgroup_res_plan_res(const struct ward_resources *res, struct ward_res_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	if (!res)
		return;
	plan_memory(res, plan);
	plan_cpu(res, plan);
	plan_pids(res, plan);
	plan_io(res, plan);
	plan_hugetlb(res, plan);
	plan_rdma(res, plan);
	plan_network(res, plan);
	plan_unified(res, plan);
}

int ward_cgroup_res_plan(const char *resources_json, struct ward_res_plan *plan,
			 struct ward_err *err)
{
	struct ward_resources res;

	memset(plan, 0, sizeof(*plan));
	if (ward_resources_parse(resources_json, &res, err) < 0)
		return -1;
	ward_cgroup_res_plan_res(&res, plan);
	ward_resources_free(&res);
	return 0;
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

int ward_cgroup_res_apply_at(const char *v2_root, const char *path,
			     const struct ward_resources *res, bool update, bool warn,
			     struct ward_err *err)
{
	struct ward_res_plan plan;
	cleanup_free char *avail = NULL;
	cleanup_free char **needed = NULL;
	cleanup_free bool *skip = NULL;
	cleanup_fd int rootfd = -1;
	cleanup_fd int dfd = -1;
	size_t n_needed = 0;
	int rc = -1;

	ward_cgroup_res_plan_res(res, &plan);
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

int ward_cgroup_res_apply(const char *path, const struct ward_resources *res, bool update,
			  bool missing_warn, struct ward_err *err)
{
	const char *root;
	if (!update) {
		struct ward_err ignored = {0};
		if ((root = ward_cgroup_v2_root(&ignored)))
			enable_accounting(root, path);
	}
	if (!res)
		return 0;
	root = ward_cgroup_v2_root(err);
	if (!root)
		return -1;
	return ward_cgroup_res_apply_at(root, path, res, update, missing_warn, err);
}

int ward_cgroup_budget_apply(const char *container_cgroup, const char *tenant, bool missing_warn,
			     const char *budget_json, struct ward_err *err)
{
	struct ward_err e2;
	const char *root = ward_cgroup_v2_root(&e2);
	cleanup_free char *dir = NULL;
	size_t before = strv_len(unenforced);
	struct ward_resources budget;
	int rc;

	if (!budget_json)
		return 0;
	if (!root)
		return ward_fail(err, 0, "%s", e2.msg);
	dir = xasprintf("%s/ward/%s", root, tenant);
	if (strncmp(container_cgroup, dir, strlen(dir)) || container_cgroup[strlen(dir)] != '/')
		return ward_fail(err, EINVAL, "cgroup %s is not below the tenant's %s",
				 container_cgroup, dir);
	if (ward_resources_parse(budget_json, &budget, err) < 0)
		return ward_wrap(err, "tenant \"%s\": cgroup budget", tenant);
	rc = ward_cgroup_res_apply(dir, &budget, false, missing_warn, err);
	ward_resources_free(&budget);
	if (rc < 0)
		return ward_wrap(err, "tenant \"%s\": cgroup budget", tenant);
	for (size_t i = before; unenforced && unenforced[i]; i++) {
		char *u = xasprintf("tenant budget %s", unenforced[i]);
		free(unenforced[i]);
		unenforced[i] = u;
	}
	return 0;
}
