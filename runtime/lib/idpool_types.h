/* The ID pool's parameters and ranges (idpool.h), apart so that the pool's own files
 * (idpool_store, idpool_migrate) use them without including the pool's API. */
#ifndef WARD_IDPOOL_TYPES_H
#define WARD_IDPOOL_TYPES_H

#include <stddef.h>
#include <stdint.h>

struct ward_idrange {
	uint32_t start, size;
};

struct ward_idpool {
	const char *lib_dir; /* created (0700) if missing */
	uint32_t base, size; /* size: a multiple of 65536 */
	const struct ward_idrange *reserved;
	size_t n_reserved;
};

#endif
