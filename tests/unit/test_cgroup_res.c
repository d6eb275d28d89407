/* Unit tests: linux.resources -> cgroup v2 files (every conversion), unified key checks,
 * controller enabling and missing controllers against a fake cgroup tree in a tmpdir. */
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_res.h"
#include "config.h"
#include "log.h"
#include "tap.h"
#include "util.h"

/* ---- the pure conversion ------------------------------------------------------------ */

/* ward.json with "missing_controllers": v (NULL: no ward.json) in a fresh config dir. */
static char config_dir[] = "/tmp/ward-test-config-XXXXXX";

static void remove_config_dir(void)
{
	char path[sizeof(config_dir) + 16];
	snprintf(path, sizeof(path), "%s/ward.json", config_dir);
	unlink(path);
	rmdir(config_dir);
}

static void missing_controllers(const char *v)
{
	char *dir = config_dir;
	char path[sizeof(config_dir) + 16];
	static bool made;
	FILE *f;

	/* once: mkdtemp's random suffix may itself end in 'X' */
	if (!made) {
		if (!mkdtemp(config_dir))
			abort();
		atexit(remove_config_dir);
		made = true;
	}
	snprintf(path, sizeof(path), "%s/ward.json", dir);
	unlink(path);
	if (v) {
		f = fopen(path, "w");
		if (!f)
			abort();
		fprintf(f, "{\"missing_controllers\": \"%s\"}\n", v);
		fclose(f);
	}
	ward_config_set_dir(dir);
}

static const struct ward_res_entry *find(const struct ward_res_plan *p, const char *file)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].file, file))
			return &p->v[i];
	return NULL;
}

/* The value planned for file, or "(none)". */
static const char *val(const struct ward_res_plan *p, const char *file)
{
	const struct ward_res_entry *e = find(p, file);
	return e ? e->value : "(none)";
}

#define CHECK_VAL(plan, file, want, name)                                                          \
	do {                                                                                       \
		const char *_got = val(plan, file);                                                \
		CHECK(!strcmp(_got, want), name);                                                  \
		if (strcmp(_got, want))                                                            \
			printf("#   %s: got \"%s\", want \"%s\"\n", file, _got, want);             \
	} while (0)

static int plan(const char *json, struct ward_res_plan *p, struct ward_err *err)
{
	ward_err_clear(err);
	return ward_cgroup_res_plan(json, p, err);
}

static void test_formulas(void)
{
	CHECK(ward_cpu_shares_to_weight(0) == 0, "cpu.shares 0 stays unset");
	CHECK(ward_cpu_shares_to_weight(2) == 1, "cpu.shares 2 (v1 minimum) -> weight 1");
	CHECK(ward_cpu_shares_to_weight(1024) == 100,
	      "cpu.shares 1024 (v1 default) -> weight 100 (v2 default)");
	CHECK(ward_cpu_shares_to_weight(262144) == 10000, "cpu.shares 262144 -> weight 10000");
	CHECK(ward_cpu_shares_to_weight(1000000) == 10000, "cpu.shares above the max clamp");
	CHECK(ward_cpu_shares_to_weight(512) == 59, "cpu.shares 512 -> 59 (as runc/crun)");
	CHECK(ward_cpu_shares_to_weight(102) == 17, "cpu.shares 102 (k8s 100m) -> 17");
	CHECK(ward_cpu_shares_to_weight(4096) == 303, "cpu.shares 4096 -> 303");
	CHECK(ward_blkio_weight_to_io_weight(10) == 1, "blkio weight 10 -> io.weight 1");
	CHECK(ward_blkio_weight_to_io_weight(1000) == 10000, "blkio weight 1000 -> 10000");
	CHECK(ward_blkio_weight_to_io_weight(500) == 4950, "blkio weight 500 -> 4950");
}

