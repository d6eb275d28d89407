/* ward update: new resource limits for a container (runc's flags; -r wins over them). */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "container_res.h"
#include "util.h"

static const char update_help[] =
    "usage: ward update [OPTIONS] ID\n"
    "  -r, --resources FILE        LinuxResources JSON from FILE ('-': stdin); the other\n"
    "                              options are then ignored\n"
    "      --memory N              memory limit in bytes (512m, 1g; -1: unlimited)\n"
    "      --memory-reservation N  memory reservation (memory.low)\n"
    "      --memory-swap N         memory+swap limit (-1: unlimited swap)\n"
    "      --cpu-shares N          CPU shares (2..262144, converted to cpu.weight)\n"
    "      --cpu-quota N           CFS quota in microseconds per period (-1: none)\n"
    "      --cpu-period N          CFS period in microseconds\n"
    "      --cpu-burst N           CFS burst in microseconds\n"
    "      --cpu-idle 0|1          SCHED_IDLE for the cgroup\n"
    "      --cpuset-cpus LIST      CPUs to use (0-3,5)\n"
    "      --cpuset-mems LIST      memory nodes to use\n"
    "      --pids-limit N          maximum number of tasks (-1: unlimited)\n"
    "      --blkio-weight N        block IO weight (10..1000)\n";

/* docker/go-units RAMInBytes: "1024", "512m", "1.5g", "1GiB", "2 MB" (binary units). */
static int parse_ram(const char *s, int64_t *out)
{
	static const char units[] = "kmgtp";
	char *end;
	double v, mult = 1;
	if (!strcmp(s, "-1")) {
		*out = -1;
		return 0;
	}
	if (!isdigit((unsigned char)s[0]))
		return -1;
	v = strtod(s, &end);
	if (*end == ' ')
		end++;
	if (*end) {
		const char *u = strchr(units, tolower((unsigned char)*end));
		if (!u)
			goto suffix_b;
		mult = pow(1024, (double)(u - units + 1));
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
	}
suffix_b:
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || v * mult >= 9.2e18)
		return -1;
	*out = (int64_t)(v * mult);
	return 0;
}

struct flag {
	const char *name;
	const char *section, *key;
	enum { RAM, INT, STR } kind;
};

static const struct flag flags[] = {
    {"memory", "memory", "limit", RAM},
    {"memory-reservation", "memory", "reservation", RAM},
    {"memory-swap", "memory", "swap", RAM},
    {"cpu-shares", "cpu", "shares", INT},
    {"cpu-share", "cpu", "shares", INT},
    {"cpu-quota", "cpu", "quota", INT},
    {"cpu-period", "cpu", "period", INT},
    {"cpu-burst", "cpu", "burst", INT},
    {"cpu-idle", "cpu", "idle", INT},
    {"cpuset-cpus", "cpu", "cpus", STR},
    {"cpuset-mems", "cpu", "mems", STR},
    {"pids-limit", "pids", "limit", INT},
    {"blkio-weight", "blockIO", "weight", INT},
};

static int set_flag(json_t *res, const struct flag *f, const char *arg, const char *cmd)
{
	json_t *sec = json_object_get(res, f->section);
	json_t *val;
	int64_t n;
	if (!sec) {
		sec = json_object();
		json_object_set_new(res, f->section, sec);
	}
	if (f->kind == STR) {
		val = json_string(arg);
	} else {
		if ((f->kind == RAM ? parse_ram(arg, &n) : parse_i64(arg, &n)) < 0)
			return cli_usage(cmd, "--%s: \"%s\" is not %s", f->name, cli_printable(arg),
					 f->kind == RAM ? "a size (1024, 512m, 1g, -1)"
							: "a number");
		val = json_integer(n);
	}
	if (!val)
		return cli_usage(cmd, "--%s: not valid UTF-8", f->name);
	json_object_set_new(sec, f->key, val);
	return 0;
}

static char *read_resources(const char *file, struct ward_err *err)
{
	cleanup_fd int fd = -1;
	char *text;
	if (strcmp(file, "-")) {
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ward_fail_errno(err, "--resources %s", file);
			return NULL;
		}
	}
	text = read_all_fd(fd >= 0 ? fd : 0, NULL, err);
	if (!text)
		ward_wrap(err, "--resources %s", file);
	return text;
}

int cmd_update(struct ward_cli *cli, int argc, char **argv)
{
	struct cli_opt opts[ARRAY_SIZE(flags) + 5];
	const char *vals[ARRAY_SIZE(flags)] = {0};
	const char *file = NULL, *rt = NULL, *rdt = NULL, *id;
	struct ward_err err = {0};
	cleanup_free char *json = NULL;
	json_t *res = json_object();
	size_t n = 0;
	int rootfd, rc;

	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		opts[n++] = (struct cli_opt){flags[i].name, 0, .arg = &vals[i]};
	opts[n++] = (struct cli_opt){"resources", 'r', .arg = &file};
	opts[n++] = (struct cli_opt){"cpu-rt-period", 0, .arg = &rt};
	opts[n++] = (struct cli_opt){"cpu-rt-runtime", 0, .arg = &rt};
	opts[n++] = (struct cli_opt){"l3-cache-schema", 0, .arg = &rdt};
	opts[n++] = (struct cli_opt){"mem-bw-schema", 0, .arg = &rdt};
	rc = cli_options(argc, argv, argv[0], opts, n, update_help);
	if (rc >= 0)
		goto out;
	rc = 1;
	if (rt) {
		cli_usage(argv[0], "--cpu-rt-period/--cpu-rt-runtime: cgroup v2 has no real-time "
				   "group scheduling");
		goto out;
	}
	if (rdt) {
		cli_usage(argv[0], "--l3-cache-schema/--mem-bw-schema: Intel RDT is not supported");
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		if (vals[i] && set_flag(res, &flags[i], vals[i], argv[0]))
			goto out;
	id = cli_one_id(argv[0], argc, argv);
	if (!id)
		goto out;
	if (file) {
		json = read_resources(file, &err);
		if (!json) {
			rc = cli_fail(&err);
			goto out;
		}
	} else {
		json = json_dumps(res, JSON_COMPACT);
		if (!json)
			abort();
	}
	rootfd = cli_root(cli);
	if (rootfd < 0)
		goto out;
	if (ward_container_update(rootfd, id, json, &err) < 0) {
		ward_wrap(&err, "cannot update container \"%s\"", id);
		rc = cli_fail(&err);
		goto out;
	}
	rc = 0;
out:
	json_decref(res);
	return rc;
}
