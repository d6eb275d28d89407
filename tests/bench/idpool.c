/* The ID pool's cost with live allocations: one process of tests/bench/idpool. For each
 * count L of live pod allocations (a pool in DIR/L, filled on first use and kept), ROUNDS
 * samples, the counts taken in rotating order round by round so drift hits all alike, of:
 *   new:  acquire of a new pod's range + its release (a pod's first container: create and
 *         delete of a container in a pod of its own)
 *   join: acquire of a live pod's range by a second container + its release
 * One line per sample on stdout, "L KIND MICROSECONDS"; the script takes the medians. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "idpool.h"
#include "util.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void must(int rc, const struct ward_err *err)
{
	if (rc < 0) {
		fprintf(stderr, "bench-idpool: %s\n", err->msg);
		exit(1);
	}
}

/* The pool of L live pods in dir/L (filled the first time: a pool with a marker file). */
static struct ward_idpool pool_with(const char *dir, int live)
{
	char *lib = xasprintf("%s/%d", dir, live);
	char *mark = xasprintf("%s/%d.filled", dir, live);
	struct ward_idpool p = {.lib_dir = lib, .base = 524288u, .size = 1879048192u - 524288u};
	struct ward_err err = {0};
	struct ward_idrange r;
	struct stat st;

	if (stat(mark, &st) < 0) {
		for (int i = 0; i < live; i++) {
			char owner[64], user[64];
			snprintf(owner, sizeof(owner), "pod:bench/live-%d", i);
			snprintf(user, sizeof(user), "live-%d-sandbox", i);
			must(ward_idpool_acquire(&p, owner, user, 1, &r, &err), &err);
		}
		must(write_file_at(AT_FDCWD, mark, O_CREAT | O_TRUNC, 0600, "", 0, &err), &err);
	}
	free(mark);
	return p;
}

int main(int argc, char **argv)
{
	struct ward_idpool pools[16];
	int lives[16], n = 0, rounds;
	struct ward_err err = {0};
	struct ward_idrange r;

	if (argc < 4) {
		fprintf(stderr, "usage: bench-idpool DIR ROUNDS LIVE...\n");
		return 2;
	}
	rounds = atoi(argv[2]);
	for (int i = 3; i < argc && n < 16; i++, n++) {
		lives[n] = atoi(argv[i]);
		pools[n] = pool_with(argv[1], lives[n]);
	}
	for (int k = 0; k < rounds; k++) {
		for (int j = 0; j < n; j++) {
			int i = (j + k) % n;
			const struct ward_idpool *p = &pools[i];
			char owner[64], user[64], live[64];
			double t0, t1, t2;

			snprintf(owner, sizeof(owner), "pod:bench/new-%d", k);
			snprintf(user, sizeof(user), "new-%d", k);
			t0 = now_us();
			must(ward_idpool_acquire(p, owner, user, 1, &r, &err), &err);
			must(ward_idpool_release(p, owner, user, &err), &err);
			t1 = now_us();
			if (lives[i] > 0) {
				snprintf(live, sizeof(live), "pod:bench/live-%d", k % lives[i]);
				must(ward_idpool_acquire(p, live, user, 1, &r, &err), &err);
				must(ward_idpool_release(p, live, user, &err), &err);
			}
			t2 = now_us();
			printf("%d new %.1f\n", lives[i], t1 - t0);
			if (lives[i] > 0)
				printf("%d join %.1f\n", lives[i], t2 - t1);
		}
	}
	return 0;
}