static void test_memory(void)
{
	struct ward_err err;
	struct ward_res_plan p;

	CHECK(plan("{\"memory\":{\"limit\":536870912,\"reservation\":268435456,"
		   "\"swap\":1073741824}}",
		   &p, &err) == 0,
	      "memory block converts");
	CHECK_VAL(&p, "memory.max", "536870912", "memory.limit -> memory.max");
	CHECK_VAL(&p, "memory.low", "268435456", "memory.reservation -> memory.low");
	CHECK_VAL(&p, "memory.swap.max", "536870912",
		  "memory.swap (memory+swap) -> memory.swap.max = swap - limit");
	CHECK(find(&p, "memory.max") && !strcmp(find(&p, "memory.max")->controller, "memory") &&
		  !strcmp(find(&p, "memory.max")->field, "linux.resources.memory.limit"),
	      "memory.max needs the memory controller and names its field");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"memory\":{\"limit\":-1}}", &p, &err) == 0, "memory.limit -1");
	CHECK_VAL(&p, "memory.max", "max", "memory.limit -1 -> max");
	CHECK_VAL(&p, "memory.swap.max", "max", "limit -1 without swap: swap unlimited too");
	CHECK(find(&p, "memory.max") && (find(&p, "memory.max")->flags & WARD_RES_DEFAULT),
	      "memory.max=max is the kernel default");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"memory\":{\"limit\":1048576,\"swap\":-1}}", &p, &err) == 0,
	      "swap -1 converts");
	CHECK_VAL(&p, "memory.swap.max", "max", "memory.swap -1 -> max");
	CHECK(!(find(&p, "memory.max")->flags & WARD_RES_DEFAULT),
	      "a real memory limit is not a default");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"memory\":{\"limit\":1048576,\"swap\":1048576}}", &p, &err) == 0,
	      "swap == limit converts");
	CHECK_VAL(&p, "memory.swap.max", "0", "swap == limit -> no swap (0)");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"memory\":{}}", &p, &err) == 0 && p.n == 0,
	      "containerd's empty memory block writes nothing");
	ward_cgroup_res_plan_free(&p);
	CHECK(plan("{\"memory\":{\"limit\":0,\"reservation\":0,\"swap\":0}}", &p, &err) == 0 &&
		  p.n == 0,
	      "zero memory values are unset");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"memory\":{\"swap\":1048576}}", &p, &err) < 0,
	      "swap without a memory limit is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.memory.swap", "the error names the field");
	CHECK(plan("{\"memory\":{\"limit\":2048,\"swap\":1024}}", &p, &err) < 0,
	      "swap below the limit is refused");
	CHECK(plan("{\"memory\":{\"limit\":\"1g\"}}", &p, &err) < 0, "a string limit is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.memory.limit: must be an integer",
			   "type errors name the field");
	CHECK(plan("{\"memory\":{\"limit\":-5}}", &p, &err) < 0, "limit -5 is refused");
	CHECK(plan("{\"memory\":{\"limit\":1048576,\"checkBeforeUpdate\":true}}", &p, &err) == 0 &&
		  p.check_before_update && p.memory_limit == 1048576,
	      "checkBeforeUpdate is kept for update");
	ward_cgroup_res_plan_free(&p);
}

static void test_cpu(void)
{
	struct ward_err err;
	struct ward_res_plan p;

	CHECK(plan("{\"cpu\":{\"shares\":512,\"quota\":50000,\"period\":100000,\"burst\":"
		   "10000,\"idle\":1,\"cpus\":\"0-1\",\"mems\":\"0\"}}",
		   &p, &err) == 0,
	      "cpu block converts");
	CHECK_VAL(&p, "cpu.weight", "59", "cpu.shares -> cpu.weight");
	CHECK_VAL(&p, "cpu.max", "50000 100000", "quota/period -> cpu.max");
	CHECK_VAL(&p, "cpu.max.burst", "10000", "burst -> cpu.max.burst");
	CHECK_VAL(&p, "cpu.idle", "1", "idle -> cpu.idle");
	CHECK_VAL(&p, "cpuset.cpus", "0-1", "cpus -> cpuset.cpus");
	CHECK_VAL(&p, "cpuset.mems", "0", "mems -> cpuset.mems");
	CHECK(!strcmp(find(&p, "cpuset.cpus")->controller, "cpuset"),
	      "cpuset files need the cpuset controller");
	CHECK(find(&p, "cpu.max.burst") && (find(&p, "cpu.max.burst")->flags & WARD_RES_RETRY_LAST),
	      "cpu.max.burst is retried after cpu.max");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"cpu\":{\"quota\":-1,\"period\":50000}}", &p, &err) == 0, "quota -1");
	CHECK_VAL(&p, "cpu.max", "max 50000", "quota -1 -> \"max PERIOD\"");
	CHECK(!(find(&p, "cpu.max")->flags & WARD_RES_DEFAULT),
	      "a non-default period needs the cpu controller");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"cpu\":{\"quota\":25000}}", &p, &err) == 0, "quota alone");
	CHECK_VAL(&p, "cpu.max", "25000", "quota without period keeps the period");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"cpu\":{\"period\":100000}}", &p, &err) == 0, "period alone");
	CHECK_VAL(&p, "cpu.max", "max 100000", "period alone -> \"max PERIOD\"");
	CHECK(find(&p, "cpu.max")->flags & WARD_RES_DEFAULT, "\"max 100000\" is the default");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"cpu\":{\"shares\":1024}}", &p, &err) == 0, "containerd's cpu block");
	CHECK_VAL(&p, "cpu.weight", "100", "shares 1024 -> weight 100");
	CHECK(find(&p, "cpu.weight")->flags & WARD_RES_DEFAULT,
	      "weight 100 is the default: needs no cpu controller");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"cpu\":{\"shares\":0,\"quota\":0,\"period\":0,\"cpus\":\"\"}}", &p, &err) ==
		      0 &&
		  p.n == 0,
	      "zero/empty cpu values are unset");
	ward_cgroup_res_plan_free(&p);
	CHECK(plan("{\"cpu\":{\"idle\":2}}", &p, &err) < 0, "cpu.idle 2 is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.cpu.idle", "error names cpu.idle");
	CHECK(plan("{\"cpu\":{\"cpus\":\"0\\n1\"}}", &p, &err) < 0,
	      "a newline in cpuset.cpus is refused");
	CHECK(plan("{\"cpu\":{\"shares\":-1}}", &p, &err) < 0, "negative shares are refused");
}

