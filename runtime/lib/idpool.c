/* The persistent ID allocator. Everything happens under an flock on <lib_dir>/idpool.lock
 * (exclusive to change, shared to dump). The allocations live in <lib_dir>/idpool2.d/:
 *
 *   idpool2.d/map   the index: one 32-byte line per record, "START SIZE TKEY\n" (start and
 *                   size 10-digit decimals, T 'p' for a pod's allocation, 't' a tenant's,
 *                   '-' a free record, KEY 8 hex digits of a hash of the owner), after a
 *                   64-byte header line naming the boot it was written in
 *   idpool2.d/N     record N's file: its allocation, or empty (a free record, kept for reuse)
 *
 *   idpool2.d/0:    {"owner":"pod:a/web","start":524288,"size":65536,"users":["web-1"]}
 *                   {"add":"web-2"}
 *                   {"remove":"web-1"}
 *
 * An allocation's file is its first line (owner, range, the users then) and a log of the
 * users that came and went since, one line each, appended in place; what follows the last
 * newline is a line whose writer was stopped half-way, never committed. A log grown past 4
 * KiB and twice its snapshot, or that would pass FILE_MAX (1 MiB), is written again as one
 * line (a temp file renamed over it); a user whose snapshot alone would pass FILE_MAX is
 * refused, the file untouched, so the writer never leaves a file the reader refuses. An
 * empty file, or one without a newline (a first line cut short), is free; the allocation
 * that takes its record empties it first. Reading is strict: a file that does not parse or
 * does not make sense is an error naming it, never silently reset.
 *
 * The files are the truth; the map says which records hold which range and whose key, so
 * that a change reads one small file and the files of the owner's key only, whatever the
 * number of allocations (a pass over the directory grows with it: ~35 us for 110 entries
 * on ext4). The map is kept a superset of the files: a new allocation's record is written
 * to the map before its file, a freed one is emptied before its record is freed, so a
 * writer killed between the two leaves a record that says used over an empty file (a
 * range not handed out until the map is built again). Where the two disagree otherwise
 * (a map of another boot: a pod's files are not fsync'd, the page cache is gone, the disk
 * kept any part of both; a missing or unreadable map; a record whose file says otherwise;
 * a full pool) the map is built again from every file, under the exclusive lock. A file
 * that does not read then keeps its record used with the range of its first line (written
 * whole before any log line, never changed by one), so the other owners go on and only its
 * owner gets the error; one whose first line does not give a range may hold any, and the
 * build fails naming it (nothing is handed out). A dump (ward check) reads every file and
 * compares each with a map of this boot: a file whose allocation the map does not hold,
 * the one disagreement a change does not see and that could hand its IDs out again, is an
 * error; a record used over a free file and a first line cut short are notes. Tenant
 * allocations are durable (fsync of the file and the directory); a pod's are not: the pod
 * dies with the host. A new allocation takes the lowest free record, its file kept from a
 * freed pod (no inode created), and a container joining a pod appends a line (no inode, no
 * rename). At most 32 free records are kept at the map's end; beyond, their files go.
 *
 * An owner's records are found by its key; the key is a hash, so two owners may share one:
 * every record with the key is read and the owner compared (a file whose owner does not
 * hash to its record's key disagrees with the map).
 *
 * Older formats (idpool.d/, idpool.json) are migrated once by the first change and
 * idpool.json left as a marker an older ward refuses: idpool_migrate.c. Each acquire checks
 * it is there (one faccessat) and writes it again where it was removed.
 *
 * Allocation is first fit over the pool's slices (base + k * 65536), skipping reserved
 * ranges and every existing allocation (also those outside the pool, left by an older
 * configuration). A range never contains host ID 0 or 4294967295 ((uid_t)-1, which no ID
 * map may contain). */
#include "idpool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idpool_migrate.h"
#include "idpool_store.h"
#include "util.h"

#define POOL_LOCK "idpool.lock"
#define MAP_TMP	  ".map.tmp"
/* Free records kept at the map's end (their empty files ready for the next allocations):
 * ext4 creates an inode slowly in a directory with many recently deleted ones. */
#define KEEP_EMPTY 32
/* A log longer than this, and than twice its snapshot, is written again as one line (as is
 * one that would pass FILE_MAX). */
#define COMPACT_MIN 4096
/* No file of idpool2.d is written longer than this, and one longer is corrupt. It bounds the
 * users of one allocation (all the containers of a tenant with ids "tenant"): about 15000
 * with 64-character ids, 1000 with 1024-character ones; a user more is refused. */
#define FILE_MAX (1u << 20)

/* What read_file found in record i's file. */
struct found {
	struct alloc a;
	int fd;		  /* open O_RDWR; -1 when none */
	size_t len;	  /* the file's length */
	size_t committed; /* up to and with its last newline */
};

/* Results of the steps below besides 0 and -1: the map and the files disagree. */
#define STALE 2

static void found_end(struct found *f)
{
	idpool_alloc_free(&f->a);
	close_fdp(&f->fd);
}

