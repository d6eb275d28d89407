/* The persistent ID allocator: host UID/GID ranges for user namespaces, handed out in
 * 65536-ID slices from the pool [base, base + size). Allocations live in <lib_dir>/idpool2.d/,
 * one file per allocation and a map of them, so that a change reads only the owner's file
 * whatever the number of allocations (idpool.c has the format; the idpool.d or idpool.json
 * of an older ward is migrated once, and idpool.json left as a marker an older ward
 * refuses), read and changed under an flock on <lib_dir>/idpool.lock, so concurrent
 * creates never hand out overlapping ranges.
 *
 * An allocation has an owner ("tenant:<name>" or "pod:<tenant>/<pod>") and a set of users
 * (container ids). Acquiring an owner that exists returns its range and adds the user;
 * releasing a user removes it, and a pod allocation whose last user goes is freed. Tenant
 * allocations are kept for good. Fixed ranges from tenant files are passed as `reserved`
 * and never handed out. */
#ifndef WARD_IDPOOL_H
#define WARD_IDPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "idpool_types.h"

/* owner: "tenant:..." or "pod:..."; user: a container id (may be NULL for tenant owners).
 * slices: how many 65536-ID slices a new allocation gets (>= 1); an existing owner keeps
 * its range whatever slices says. A new range is the first run of free slices (base + k *
 * 65536) that overlaps no reserved range and no allocation; host IDs 0 and 4294967295 are
 * never handed out. Errors: ENOSPC when the pool is full (the message counts the slices in
 * use) or the owner's file holds no more users (1 MiB), EINVAL when a file of the pool it
 * reads is corrupt (the message names the file and the problem; nothing is reset). */
int ward_idpool_acquire(const struct ward_idpool *p, const char *owner, const char *user,
			uint32_t slices, struct ward_idrange *out, struct ward_err *err);
/* Remove user from owner's users; frees a "pod:" allocation left without users. A missing
 * owner or user is not an error. */
int ward_idpool_release(const struct ward_idpool *p, const char *owner, const char *user,
			struct ward_err *err);
/* Every allocation as JSON text (for `ward check` and tests): reads every file, malloc'd.
 * With a map of this boot, each file is compared with it: a file whose allocation the map
 * does not hold is an error (EINVAL, naming both); what needs no fixing (a first line cut
 * short, a record used over a free file) is listed in "notes", an array of strings. */
char *ward_idpool_dump(const struct ward_idpool *p, struct ward_err *err);

#endif