static void test_pids_io_hugetlb_rdma(void)
{
	struct ward_err err;
	struct ward_res_plan p;
	const struct ward_res_entry *e;

	CHECK(plan("{\"pids\":{\"limit\":100}}", &p, &err) == 0, "pids converts");
	CHECK_VAL(&p, "pids.max", "100", "pids.limit -> pids.max");
	ward_cgroup_res_plan_free(&p);
	CHECK(plan("{\"pids\":{\"limit\":-1}}", &p, &err) == 0, "pids -1");
	CHECK_VAL(&p, "pids.max", "max", "pids.limit -1 -> max");
	CHECK(find(&p, "pids.max")->flags & WARD_RES_DEFAULT, "pids.max=max is the default");
	ward_cgroup_res_plan_free(&p);
	CHECK(plan("{\"pids\":{\"limit\":0}}", &p, &err) == 0, "pids 0");
	CHECK_VAL(&p, "pids.max", "max", "pids.limit 0 -> max (as runc)");
	ward_cgroup_res_plan_free(&p);

	CHECK(plan("{\"blockIO\":{\"weight\":500,\"weightDevice\":[{\"major\":8,\"minor\":0,"
		   "\"weight\":1000}],\"throttleReadBpsDevice\":[{\"major\":8,\"minor\":0,"
		   "\"rate\":1048576}],\"throttleWriteBpsDevice\":[{\"major\":8,\"minor\":0,"
		   "\"rate\":2097152}],\"throttleReadIOPSDevice\":[{\"major\":8,\"minor\":16,"
		   "\"rate\":100}],\"throttleWriteIOPSDevice\":[{\"major\":8,\"minor\":0,"
		   "\"rate\":0}]}}",
		   &p, &err) == 0,
	      "blockIO converts");
	e = find(&p, "io.weight");
	CHECK(e && !strcmp(e->value, "default 4950"),
	      "blockIO.weight 500 -> io.weight default 4950");
	CHECK(e && e->alt_file && !strcmp(e->alt_file, "io.bfq.weight") &&
		  !strcmp(e->alt_value, "default 500"),
	      "with BFQ the weight goes unconverted to io.bfq.weight");
	CHECK(p.n >= 2 && !strcmp(p.v[1].file, "io.weight") && !strcmp(p.v[1].value, "8:0 10000"),
	      "weightDevice -> io.weight \"MAJ:MIN W\" (converted)");
	{
		int lines = 0;
		bool dev0 = false, dev16 = false;
		for (size_t i = 0; i < p.n; i++) {
			if (strcmp(p.v[i].file, "io.max"))
				continue;
			lines++;
			dev0 |= !strcmp(p.v[i].value, "8:0 rbps=1048576 wbps=2097152 wiops=max");
			dev16 |= !strcmp(p.v[i].value, "8:16 riops=100");
		}
		CHECK(lines == 2, "one io.max line per device");
		CHECK(dev0, "io.max \"8:0 rbps=.. wbps=.. wiops=max\" (rate 0 lifts the limit)");
		CHECK(dev16, "io.max \"8:16 riops=100\"");
	}
	ward_cgroup_res_plan_free(&p);
	CHECK(plan("{\"blockIO\":{\"weight\":5}}", &p, &err) < 0, "blkio weight 5 is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.blockIO.weight", "error names the weight");
	CHECK(plan("{\"blockIO\":{\"throttleReadBpsDevice\":[{\"major\":8,\"rate\":1}]}}", &p,
		   &err) < 0,
	      "a throttle without minor is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.blockIO.throttleReadBpsDevice[0]",
			   "error names the entry");

	CHECK(plan("{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304},"
		   "{\"pageSize\":\"1GB\",\"limit\":0}]}",
		   &p, &err) == 0,
	      "hugepageLimits convert");
	CHECK_VAL(&p, "hugetlb.2MB.max", "4194304", "2MB -> hugetlb.2MB.max");
	CHECK_VAL(&p, "hugetlb.2MB.rsvd.max", "4194304", "and hugetlb.2MB.rsvd.max");
	CHECK(find(&p, "hugetlb.2MB.rsvd.max")->flags & WARD_RES_OPTIONAL,
	      "rsvd.max may be missing (kernel < 5.7)");
	CHECK_VAL(&p, "hugetlb.1GB.max", "0", "1GB -> hugetlb.1GB.max");
	ward_cgroup_res_plan_free(&p);
	CHECK(plan("{\"hugepageLimits\":[{\"pageSize\":\"2M\",\"limit\":1}]}", &p, &err) < 0,
	      "page size \"2M\" is refused");
	CHECK(plan("{\"hugepageLimits\":[{\"pageSize\":\"../x\",\"limit\":1}]}", &p, &err) < 0,
	      "a page size cannot name another file");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.hugepageLimits[0].pageSize",
			   "error names the page size");

	CHECK(plan("{\"rdma\":{\"mlx5_1\":{\"hcaHandles\":3,\"hcaObjects\":10000},"
		   "\"mlx4_0\":{\"hcaObjects\":5}}}",
		   &p, &err) == 0,
	      "rdma converts");
	CHECK(p.n == 2 && !strcmp(p.v[0].file, "rdma.max") &&
		  !strcmp(p.v[0].value, "mlx5_1 hca_handle=3 hca_object=10000") &&
		  !strcmp(p.v[1].value, "mlx4_0 hca_object=5"),
	      "rdma -> rdma.max \"DEV hca_handle=N hca_object=N\"");
	ward_cgroup_res_plan_free(&p);
	CHECK(plan("{\"rdma\":{\"a b\":{\"hcaHandles\":3}}}", &p, &err) < 0,
	      "an rdma device name with a space is refused");
}

