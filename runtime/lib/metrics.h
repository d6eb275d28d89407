/* ward metrics: usage per tenant and per container from cgroup v2 files, and the GPU lease
 * ledger, as Prometheus text exposition (format 0.0.4).
 *
 * Collecting reads files and nothing else (no cgroup or state is created); rendering is
 * pure, so tests feed it fixtures. A figure whose file (or key) the cgroup lacks is left
 * out, never written as 0; ward_cgroup_controller_missing says which controller's files are
 * not there, ward_cgroup_found whether the cgroup directory exists at all. */
#ifndef WARD_METRICS_H
#define WARD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "gpu_lease.h"

enum ward_metric {
	WARD_M_CPU_USEC,	  /* cpu.stat usage_usec */
	WARD_M_THROTTLED_USEC,	  /* cpu.stat throttled_usec (cpu controller) */
	WARD_M_THROTTLED_PERIODS, /* cpu.stat nr_throttled (cpu controller) */
	WARD_M_MEMORY_CURRENT,	  /* memory.current */
	WARD_M_MEMORY_PEAK,	  /* memory.peak (Linux >= 5.19) */
	WARD_M_OOM_KILLS,	  /* memory.events oom_kill */
	WARD_M_PIDS_CURRENT,	  /* pids.current */
	WARD_M_IO_READ_BYTES,	  /* io.stat rbytes, summed over devices */
	WARD_M_IO_WRITE_BYTES,	  /* io.stat wbytes, summed over devices */
	WARD_M_COUNT,
};

/* The controllers whose files ward reads, for ward_cgroup_controller_missing. */
enum ward_metric_controller {
	WARD_MC_CPU,
	WARD_MC_MEMORY,
	WARD_MC_PIDS,
	WARD_MC_IO,
	WARD_MC_COUNT
};

struct ward_metrics_cgroup {
	bool is_container; /* scope="container", else scope="tenant" */
	/* labels: tenant always; the rest for containers only ("" when unknown). container is
	 * the CRI container name, else the container id */
	char *tenant, *namespace, *pod, *container, *id;
	char *status; /* containers: "running", "stopped", ... */
	char *path;   /* the cgroup directory ("" or NULL: the container has none) */
	bool found;   /* the directory exists */
	bool have[WARD_M_COUNT];
	uint64_t value[WARD_M_COUNT];
	bool missing[WARD_MC_COUNT];
};

struct ward_metrics {
	struct ward_metrics_cgroup *cg; /* containers sorted by id, then tenants by name */
	size_t n_cg;
	char **tenants; /* every tenant reported (NULL-terminated, sorted) */
	struct ward_gpu_ledger gpus;
	char *only_tenant; /* GPUs shown: those whose current or last tenant this is (NULL: all) */
	int64_t now;	   /* unix seconds: open GPU leases are counted up to here */
};

/* Read one cgroup directory into c->found, c->have/value and c->missing. */
void ward_metrics_read_cgroup(struct ward_metrics_cgroup *c);

/* The containers under state_root, the host's GPU ledger in lib_dir, and the tenant cgroups
 * <cgroup_root>/ward/<tenant> (cgroup_root NULL: no tenant cgroups). The tenants reported
 * are the configured ones (NULL-terminated, may be NULL) plus those of the containers and
 * of the ledger; only_tenant non-NULL narrows everything to that one tenant (GPUs: those
 * whose current or last tenant it is). A missing state root is an empty one. */
int ward_metrics_collect(const char *state_root, const char *lib_dir, const char *cgroup_root,
			 char *const *configured_tenants, const char *only_tenant, int64_t now,
			 struct ward_metrics *m, struct ward_err *err);
void ward_metrics_clear(struct ward_metrics *m);

/* The exposition text (malloc'd): for each metric family # HELP, # TYPE, then its samples. */
char *ward_metrics_render(const struct ward_metrics *m);

/* A label value escaped for the exposition format (\ " and newline), malloc'd. */
char *ward_metrics_escape(const char *s);

#endif
