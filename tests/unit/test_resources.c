/* resources.c: linux.resources -> struct ward_resources (set/unset, every section, the
 * error texts with their JSON paths). The conversion to cgroup files is test_cgroup_res's. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "resources.h"
#include "spec_json.h"
#include "util.h"
#include "tap.h"

static int parse(const char *json, struct ward_resources *r, struct ward_err *err)
{
	ward_err_clear(err);
	return ward_resources_parse(json, r, err);
}

#define STREQ(a, b) ((a) && !strcmp((a), (b)))

static void test_full(void)
{
	struct ward_err err;
	struct ward_resources r;
	const char *json =
	    "{\"memory\":{\"limit\":1048576,\"reservation\":-1,\"swap\":2097152,"
	    "\"swappiness\":60,\"disableOOMKiller\":false,\"checkBeforeUpdate\":true,"
	    "\"kernel\":null},"
	    "\"cpu\":{\"shares\":1024,\"quota\":50000,\"period\":100000,\"burst\":0,"
	    "\"idle\":1,\"cpus\":\"0-1\",\"mems\":\"0\",\"realtimeRuntime\":0},"
	    "\"pids\":{\"limit\":-1},"
	    "\"blockIO\":{\"weight\":500,\"weightDevice\":[{\"major\":8,\"minor\":0,"
	    "\"weight\":100}],\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0,\"rate\":"
	    "1000}],\"throttleWriteIOPSDevice\":[{\"major\":8,\"minor\":16,\"rate\":0}]},"
	    "\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}],"
	    "\"rdma\":{\"mlx5_0\":{\"hcaHandles\":3}},"
	    "\"network\":{\"classID\":1048577,\"priorities\":[{\"name\":\"eth0\",\"priority\":1}]},"
	    "\"unified\":{\"memory.high\":\"max\",\"cgroup.max.depth\":\"4\"},"
	    "\"devices\":[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,\"type\":\"c\","
	    "\"major\":10,\"minor\":200,\"access\":\"rw\"}]}";

	CHECK(parse(json, &r, &err) == 0, "a full linux.resources parses");
	if (err.msg[0])
		printf("#   %s\n", err.msg);
	CHECK(r.has_memory && r.memory.limit.set && r.memory.limit.v == 1048576 &&
		  r.memory.reservation.set && r.memory.reservation.v == -1 &&
		  r.memory.swap.v == 2097152 && r.memory.swappiness.set &&
		  r.memory.swappiness.v == 60 && r.memory.disable_oom_killer.set &&
		  !r.memory.disable_oom_killer.v && r.memory.check_before_update.v &&
		  !r.memory.kernel.set && !r.memory.kernel_tcp.set && !r.memory.use_hierarchy.set,
	      "memory: values, and null or absent is unset");
	CHECK(r.has_cpu && r.cpu.shares.v == 1024 && r.cpu.quota.v == 50000 &&
		  r.cpu.period.v == 100000 && r.cpu.burst.set && r.cpu.burst.v == 0 &&
		  r.cpu.idle.set && r.cpu.idle.v == 1 && STREQ(r.cpu.cpus, "0-1") &&
		  STREQ(r.cpu.mems, "0") && r.cpu.realtime_runtime.set &&
		  !r.cpu.realtime_period.set,
	      "cpu: values; a 0 given is set");
	CHECK(r.has_pids && r.pids_limit.set && r.pids_limit.v == -1, "pids.limit -1");
	CHECK(r.has_block_io && r.block_io.weight.v == 500 && !r.block_io.leaf_weight.set &&
		  r.block_io.n_weight_device == 1 && r.block_io.weight_device[0].major == 8 &&
		  r.block_io.weight_device[0].weight.v == 100 &&
		  r.block_io.n_throttle[WARD_RES_READ_BPS] == 1 &&
		  r.block_io.throttle[WARD_RES_READ_BPS][0].rate == 1000 &&
		  r.block_io.n_throttle[WARD_RES_WRITE_BPS] == 0 &&
		  r.block_io.n_throttle[WARD_RES_WRITE_IOPS] == 1 &&
		  r.block_io.throttle[WARD_RES_WRITE_IOPS][0].minor == 16 &&
		  r.block_io.throttle[WARD_RES_WRITE_IOPS][0].rate == 0,
	      "blockIO: weight, weightDevice, the throttle lists");
	CHECK(r.n_hugepage_limits == 1 && STREQ(r.hugepage_limits[0].page_size, "2MB") &&
		  r.hugepage_limits[0].limit == 4194304,
	      "hugepageLimits");
	CHECK(r.n_rdma == 1 && STREQ(r.rdma[0].device, "mlx5_0") && r.rdma[0].hca_handles.set &&
		  r.rdma[0].hca_handles.v == 3 && !r.rdma[0].hca_objects.set,
	      "rdma");
	CHECK(r.has_network && r.network.class_id.set && r.network.class_id.v == 1048577 &&
		  r.network.n_priorities == 1,
	      "network");
	CHECK(r.n_unified == 2 && STREQ(r.unified_keys[0], "memory.high") &&
		  STREQ(r.unified_values[0], "max") &&
		  STREQ(r.unified_keys[1], "cgroup.max.depth") && r.unified_keys[2] == NULL,
	      "unified, in order");
	CHECK(r.has_devices && r.n_devices == 2 && !r.devices[0].allow &&
		  r.devices[0].type == 'a' && r.devices[1].allow && r.devices[1].type == 'c' &&
		  r.devices[1].major == 10 && r.devices[1].minor == 200 &&
		  r.devices[1].access == (WARD_BPFDEV_READ | WARD_BPFDEV_WRITE),
	      "devices");
	ward_resources_free(&r);
}

static void test_empty(void)
{
	struct ward_err err;
	struct ward_resources r;
	CHECK(parse(NULL, &r, &err) == 0 && !r.has_memory && !r.has_devices && !r.n_unified,
	      "NULL: nothing");
	ward_resources_free(&r);
	CHECK(parse("null", &r, &err) == 0 && !r.has_cpu, "null: nothing");
	ward_resources_free(&r);
	CHECK(parse("{\"memory\":{},\"devices\":null}", &r, &err) == 0 && r.has_memory &&
		  !r.memory.limit.set && !r.has_devices,
	      "an empty section is given, its numbers unset");
	ward_resources_free(&r);
	CHECK(parse("{\"devices\":[]}", &r, &err) == 0 && r.has_devices && r.n_devices == 0,
	      "an empty device list is given (update: only the defaults)");
	ward_resources_free(&r);
}

static void test_errors(void)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
	    {"[]", "linux.resources: must be an object"},
	    {"{", "linux.resources: invalid JSON"},
	    {"{\"memory\":[]}", "linux.resources.memory: must be an object"},
	    {"{\"memory\":{\"limit\":\"1G\"}}", "linux.resources.memory.limit: must be an integer"},
	    {"{\"memory\":{\"limit\":-2}}", "linux.resources.memory.limit: -2 is not a limit"},
	    {"{\"memory\":{\"swap\":100}}",
	     "linux.resources.memory.swap: unable to set a swap limit without a memory limit"},
	    {"{\"memory\":{\"swappiness\":101}}", "linux.resources.memory.swappiness"},
	    {"{\"cpu\":{\"quota\":-5}}", "linux.resources.cpu.quota: -5 is not a quota"},
	    {"{\"cpu\":{\"idle\":2}}", "linux.resources.cpu.idle: 2 is not 0 or 1"},
	    {"{\"cpu\":{\"cpus\":\"0\\n1\"}}", "linux.resources.cpu.cpus: \"0\n1\": control"},
	    {"{\"blockIO\":{\"weight\":5}}",
	     "linux.resources.blockIO.weight: 5 is not in 10..1000"},
	    {"{\"blockIO\":{\"weightDevice\":[{\"major\":8}]}}",
	     "linux.resources.blockIO.weightDevice[0]: major and minor are required"},
	    {"{\"blockIO\":{\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0}]}}",
	     "linux.resources.blockIO.throttleReadBpsDevice[0].rate: missing"},
	    {"{\"hugepageLimits\":[{\"pageSize\":\"2M\",\"limit\":1}]}",
	     "linux.resources.hugepageLimits[0].pageSize: \"2M\" is not a page size"},
	    {"{\"rdma\":{\"a b\":{}}}", "linux.resources.rdma.a b: not a device name"},
	    {"{\"unified\":{\"cgroup.procs\":\"1\"}}", "linux.resources.unified.cgroup.procs"},
	    {"{\"unified\":{\"memory.high\":1}}",
	     "linux.resources.unified.memory.high: must be a string"},
	    {"{\"devices\":{}}", "linux.resources.devices: expected an array"},
	    {"{\"devices\":[{\"allow\":true,\"type\":\"x\"}]}",
	     "linux.resources.devices[0].type: expected \"a\", \"b\" or \"c\""},
	    /* the first error is the one the cgroup conversion met first: limits, then devices */
	    {"{\"devices\":5,\"memory\":{\"limit\":true}}",
	     "linux.resources.memory.limit: must be an integer"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ward_err err;
		struct ward_resources r;
		char name[160];
		snprintf(name, sizeof(name), "refused: %s", cases[i].json);
		CHECK(parse(cases[i].json, &r, &err) < 0, name);
		CHECK_STR_CONTAINS(err.msg, cases[i].want, "  with the field's path");
		/* a failed parse leaves nothing to free (ward_resources_free is still safe) */
		ward_resources_free(&r);
	}
}