static void test_unified(void)
{
	struct ward_err err;
	struct ward_res_plan p;
	const char *why;
	static const char *const good[] = {
	    "memory.high",	"memory.oom.group",	  "io.latency",
	    "cgroup.max.depth", "cgroup.max.descendants", "misc.max"};
	static const char *const bad[] = {"../memory.max",
					  "memory/../../x",
					  "nodot",
					  ".hidden",
					  "..",
					  "cgroup.procs",
					  "cgroup.threads",
					  "cgroup.subtree_control",
					  "cgroup.freeze",
					  "cgroup.kill",
					  "cgroup.type",
					  "memory.hi gh",
					  "memory.max\n",
					  ""};
	char name[96];

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		snprintf(name, sizeof(name), "unified key %s is accepted", good[i]);
		CHECK(ward_cgroup_res_unified_key_ok(good[i], &why), name);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(name, sizeof(name), "unified key \"%.*s\" is refused",
			 (int)strcspn(bad[i], "\n"), bad[i]);
		CHECK(!ward_cgroup_res_unified_key_ok(bad[i], &why) && why, name);
	}
	CHECK(plan("{\"unified\":{\"memory.high\":\"1G\",\"cgroup.max.depth\":\"3\"}}", &p, &err) ==
		  0,
	      "unified converts");
	CHECK_VAL(&p, "memory.high", "1G", "unified values are written as given");
	CHECK(find(&p, "memory.high") && !strcmp(find(&p, "memory.high")->controller, "memory"),
	      "a unified key needs the controller of its prefix");
	CHECK(find(&p, "cgroup.max.depth") && !find(&p, "cgroup.max.depth")->controller,
	      "cgroup.max.depth needs no controller");
	ward_cgroup_res_plan_free(&p);
	CHECK(plan("{\"unified\":{\"cgroup.procs\":\"1\"}}", &p, &err) < 0,
	      "unified cgroup.procs is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.unified.cgroup.procs",
			   "the error names the key");
	CHECK(plan("{\"unified\":{\"memory.max\":5}}", &p, &err) < 0,
	      "a non-string unified value is refused");
	CHECK(plan("{\"unified\":{\"memory.max\":\"1\\n2\"}}", &p, &err) == 0,
	      "a unified value goes to the kernel as it is (it refuses what it does not parse)");
	ward_cgroup_res_plan_free(&p);
}

