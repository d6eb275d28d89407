/* ward update: new resource limits for a container (runc's flags; -r wins over them). */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "container_res.h"
#include "resources.h"
#include "util.h"

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

/* Each flag sets one value of struct ward_resources; resources.c checks the ranges. */
struct flag {
	const char *name;
	enum { RAM, I64, U64, STR } kind;
	size_t off; /* of the ward_res_i64 / ward_res_u64 / char * in struct ward_resources */
	size_t has; /* of its section's has_* flag */
	const char *metavar, *help; /* its line in --help */
};

#define F(name, kind, member, section, metavar, help)                                              \
	{                                                                                          \
		name, kind, offsetof(struct ward_resources, member),                               \
		    offsetof(struct ward_resources, section), metavar, help                        \
	}
static const struct flag flags[] = {
    F("memory", RAM, memory.limit, has_memory, "N",
      "memory limit in bytes (512m, 1g; -1: unlimited)"),
    F("memory-reservation", RAM, memory.reservation, has_memory, "N",
      "memory reservation (memory.low)"),
    F("memory-swap", RAM, memory.swap, has_memory, "N", "memory+swap limit (-1: unlimited swap)"),
    F("cpu-shares", U64, cpu.shares, has_cpu, "N",
      "CPU shares (2..262144, converted to cpu.weight)"),
    F("cpu-share", U64, cpu.shares, has_cpu, "N", "runc's name for --cpu-shares"),
    F("cpu-quota", I64, cpu.quota, has_cpu, "N", "CFS quota in microseconds per period (-1: none)"),
    F("cpu-period", U64, cpu.period, has_cpu, "N", "CFS period in microseconds"),
    F("cpu-burst", U64, cpu.burst, has_cpu, "N", "CFS burst in microseconds"),
    F("cpu-idle", I64, cpu.idle, has_cpu, "0|1", "SCHED_IDLE for the cgroup"),
    F("cpuset-cpus", STR, cpu.cpus, has_cpu, "LIST", "CPUs to use (0-3,5)"),
    F("cpuset-mems", STR, cpu.mems, has_cpu, "LIST", "memory nodes to use"),
    F("pids-limit", I64, pids_limit, has_pids, "N", "maximum number of tasks (-1: unlimited)"),
    F("blkio-weight", U64, block_io.weight, has_block_io, "N", "block IO weight (10..1000)"),
};
#undef F

static int set_flag(struct ward_resources *res, const struct flag *f, const char *arg,
		    const char *cmd)
{
	char *at = (char *)res + f->off;
	int64_t n;

	*(bool *)((char *)res + f->has) = true;
	if (f->kind == STR) {
		free(*(char **)at);
		*(char **)at = xstrdup(arg);
		return 0;
	}
	if ((f->kind == RAM ? parse_ram(arg, &n) : parse_i64(arg, &n)) < 0 ||
	    (f->kind == U64 && n < 0))
		return cli_usage(cmd, "--%s: \"%s\" is not %s", f->name, cli_printable(arg),
				 f->kind == RAM	  ? "a size (1024, 512m, 1g, -1)"
				 : f->kind == U64 ? "a non-negative number"
						  : "a number");
	if (f->kind == U64)
		*(struct ward_res_u64 *)at = (struct ward_res_u64){true, (uint64_t)n};
	else
		*(struct ward_res_i64 *)at = (struct ward_res_i64){true, n};
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
	struct ward_resources res = {0};
	size_t n = 0;
	int rootfd, rc;

	opts[n++] = (struct cli_opt){"resources", 'r', "FILE",
				     "LinuxResources JSON from FILE ('-': stdin); the other\n"
				     "options are then ignored",
				     .arg = &file};
	/* Flags for one value (--cpu-share, --cpu-shares) share a slot: the last given wins. */
	for (size_t i = 0, slot; i < ARRAY_SIZE(flags); i++) {
		for (slot = 0; flags[slot].off != flags[i].off; slot++)
			;
		opts[n++] = (struct cli_opt){flags[i].name, 0, flags[i].metavar, flags[i].help,
					     .arg = &vals[slot]};
	}
	/* runc's, refused below */
	opts[n++] = (struct cli_opt){"cpu-rt-period", 0, "N",
				     "refused: cgroup v2 has no real-time scheduling", .arg = &rt};
	opts[n++] =
	    (struct cli_opt){"cpu-rt-runtime", 0, "N", "refused, as --cpu-rt-period", .arg = &rt};
	opts[n++] = (struct cli_opt){"l3-cache-schema", 0, "SCHEMA",
				     "refused: Intel RDT is not supported", .arg = &rdt};
	opts[n++] = (struct cli_opt){"mem-bw-schema", 0, "SCHEMA", "refused, as --l3-cache-schema",
				     .arg = &rdt};
	rc = cli_options(argc, argv, argv[0], opts, n, "usage: ward update [OPTIONS] ID\n");
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
		if (vals[i] && set_flag(&res, &flags[i], vals[i], argv[0]))
			goto out;
	id = cli_one_id(argv[0], argc, argv);
	if (!id)
		goto out;
	/* -r FILE goes through linux.resources' parser; the flags were set on the struct.
	 * ward_container_update checks both's ranges once it knows the limit in force. */
	if (file) {
		ward_resources_free(&res);
		json = read_resources(file, &err);
		if (!json) {
			rc = cli_fail(&err);
			goto out;
		}
		if (ward_resources_parse_update(json, &res, &err) < 0) {
			ward_wrap(&err, "cannot update container \"%s\"", id);
			rc = cli_fail(&err);
			goto out;
		}
	}
	rootfd = cli_root(cli);
	if (rootfd < 0)
		goto out;
	if (ward_container_update(rootfd, id, &res, &err) < 0) {
		ward_wrap(&err, "cannot update container \"%s\"", id);
		rc = cli_fail(&err);
		goto out;
	}
	rc = 0;
out:
	ward_resources_free(&res);
	return rc;
}
