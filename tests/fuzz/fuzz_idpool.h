/* Shared by the ID pool's libFuzzer targets (fuzz_idpool.c, fuzz_idpool_dir.c): the pool
 * they allocate from, its fixed range, and the checks of a range handed out. */
#ifndef WARD_FUZZ_IDPOOL_H
#define WARD_FUZZ_IDPOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "idpool.h"

#define SLICE	   65536u
#define POOL_BASE  524288u
#define POOL_SIZE  (16u * SLICE)
#define OWNER	   "pod:a/fuzz"
#define FIXED_BASE (POOL_BASE + 2u * SLICE)

static const struct ward_idrange fixed[] = {{FIXED_BASE, SLICE}};

/* The pool in the directory d. */
#define FUZZ_IDPOOL(d)                                                                             \
	{                                                                                          \
		.lib_dir = (d), .base = POOL_BASE, .size = POOL_SIZE, .reserved = fixed,           \
		.n_reserved = 1                                                                    \
	}

static inline void broken(const char *what)
{
	fprintf(stderr, "ID pool broken: %s\n", what);
	abort();
}

static inline bool overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

/* A new range: in the pool, clear of the fixed range, without host ID 0 or 4294967295. */
static inline void check_in_pool(struct ward_idrange r)
{
	if (r.size == 0 || r.start == 0 || (uint64_t)r.start + r.size > 0xffffffffull)
		broken("a range holding host ID 0 or 4294967295");
	if (r.start < POOL_BASE || (uint64_t)r.start + r.size > (uint64_t)POOL_BASE + POOL_SIZE)
		broken("a new range outside the pool");
	if (overlap(r.start, r.size, fixed[0].start, fixed[0].size))
		broken("a new range overlaps a fixed range");
}

/* The private lib_dir dir (a char[64]) named after prefix, made on the first input, with
 * cleanup run when the fuzzer exits (a crash leaves it for a look). */
static inline void private_dir(char *dir, size_t n, const char *prefix, void (*cleanup)(void))
{
	if (dir[0])
		return;
	snprintf(dir, n, "%s/%s.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
		 prefix);
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
}

#endif
