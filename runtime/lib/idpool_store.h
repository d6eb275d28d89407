/* The ID pool's files, shared by idpool.c (the format, the map and the changes) and
 * idpool_migrate.c (the older formats): an allocation's text and its checks, the map's
 * records as text, the names of idpool2.d, and the writing of a fresh file. */
#ifndef WARD_IDPOOL_STORE_H
#define WARD_IDPOOL_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "idpool_types.h"

#define SLICE	     65536u
#define POOL_DIR     "idpool2.d"
#define POOL_DIR_NEW "idpool2.d.new"
#define MAP_FILE     "map"
/* The end of the usable ID space: (uid_t)-1 is never mapped. */
#define ID_LIMIT 0xffffffffull

#define MAP_HDR	    64	       /* "ward-idpool-map 1 boot=<boot id>", padded, '\n' */
#define MAP_REC	    32	       /* "%010u %010u %c%08x\n": never across a page, so written whole */
#define MAP_MAX_REC (1u << 17) /* a pool has at most 65536 slices */

/* An error whose message needs no strerror(), errnum still set for callers. */
#define fail_as(err, code, ...)                                                                    \
	({                                                                                         \
		ward_fail((err), 0, __VA_ARGS__);                                                  \
		(err)->errnum = (code);                                                            \
		-1;                                                                                \
	})

struct alloc {
	char *owner;
	uint32_t start, size;
	char **users; /* NULL-terminated, may be NULL */
};

struct pool {
	struct alloc *v;
	size_t n;
};

/* A record of the map: type 'p' (a pod's allocation), 't' (a tenant's) or '-' (free). */
struct rec {
	uint32_t start, size, key;
	char type;
};

/* The formats of an allocation's object: an element of idpool.json's list, the content of
 * idpool.d/<start> (start from the name), the first line of a file of idpool2.d. */
enum alloc_format { FMT_LIST, FMT_OLD_FILE, FMT_FIRST_LINE };

void idpool_alloc_free(struct alloc *a);

void idpool_set_free(struct pool *p);

bool idpool_owner_valid(const char *o);

bool idpool_is_pod(const char *o);

char idpool_owner_type(const char *o);

/* The key of an owner in the map: 32-bit FNV-1a. Not unique (idpool.c: every record of a
 * key is read and its owner compared). */
uint32_t idpool_owner_key(const char *o);

bool idpool_has_user(char *const *users, const char *u);

/* Remove u from users (there once). */
void idpool_drop_user(char **users, const char *u);

int idpool_open_dir(int dirfd, const char *name);

/* "<lib_dir>/<file> is corrupt: <where><what>". */
int idpool_bad(struct ward_err *err, const struct ward_idpool *p, const char *file,
	       const char *where, const char *what);

/* One allocation from a; where: the prefix of the messages. */
int idpool_parse_alloc(json_t *a, const char *file, const char *where, enum alloc_format fmt,
		       uint32_t start, struct alloc *out, const struct ward_idpool *p,
		       struct ward_err *err);

/* The text of a file of idpool2.d: 0 (an allocation into a; *committed: the length up to
 * and with its last newline), 1 (free: nothing committed),
 * -1 (corrupt, err names file). */
int idpool_parse_file(const char *text, size_t len, const char *file, const struct ward_idpool *p,
		      struct alloc *a, size_t *committed, struct ward_err *err);

/* The owner and range of a file's first line (text: its first len bytes), whatever the
 * rest says: 0 (into a, users NULL), -1 (no whole first line, or not one that gives them). */
int idpool_first_range(const char *text, size_t len, struct alloc *a);

/* Record i's file name (i < MAP_MAX_REC). */
void idpool_rec_name(char buf[16], size_t i);

/* The whole pool makes sense: one allocation per owner, none overlapping (sorts it). */
int idpool_set_check(struct pool *pl, const struct ward_idpool *p, const char *file,
		     struct ward_err *err);

struct alloc *idpool_set_add(struct pool *pl);

/* A canonical decimal (no sign, no leading zero) up to max. */
bool idpool_parse_index(const char *name, uint64_t max, uint64_t *out);

bool idpool_is_tmp_name(const char *name);

/* Each name of the directory pdfd (dir: its path under lib_dir) but "." and "..", in
 * directory order: each(name) returning -1 stops. */
int idpool_each_name(int pdfd, const char *dir, const struct ward_idpool *p,
		     int (*each)(const char *name, void *arg), void *arg, struct ward_err *err);

char *idpool_alloc_text(const struct alloc *a);

char *idpool_log_text(bool add, const char *user);

void idpool_map_header(char buf[MAP_HDR + 1]);

void idpool_rec_text(const struct rec *r, char buf[MAP_REC + 1]);

/* The map as text (header and records), malloc'd. */
char *idpool_map_text(const struct rec *r, size_t n, size_t *len);

/* A fresh file of dirfd: name, written through tmp and renamed over it; durable: fsync of
 * the file and of the directory. */
int idpool_write_fresh(int dirfd, const char *dir, const char *tmp, const char *name,
		       const char *text, size_t len, bool durable, struct ward_err *err);

/* A record of the map, as rec_text writes it. */
bool idpool_parse_rec(const char *t, struct rec *r);

#endif