/* ward update -r: a memory limit absent or 0 means the one in force (runc), so swap alone
 * parses; in a spec (create) it is refused. */
static void test_update(void)
{
	static const char *const ok[] = {"{\"memory\":{\"swap\":2097152}}",
					 "{\"memory\":{\"limit\":0,\"swap\":2097152}}"};
	struct ward_err err = {0};
	struct ward_resources r;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char name[160];
		snprintf(name, sizeof(name), "update: %s parses (the limit in force)", ok[i]);
		CHECK(ward_resources_parse_update(ok[i], &r, &err) == 0 &&
			  r.memory.swap.v == 2097152,
		      name);
		ward_resources_free(&r);
	}
	CHECK(ward_resources_parse_update("{\"memory\":{\"limit\":-2}}", &r, &err) < 0,
	      "update: a bad limit is still refused");
	ward_resources_free(&r);
}

/* ward_resources_first_value: what --cgroup-manager disabled refuses. Empty sections and
 * nulls set nothing; each value is named by its path. */
static void test_first_value(void)
{
	static const struct {
		const char *json, *want; /* want NULL: no value */
	} cases[] = {
	    {"{}", NULL},
	    {"{\"memory\":{},\"cpu\":{},\"pids\":{},\"blockIO\":{},\"network\":{}}", NULL},
	    {"{\"memory\":{\"limit\":null},\"cpu\":{\"cpus\":\"\",\"mems\":\"\"},"
	     "\"hugepageLimits\":[],\"rdma\":{},\"unified\":{}}",
	     NULL},
	    {"{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]}", NULL},
	    {"{\"memory\":{\"limit\":1048576}}", "linux.resources.memory.limit"},
	    {"{\"memory\":{\"swappiness\":0}}", "linux.resources.memory.swappiness"},
	    {"{\"cpu\":{\"shares\":0}}", "linux.resources.cpu.shares"},
	    {"{\"cpu\":{\"cpus\":\"0\"}}", "linux.resources.cpu.cpus"},
	    {"{\"pids\":{\"limit\":100}}", "linux.resources.pids.limit"},
	    {"{\"blockIO\":{\"weight\":100}}", "linux.resources.blockIO.weight"},
	    {"{\"blockIO\":{\"throttleWriteIOPSDevice\":[{\"major\":8,\"minor\":0,"
	     "\"rate\":10}]}}",
	     "linux.resources.blockIO.throttleWriteIOPSDevice"},
	    {"{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":0}]}",
	     "linux.resources.hugepageLimits"},
	    {"{\"network\":{\"classID\":1}}", "linux.resources.network.classID"},
	    {"{\"unified\":{\"pids.max\":\"10\"}}", "linux.resources.unified"},
	    /* an rdma device or a weightDevice entry whose values are absent or null sets
	     * nothing (cgroup_res.c writes nothing for it) */
	    {"{\"rdma\":{\"mlx5_0\":{}}}", NULL},
	    {"{\"rdma\":{\"mlx5_0\":{\"hcaHandles\":null,\"hcaObjects\":null},\"mlx5_1\":{}}}",
	     NULL},
	    {"{\"rdma\":{\"mlx5_0\":{},\"mlx5_1\":{\"hcaObjects\":5}}}", "linux.resources.rdma"},
	    {"{\"rdma\":{\"mlx5_0\":{\"hcaHandles\":0}}}", "linux.resources.rdma"},
	    {"{\"blockIO\":{\"weightDevice\":[{\"major\":8,\"minor\":0}]}}", NULL},
	    {"{\"blockIO\":{\"weightDevice\":[{\"major\":8,\"minor\":0,\"weight\":null},"
	     "{\"major\":8,\"minor\":16,\"leafWeight\":10}]}}",
	     "linux.resources.blockIO.weightDevice"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ward_err err;
		struct ward_resources r;
		const char *got = NULL;
		int rc = parse(cases[i].json, &r, &err);
		char name[512];
		if (rc == 0)
			got = ward_resources_first_value(&r);
		snprintf(name, sizeof(name), "first value of %s: %s", cases[i].json,
			 cases[i].want ? cases[i].want : "none");
		CHECK(rc == 0 && (cases[i].want ? STREQ(got, cases[i].want) : !got), name);
		if (rc < 0)
			printf("#   %s\n", err.msg);
		ward_resources_free(&r);
	}
}

