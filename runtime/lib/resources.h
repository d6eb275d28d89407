/* linux.resources (runtime-spec config-linux.md) as a typed struct, parsed once.
 *
 * ward_resources_parse checks every field the way the cgroup v2 conversion (cgroup_res.c)
 * needs it, with the error texts naming the JSON path ("linux.resources.memory.limit: must
 * be an integer"); a parsed struct is therefore valid and the conversion cannot fail.
 * Every optional number carries "set": absent and JSON null are unset, as in the spec.
 * linux.resources.devices is decoded last, into bpfdev.h's rules (ward_bpfdev_rules_from,
 * with its error texts), as create and update checked it after the cgroup limits. */
#ifndef WARD_RESOURCES_H
#define WARD_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bpfdev.h"
#include "err.h"

struct ward_res_i64 {
	bool set;
	int64_t v;
};
struct ward_res_u64 {
	bool set;
	uint64_t v;
};
struct ward_res_bool {
	bool set;
	bool v;
};

struct ward_res_memory {
	struct ward_res_i64 limit, reservation, swap, kernel, kernel_tcp;
	struct ward_res_u64 swappiness; /* 0..100 */
	struct ward_res_bool disable_oom_killer, use_hierarchy, check_before_update;
};

struct ward_res_cpu {
	struct ward_res_u64 shares, period, burst, realtime_period;
	struct ward_res_i64 quota, realtime_runtime, idle; /* quota -1 or > 0; idle 0 or 1 */
	char *cpus, *mems;				   /* NULL: unset */
};

struct ward_res_weight_device {
	int64_t major, minor; /* required, 0..0xfff : 0..0xfffff */
	struct ward_res_u64 weight, leaf_weight;
};

struct ward_res_throttle_device {
	int64_t major, minor;
	uint64_t rate; /* required */
};

enum ward_res_throttle {
	WARD_RES_READ_BPS,
	WARD_RES_WRITE_BPS,
	WARD_RES_READ_IOPS,
	WARD_RES_WRITE_IOPS,
	WARD_RES_N_THROTTLE
};

struct ward_res_block_io {
	struct ward_res_u64 weight, leaf_weight; /* 10..1000 when non-zero */
	struct ward_res_weight_device *weight_device;
	size_t n_weight_device;
	struct ward_res_throttle_device *throttle[WARD_RES_N_THROTTLE];
	size_t n_throttle[WARD_RES_N_THROTTLE];
};

struct ward_res_hugepage {
	char *page_size; /* "2MB" */
	uint64_t limit;
};

struct ward_res_rdma {
	char *device;
	struct ward_res_u64 hca_handles, hca_objects;
};

struct ward_res_net_prio {
	char *name;
	uint32_t priority;
};

struct ward_resources {
	bool has_memory, has_cpu, has_pids, has_block_io, has_network;
	struct ward_res_memory memory;
	struct ward_res_cpu cpu;
	struct ward_res_i64 pids_limit;
	struct ward_res_block_io block_io;
	struct ward_res_hugepage *hugepage_limits;
	size_t n_hugepage_limits;
	struct ward_res_rdma *rdma; /* in the JSON object's order */
	size_t n_rdma;
	struct {
		struct ward_res_u64 class_id;
		struct ward_res_net_prio *priorities; /* NULL: none given */
		size_t n_priorities; /* the priorities given (net_prio is v1 only) */
	} network;
	char **unified_keys, **unified_values; /* NULL-terminated, in order */
	size_t n_unified;
	bool has_devices; /* "devices" given (update replaces the program only then) */
	struct ward_bpfdev_rule *devices;
	size_t n_devices;
};

/* The names of the throttle lists ("throttleReadBpsDevice", ...), by enum ward_res_throttle. */
extern const char *const ward_res_throttle_names[WARD_RES_N_THROTTLE];

/* Parse linux.resources. res NULL or JSON null: an empty struct (all unset). */
int ward_resources_from_json(json_t *res, struct ward_resources *out, struct ward_err *err);
/* The same from JSON text (NULL or "null": empty). */
int ward_resources_parse(const char *text, struct ward_resources *out, struct ward_err *err);
/* The same for `ward update -r`: memory.swap without memory.limit passes, as update takes
 * the limit in force; ward_container_update runs ward_resources_check once it has. */
int ward_resources_parse_update(const char *text, struct ward_resources *out, struct ward_err *err);
/* The range checks of memory (limit, reservation, swap), cpu (quota, idle, cpus, mems) and
 * blockIO.weight, which the parser makes as it reads them: `ward update` runs them on the
 * struct its flags filled, with the same messages. */
int ward_resources_check(const struct ward_resources *r, struct ward_err *err);
void ward_resources_free(struct ward_resources *r);
/* A deep copy of s into d (d is overwritten): every list as it is, absent (NULL) or given,
 * even empty (not NULL), so the copy serializes as s does. */
void ward_resources_dup(struct ward_resources *d, const struct ward_resources *s);

/* The first limit r sets, as its field path ("linux.resources.memory.limit"; a list or map
 * by its own path), NULL when it sets none: a section given empty or with only nulls
 * ("memory": {}) sets nothing, nor does an rdma device or a blockIO.weightDevice entry
 * without values. linux.resources.devices is not a limit (see bpfdev.h). */
const char *ward_resources_first_value(const struct ward_resources *r);

/* "2MB", "1GB", "64KB": what the kernel names its hugetlb.<size>.* files after. */
bool ward_res_page_size_ok(const char *s);

/* A unified key ward writes: a plain file name of the cgroup directory (letters, digits,
 * '.', '_', '-'; a '.' after the controller name; no "/" or ".."). Core files are refused:
 * cgroup.procs/threads (would move processes), subtree_control/type (the layout is
 * ward's), cgroup.freeze and cgroup.kill (pause/resume/kill are ward's: a frozen cgroup
 * would hang create's handshake). Allowed: cgroup.max.depth and cgroup.max.descendants,
 * limits that need no controller. The key's prefix names the controller it needs.
 * Fills why on refusal. */
bool ward_cgroup_res_unified_key_ok(const char *key, const char **why);

/* Every linux.resources field ward_resources_parse (resources.c) decodes for the plan
 * ("linux.resources.memory.limit", "[]" for array elements, "*" for map keys),
 * NULL-terminated. Kept next to the decoders (resources.c);
 * the tenant policy's table (policy_fields.c) must decide each (test_policy_fields). */
extern const char *const ward_cgroup_res_fields[];

#endif