static void test_other(void)
{
	struct ward_err err;
	struct ward_res_plan p;
	CHECK(plan(NULL, &p, &err) == 0 && p.n == 0, "no resources: nothing");
	CHECK(plan("null", &p, &err) == 0 && p.n == 0, "null resources: nothing");
	CHECK(plan("[]", &p, &err) < 0, "resources must be an object");
	CHECK(plan("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],\"memory\":{},"
		   "\"cpu\":{\"shares\":1024}}",
		   &p, &err) == 0 &&
		  p.n == 1,
	      "containerd's default resources: one default cpu.weight");
	ward_cgroup_res_plan_free(&p);
	CHECK(plan("{\"network\":{\"classID\":5},\"memory\":{\"swappiness\":10}}", &p, &err) == 0 &&
		  p.n == 0 && strv_len(p.ignored) == 2,
	      "v1-only knobs (net_cls, swappiness) are listed as ignored, nothing written");
	CHECK(p.ignored && strstr(p.ignored[0], "linux.resources.memory.swappiness"),
	      "the ignored knob is named by its field");
	ward_cgroup_res_plan_free(&p);
}

/* ---- applying, against a fake tree -------------------------------------------------- */

static char root[64];

static void put(const char *rel, const char *content)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "we");
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static char *get(const char *rel)
{
	char path[256];
	struct ward_err err;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	char *t = read_file_at(AT_FDCWD, path, NULL, &err);
	return t ? t : xstrdup("(missing)");
}

#define CHECK_FILE(rel, want, name)                                                                \
	do {                                                                                       \
		char *_t = get(rel);                                                               \
		CHECK(!strcmp(_t, want), name);                                                    \
		if (strcmp(_t, want))                                                              \
			printf("#   %s: got \"%s\", want \"%s\"\n", rel, _t, want);                \
		free(_t);                                                                          \
	} while (0)

static const char *const files[] = {
    "memory.max",  "memory.low",       "memory.swap.max", "memory.current", "cpu.weight",
    "cpu.max",	   "cpu.max.burst",    "pids.max",	  "io.weight",	    "io.bfq.weight",
    "memory.high", "cgroup.max.depth", "hugetlb.1GB.max"};

/* root/{cgroup.controllers,cgroup.subtree_control}, root/ward/cgroup.subtree_control,
 * root/ward/c1/<files>. */
static void fake_tree(const char *controllers, bool bfq)
{
	char path[256];
	snprintf(path, sizeof(path), "rm -rf %s/ward", root);
	if (system(path) != 0)
		return;
	put("cgroup.controllers", controllers);
	put("cgroup.subtree_control", "");
	snprintf(path, sizeof(path), "%s/ward", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/ward/c1", root);
	mkdir(path, 0755);
	put("ward/cgroup.subtree_control", "");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char rel[96];
		if (!bfq && !strcmp(files[i], "io.bfq.weight"))
			continue;
		snprintf(rel, sizeof(rel), "ward/c1/%s", files[i]);
		put(rel, "");
	}
}

/* Parse, then apply the struct (as create and update do). */
static int apply_at(const char *v2_root, const char *path, const char *json, bool update, bool warn,
		    struct ward_err *err)
{
	struct ward_resources res;
	int rc;
	if (ward_resources_parse(json, &res, err) < 0)
		return -1;
	rc = ward_cgroup_res_apply_at(v2_root, path, &res, update, warn, err);
	ward_resources_free(&res);
	return rc;
}