/* ward_resources_dup copies every list as it is: absent stays absent (NULL), given but empty
 * stays given (not NULL, n 0), so the copy serializes as the original does. */
static void test_dup_lists(void)
{
	static const char *const texts[] = {
	    "{}",
	    "{\"devices\":[],\"blockIO\":{\"weightDevice\":[],\"throttleReadBpsDevice\":[],"
	    "\"throttleWriteBpsDevice\":[],\"throttleReadIOPSDevice\":[],"
	    "\"throttleWriteIOPSDevice\":[]},\"hugepageLimits\":[],\"rdma\":{},"
	    "\"network\":{\"priorities\":[]},\"unified\":{}}",
	    "{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],\"blockIO\":{\"weightDevice\":"
	    "[{\"major\":8,\"minor\":0,\"weight\":600}],\"throttleReadBpsDevice\":[{\"major\":8,"
	    "\"minor\":0,\"rate\":1}]},\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":1}],"
	    "\"rdma\":{\"mlx5_0\":{}},\"network\":{\"priorities\":[{\"name\":\"eth0\","
	    "\"priority\":5}]},\"unified\":{\"pids.max\":\"10\"}}",
	};

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct ward_err err;
		struct ward_resources r, d;
		const struct ward_res_block_io *rb = &r.block_io, *db = &d.block_io;
		bool same = true;
		json_t *want, *got;
		char name[600];

		if (parse(texts[i], &r, &err) < 0) {
			CHECK(false, texts[i]);
			printf("#   %s\n", err.msg);
			continue;
		}
		ward_resources_dup(&d, &r);
		same &= !rb->weight_device == !db->weight_device;
		for (int k = 0; k < WARD_RES_N_THROTTLE; k++)
			same &= !rb->throttle[k] == !db->throttle[k];
		same &= !r.hugepage_limits == !d.hugepage_limits && !r.rdma == !d.rdma &&
			!r.network.priorities == !d.network.priorities &&
			!r.unified_keys == !d.unified_keys && !r.devices == !d.devices;
		snprintf(name, sizeof(name), "dup of %s: every list absent or given as it was",
			 texts[i]);
		CHECK(same, name);
		want = ward_resources_to_json(&r);
		got = ward_resources_to_json(&d);
		snprintf(name, sizeof(name), "dup of %s: serialized as the original", texts[i]);
		CHECK(json_equal(want, got), name);
		json_decref(want);
		json_decref(got);
		ward_resources_free(&r);
		ward_resources_free(&d);
	}
}

/* A unified value goes to the kernel as written: it is a string, read as linux.sysctl's
 * are. A big integer there (the decoder keeps it as a marked string) was taken for a string
 * and written as "". */
static void test_unified_values(void)
{
	static const char json[] = "{\"unified\":{\"memory.max\":18446744073709551615}}";
	struct ward_err err = {0};
	struct ward_resources r;
	json_t *res = ward_json_decode(json, strlen(json), &err);

	CHECK(res != NULL, "a big integer decodes");
	CHECK(ward_resources_from_json(res, &r, &err) < 0,
	      "a big integer unified value is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.unified.memory.max: must be a string",
			   "  named by its path");
	ward_resources_free(&r);
	json_decref(res);
}

int main(void)
{
	test_full();
	test_empty();
	test_errors();
	test_update();
	test_first_value();
	test_unified_values();
	test_dup_lists();
	TAP_DONE();
}
