/* cgroup v2 files and the GPU lease ledger -> Prometheus text exposition. The cgroup
 * files are parsed by cgroup_stats.c (the same readers `ward events --stats` uses). */
#include "metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_stats.h"
#include "spec.h"
#include "state.h"
#include "util.h"

/* ---- collecting ------------------------------------------------------------------------ */

void ward_metrics_read_cgroup(struct ward_metrics_cgroup *c)
{
	static const struct {
		enum ward_metric m;
		const char *file, *key;
	} figures[] = {
	    {WARD_M_CPU_USEC, "cpu.stat", "usage_usec"},
	    {WARD_M_THROTTLED_USEC, "cpu.stat", "throttled_usec"},
	    {WARD_M_THROTTLED_PERIODS, "cpu.stat", "nr_throttled"},
	    {WARD_M_MEMORY_CURRENT, "memory.current", NULL},
	    {WARD_M_MEMORY_PEAK, "memory.peak", NULL},
	    {WARD_M_OOM_KILLS, "memory.events", "oom_kill"},
	    {WARD_M_PIDS_CURRENT, "pids.current", NULL},
	};
	cleanup_fd int dfd = -1;

	memset(c->have, 0, sizeof(c->have));
	memset(c->missing, 0, sizeof(c->missing));
	c->found = false;
	if (!c->path || !*c->path)
		return;
	dfd = open(c->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	c->found = true;
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++)
		c->have[figures[i].m] = ward_cgroup_stat_value(dfd, figures[i].file, figures[i].key,
							       &c->value[figures[i].m]);
	c->have[WARD_M_IO_READ_BYTES] = c->have[WARD_M_IO_WRITE_BYTES] = ward_cgroup_io_bytes(
	    dfd, &c->value[WARD_M_IO_READ_BYTES], &c->value[WARD_M_IO_WRITE_BYTES]);
	/* cpu.stat usage is core cgroup; throttling needs the cpu controller */
	c->missing[WARD_MC_CPU] = !c->have[WARD_M_THROTTLED_USEC];
	c->missing[WARD_MC_MEMORY] = !c->have[WARD_M_MEMORY_CURRENT];
	c->missing[WARD_MC_PIDS] = !c->have[WARD_M_PIDS_CURRENT];
	c->missing[WARD_MC_IO] = !c->have[WARD_M_IO_READ_BYTES];
}