/* As create and update do: the missing_controllers rule from the configuration. */
static int apply(const char *json, bool update, struct ward_err *err)
{
	const struct ward_config *c;
	char path[128];
	snprintf(path, sizeof(path), "%s/ward/c1", root);
	ward_err_clear(err);
	c = ward_config_get(err);
	if (!c)
		return -1;
	return apply_at(root, path, json, update, c->missing_controllers_warn, err);
}

static char *log_text(const char *log)
{
	struct ward_err err;
	char *t = read_file_at(AT_FDCWD, log, NULL, &err);
	return t ? t : xstrdup("");
}

static void test_apply(const char *log)
{
	struct ward_err err;
	char want[256];
	char *t;

	fake_tree("cpuset cpu io memory hugetlb pids rdma misc\n", false);
	CHECK(apply("{\"memory\":{\"limit\":1048576,\"swap\":2097152},\"cpu\":{\"shares\":2,"
		    "\"quota\":1000},\"pids\":{\"limit\":10},\"unified\":{\"memory.high\":"
		    "\"900000\",\"cgroup.max.depth\":\"2\"}}",
		    false, &err) == 0,
	      "apply to a fake tree with every controller");
	if (err.msg[0])
		printf("#   %s\n", err.msg);
	CHECK_FILE("ward/c1/memory.max", "1048576", "memory.max written");
	CHECK_FILE("ward/c1/memory.swap.max", "1048576", "memory.swap.max written");
	CHECK_FILE("ward/c1/cpu.weight", "1", "cpu.weight written");
	CHECK_FILE("ward/c1/cpu.max", "1000", "cpu.max written");
	CHECK_FILE("ward/c1/pids.max", "10", "pids.max written");
	CHECK_FILE("ward/c1/memory.high", "900000", "unified memory.high written");
	CHECK_FILE("ward/c1/cgroup.max.depth", "2", "unified cgroup.max.depth written");
	CHECK_FILE("cgroup.subtree_control", "+memory +cpu +pids",
		   "the root's subtree_control gets exactly the needed controllers");
	CHECK_FILE("ward/cgroup.subtree_control", "+memory +cpu +pids",
		   "so does every ancestor down to the parent");

	/* Already enabled: nothing written again. */
	put("cgroup.subtree_control", "cpu memory pids\n");
	put("ward/cgroup.subtree_control", "memory cpu pids io\n");
	CHECK(apply("{\"memory\":{\"limit\":4096}}", true, &err) == 0, "update applies");
	CHECK_FILE("cgroup.subtree_control", "cpu memory pids\n",
		   "enabled controllers are left alone");
	CHECK_FILE("ward/c1/memory.max", "4096", "update rewrites memory.max");

	/* checkBeforeUpdate */
	put("ward/c1/memory.current", "8192\n");
	CHECK(apply("{\"memory\":{\"limit\":4096,\"checkBeforeUpdate\":true}}", true, &err) < 0,
	      "checkBeforeUpdate refuses a limit below the usage");
	CHECK_STR_CONTAINS(err.msg, "checkBeforeUpdate", "and says why");
	CHECK(apply("{\"memory\":{\"limit\":16384,\"checkBeforeUpdate\":true}}", true, &err) == 0,
	      "checkBeforeUpdate allows a limit above the usage");

	/* BFQ: unconverted weight into io.bfq.weight */
	fake_tree("io\n", true);
	CHECK(apply("{\"blockIO\":{\"weight\":300}}", false, &err) == 0, "blkio weight with BFQ");
	CHECK_FILE("ward/c1/io.bfq.weight", "default 300", "BFQ gets the v1 weight");
	CHECK_FILE("ward/c1/io.weight", "", "io.weight is left alone with BFQ");
	fake_tree("io\n", false);
	CHECK(apply("{\"blockIO\":{\"weight\":300}}", false, &err) == 0, "blkio weight");
	CHECK_FILE("ward/c1/io.weight", "default 2930", "without BFQ io.weight gets 1..10000");

	/* A file the kernel does not have: the error names the field and the file. */
	fake_tree("io hugetlb\n", false);
	CHECK(apply("{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":1}]}", false, &err) < 0,
	      "a missing controller file fails");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.hugepageLimits[0]: hugetlb.2MB.max=\"1\"",
			   "the error names the field and the file");
	CHECK_STR_CONTAINS(err.msg, "No such file", "and the cause");

	/* Missing controllers (a hybrid host: nothing but what v1 left over). */
	fake_tree("hugetlb\n", false);
	missing_controllers(NULL);
	CHECK(apply("{\"memory\":{\"limit\":1048576}}", false, &err) < 0,
	      "a memory limit without the memory controller fails");
	snprintf(want, sizeof(want),
		 "linux.resources.memory.limit: the memory controller is not available in the "
		 "cgroup v2 hierarchy at %s",
		 root);
	CHECK_STR_CONTAINS(err.msg, want, "the error names the field, controller and hierarchy");
	CHECK_FILE("ward/c1/memory.max", "", "nothing was written");
	CHECK_FILE("cgroup.subtree_control", "", "nothing was enabled");
	CHECK(apply("{\"pids\":{\"limit\":5},\"cpu\":{\"shares\":1024}}", false, &err) < 0 &&
		  strstr(err.msg, "linux.resources.pids.limit: the pids controller"),
	      "pids.limit without pids names pids");
	CHECK(apply("{\"unified\":{\"memory.high\":\"5\"}}", false, &err) < 0 &&
		  strstr(err.msg, "linux.resources.unified.memory.high: the memory controller"),
	      "a unified key without its controller fails");
	missing_controllers("error");
	CHECK(apply("{\"cpu\":{\"quota\":5000}}", false, &err) < 0,
	      "missing_controllers error fails");

	CHECK(apply("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],\"memory\":{},\"cpu\":{"
		    "\"shares\":1024},\"pids\":{\"limit\":-1}}",
		    false, &err) == 0,
	      "containerd's default resources need no controller");
	CHECK_FILE("ward/c1/cpu.weight", "", "and write nothing");
	CHECK(apply("{\"memory\":{\"limit\":-1},\"cpu\":{\"period\":100000,\"quota\":-1}}", false,
		    &err) == 0,
	      "explicit defaults (limit -1, max 100000) need no controller");

	missing_controllers("warn");
	CHECK(apply("{\"memory\":{\"limit\":1048576,\"reservation\":4096},\"pids\":{\"limit\":"
		    "7},\"hugepageLimits\":[{\"pageSize\":\"1GB\",\"limit\":0}]}",
		    false, &err) == 0,
	      "missing_controllers warn goes on");
	t = log_text(log);
	CHECK_STR_CONTAINS(t,
			   "linux.resources.memory.limit: the memory controller is not available",
			   "warn mode: memory.limit warned");
	CHECK_STR_CONTAINS(t, "linux.resources.memory.reservation", "warn mode: one per limit");
	CHECK_STR_CONTAINS(t, "linux.resources.pids.limit", "warn mode: pids.limit warned");
	CHECK(t && !strstr(t, "hugepageLimits"),
	      "warn mode: an available controller is not warned");
	free(t);
	CHECK_FILE("ward/c1/memory.max", "", "warn mode: the missing limit is not written");
	CHECK_FILE("cgroup.subtree_control", "+hugetlb",
		   "warn mode: available controllers enabled");
	CHECK(ward_cgroup_res_unenforced() && ward_cgroup_res_unenforced()[0] &&
		  strstr(ward_cgroup_res_unenforced()[0], "linux.resources.memory.limit (memory)"),
	      "warn mode: the unenforced limits are listed");
	missing_controllers("maybe");
	CHECK(apply("{\"memory\":{\"limit\":1048576}}", false, &err) < 0,
	      "an unknown missing_controllers value fails");
	CHECK_STR_CONTAINS(err.msg, "missing_controllers", "and names the setting");
	missing_controllers(NULL);

	/* The path must be below the root. */
	ward_err_clear(&err);
	CHECK(apply_at(root, "/elsewhere/c1",
		       "{\"hugepageLimits\":[{\"pageSize\":"
		       "\"2MB\",\"limit\":1}]}",
		       false, false, &err) < 0,
	      "a cgroup outside the v2 root is refused");
}

int main(void)
{
	char log[96];
	snprintf(root, sizeof(root), "/tmp/ward-cgres-XXXXXX");
	if (!mkdtemp(root))
		return 1;
	snprintf(log, sizeof(log), "%s/log", root);
	ward_log_open(log, false, false);

	test_formulas();
	test_memory();
	test_cpu();
	test_pids_io_hugetlb_rdma();
	test_unified();
	test_other();
	test_apply(log);

	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", root);
	}
	TAP_DONE();
}
