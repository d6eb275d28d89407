/* Compiling the embedded default seccomp profile with libseccomp vs reading it from ward's
 * compiled-filter cache: what each container create pays before its init is forked.
 * Built and run by tests/bench/seccomp-cache; prints medians and the ratio. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "seccomp.h"
#include "seccomp_profiles.h"
#include "spec.h"
#include "util.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* n compiles of s; returns the median in microseconds, fills min/p90. */
static double timed(const struct ward_seccomp *s, int n, double *min, double *p90)
{
	double *t = xcalloc((size_t)n, sizeof(double));
	struct ward_err err = {0};
	double med;

	for (int i = 0; i < n; i++) {
		struct ward_seccomp_prog p;
		double t0 = now_us();
		if (ward_seccomp_compile(s, &p, &err) < 0) {
			fprintf(stderr, "seccomp-cache: %s\n", err.msg);
			exit(1);
		}
		t[i] = now_us() - t0;
		ward_seccomp_prog_free(&p);
	}
	qsort(t, (size_t)n, sizeof(double), cmp_double);
	med = t[n / 2];
	*min = t[0];
	*p90 = t[(n * 9) / 10];
	free(t);
	return med;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	const char *dir = argc > 2 ? argv[2] : NULL;
	struct ward_err err = {0};
	char *profile = ward_seccomp_profile_load("default", &err);
	char *text;
	struct ward_spec *spec;
	struct ward_seccomp_prog p;
	double lib, lib_min, lib_p90, hit, hit_min, hit_p90;

	if (!profile || n < 1 || !dir) {
		fprintf(stderr, "usage: seccomp-cache RUNS EMPTY_PRIVATE_DIR\n");
		return 2;
	}
	text = xasprintf("{\"ociVersion\": \"1.3.0\", \"root\": {\"path\": \"rootfs\"}, "
			 "\"linux\": {\"seccomp\": %s}}",
			 profile);
	spec = ward_spec_parse(text, strlen(text), "/tmp", &err);
	if (!spec) {
		fprintf(stderr, "seccomp-cache: %s\n", err.msg);
		return 1;
	}

	ward_seccomp_cache_set_dir(NULL); /* every compile through libseccomp */
	lib = timed(spec->linux.seccomp, n, &lib_min, &lib_p90);

	ward_seccomp_cache_set_dir(dir);
	if (ward_seccomp_compile(spec->linux.seccomp, &p, &err) < 0 ||
	    ward_seccomp_cache_stats.stored != 1) {
		fprintf(stderr, "seccomp-cache: could not prime the cache in %s\n", dir);
		return 1;
	}
	printf("default.json: %u BPF instructions (%zu bytes)\n", p.len, (size_t)p.len * 8);
	ward_seccomp_prog_free(&p);
	hit = timed(spec->linux.seccomp, n, &hit_min, &hit_p90);
	if (ward_seccomp_cache_stats.hits != (unsigned)n) {
		fprintf(stderr, "seccomp-cache: %u cache hits of %d\n",
			ward_seccomp_cache_stats.hits, n);
		return 1;
	}

	printf("runs: %d each\n", n);
	printf("libseccomp compile: median %8.1f us  (min %.1f, p90 %.1f)\n", lib, lib_min,
	       lib_p90);
	printf("cache load:         median %8.1f us  (min %.1f, p90 %.1f)\n", hit, hit_min,
	       hit_p90);
	printf("ratio:              %.0fx (medians), %.0fx (minimums) faster from the cache\n",
	       lib / hit, lib_min / hit_min);
	ward_spec_free(spec);
	free(text);
	free(profile);
	return 0;
}