#define FOUND_INIT    ((struct found){.fd = -1})
#define cleanup_found __attribute__((cleanup(found_end)))

/* mkdir -p; the last component (lib_dir itself) gets 0700. */
static int mkdir_lib(const char *path, struct ward_err *err)
{
	struct stat st;

	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : ward_fail(err, ENOTDIR, "%s", path);
	return ward_mkdir_p(path, 0700, err);
}

static int check_params(const struct ward_idpool *p, struct ward_err *err)
{
	if (!p->lib_dir || p->lib_dir[0] != '/')
		return fail_as(err, EINVAL, "ID pool: lib_dir \"%s\" is not an absolute path",
			       p->lib_dir ? p->lib_dir : "");
	if (p->size == 0 || p->size % SLICE)
		return fail_as(err, EINVAL, "ID pool: size %u is not a positive multiple of %u",
			       p->size, SLICE);
	if ((uint64_t)p->base + p->size > ID_LIMIT + 1)
		return fail_as(err, EINVAL, "ID pool: base %u + size %u is beyond 2^32", p->base,
			       p->size);
	return 0;
}

/* The pool under its lock: lib_dir, the lock, idpool2.d and its map. Its cleanup closes the
 * fds (so the lock goes) and frees the rest. */
struct locked_pool {
	int dirfd, lockfd, pdfd, mapfd; /* -1: not open */
	char *path;			/* <lib_dir>/idpool2.d (or the directory dumped) */
	struct rec *r;			/* the map's records */
	size_t n;
	bool rebuilt; /* the map was built again in this change */
	struct pool pl;
};

#define LOCKED_POOL_INIT    ((struct locked_pool){.dirfd = -1, .lockfd = -1, .pdfd = -1, .mapfd = -1})
#define cleanup_locked_pool __attribute__((cleanup(locked_pool_end)))

static void locked_pool_end(struct locked_pool *lp)
{
	close_fdp(&lp->mapfd);
	close_fdp(&lp->pdfd);
	close_fdp(&lp->lockfd);
	close_fdp(&lp->dirfd);
	free(lp->path);
	free(lp->r);
	idpool_set_free(&lp->pl);
}

/* Open lib_dir (creating it if create) into lp->dirfd and take the lock (LOCK_EX or LOCK_SH)
 * on lp->lockfd: 0, or -1 with err set. With create false, a missing lib_dir gives 0 and
 * dirfd -1 (nothing allocated yet). */
static int pool_lock(const struct ward_idpool *p, bool create, int op, struct locked_pool *lp,
		     struct ward_err *err)
{
	lp->dirfd = open(p->lib_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lp->dirfd < 0 && create && (errno == ENOENT || errno == ENOTDIR)) {
		if (mkdir_lib(p->lib_dir, err) < 0)
			return ward_wrap(err, "ID pool: lib_dir");
		lp->dirfd = open(p->lib_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (lp->dirfd < 0) {
		if (!create && errno == ENOENT)
			return 0;
		return ward_fail_errno(err, "ID pool: open %s", p->lib_dir);
	}
	lp->lockfd = openat(lp->dirfd, POOL_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lp->lockfd < 0)
		return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_LOCK);
	while (flock(lp->lockfd, op) < 0) {
		if (errno != EINTR)
			return ward_fail_errno(err, "ID pool: lock %s/%s", p->lib_dir, POOL_LOCK);
	}
	return 0;
}

/* Record i's file of the directory pdfd (dir: its path under lib_dir, for messages), read
 * into f (which keeps the fd open, O_RDWR where rw). 0, 1 (free or missing), -1. */
static int read_file(int pdfd, const char *dir, size_t i, bool rw, const struct ward_idpool *p,
		     struct found *f, struct ward_err *err)
{
	char name[16], file[sizeof(POOL_DIR_NEW) + 16];
	cleanup_free char *text = NULL;
	struct stat st;
	size_t len;

	idpool_rec_name(name, i);
	snprintf(file, sizeof(file), "%s/%s", dir, name);
	f->fd = openat(pdfd, name, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW);
	if (f->fd < 0) {
		if (errno == ENOENT)
			return 1;
		return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, file);
	}
	if (fstat(f->fd, &st) < 0)
		return ward_fail_errno(err, "ID pool: stat %s/%s", p->lib_dir, file);
	if (!S_ISREG(st.st_mode))
		return idpool_bad(err, p, file, "not a regular file", NULL);
	if (st.st_size > FILE_MAX)
		return idpool_bad(err, p, file, "longer than 1 MiB", NULL);
	if (st.st_size == 0)
		return 1;
	text = read_all_fd(f->fd, &len, err);
	if (!text)
		return ward_wrap(err, "ID pool: %s/%s", p->lib_dir, file);
	f->len = len;
	return idpool_parse_file(text, len, file, p, &f->a, &f->committed, err);
}

