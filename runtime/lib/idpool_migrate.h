/* The ID pool's older formats and their migration into idpool2.d (see idpool_migrate.c). */
#ifndef WARD_IDPOOL_MIGRATE_H
#define WARD_IDPOOL_MIGRATE_H

#include <stdbool.h>

#include "err.h"
#include "idpool_types.h"
#include "idpool_store.h"

/* idpool.json: 0 missing, 1 the oldest format, 2 the marker of a migrated pool, -1 (an
 * error: neither, named). */
int idpool_old_kind(int dirfd, const struct ward_idpool *p, struct ward_err *err);

/* The older formats: idpool.d where it is there, else idpool.json. */
int idpool_read_old(int dirfd, const struct ward_idpool *p, struct pool *out, struct ward_err *err);

/* The older formats (or none) -> idpool2.d, durably, under the exclusive lock (the steps
 * and what a migration cut short leaves: idpool_migrate.c's top comment). */
int idpool_migrate(int dirfd, const struct ward_idpool *p, struct ward_err *err);

/* The marker idpool.json of a migrated pool written again (durably) where it is missing, so
 * that an older ward never sees an empty pool: one faccessat when it is there. */
int idpool_marker_keep(int dirfd, const struct ward_idpool *p, struct ward_err *err);

/* Whether lib_dir holds a pool of an older format (or a migration's marker). */
bool idpool_has_old(int dirfd);

#endif
