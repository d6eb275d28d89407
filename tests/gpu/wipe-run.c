/* wipe-run: run ward's GPU scrubber (gpu-hooks/wipe.c) once and print its report, for
 * tests/gpu/real-gpu.sh and tests/bench/gpu-wipe. Not installed.
 *
 *   wipe-run --uuid GPU-... [--libcuda PATH] [--proc DIR] [--rdev MAJ:MIN]... [--timeout S]
 *            [--slack BYTES] [--held-max BYTES]
 *
 * Prints "key=value" lines (ok, total, free_start, bytes, residue, seconds, gbps, busy_pid,
 * reason). Exit status: 0 wiped, 1 not wiped (report says why), 2 could not run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "util.h"
#include "wipe.h"

static int usage(void)
{
	fprintf(stderr, "usage: wipe-run --uuid GPU-... [--libcuda PATH] [--proc DIR] "
			"[--rdev MAJ:MIN]... [--timeout S] [--slack BYTES] [--held-max BYTES]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct ward_wipe_opts o = {.libcuda = "libcuda.so.1", .proc_root = "/proc"};
	dev_t rdevs[16];
	uint64_t v;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!val)
			return usage();
		i++;
		if (!strcmp(a, "--uuid")) {
			o.uuid = val;
		} else if (!strcmp(a, "--libcuda")) {
			o.libcuda = val;
		} else if (!strcmp(a, "--proc")) {
			o.proc_root = val;
		} else if (!strcmp(a, "--rdev")) {
			unsigned maj, min;
			if (sscanf(val, "%u:%u", &maj, &min) != 2 || o.n_rdevs == ARRAY_SIZE(rdevs))
				return usage();
			rdevs[o.n_rdevs++] = makedev(maj, min);
		} else if (!strcmp(a, "--timeout") && parse_u64(val, &v) == 0) {
			o.timeout_s = (unsigned)v;
		} else if (!strcmp(a, "--slack") && parse_u64(val, &v) == 0) {
			o.slack_bytes = v;
		} else if (!strcmp(a, "--held-max") && parse_u64(val, &v) == 0) {
			o.held_max = v;
		} else {
			return usage();
		}
	}
	if (!o.uuid)
		return usage();
	o.rdevs = rdevs;

	struct ward_wipe_report r;
	struct ward_err err = {0};
	int ret = ward_gpu_wipe(&o, &r, &err);
	printf("ok=%d\ntotal=%llu\nfree_start=%llu\nbytes=%llu\nresidue=%llu\nseconds=%.3f\n"
	       "gbps=%.2f\nbusy_pid=%d\nreason=%s\n",
	       r.ok, (unsigned long long)r.total, (unsigned long long)r.free_start,
	       (unsigned long long)r.bytes, (unsigned long long)r.residue, r.seconds, r.gbps,
	       (int)r.busy_pid, r.reason);
	if (ret < 0) {
		fprintf(stderr, "wipe-run: %s\n", err.msg);
		return 2;
	}
	return r.ok ? 0 : 1;
}
