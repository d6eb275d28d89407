/* linux.resources -> cgroup v2 files, through raw cgroupfs (no systemd).
 *
 * Two steps, so the conversion can be tested without a cgroup:
 *   ward_cgroup_res_plan_res: the parsed linux.resources (resources.h) -> a list of
 *                          (file, value, controller, field path); pure, no I/O;
 *                          ward_resources_parse checked every value, errors name the field.
 *   ward_cgroup_res_apply: checks that the hierarchy offers each needed controller,
 *                          enables those controllers in cgroup.subtree_control from the v2
 *                          root down to the container's parent, then writes the files.
 * linux.resources.devices is not handled here: see bpfdev.h.
 *
 * Conversions (as runc / crun, opencontainers/cgroups):
 *   memory.limit -> memory.max, reservation -> memory.low, swap (v1: memory+swap) ->
 *   memory.swap.max = swap - limit (-1 = max), cpu.shares -> cpu.weight (the 2025 quadratic
 *   formula that maps 2 -> 1, 1024 -> 100, 262144 -> 10000), quota/period -> cpu.max,
 *   burst -> cpu.max.burst, idle -> cpu.idle, cpus/mems -> cpuset.cpus/cpuset.mems,
 *   pids.limit -> pids.max (<= 0: max), blockIO.weight 10..1000 -> io.weight 1..10000
 *   (io.bfq.weight unconverted when BFQ offers it), weightDevice -> io.weight "MAJ:MIN W",
 *   throttle*Device -> io.max "MAJ:MIN rbps=.. wbps=.. riops=.. wiops=..",
 *   hugepageLimits -> hugetlb.<size>.max (+ .rsvd.max where present), rdma -> rdma.max,
 *   unified -> written as given, last.
 *
 * Missing controllers: a limit whose controller the v2 hierarchy does not offer (hybrid
 * hosts bind memory, cpu, pids, io to cgroup v1) fails with an error naming the field and
 * the controller, unless ward.json says "missing_controllers": "warn": then ward logs one
 * warning per limit it cannot apply, goes on, and lists the limit in
 * ward_cgroup_res_unenforced() (create stores the list in the container's state). A value equal to
 * what the container gets without asking (the kernel default: memory.max "max", cpu.weight 100 i.e.
 * cpu.shares 1024, cpu.max "max 100000", pids.max "max", ...) never needs its controller,
 * so the resources containerd sends by default run on a hybrid host. */
#ifndef WARD_CGROUP_RES_H
#define WARD_CGROUP_RES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "resources.h"

enum ward_res_flags {
	/* The value is the kernel's default for a new cgroup: needs no controller. */
	WARD_RES_DEFAULT = 1u << 0,
	/* A missing file is fine (memory.swap.max without swap accounting, rsvd.max). */
	WARD_RES_OPTIONAL = 1u << 1,
	/* If the write fails, try once more after the other files (cpu.max.burst vs cpu.max). */
	WARD_RES_RETRY_LAST = 1u << 2,
};

struct ward_res_entry {
	char *file;	  /* "memory.max", relative to the container's cgroup */
	char *value;	  /* what is written */
	char *controller; /* "memory"; NULL for core files that need none */
	char *field;	  /* "linux.resources.memory.limit" */
	char *alt_file;	  /* written instead (with alt_value) when it exists: io.bfq.weight */
	char *alt_value;
	unsigned flags; /* enum ward_res_flags */
};

struct ward_res_plan {
	struct ward_res_entry *v;
	size_t n;
	char **ignored;		  /* v1-only knobs given (swappiness, ...): warned, not applied */
	bool check_before_update; /* memory.checkBeforeUpdate */
	int64_t memory_limit;	  /* memory.limit as given (0 = unset), for checkBeforeUpdate */
};

/* Convert linux.resources, parsed (resources.h; NULL: nothing to do). Pure and cannot
 * fail: the parser checked every value. The knobs cgroup v2 lacks entirely are listed in
 * plan->ignored, apply warns about them. */
void ward_cgroup_res_plan_res(const struct ward_resources *res, struct ward_res_plan *plan);
/* The same from JSON text (NULL or "null": nothing to do): ward_resources_parse + the above
 * (tenant budgets in ward.json, hostcheck). */
int ward_cgroup_res_plan(const char *resources_json, struct ward_res_plan *plan,
			 struct ward_err *err);
void ward_cgroup_res_plan_free(struct ward_res_plan *plan);

/* The unified key check and the list of decoded fields (ward_cgroup_res_unified_key_ok,
 * ward_cgroup_res_fields) are the parser's: resources.h. */

/* Apply to the cgroup at path (absolute, below the v2 root). update: the container exists
 * (memory.checkBeforeUpdate is honoured). missing_warn: ward.json's "missing_controllers"
 * is "warn" (the caller's configuration; the default refuses). */
int ward_cgroup_res_apply(const char *path, const struct ward_resources *res, bool update,
			  bool missing_warn, struct ward_err *err);
/* The same with an explicit v2 root (tests use a fake tree in a tmpdir). */
int ward_cgroup_res_apply_at(const char *v2_root, const char *path,
			     const struct ward_resources *res, bool update, bool missing_warn,
			     struct ward_err *err);

/* The limits this process let pass unenforced (missing_controllers: warn), as
 * "linux.resources.memory.limit (memory)". NULL-terminated or NULL. */
char *const *ward_cgroup_res_unenforced(void);

/* The tenant's budget (linux.resources-shaped JSON, NULL: none) on <v2>/ward/<tenant>, the
 * parent of every container of the tenant (container_cgroup must lie below it). */
int ward_cgroup_budget_apply(const char *container_cgroup, const char *tenant, bool missing_warn,
			     const char *budget_json, struct ward_err *err);

/* cpu.shares -> cpu.weight, blockIO weight 10..1000 -> io.weight 1..10000 (0 stays 0). */
uint64_t ward_cpu_shares_to_weight(uint64_t shares);
uint64_t ward_blkio_weight_to_io_weight(uint64_t weight);

#endif