static const char *annotation(const struct ward_state *st, const char *key)
{
	for (size_t i = 0; st->annotation_keys && st->annotation_keys[i]; i++)
		if (!strcmp(st->annotation_keys[i], key))
			return st->annotation_values[i];
	return NULL;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static void add_cgroup(struct ward_metrics *m, const struct ward_metrics_cgroup *c)
{
	m->cg = xrealloc(m->cg, (m->n_cg + 1) * sizeof(*m->cg));
	m->cg[m->n_cg++] = *c;
	ward_metrics_read_cgroup(&m->cg[m->n_cg - 1]);
}

/* One container of the state root; skipped when it vanished or its state is unreadable. */
static void collect_container(struct ward_metrics *m, int rootfd, const char *id,
			      const char *only_tenant)
{
	struct ward_err ignored = {0};
	struct ward_state st = {0};
	struct ward_metrics_cgroup c = {.is_container = true};
	const char *tenant, *name;
	cleanup_fd int dirfd = ward_state_open(rootfd, id, false, &ignored);

	if (dirfd < 0 || ward_state_read(dirfd, &st, &ignored) < 0)
		return;
	tenant = or_empty(ward_state_tenant(&st));
	if (only_tenant && strcmp(tenant, only_tenant)) {
		ward_state_clear(&st);
		return;
	}
	name = annotation(&st, WARD_ANN_CRI_CONTAINER);
	c.tenant = xstrdup(tenant);
	/* The pod as create resolved it (state.json's pod; an older state: its annotations). */
	c.namespace = xstrdup(
	    or_empty(st.pod.id ? st.pod.k8s_namespace : annotation(&st, WARD_ANN_CRI_NAMESPACE)));
	c.pod = xstrdup(or_empty(st.pod.id ? st.pod.name : annotation(&st, WARD_ANN_CRI_POD)));
	c.container = xstrdup(name && *name ? name : st.id);
	c.id = xstrdup(st.id);
	c.status = xstrdup(ward_status_name(ward_state_status(dirfd, &st)));
	c.path = xstrdup(or_empty(st.cgroup));
	ward_state_clear(&st);
	add_cgroup(m, &c);
}

static int cmp_cgroup(const void *a, const void *b)
{
	const struct ward_metrics_cgroup *x = a, *y = b;
	if (x->is_container != y->is_container)
		return x->is_container ? -1 : 1;
	return strcmp(x->is_container ? x->id : x->tenant, y->is_container ? y->id : y->tenant);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_tenant(char ***tenants, const char *t)
{
	/* a tenant name is a file name in tenants.d and a cgroup name */
	if (!t || !*t || strchr(t, '/') || !strcmp(t, ".") || !strcmp(t, ".."))
		return;
	for (size_t i = 0; *tenants && (*tenants)[i]; i++)
		if (!strcmp((*tenants)[i], t))
			return;
	*tenants = strv_append(*tenants, t);
}

int ward_metrics_collect(const char *state_root, const char *lib_dir, const char *cgroup_root,
			 char *const *configured_tenants, const char *only_tenant, int64_t now,
			 struct ward_metrics *m, struct ward_err *err)
{
	cleanup_fd int rootfd = -1;
	size_t n_containers;

	memset(m, 0, sizeof(*m));
	m->now = now;
	rootfd = open(state_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 && errno != ENOENT)
		return ward_fail_errno(err, "open state root %s", state_root);
	if (rootfd >= 0) {
		int fd = dup(rootfd);
		DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;
		if (!d) {
			if (fd >= 0)
				close(fd);
			return ward_fail_errno(err, "read state root %s", state_root);
		}
		while ((de = readdir(d)))
			if (ward_id_valid(de->d_name))
				collect_container(m, rootfd, de->d_name, only_tenant);
		closedir(d);
	}
	n_containers = m->n_cg;

	if (ward_gpu_ledger_read(lib_dir, &m->gpus, err) < 0) {
		ward_metrics_clear(m);
		return -1;
	}
	if (only_tenant) {
		m->only_tenant = xstrdup(only_tenant);
		add_tenant(&m->tenants, only_tenant);
	} else {
		for (size_t i = 0; configured_tenants && configured_tenants[i]; i++)
			add_tenant(&m->tenants, configured_tenants[i]);
		for (size_t i = 0; i < n_containers; i++)
			add_tenant(&m->tenants, m->cg[i].tenant);
		for (size_t i = 0; i < m->gpus.n; i++)
			add_tenant(&m->tenants, m->gpus.e[i].tenant);
	}
	if (m->tenants)
		qsort(m->tenants, strv_len(m->tenants), sizeof(char *), cmp_str);
	for (size_t i = 0; m->tenants && m->tenants[i]; i++) {
		struct ward_metrics_cgroup c = {.tenant = xstrdup(m->tenants[i])};
		if (cgroup_root)
			c.path = xasprintf("%s/ward/%s", cgroup_root, m->tenants[i]);
		add_cgroup(m, &c);
	}
	if (m->n_cg)
		qsort(m->cg, m->n_cg, sizeof(*m->cg), cmp_cgroup);
	return 0;
}

void ward_metrics_clear(struct ward_metrics *m)
{
	for (size_t i = 0; i < m->n_cg; i++) {
		struct ward_metrics_cgroup *c = &m->cg[i];
		free_all(c->tenant, c->namespace, c->pod, c->container, c->id, c->status, c->path);
	}
	free_all(m->cg, m->only_tenant);
	strv_free(m->tenants);
	ward_gpu_ledger_clear(&m->gpus);
	memset(m, 0, sizeof(*m));
}

/* ---- rendering ------------------------------------------------------------------------- */

char *ward_metrics_escape(const char *s)
{
	char *out = xmalloc(2 * strlen(s) + 1), *o = out;
	for (; *s; s++) {
		if (*s == '\\' || *s == '"') {
			*o++ = '\\';
			*o++ = *s;
		} else if (*s == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return out;
}

/* A family's type is in its name, as Prometheus names them: a counter's ends in _total,
 * the rest are gauges. */
static const char *family_type(const char *name)
{
	size_t n = strlen(name);
	return n > 6 && !strcmp(name + n - 6, "_total") ? "counter" : "gauge";
}

/* A sample of family name: # HELP and # TYPE first when the sample before (*last) was of
 * another family (the samples of a family are printed together), nothing for a family
 * without samples. */
static void sample_start(FILE *f, const char **last, const char *name, const char *help)
{
	if (!*last || strcmp(*last, name))
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, family_type(name));
	*last = name;
	fputs(name, f);
}

/* Labels: pairs of name and value, NULL-terminated. */
static void labels(FILE *f, const char *const *kv)
{
	for (size_t i = 0; kv[i]; i += 2) {
		cleanup_free char *v = ward_metrics_escape(kv[i + 1]);
		fprintf(f, "%s%s=\"%s\"", i ? "," : "{", kv[i], v);
	}
	fputs(kv[0] ? "}" : "", f);
}

/* The labels of a cgroup, and one more pair (extra_key NULL: none). */
static void cgroup_labels(FILE *f, const struct ward_metrics_cgroup *c, const char *extra_key,
			  const char *extra_value)
{
	const char *kv[16];
	size_t n = 0;
	kv[n++] = "scope";
	kv[n++] = c->is_container ? "container" : "tenant";
	kv[n++] = "tenant";
	kv[n++] = or_empty(c->tenant);
	if (c->is_container) {
		const char *more[] = {"namespace", c->namespace, "pod", c->pod,
				      "container", c->container, "id",	c->id};
		for (size_t i = 0; i < 8; i++)
			kv[n++] = or_empty(more[i]);
	}
	if (extra_key) {
		kv[n++] = extra_key;
		kv[n++] = extra_value;
	}
	kv[n] = NULL;
	labels(f, kv);
}

/* Microseconds as exact decimal seconds. */
static void print_usec(FILE *f, uint64_t usec)
{
	fprintf(f, " %" PRIu64 ".%06" PRIu64 "\n", usec / 1000000, usec % 1000000);
}

static void cgroup_families(FILE *f, const struct ward_metrics *m)
{
	static const struct {
		enum ward_metric m;
		const char *name, *help;
		bool usec;
	} figures[] = {
	    {WARD_M_CPU_USEC, "ward_cpu_seconds_total",
	     "CPU time used by the cgroup's processes (cpu.stat usage_usec).", true},
	    {WARD_M_THROTTLED_USEC, "ward_cpu_throttled_seconds_total",
	     "Time the cgroup was throttled by its CPU quota (cpu.stat throttled_usec).", true},
	    {WARD_M_THROTTLED_PERIODS, "ward_cpu_throttled_periods_total",
	     "CPU quota periods in which the cgroup was throttled (cpu.stat nr_throttled).", false},
	    {WARD_M_MEMORY_CURRENT, "ward_memory_current_bytes",
	     "Memory charged to the cgroup now (memory.current).", false},
	    {WARD_M_MEMORY_PEAK, "ward_memory_peak_bytes",
	     "Highest memory charged to the cgroup (memory.peak).", false},
	    {WARD_M_OOM_KILLS, "ward_oom_kills_total",
	     "Processes of the cgroup killed by the OOM killer (memory.events oom_kill).", false},
	    {WARD_M_PIDS_CURRENT, "ward_pids_current", "Tasks in the cgroup now (pids.current).",
	     false},
	    {WARD_M_IO_READ_BYTES, "ward_io_read_bytes_total",
	     "Bytes read from block devices (io.stat rbytes summed over devices).", false},
	    {WARD_M_IO_WRITE_BYTES, "ward_io_write_bytes_total",
	     "Bytes written to block devices (io.stat wbytes summed over devices).", false},
	};
	static const char *const controllers[WARD_MC_COUNT] = {"cpu", "memory", "pids", "io"};
	const char *last = NULL;

	for (size_t k = 0; k < sizeof(figures) / sizeof(figures[0]); k++) {
		for (size_t i = 0; i < m->n_cg; i++) {
			const struct ward_metrics_cgroup *c = &m->cg[i];
			if (!c->have[figures[k].m])
				continue;
			sample_start(f, &last, figures[k].name, figures[k].help);
			cgroup_labels(f, c, NULL, NULL);
			if (figures[k].usec)
				print_usec(f, c->value[figures[k].m]);
			else
				fprintf(f, " %" PRIu64 "\n", c->value[figures[k].m]);
		}
	}
	for (size_t i = 0; i < m->n_cg; i++) {
		sample_start(f, &last, "ward_cgroup_found",
			     "1 if the cgroup directory exists (0: no figures for it).");
		cgroup_labels(f, &m->cg[i], NULL, NULL);
		fprintf(f, " %d\n", m->cg[i].found);
	}
	for (size_t i = 0; i < m->n_cg; i++) {
		for (int k = 0; m->cg[i].found && k < WARD_MC_COUNT; k++) {
			if (!m->cg[i].missing[k])
				continue;
			sample_start(f, &last, "ward_cgroup_controller_missing",
				     "1 for each controller whose files the cgroup lacks: its "
				     "figures are left out.");
			cgroup_labels(f, &m->cg[i], "controller", controllers[k]);
			fputs(" 1\n", f);
		}
	}
	for (size_t i = 0; i < m->n_cg; i++) {
		if (!m->cg[i].is_container)
			continue;
		sample_start(f, &last, "ward_container_info",
			     "A container in the state root, with its status.");
		cgroup_labels(f, &m->cg[i], "status", or_empty(m->cg[i].status));
		fputs(" 1\n", f);
	}
}

static bool gpu_shown(const struct ward_metrics *m, const struct ward_gpu_entry *e)
{
	return !m->only_tenant || (e->tenant && !strcmp(e->tenant, m->only_tenant));
}

static void gpu_families(FILE *f, const struct ward_metrics *m)
{
	static const enum ward_gpu_state states[] = {WARD_GPU_FREE, WARD_GPU_LEASED, WARD_GPU_DIRTY,
						     WARD_GPU_WIPING, WARD_GPU_QUARANTINED};
	const char *last = NULL;

	for (size_t i = 0; i < m->gpus.n; i++) {
		const struct ward_gpu_entry *e = &m->gpus.e[i];
		if (!gpu_shown(m, e))
			continue;
		for (size_t k = 0; k < sizeof(states) / sizeof(states[0]); k++) {
			sample_start(
			    f, &last, "ward_gpu_state",
			    "1 for the state the GPU is in (lease ledger), 0 for the others.");
			labels(f, (const char *[]){"uuid", e->uuid, "state",
						   ward_gpu_state_name(states[k]), NULL});
			fprintf(f, " %d\n", e->state == states[k]);
		}
	}
#define PER_GPU(name, help, fmt, expr)                                                             \
	for (size_t i = 0; i < m->gpus.n; i++) {                                                   \
		const struct ward_gpu_entry *e = &m->gpus.e[i];                                    \
		if (!gpu_shown(m, e))                                                              \
			continue;                                                                  \
		sample_start(f, &last, name, help);                                                \
		labels(f, (const char *[]){"uuid", e->uuid, NULL});                                \
		fprintf(f, " " fmt "\n", (expr));                                                  \
	}
	PER_GPU("ward_gpu_quarantined",
		"1 while the GPU is quarantined (a wipe failed; ward gpu release after a reset).",
		"%d", e->state == WARD_GPU_QUARANTINED)
	for (size_t i = 0; i < m->gpus.n; i++) {
		const struct ward_gpu_entry *e = &m->gpus.e[i];
		uint64_t total = e->lease_seconds;
		if (!gpu_shown(m, e))
			continue;
		for (size_t h = 0; h < e->n_holders; h++)
			if (m->now > e->holders[h].since)
				total += (uint64_t)(m->now - e->holders[h].since);
		sample_start(f, &last, "ward_gpu_lease_seconds_total",
			     "Seconds containers have held the GPU: closed leases plus "
			     "the open ones until now.");
		labels(f, (const char *[]){"uuid", e->uuid, NULL});
		fprintf(f, " %" PRIu64 "\n", total);
	}
	for (size_t i = 0; i < m->gpus.n; i++) {
		const struct ward_gpu_entry *e = &m->gpus.e[i];
		if (!gpu_shown(m, e))
			continue;
		for (size_t h = 0; h < e->n_holders; h++) {
			const struct ward_gpu_holder *hd = &e->holders[h];
			/* pod is "namespace/name" */
			const char *slash = hd->pod ? strchr(hd->pod, '/') : NULL;
			cleanup_free char *ns =
			    slash ? xasprintf("%.*s", (int)(slash - hd->pod), hd->pod)
				  : xstrdup("");
			sample_start(f, &last, "ward_gpu_lease_active_seconds",
				     "Seconds an open lease has held the GPU, per holder.");
			labels(f, (const char *[]){"uuid", e->uuid, "tenant", or_empty(e->tenant),
						   "namespace", ns, "pod",
						   slash ? slash + 1 : or_empty(hd->pod), "id",
						   hd->container, NULL});
			fprintf(f, " %" PRId64 "\n", m->now > hd->since ? m->now - hd->since : 0);
		}
	}
	PER_GPU("ward_gpu_wipes_total", "Wipes of the GPU's memory.", "%" PRIu64, e->wipes)
	PER_GPU("ward_gpu_wipe_failures_total",
		"Wipes of the GPU's memory that failed (GPU quarantined).", "%" PRIu64,
		e->wipe_failures)
	PER_GPU("ward_gpu_wipe_bytes_total", "Bytes of GPU memory zeroed and verified by wipes.",
		"%" PRIu64, e->wipe_bytes)
	PER_GPU("ward_gpu_wipe_seconds_total", "Wall time spent wiping the GPU's memory.", "%.6f",
		e->wipe_seconds)
#undef PER_GPU
	for (size_t t = 0; m->tenants && m->tenants[t]; t++) {
		unsigned n = 0;
		for (size_t i = 0; i < m->gpus.n; i++)
			n += m->gpus.e[i].state == WARD_GPU_LEASED && m->gpus.e[i].tenant &&
			     !strcmp(m->gpus.e[i].tenant, m->tenants[t]);
		sample_start(f, &last, "ward_tenant_gpus_leased",
			     "GPUs leased to the tenant's containers now.");
		labels(f, (const char *[]){"tenant", m->tenants[t], NULL});
		fprintf(f, " %u\n", n);
	}
}

char *ward_metrics_render(const struct ward_metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	cgroup_families(f, m);
	gpu_families(f, m);
	if (fclose(f) != 0)
		abort();
	return buf;
}