struct scan {
	int pdfd;
	const char *dir;
	const struct ward_idpool *p;
	struct pool *out;
	struct rec *r; /* with the map's records, when built again */
	size_t n;
	bool salvage;	       /* building the map: a file that does not read keeps its range */
	const struct rec *map; /* a dump: the map of this boot, each file compared with it */
	size_t map_n;
	json_t *notes; /* a dump: what it found that needs no fixing, as strings */
	struct ward_err *err;
};

/* What a file that does not read (corrupt, too long) surely holds: the owner and range of
 * its first line, which is written whole before any other and never changed by the log.
 * 0 (into a), -1 (the first line does not give them: the file may hold any range). */
static int salvage_range(int pdfd, const char *name, struct alloc *a)
{
	cleanup_fd int fd = openat(pdfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	cleanup_free char *buf = NULL;
	struct stat st;
	ssize_t got;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	buf = xmalloc(FILE_MAX);
	got = read_exact(fd, buf, FILE_MAX);
	return got > 0 ? idpool_first_range(buf, (size_t)got, a) : -1;
}

/* A dump's comparison of record i's file (rc, f: as read_file found it) with the map of this
 * boot: a file whose allocation the map does not hold is an error (its range could be handed
 * out again); a record that says used over a free file, or a free file with a first line cut
 * short, a note. */
static int map_check(struct scan *s, uint64_t i, int rc, const struct found *f, const char *file)
{
	const struct rec none = {.type = '-'};
	const struct rec *r = i < s->map_n ? &s->map[i] : &none;
	char says[48];

	if (r->type == '-')
		snprintf(says, sizeof(says), "free");
	else
		snprintf(says, sizeof(says), "[%u, %llu) %c%08x", r->start,
			 (unsigned long long)r->start + r->size, r->type, r->key);
	if (rc == 0 && (r->type != idpool_owner_type(f->a.owner) || r->start != f->a.start ||
			r->size != f->a.size || r->key != idpool_owner_key(f->a.owner)))
		return fail_as(s->err, EINVAL,
			       "%s/%s/%s disagrees with %s: the file holds \"%.200s\" [%u, %llu), "
			       "record %llu says %s: a new allocation could be given these IDs "
			       "(remove the map: the next change builds it again from the files)",
			       s->p->lib_dir, s->dir, MAP_FILE, file, f->a.owner, f->a.start,
			       (unsigned long long)f->a.start + f->a.size, (unsigned long long)i,
			       says);
	if (rc == 1 && f->len > 0 && r->type == '-')
		json_array_append_new(
		    s->notes, json_sprintf("%s: a first line cut short under a free record (never "
					   "committed; the next allocation there empties it)",
					   file));
	else if (rc == 1 && r->type != '-')
		json_array_append_new(
		    s->notes, json_sprintf("%s: record %llu says %s over a free file (a writer "
					   "stopped half-way; the range comes back when the map "
					   "is built again)",
					   file, (unsigned long long)i, says));
	return 0;
}

static int scan_entry(const char *name, void *arg)
{
	struct scan *s = arg;
	cleanup_found struct found f = FOUND_INIT;
	char file[sizeof(POOL_DIR_NEW) + NAME_MAX + 1];
	uint64_t i;
	int rc;

	snprintf(file, sizeof(file), "%s/%s", s->dir, name);
	if (!strcmp(name, MAP_FILE) || idpool_is_tmp_name(name))
		return 0; /* the index, or a temp file left by a crash: never read */
	if (!idpool_parse_index(name, MAP_MAX_REC - 1, &i))
		return idpool_bad(s->err, s->p, file, "not a record's name (a number)", NULL);
	rc = read_file(s->pdfd, s->dir, i, false, s->p, &f, s->err);
	if (rc < 0) {
		/* Building the map: the owner gets the error when it reads its file, the
		 * others go on, its range kept. */
		idpool_alloc_free(&f.a);
		if (!s->salvage || salvage_range(s->pdfd, name, &f.a) < 0)
			return -1;
		rc = 0;
	}
	if (s->map && map_check(s, i, rc, &f, file) < 0)
		return -1;
	if (i >= s->n) {
		s->r = xrealloc(s->r, (i + 1) * sizeof(*s->r));
		for (size_t k = s->n; k <= i; k++)
			s->r[k] = (struct rec){.type = '-'};
		s->n = i + 1;
	}
	if (rc == 1)
		return 0;
	s->r[i] = (struct rec){f.a.start, f.a.size, idpool_owner_key(f.a.owner),
			       idpool_owner_type(f.a.owner)};
	*idpool_set_add(s->out) = f.a;
	f.a = (struct alloc){0};
	return 0;
}

/* Every allocation of the directory pdfd (dir: its name under lib_dir), sorted by start,
 * into out; with r, the records too (malloc'd), and the range of a file that does not read
 * kept where its first line gives it (see salvage_range); with s_in's map (a dump), each
 * file compared with it. */
static int scan_dir(int pdfd, const char *dir, const struct ward_idpool *p, struct pool *out,
		    struct rec **r, size_t *n, const struct scan *s_in, struct ward_err *err)
{
	struct scan s = {.pdfd = pdfd, .dir = dir, .p = p, .out = out, .err = err};
	int rc;

	if (s_in) {
		s.map = s_in->map;
		s.map_n = s_in->map_n;
		s.notes = s_in->notes;
	}
	s.salvage = r != NULL;
	rc = idpool_each_name(pdfd, dir, p, scan_entry, &s, err);

	if (rc == 0)
		rc = idpool_set_check(out, p, dir, err);
	if (rc == 0 && r) {
		*r = s.r;
		*n = s.n;
	} else {
		free(s.r);
	}
	return rc;
}

/* ---- writing ---- */

static int pwrite_all(int fd, const char *buf, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t w = pwrite(fd, buf, len, off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		buf += w;
		len -= (size_t)w;
		off += w;
	}
	return 0;
}

/* Record i of the map, written in place (i == lp->n: a new one at the end). */
static int map_put(struct locked_pool *lp, size_t i, struct rec r, struct ward_err *err)
{
	char buf[MAP_REC + 1];

	idpool_rec_text(&r, buf);
	if (pwrite_all(lp->mapfd, buf, MAP_REC, (off_t)(MAP_HDR + i * MAP_REC)) < 0)
		return ward_fail_errno(err, "ID pool: write %s/%s", lp->path, MAP_FILE);
	if (i == lp->n) {
		lp->r = xrealloc(lp->r, (lp->n + 1) * sizeof(*lp->r));
		lp->n++;
	}
	lp->r[i] = r;
	return 0;
}

/* The map of idpool2.d built again from every file (see the top of the file). */
static int map_rebuild(struct locked_pool *lp, const struct ward_idpool *p, struct ward_err *err)
{
	struct pool pl = {0};
	cleanup_free char *text = NULL;
	size_t len;
	int rc;

	free(lp->r);
	lp->r = NULL;
	lp->n = 0;
	rc = scan_dir(lp->pdfd, POOL_DIR, p, &pl, &lp->r, &lp->n, NULL, err);
	idpool_set_free(&pl);
	if (rc < 0)
		return -1;
	text = idpool_map_text(lp->r, lp->n, &len);
	close_fdp(&lp->mapfd);
	if (idpool_write_fresh(lp->pdfd, lp->path, MAP_TMP, MAP_FILE, text, len, false, err) < 0)
		return -1;
	lp->mapfd = openat(lp->pdfd, MAP_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (lp->mapfd < 0)
		return ward_fail_errno(err, "ID pool: open %s/%s", lp->path, MAP_FILE);
	lp->rebuilt = true;
	return 0;
}

/* The records of the map open as fd, into *r (malloc'd) and *n: 0, 1 (not to be trusted:
 * of another boot or an unknown one, or not sound), -1 (errno: it cannot be read). */
static int map_read(int fd, struct rec **r, size_t *n)
{
	cleanup_free char *text = NULL;
	char head[MAP_HDR + 1];
	struct stat st;
	ssize_t got;
	size_t len;

	*r = NULL;
	*n = 0;
	/* One read of the whole map (its size known: no growing buffer). */
	if (fstat(fd, &st) < 0)
		return -1;
	if (st.st_size > MAP_HDR + (off_t)MAP_MAX_REC * MAP_REC)
		return 1;
	text = xmalloc((size_t)st.st_size + 1);
	got = read_exact(fd, text, (size_t)st.st_size);
	if (got < 0)
		return -1;
	len = (size_t)got;
	idpool_map_header(head);
	if (len < MAP_HDR || (len - MAP_HDR) % MAP_REC || memcmp(text, head, MAP_HDR) ||
	    strncmp(head + 23, "unknown ", 8) == 0)
		return 1;
	*r = xcalloc((len - MAP_HDR) / MAP_REC + 1, sizeof(**r));
	for (size_t i = 0; i < (len - MAP_HDR) / MAP_REC; i++) {
		if (!idpool_parse_rec(text + MAP_HDR + i * MAP_REC, &(*r)[i])) {
			free(*r);
			*r = NULL;
			return 1;
		}
	}
	*n = (len - MAP_HDR) / MAP_REC;
	return 0;
}

/* The map of idpool2.d, or built again where it is missing, of another boot or not sound. */
static int map_load(struct locked_pool *lp, const struct ward_idpool *p, struct ward_err *err)
{
	int rc;

	lp->mapfd = openat(lp->pdfd, MAP_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (lp->mapfd < 0)
		return errno == ENOENT
			   ? map_rebuild(lp, p, err)
			   : ward_fail_errno(err, "ID pool: open %s/%s", lp->path, MAP_FILE);
	rc = map_read(lp->mapfd, &lp->r, &lp->n);
	if (rc < 0)
		return ward_fail_errno(err, "ID pool: read %s/%s", lp->path, MAP_FILE);
	return rc == 1 ? map_rebuild(lp, p, err) : 0;
}

/* ---- migration ---- */

/* Begin a change: the exclusive lock, idpool2.d (migrated or created first where needed)
 * and its map. 0, -1 with err set, or 1 (no error) when there is no pool and create is
 * false. */
static int pool_begin(const struct ward_idpool *p, bool create, struct locked_pool *lp,
		      struct ward_err *err)
{
	if (pool_lock(p, create, LOCK_EX, lp, err) < 0)
		return -1;
	if (lp->dirfd < 0)
		return 1;
	lp->pdfd = idpool_open_dir(lp->dirfd, POOL_DIR);
	if (lp->pdfd < 0) {
		if (errno != ENOENT)
			return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_DIR);
		if (!create && !idpool_has_old(lp->dirfd))
			return 1;
		if (idpool_migrate(lp->dirfd, p, err) < 0)
			return -1;
		lp->pdfd = idpool_open_dir(lp->dirfd, POOL_DIR);
		if (lp->pdfd < 0)
			return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_DIR);
	} else if (create && idpool_marker_keep(lp->dirfd, p, err) < 0) {
		return -1; /* an acquire (every create) keeps the marker; a release needs none */
	}
	lp->path = xasprintf("%s/%s", p->lib_dir, POOL_DIR);
	return map_load(lp, p, err);
}

static json_t *pool_json(const struct pool *pl, json_t *notes)
{
	json_t *allocs = json_array();
	for (size_t i = 0; i < pl->n; i++) {
		const struct alloc *a = &pl->v[i];
		json_t *users = json_array();
		for (size_t j = 0; a->users && a->users[j]; j++)
			json_array_append_new(users, json_string(a->users[j]));
		json_array_append_new(allocs, json_pack("{s:s,s:I,s:I,s:o}", "owner", a->owner,
							"start", (json_int_t)a->start, "size",
							(json_int_t)a->size, "users", users));
	}
	if (json_array_size(notes))
		return json_pack("{s:i,s:o,s:O}", "version", 1, "allocations", allocs, "notes",
				 notes);
	return json_pack("{s:i,s:o}", "version", 1, "allocations", allocs);
}

/* ---- first fit ---- */

struct span {
	uint64_t start, end; /* [start, end) */
};

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Slices of the pool covered by [start, end). */
static uint64_t slices_in_pool(const struct ward_idpool *p, uint64_t start, uint64_t end)
{
	uint64_t lo = start > p->base ? start : p->base;
	uint64_t hi = end < (uint64_t)p->base + p->size ? end : (uint64_t)p->base + p->size;
	if (hi <= lo)
		return 0;
	/* Partly covered slices count as used: nothing can be handed out there. */
	return (hi - p->base + SLICE - 1) / SLICE - (lo - p->base) / SLICE;
}

/* The first fit over the map's used records; 0, or 1 (no error) when nothing fits, with
 * the message for it in err. */
static int first_fit(const struct ward_idpool *p, const struct locked_pool *lp, uint32_t slices,
		     uint32_t *start, struct ward_err *err)
{
	size_t n = lp->n + p->n_reserved, used_recs = 0;
	cleanup_free struct span *s = xcalloc(n + 1, sizeof(*s));
	uint64_t need = (uint64_t)slices * SLICE;
	uint64_t limit = (uint64_t)p->base + p->size;
	uint64_t cur = p->base, used = 0;
	size_t k = 0;

	if (limit > ID_LIMIT)
		limit = ID_LIMIT; /* the last slice of the ID space contains (uid_t)-1 */
	for (size_t i = 0; i < lp->n; i++)
		if (lp->r[i].type != '-') {
			s[k++] =
			    (struct span){lp->r[i].start, (uint64_t)lp->r[i].start + lp->r[i].size};
			used_recs++;
		}
	for (size_t i = 0; i < p->n_reserved; i++)
		if (p->reserved[i].size)
			s[k++] =
			    (struct span){p->reserved[i].start,
					  (uint64_t)p->reserved[i].start + p->reserved[i].size};
	/* Host ID 0 is never handed out. */
	s[k++] = (struct span){0, 1};
	qsort(s, k, sizeof(*s), cmp_span);

	for (size_t i = 0; i < k; i++) {
		if (s[i].end <= cur)
			continue;
		if (cur + need <= s[i].start)
			break;
		/* Next slice boundary at or after the obstacle's end. */
		cur = p->base + (s[i].end - p->base + SLICE - 1) / SLICE * SLICE;
	}
	if (cur + need <= limit) {
		*start = (uint32_t)cur;
		return 0;
	}
	/* Exhausted: say how full the pool is. Count covered slices once (spans may
	 * overlap, e.g. a reserved range inside an old allocation): merge first. */
	{
		uint64_t ms = 0, me = 0;
		bool open = false;
		for (size_t i = 0; i < k; i++) {
			if (open && s[i].start <= me) {
				if (s[i].end > me)
					me = s[i].end;
				continue;
			}
			if (open)
				used += slices_in_pool(p, ms, me);
			ms = s[i].start;
			me = s[i].end;
			open = true;
		}
		if (open)
			used += slices_in_pool(p, ms, me);
	}
	fail_as(err, ENOSPC,
		"ID pool [%u, %llu) exhausted: %llu of %u slices in use (%zu allocations, "
		"%zu reserved ranges), no room for %u more consecutive slice%s",
		p->base, (unsigned long long)p->base + p->size, (unsigned long long)used,
		p->size / SLICE, used_recs, p->n_reserved, slices, slices == 1 ? "" : "s");
	return 1;
}

/* ---- a change ---- */

/* The check of the owner's form and the pool's parameters, before any file is touched. */
static int check_owner(const struct ward_idpool *p, const char *owner, struct ward_err *err)
{
	if (!idpool_owner_valid(owner))
		return fail_as(err, EINVAL, "ID pool: owner \"%s\": expected pod:... or tenant:...",
			       owner ? owner : "");
	return check_params(p, err);
}

/* The owner's allocation: every record of its key read (a file of another owner whose key
 * is the same is passed over). 1 found (into f, *idx its record), 0 none, -1, STALE (a
 * file says other than its record). */
static int find_owner(struct locked_pool *lp, const struct ward_idpool *p, const char *owner,
		      struct found *f, size_t *idx, struct ward_err *err)
{
	uint32_t key = idpool_owner_key(owner);
	char type = idpool_owner_type(owner);
	int hit = 0;

	for (size_t i = 0; i < lp->n; i++) {
		const struct rec *r = &lp->r[i];
		struct found g = FOUND_INIT;
		int rc;

		if (r->type != type || r->key != key)
			continue;
		rc = read_file(lp->pdfd, POOL_DIR, i, true, p, &g, err);
		if (rc != 0 || g.a.start != r->start || g.a.size != r->size ||
		    idpool_owner_key(g.a.owner) != key || idpool_owner_type(g.a.owner) != type) {
			found_end(&g);
			return rc < 0 ? -1 : STALE; /* empty, or other than the map says */
		}
		if (strcmp(g.a.owner, owner)) {
			found_end(&g);
			continue; /* another owner with the same key */
		}
		if (hit) {
			char file[32], what[300];
			found_end(&g);
			snprintf(file, sizeof(file), "%s/%zu", POOL_DIR, i);
			snprintf(what, sizeof(what), "owner \"%.200s\" has record %zu too", owner,
				 *idx);
			return idpool_bad(err, p, file, what, NULL);
		}
		hit = 1;
		*f = g;
		*idx = i;
	}
	return hit;
}

/* Trim the map's end to KEEP_EMPTY free records (their files removed first). */
static int map_trim(struct locked_pool *lp, struct ward_err *err)
{
	size_t free_recs = 0, n = lp->n;

	for (size_t i = 0; i < lp->n; i++)
		free_recs += lp->r[i].type == '-';
	while (free_recs > KEEP_EMPTY && n > 0 && lp->r[n - 1].type == '-') {
		char name[16];
		idpool_rec_name(name, n - 1);
		if (unlinkat(lp->pdfd, name, 0) < 0 && errno != ENOENT)
			return ward_fail_errno(err, "ID pool: remove %s/%s", lp->path, name);
		n--;
		free_recs--;
	}
	if (n != lp->n && ftruncate(lp->mapfd, (off_t)(MAP_HDR + n * MAP_REC)) < 0)
		return ward_fail_errno(err, "ID pool: write %s/%s", lp->path, MAP_FILE);
	lp->n = n;
	return 0;
}

/* A new allocation for owner: the lowest free record (or a new one at the end), its file
 * checked free (a first line cut short is emptied), the record written, then the file. 0,
 * -1, STALE (the file of a free record holds an allocation, or does not read: the map
 * built again keeps its range). */
static int add_alloc(struct locked_pool *lp, const struct ward_idpool *p, const struct alloc *a,
		     struct ward_err *err)
{
	cleanup_free char *text = idpool_alloc_text(a);
	cleanup_found struct found f = FOUND_INIT;
	bool durable = !idpool_is_pod(a->owner);
	char name[16];
	size_t i = 0;
	int rc;

	while (i < lp->n && lp->r[i].type != '-')
		i++;
	if (i >= MAP_MAX_REC)
		return fail_as(err, ENOSPC, "ID pool: %s: %u records", lp->path, MAP_MAX_REC);
	idpool_rec_name(name, i);
	rc = read_file(lp->pdfd, POOL_DIR, i, true, p, &f, err);
	if (rc != 1)
		return rc < 0 && lp->rebuilt ? -1 : STALE;
	if (f.fd < 0)
		f.fd = openat(lp->pdfd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (f.fd < 0)
		return ward_fail_errno(err, "ID pool: open %s/%s", lp->path, name);
	/* free, but a first line cut short is there: it goes before the record is used */
	if (f.len > 0 && ftruncate(f.fd, 0) < 0)
		return ward_fail_errno(err, "ID pool: empty %s/%s", lp->path, name);
	if (map_put(lp, i,
		    (struct rec){a->start, a->size, idpool_owner_key(a->owner),
				 idpool_owner_type(a->owner)},
		    err) < 0)
		return -1;
	if (!text || pwrite_all(f.fd, text, strlen(text), 0) < 0 || (durable && fsync(f.fd) < 0) ||
	    (durable && fsync(lp->pdfd) < 0)) {
		ward_fail_errno(err, "ID pool: write %s/%s", lp->path, name);
		/* The record is freed only once the file is empty again: otherwise it stays
		 * used over what was written (the map a superset of the files). */
		if (ftruncate(f.fd, 0) == 0)
			map_put(lp, i, (struct rec){.type = '-'}, &(struct ward_err){0});
		return -1;
	}
	return 0;
}

/* A user came or went: a line appended to record i's file (f, read), or the whole file
 * written again as one line when the log has grown (see COMPACT_MIN) or would pass FILE_MAX;
 * a user whose line alone would take the file past FILE_MAX is refused, the file untouched. */
static int log_user(struct locked_pool *lp, size_t i, struct found *f, bool add, const char *user,
		    struct ward_err *err)
{
	cleanup_free char *line = idpool_log_text(add, user);
	cleanup_free char *snap = NULL;
	bool durable = !idpool_is_pod(f->a.owner);
	char name[16], tmp[24];
	size_t users = 0, grown;

	idpool_rec_name(name, i);
	if (!line)
		return ward_fail(err, ENOMEM, "ID pool: encode %s/%s", lp->path, name);
	if (add)
		f->a.users = strv_append(f->a.users, user);
	else
		idpool_drop_user(f->a.users, user);
	snap = idpool_alloc_text(&f->a);
	if (!snap)
		return ward_fail(err, ENOMEM, "ID pool: encode %s/%s", lp->path, name);
	while (f->a.users && f->a.users[users])
		users++;
	if (strlen(snap) > FILE_MAX)
		return fail_as(err, ENOSPC,
			       "ID pool: %s/%s: \"%.200s\" has %zu users and its file (at most %u "
			       "bytes) holds no more: user \"%.200s\" not added",
			       lp->path, name, f->a.owner, users - 1, FILE_MAX, user);
	grown = f->committed + strlen(line);
	if ((grown > COMPACT_MIN && grown > 2 * strlen(snap)) || grown > FILE_MAX) {
		snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
		return idpool_write_fresh(lp->pdfd, lp->path, tmp, name, snap, strlen(snap),
					  durable, err);
	}
	/* A line whose writer was stopped half-way is written over. */
	if ((f->len != f->committed && ftruncate(f->fd, (off_t)f->committed) < 0) ||
	    pwrite_all(f->fd, line, strlen(line), (off_t)f->committed) < 0 ||
	    (durable && fsync(f->fd) < 0))
		return ward_fail_errno(err, "ID pool: write %s/%s", lp->path, name);
	return 0;
}

/* Free record i (a pod's allocation left without users): its file emptied, then the
 * record freed, then the map's end trimmed. Not fsync'd: a pod dies with the host. */
static int free_alloc(struct locked_pool *lp, size_t i, struct found *f, struct ward_err *err)
{
	char name[16];

	idpool_rec_name(name, i);
	if (ftruncate(f->fd, 0) < 0)
		return ward_fail_errno(err, "ID pool: empty %s/%s", lp->path, name);
	if (map_put(lp, i, (struct rec){.type = '-'}, err) < 0)
		return -1;
	return map_trim(lp, err);
}

/* A step that may find the map and the files disagreeing (STALE): the map is built again
 * and the step taken once more. */
#define RETRY_STALE(lp, p, err, expr)                                                              \
	({                                                                                         \
		int rc_ = (expr);                                                                  \
		if (rc_ == STALE) {                                                                \
			if ((lp)->rebuilt)                                                         \
				rc_ = fail_as((err), EIO, "ID pool: %s: changed while locked",     \
					      (lp)->path);                                         \
			else if (map_rebuild((lp), (p), (err)) < 0)                                \
				rc_ = -1;                                                          \
		}                                                                                  \
		rc_;                                                                               \
	})

int ward_idpool_acquire(const struct ward_idpool *p, const char *owner, const char *user,
			uint32_t slices, struct ward_idrange *out, struct ward_err *err)
{
	cleanup_locked_pool struct locked_pool lp = LOCKED_POOL_INIT;
	int rc;

	if (check_owner(p, owner, err) < 0)
		return -1;
	if (slices == 0 || slices > p->size / SLICE)
		return fail_as(err, EINVAL, "ID pool: %u slices asked for, the pool has %u", slices,
			       p->size / SLICE);
	if (pool_begin(p, true, &lp, err) < 0)
		return -1;
	for (;;) {
		cleanup_found struct found f = FOUND_INIT;
		size_t i = 0;
		uint32_t start = 0;

		rc = RETRY_STALE(&lp, p, err, find_owner(&lp, p, owner, &f, &i, err));
		if (rc == STALE)
			continue;
		if (rc < 0)
			return -1;
		if (rc == 1) {
			*out = (struct ward_idrange){f.a.start, f.a.size};
			if (!user || idpool_has_user(f.a.users, user))
				return 0; /* nothing changes: no write */
			return log_user(&lp, i, &f, true, user, err);
		}
		rc = first_fit(p, &lp, slices, &start, err);
		if (rc == 1 && !lp.rebuilt) {
			/* Full: a record left by a writer stopped half-way may hold a slice. */
			if (map_rebuild(&lp, p, err) < 0)
				return -1;
			continue;
		}
		if (rc != 0)
			return ward_wrap(err, "allocate host IDs for %s", owner);
		char *one[] = {(char *)user, NULL};
		struct alloc a = {(char *)owner, start, slices * SLICE, user ? one : NULL};
		rc = RETRY_STALE(&lp, p, err, add_alloc(&lp, p, &a, err));
		if (rc == STALE)
			continue;
		if (rc < 0)
			return -1;
		*out = (struct ward_idrange){start, slices * SLICE};
		return 0;
	}
}

int ward_idpool_release(const struct ward_idpool *p, const char *owner, const char *user,
			struct ward_err *err)
{
	cleanup_locked_pool struct locked_pool lp = LOCKED_POOL_INIT;
	int rc;

	if (check_owner(p, owner, err) < 0)
		return -1;
	rc = pool_begin(p, false, &lp, err);
	if (rc != 0)
		return rc < 0 ? -1 : 0; /* 1: the pool was never written, nothing to release */
	for (;;) {
		cleanup_found struct found f = FOUND_INIT;
		size_t i = 0;

		rc = RETRY_STALE(&lp, p, err, find_owner(&lp, p, owner, &f, &i, err));
		if (rc == STALE)
			continue;
		if (rc <= 0 || !user || !idpool_has_user(f.a.users, user))
			return rc < 0 ? -1 : 0; /* nothing changes */
		if (idpool_is_pod(owner) && !f.a.users[1])
			return free_alloc(&lp, i, &f, err);
		return log_user(&lp, i, &f, false, user, err);
	}
}

/* A dump of idpool2.d: every file read, and compared with the map where it is of this boot
 * (map_check). */
static int dump_dir(struct locked_pool *lp, const struct ward_idpool *p, json_t *notes,
		    struct ward_err *err)
{
	struct scan s = {.notes = notes};
	struct rec *r = NULL;
	size_t n = 0;
	int rc;

	lp->mapfd = openat(lp->pdfd, MAP_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (lp->mapfd < 0 && errno != ENOENT)
		return ward_fail_errno(err, "ID pool: open %s/%s/%s", p->lib_dir, POOL_DIR,
				       MAP_FILE);
	if (lp->mapfd >= 0 && map_read(lp->mapfd, &r, &n) < 0)
		return ward_fail_errno(err, "ID pool: read %s/%s/%s", p->lib_dir, POOL_DIR,
				       MAP_FILE);
	s.map = r; /* NULL: no map of this boot to compare with */
	s.map_n = n;
	rc = scan_dir(lp->pdfd, POOL_DIR, p, &lp->pl, NULL, NULL, r ? &s : NULL, err);
	free(r);
	return rc;
}

char *ward_idpool_dump(const struct ward_idpool *p, struct ward_err *err)
{
	cleanup_locked_pool struct locked_pool lp = LOCKED_POOL_INIT;
	json_t *notes = json_array();
	json_t *j;
	char *text;
	int rc = 0;

	if (check_params(p, err) < 0 || pool_lock(p, false, LOCK_SH, &lp, err) < 0) {
		json_decref(notes);
		return NULL;
	}
	/* idpool2.d; a migration's complete idpool2.d.new where the marker is there; else the
	 * older files (a dump changes nothing). */
	if (lp.dirfd >= 0) {
		const char *dir = POOL_DIR;
		lp.pdfd = idpool_open_dir(lp.dirfd, dir);
		if (lp.pdfd < 0 && errno == ENOENT) {
			int kind = idpool_old_kind(lp.dirfd, p, err);
			if (kind < 0)
				return NULL;
			errno = ENOENT;
			if (kind == 2) {
				dir = POOL_DIR_NEW;
				lp.pdfd = idpool_open_dir(lp.dirfd, dir);
			}
		}
		if (lp.pdfd >= 0 && !strcmp(dir, POOL_DIR))
			rc = dump_dir(&lp, p, notes, err);
		else if (lp.pdfd >= 0)
			rc = scan_dir(lp.pdfd, dir, p, &lp.pl, NULL, NULL, NULL, err);
		else if (errno != ENOENT)
			rc = ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, dir);
		else
			rc = idpool_read_old(lp.dirfd, p, &lp.pl, err);
	}
	if (rc < 0) {
		json_decref(notes);
		return NULL;
	}
	j = pool_json(&lp.pl, notes);
	json_decref(notes);
	text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!text)
		ward_fail(err, ENOMEM, "ID pool: encode");
	return text;
}
