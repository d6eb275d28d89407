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
 * KiB (and twice its snapshot) is written again as one line (a temp file renamed over it).
 * An empty file is free. Reading is strict: a file that does not parse or does not make
 * sense is an error naming it, never silently reset.
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
 * a full pool) the map is built again from every file, under the exclusive lock. Tenant
 * allocations are durable (fsync of the file and the directory); a pod's are not: the pod
 * dies with the host. A new allocation takes the lowest free record, its file kept from a
 * freed pod (no inode created), and a container joining a pod appends a line (no inode, no
 * rename). At most 32 free records are kept at the map's end; beyond, their files go.
 *
 * An owner's records are found by its key; the key is a hash, so two owners may share one:
 * every record with the key is read and the owner compared (a file whose owner does not
 * hash to its record's key disagrees with the map).
 *
 * Older formats, read and migrated once, under the exclusive lock, by the first change:
 *   <lib_dir>/idpool.d/<start>: {"owner":...,"size":...,"users":[...]} (one file each)
 *   <lib_dir>/idpool.json: {"version": 1, "allocations": [{"owner": "pod:a/web",
 *                          "start": 524288, "size": 65536, "users": ["web-1"]}, ...]}
 * (idpool.d wins where both are there: an older ward's migration stopped after its rename).
 * The allocations are written into idpool2.d.new (durably), then idpool.json becomes the
 * marker {"version": 2, "allocations": "idpool2.d"}, which an older ward refuses as a
 * version it does not know (durably; until then an older ward may still change idpool.d,
 * removing idpool.json, and the migration is redone), then idpool.d is moved aside and
 * removed, then idpool2.d.new renamed to idpool2.d. A migration cut short is redone, or
 * finished where the marker is there (idpool2.d.new is complete by then). A pool created
 * afresh takes the same steps from an empty one, so an older ward never sees it as empty.
 * A dump (shared lock) of a pool not migrated yet reads the old files.
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

#include "json.h"
#include "util.h"

#define SLICE	     65536u
#define POOL_DIR     "idpool2.d"
#define POOL_DIR_NEW "idpool2.d.new"
#define POOL_LOCK    "idpool.lock"
#define MAP_FILE     "map"
#define MAP_TMP	     ".map.tmp"
/* The older formats, and the marker that makes an older ward refuse a migrated pool. */
#define OLD_FILE	 "idpool.json"
#define OLD_FILE_VERSION 1
#define OLD_DIR		 "idpool.d"
#define OLD_DIR_GONE	 "idpool.d.old"
#define MARKER_TMP	 ".idpool.json.tmp"
#define MARKER		 "{\"version\": 2, \"allocations\": \"" POOL_DIR "\"}\n"
/* The end of the usable ID space: (uid_t)-1 is never mapped. */
#define ID_LIMIT 0xffffffffull

#define MAP_HDR	    64	       /* "ward-idpool-map 1 boot=<boot id>", padded, '\n' */
#define MAP_REC	    32	       /* "%010u %010u %c%08x\n": never across a page, so written whole */
#define MAP_MAX_REC (1u << 17) /* a pool has at most 65536 slices */
#define BOOT_ID	    "/proc/sys/kernel/random/boot_id"
/* Free records kept at the map's end (their empty files ready for the next allocations):
 * ext4 creates an inode slowly in a directory with many recently deleted ones. */
#define KEEP_EMPTY 32
/* A log longer than this, and than twice its snapshot, is written again as one line. */
#define COMPACT_MIN 4096
/* A file of idpool2.d longer than this is corrupt (a pod of 10000 containers fits). */
#define FILE_MAX (1u << 20)

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

/* What read_file found in record i's file. */
struct found {
	struct alloc a;
	int fd;		  /* open O_RDWR; -1 when none */
	size_t len;	  /* the file's length */
	size_t committed; /* up to and with its last newline */
	size_t head_len;  /* its first line's */
};

/* Results of the steps below besides 0 and -1: the map and the files disagree. */
#define STALE 2

static void alloc_free(struct alloc *a)
{
	free(a->owner);
	strv_free(a->users);
	*a = (struct alloc){0};
}

static void pool_free(struct pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		alloc_free(&p->v[i]);
	free(p->v);
	*p = (struct pool){0};
}

static void found_end(struct found *f)
{
	alloc_free(&f->a);
	close_fdp(&f->fd);
}

#define FOUND_INIT    ((struct found){.fd = -1})
#define cleanup_found __attribute__((cleanup(found_end)))

static bool owner_valid(const char *o)
{
	if (!o)
		return false;
	if (!strncmp(o, "pod:", 4))
		return o[4] != '\0';
	if (!strncmp(o, "tenant:", 7))
		return o[7] != '\0';
	return false;
}

static bool is_pod_owner(const char *o)
{
	return !strncmp(o, "pod:", 4);
}

static char owner_type(const char *o)
{
	return is_pod_owner(o) ? 'p' : 't';
}

/* The key of an owner in the map: 32-bit FNV-1a. Not unique: see the top of the file. */
static uint32_t owner_key(const char *o)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *c = (const unsigned char *)o; *c; c++)
		h = (h ^ *c) * 16777619u;
	return h;
}

static bool has_user(char *const *users, const char *u)
{
	for (size_t i = 0; users && users[i]; i++)
		if (!strcmp(users[i], u))
			return true;
	return false;
}

/* Remove u from users (there once). */
static void drop_user(char **users, const char *u)
{
	size_t w = 0;
	for (size_t r = 0; users && users[r]; r++) {
		if (!strcmp(users[r], u))
			free(users[r]);
		else
			users[w++] = users[r];
	}
	if (users)
		users[w] = NULL;
}

/* ---- the directory and the lock ---- */

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
	pool_free(&lp->pl);
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

static int open_dir_at(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* ---- reading an allocation ---- */

/* "<lib_dir>/<file> is corrupt: <where><what>". */
static int bad(struct ward_err *err, const struct ward_idpool *p, const char *file,
	       const char *where, const char *what)
{
	return fail_as(err, EINVAL, "%s/%s is corrupt: %s%s (fix or remove it by hand)", p->lib_dir,
		       file, where, what ? what : "");
}

static int get_u32(json_t *o, const char *key, uint32_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > ID_LIMIT)
		return -1;
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

/* The formats of an allocation's object: an element of idpool.json's list, the content of
 * idpool.d/<start> (start from the name), the first line of a file of idpool2.d. */
enum alloc_format { FMT_LIST, FMT_OLD_FILE, FMT_FIRST_LINE };

/* One allocation from a; where: the prefix of the messages. */
static int parse_alloc(json_t *a, const char *file, const char *where, enum alloc_format fmt,
		       uint32_t start, struct alloc *out, const struct ward_idpool *p,
		       struct ward_err *err)
{
	char what[160];
	json_t *owner = json_object_get(a, "owner"), *users = json_object_get(a, "users"), *u;
	const char *key;
	json_t *val;
	size_t j;

	if (!json_is_object(a))
		return bad(err, p, file, where, ": expected an object");
	json_object_foreach(a, key, val)
	{
		if (strcmp(key, "owner") && strcmp(key, "size") && strcmp(key, "users") &&
		    (fmt == FMT_OLD_FILE || strcmp(key, "start"))) {
			snprintf(what, sizeof(what), ": unknown key \"%.64s\"", key);
			return bad(err, p, file, where, what);
		}
	}
	if (!json_is_string(owner) || !owner_valid(json_string_value(owner)))
		return bad(err, p, file, where,
			   ".owner: expected a string \"pod:...\" or \"tenant:...\"");
	out->start = start;
	if (fmt != FMT_OLD_FILE && get_u32(a, "start", &out->start) < 0)
		return bad(err, p, file, where, ".start: expected an integer in 0..4294967295");
	if (get_u32(a, "size", &out->size) < 0 || out->size == 0 || out->size % SLICE)
		return bad(err, p, file, where, ".size: expected a positive multiple of 65536");
	if (out->start == 0 || (uint64_t)out->start + out->size > ID_LIMIT)
		return bad(err, p, file, where,
			   ": range contains host ID 0 or 4294967295, which are never mapped");
	if ((users || fmt == FMT_FIRST_LINE) && !json_is_array(users))
		return bad(err, p, file, where, ".users: expected an array of strings");
	json_array_foreach(users, j, u)
	{
		if (!json_is_string(u))
			return bad(err, p, file, where, ".users: expected an array of strings");
		if (fmt == FMT_FIRST_LINE && has_user(out->users, json_string_value(u)))
			return bad(err, p, file, where, ".users: a user twice");
		out->users = strv_append(out->users, json_string_value(u));
	}
	out->owner = xstrdup(json_string_value(owner));
	return 0;
}

/* A line of the users' log: {"add": USER} or {"remove": USER}, applied to a. */
static int apply_log_line(json_t *l, struct alloc *a, const char *file, const char *where,
			  const struct ward_idpool *p, struct ward_err *err)
{
	const char *key = NULL, *user;
	json_t *val = NULL;

	if (json_is_object(l) && json_object_size(l) == 1) {
		void *it = json_object_iter(l);
		key = json_object_iter_key(it);
		val = json_object_iter_value(it);
	}
	if (!key || (strcmp(key, "add") && strcmp(key, "remove")) || !json_is_string(val))
		return bad(err, p, file, where,
			   ": expected {\"add\": USER} or {\"remove\": USER} (a user's string)");
	user = json_string_value(val);
	if (!strcmp(key, "add")) {
		if (has_user(a->users, user))
			return bad(err, p, file, where, ": adds a user who is there");
		a->users = strv_append(a->users, user);
	} else {
		if (!has_user(a->users, user))
			return bad(err, p, file, where, ": removes a user who is not there");
		drop_user(a->users, user);
	}
	return 0;
}

/* The text of a file of idpool2.d: 0 (an allocation into f), 1 (free: nothing committed),
 * -1 (corrupt, err names file). */
static int parse_file(const char *text, size_t len, const char *file, const struct ward_idpool *p,
		      struct found *f, struct ward_err *err)
{
	const char *end = text, *line = text, *nl;
	size_t no = 0;

	f->len = len;
	for (const char *c = text; c < text + len; c++)
		if (*c == '\n')
			end = c + 1;
	f->committed = (size_t)(end - text);
	if (f->committed == 0)
		return 1; /* empty, or a first line whose writer was stopped: never there */
	for (; line < end; line = nl + 1) {
		char where[32];
		json_error_t jerr;
		json_t *j;
		int rc;

		nl = memchr(line, '\n', (size_t)(end - line));
		snprintf(where, sizeof(where), "line %zu", ++no);
		j = json_loadb(line, (size_t)(nl - line), JSON_REJECT_DUPLICATES, &jerr);
		if (!j) {
			char what[200];
			snprintf(what, sizeof(what), ": %s", jerr.text);
			return bad(err, p, file, where, what);
		}
		if (no == 1) {
			rc = parse_alloc(j, file, where, FMT_FIRST_LINE, 0, &f->a, p, err);
			f->head_len = (size_t)(nl + 1 - text);
		} else {
			rc = apply_log_line(j, &f->a, file, where, p, err);
		}
		json_decref(j);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Record i's file name (i < MAP_MAX_REC). */
static void rec_name(char buf[16], size_t i)
{
	snprintf(buf, 16, "%u", (unsigned)(i % MAP_MAX_REC));
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

	rec_name(name, i);
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
		return bad(err, p, file, "not a regular file", NULL);
	if (st.st_size > FILE_MAX)
		return bad(err, p, file, "longer than 1 MiB", NULL);
	if (st.st_size == 0)
		return 1;
	text = read_all_fd(f->fd, &len, err);
	if (!text)
		return ward_wrap(err, "ID pool: %s/%s", p->lib_dir, file);
	return parse_file(text, len, file, p, f, err);
}

static int cmp_start(const void *a, const void *b)
{
	const struct alloc *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The whole pool makes sense: one allocation per owner, none overlapping (sorts it). */
static int pool_check(struct pool *pl, const struct ward_idpool *p, const char *file,
		      struct ward_err *err)
{
	for (size_t i = 0; i < pl->n; i++)
		for (size_t j = 0; j < i; j++) {
			if (strcmp(pl->v[j].owner, pl->v[i].owner))
				continue;
			char what[400];
			snprintf(what, sizeof(what),
				 "two allocations (%u and %u) have the same owner \"%.200s\"",
				 pl->v[j].start, pl->v[i].start, pl->v[i].owner);
			return bad(err, p, file, what, NULL);
		}
	/* Overlapping allocations mean the files were edited by hand or something is badly
	 * wrong: handing out more IDs on top would only spread the damage. */
	if (pl->n > 1) /* v is NULL for an empty pool */
		qsort(pl->v, pl->n, sizeof(*pl->v), cmp_start);
	for (size_t i = 1; i < pl->n; i++) {
		const struct alloc *x = &pl->v[i - 1], *y = &pl->v[i];
		if ((uint64_t)x->start + x->size > y->start) {
			char what[640];
			snprintf(what, sizeof(what), "\"%.200s\" and \"%.200s\" overlap", x->owner,
				 y->owner);
			return bad(err, p, file, what, NULL);
		}
	}
	return 0;
}

static struct alloc *pool_add(struct pool *pl)
{
	pl->v = xrealloc(pl->v, (pl->n + 1) * sizeof(*pl->v));
	pl->v[pl->n] = (struct alloc){0};
	return &pl->v[pl->n++];
}

/* A canonical decimal (no sign, no leading zero) up to max. */
static bool parse_index(const char *name, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (!*name || (name[0] == '0' && name[1]) || strlen(name) > 10)
		return false;
	for (const char *c = name; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		v = v * 10 + (uint64_t)(*c - '0');
	}
	*out = v;
	return v <= max;
}

static bool is_tmp_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] == '.' && n > 5 && !strcmp(name + n - 4, ".tmp");
}

/* Each name of the directory pdfd (dir: its path under lib_dir) but "." and "..", in
 * directory order: each(name) returning -1 stops. */
static int each_name(int pdfd, const char *dir, const struct ward_idpool *p,
		     int (*each)(const char *name, void *arg), void *arg, struct ward_err *err)
{
	int dfd = fcntl(pdfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	int rc = 0;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return ward_fail_errno(err, "ID pool: read %s/%s", p->lib_dir, dir);
	}
	while (rc == 0 && (errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = each(de->d_name, arg);
	if (rc == 0 && errno)
		rc = ward_fail_errno(err, "ID pool: read %s/%s", p->lib_dir, dir);
	closedir(d);
	return rc < 0 ? -1 : 0;
}

/* The older idpool.d: one file per allocation named by its first host ID. */
struct old_dir_scan {
	int pdfd;
	const struct ward_idpool *p;
	struct pool *out;
	struct ward_err *err;
};

static int old_dir_entry(const char *name, void *arg)
{
	struct old_dir_scan *s = arg;
	char file[sizeof(OLD_DIR) + NAME_MAX + 1];
	cleanup_fd int fd = -1;
	cleanup_free char *text = NULL;
	struct ward_err jerr = {0};
	struct alloc a = {0};
	uint64_t start;
	size_t len;
	json_t *j;
	int rc;

	snprintf(file, sizeof(file), "%s/%s", OLD_DIR, name);
	if (is_tmp_name(name))
		return 0; /* a rewrite's temp file, left by a crash: never read */
	if (!parse_index(name, ID_LIMIT, &start))
		return bad(s->err, s->p, file, "not an allocation's name (its first host ID)",
			   NULL);
	fd = openat(s->pdfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return ward_fail_errno(s->err, "ID pool: open %s/%s", s->p->lib_dir, file);
	text = read_all_fd(fd, &len, s->err);
	if (!text)
		return ward_wrap(s->err, "ID pool: %s/%s", s->p->lib_dir, file);
	if (len == 0)
		return 0; /* free */
	j = ward_json_decode(text, len, &jerr);
	if (!j)
		return bad(s->err, s->p, file, jerr.msg, NULL);
	rc = parse_alloc(j, file, "", FMT_OLD_FILE, (uint32_t)start, &a, s->p, s->err);
	json_decref(j);
	if (rc < 0) {
		alloc_free(&a);
		return -1;
	}
	*pool_add(s->out) = a;
	return 0;
}

/* idpool.json, the oldest format (missing = empty). */
static int read_old_file(int dirfd, const struct ward_idpool *p, struct pool *out,
			 struct ward_err *err)
{
	cleanup_fd int fd = openat(dirfd, OLD_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	cleanup_free char *text = NULL;
	char why[160];
	json_t *root, *allocs, *a;
	size_t len, i;
	int rc = -1;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, OLD_FILE);
	}
	text = read_all_fd(fd, &len, err);
	if (!text)
		return ward_wrap(err, "ID pool: %s/%s", p->lib_dir, OLD_FILE);
	root = ward_json_list_file(text, len, OLD_FILE_VERSION, "allocations", &allocs, why,
				   sizeof(why));
	if (!root)
		return bad(err, p, OLD_FILE, why, NULL);
	json_array_foreach(allocs, i, a)
	{
		char where[48];
		snprintf(where, sizeof(where), "allocations[%zu]", i);
		if (parse_alloc(a, OLD_FILE, where, FMT_LIST, 0, pool_add(out), p, err) < 0)
			goto out;
	}
	rc = pool_check(out, p, OLD_FILE, err);
out:
	json_decref(root);
	return rc;
}

/* idpool.json: 0 missing, 1 the oldest format, 2 the marker of a migrated pool, -1 (an
 * error: neither, named). */
static int old_file_kind(int dirfd, const struct ward_idpool *p, struct ward_err *err)
{
	cleanup_free char *text = NULL;
	cleanup_fd int fd = openat(dirfd, OLD_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t len;

	if (fd < 0)
		return errno == ENOENT
			   ? 0
			   : ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, OLD_FILE);
	text = read_all_fd(fd, &len, err);
	if (!text)
		return ward_wrap(err, "ID pool: %s/%s", p->lib_dir, OLD_FILE);
	return strcmp(text, MARKER) ? 1 : 2;
}

/* The older formats: idpool.d where it is there, else idpool.json. */
static int read_old(int dirfd, const struct ward_idpool *p, struct pool *out, struct ward_err *err)
{
	struct old_dir_scan s = {.p = p, .out = out, .err = err};
	int rc;

	s.pdfd = open_dir_at(dirfd, OLD_DIR);
	if (s.pdfd < 0) {
		if (errno != ENOENT)
			return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, OLD_DIR);
		return read_old_file(dirfd, p, out, err);
	}
	rc = each_name(s.pdfd, OLD_DIR, p, old_dir_entry, &s, err);
	close(s.pdfd);
	return rc < 0 ? -1 : pool_check(out, p, OLD_DIR, err);
}

/* ---- idpool2.d: every file ---- */

struct scan {
	int pdfd;
	const char *dir;
	const struct ward_idpool *p;
	struct pool *out;
	struct rec *r; /* with the map's records, when built again */
	size_t n;
	struct ward_err *err;
};

static int scan_entry(const char *name, void *arg)
{
	struct scan *s = arg;
	cleanup_found struct found f = FOUND_INIT;
	char file[sizeof(POOL_DIR_NEW) + NAME_MAX + 1];
	uint64_t i;
	int rc;

	snprintf(file, sizeof(file), "%s/%s", s->dir, name);
	if (!strcmp(name, MAP_FILE) || is_tmp_name(name))
		return 0; /* the index, or a temp file left by a crash: never read */
	if (!parse_index(name, MAP_MAX_REC - 1, &i))
		return bad(s->err, s->p, file, "not a record's name (a number)", NULL);
	rc = read_file(s->pdfd, s->dir, i, false, s->p, &f, s->err);
	if (rc < 0)
		return -1;
	if (i >= s->n) {
		s->r = xrealloc(s->r, (i + 1) * sizeof(*s->r));
		for (size_t k = s->n; k <= i; k++)
			s->r[k] = (struct rec){.type = '-'};
		s->n = i + 1;
	}
	if (rc == 1)
		return 0;
	s->r[i] = (struct rec){f.a.start, f.a.size, owner_key(f.a.owner), owner_type(f.a.owner)};
	*pool_add(s->out) = f.a;
	f.a = (struct alloc){0};
	return 0;
}

/* Every allocation of the directory pdfd (dir: its name under lib_dir), sorted by start,
 * into out; with r, the records too (malloc'd). */
static int scan_dir(int pdfd, const char *dir, const struct ward_idpool *p, struct pool *out,
		    struct rec **r, size_t *n, struct ward_err *err)
{
	struct scan s = {.pdfd = pdfd, .dir = dir, .p = p, .out = out, .err = err};
	int rc = each_name(pdfd, dir, p, scan_entry, &s, err);

	if (rc == 0)
		rc = pool_check(out, p, dir, err);
	if (rc == 0 && r) {
		*r = s.r;
		*n = s.n;
	} else {
		free(s.r);
	}
	return rc;
}

/* ---- writing ---- */

static char *alloc_text(const struct alloc *a)
{
	json_t *users = json_array();
	for (size_t j = 0; a->users && a->users[j]; j++)
		json_array_append_new(users, json_string(a->users[j]));
	json_t *j = json_pack("{s:s,s:I,s:I,s:o}", "owner", a->owner, "start", (json_int_t)a->start,
			      "size", (json_int_t)a->size, "users", users);
	char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	char *line = text ? xasprintf("%s\n", text) : NULL;
	free(text);
	json_decref(j);
	return line;
}

static char *log_text(bool add, const char *user)
{
	json_t *j = json_pack("{s:s}", add ? "add" : "remove", user);
	char *text = json_dumps(j, JSON_COMPACT);
	char *line = text ? xasprintf("%s\n", text) : NULL;
	free(text);
	json_decref(j);
	return line;
}

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

/* The boot this map is for (a pod's files are not fsync'd: after a crash, the disk holds
 * any part of the map and of the files). "unknown" without /proc: the map is then built
 * again by each change. */
static void boot_id(char out[37])
{
	static char id[37]; /* the same for the life of the process */
	if (!id[0]) {
		cleanup_fd int fd = open(BOOT_ID, O_RDONLY | O_CLOEXEC);
		char buf[37] = "unknown";
		if (fd >= 0 && read_exact(fd, buf, 36) == 36)
			buf[36] = '\0';
		memcpy(id, buf, sizeof(id));
	}
	memcpy(out, id, 37);
}

static void map_header(char buf[MAP_HDR + 1])
{
	char boot[37];
	boot_id(boot);
	snprintf(buf, MAP_HDR + 1, "ward-idpool-map 1 boot=%-40s\n", boot);
}

static void rec_text(const struct rec *r, char buf[MAP_REC + 1])
{
	snprintf(buf, MAP_REC + 1, "%010u %010u %c%08x\n", r->start, r->size, r->type, r->key);
}

/* The map as text (header and records), malloc'd. */
static char *map_text(const struct rec *r, size_t n, size_t *len)
{
	char *t = xmalloc(MAP_HDR + n * MAP_REC + 1);
	map_header(t);
	for (size_t i = 0; i < n; i++)
		rec_text(&r[i], t + MAP_HDR + i * MAP_REC);
	*len = MAP_HDR + n * MAP_REC;
	return t;
}

/* A fresh file of dirfd: name, written through tmp and renamed over it; durable: fsync of
 * the file and of the directory. */
static int write_fresh(int dirfd, const char *dir, const char *tmp, const char *name,
		       const char *text, size_t len, bool durable, struct ward_err *err)
{
	cleanup_fd int fd =
	    openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 || write_all(fd, text, len) < 0 || (durable && fsync(fd) < 0)) {
		ward_fail_errno(err, "ID pool: write %s/%s", dir, tmp);
		unlinkat(dirfd, tmp, 0);
		return -1;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0)
		return ward_fail_errno(err, "ID pool: rename %s/%s to %s", dir, tmp, name);
	if (durable && fsync(dirfd) < 0)
		return ward_fail_errno(err, "ID pool: fsync %s", dir);
	return 0;
}

/* Record i of the map, written in place (i == lp->n: a new one at the end). */
static int map_put(struct locked_pool *lp, size_t i, struct rec r, struct ward_err *err)
{
	char buf[MAP_REC + 1];

	rec_text(&r, buf);
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
	rc = scan_dir(lp->pdfd, POOL_DIR, p, &pl, &lp->r, &lp->n, err);
	pool_free(&pl);
	if (rc < 0)
		return -1;
	text = map_text(lp->r, lp->n, &len);
	close_fdp(&lp->mapfd);
	if (write_fresh(lp->pdfd, lp->path, MAP_TMP, MAP_FILE, text, len, false, err) < 0)
		return -1;
	lp->mapfd = openat(lp->pdfd, MAP_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (lp->mapfd < 0)
		return ward_fail_errno(err, "ID pool: open %s/%s", lp->path, MAP_FILE);
	lp->rebuilt = true;
	return 0;
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "dec8 reads digits little-endian");

/* 8 decimal digits at t, 8 at a time (a map of 500 records is parsed by every change;
 * one digit at a time was a quarter of its cost). Little-endian: t[0] in the low byte. */
static bool dec8(const char *t, uint64_t *out)
{
	uint64_t x, d;

	memcpy(&x, t, 8);
	d = x - 0x3030303030303030ull;
	/* every byte 0x30..0x39: high nibble 3, and the low one + 6 stays below 16 */
	if ((x & 0xf0f0f0f0f0f0f0f0ull) != 0x3030303030303030ull ||
	    ((d + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull))
		return false;
	d = (d * 10) + (d >> 8); /* pairs: t[0]t[1] in byte 0, t[2]t[3] in byte 2, ... */
	d = (((d & 0x000000ff000000ffull) * (100 + (1000000ull << 32))) +
	     (((d >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32)))) >>
	    32;
	*out = d;
	return true;
}

/* 10 decimal digits at t. */
static bool dec(const char *t, uint64_t *out)
{
	uint64_t hi;
	unsigned d0 = (unsigned char)t[8] - '0', d1 = (unsigned char)t[9] - '0';

	if (!dec8(t, &hi) || d0 > 9 || d1 > 9)
		return false;
	*out = hi * 100 + d0 * 10 + d1;
	return true;
}

/* n hex digits (lower case) at t. */
static bool hex(const char *t, int n, uint64_t *out)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++) {
		unsigned d = (unsigned char)t[i] - '0', x = (unsigned char)t[i] - 'a';
		if (d > 9 && x > 5)
			return false;
		v = v * 16 + (d <= 9 ? d : x + 10);
	}
	*out = v;
	return true;
}

/* A record of the map, as rec_text writes it. */
static bool parse_rec(const char *t, struct rec *r)
{
	uint64_t start, size, key;

	if (!dec(t, &start) || t[10] != ' ' || !dec(t + 11, &size) || t[21] != ' ' ||
	    !hex(t + 23, 8, &key) || t[31] != '\n' || start > ID_LIMIT || size > ID_LIMIT)
		return false;
	*r = (struct rec){(uint32_t)start, (uint32_t)size, (uint32_t)key, t[22]};
	if (r->type == '-')
		return start == 0 && size == 0 && key == 0;
	return (r->type == 'p' || r->type == 't') && start && size && size % SLICE == 0 &&
	       start + size <= ID_LIMIT;
}

/* The map of idpool2.d, or built again where it is missing, of another boot or not sound. */
static int map_load(struct locked_pool *lp, const struct ward_idpool *p, struct ward_err *err)
{
	cleanup_free char *text = NULL;
	char head[MAP_HDR + 1];
	struct stat st;
	ssize_t got;
	size_t len, n;

	lp->mapfd = openat(lp->pdfd, MAP_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (lp->mapfd < 0)
		return errno == ENOENT
			   ? map_rebuild(lp, p, err)
			   : ward_fail_errno(err, "ID pool: open %s/%s", lp->path, MAP_FILE);
	/* One read of the whole map (its size known: no growing buffer). */
	if (fstat(lp->mapfd, &st) < 0)
		return ward_fail_errno(err, "ID pool: stat %s/%s", lp->path, MAP_FILE);
	if (st.st_size > MAP_HDR + (off_t)MAP_MAX_REC * MAP_REC)
		return map_rebuild(lp, p, err);
	text = xmalloc((size_t)st.st_size + 1);
	got = read_exact(lp->mapfd, text, (size_t)st.st_size);
	if (got < 0)
		return ward_fail_errno(err, "ID pool: read %s/%s", lp->path, MAP_FILE);
	len = (size_t)got;
	map_header(head);
	if (len < MAP_HDR || (len - MAP_HDR) % MAP_REC || memcmp(text, head, MAP_HDR) ||
	    strncmp(head + 23, "unknown ", 8) == 0)
		return map_rebuild(lp, p, err);
	n = (len - MAP_HDR) / MAP_REC;
	if (n > MAP_MAX_REC)
		return map_rebuild(lp, p, err);
	lp->r = xcalloc(n + 1, sizeof(*lp->r));
	for (size_t i = 0; i < n; i++)
		if (!parse_rec(text + MAP_HDR + i * MAP_REC, &lp->r[i]))
			return map_rebuild(lp, p, err);
	lp->n = n;
	return 0;
}

/* ---- migration ---- */

/* Remove every file of lib_dir/name, then the directory (a migration's leftover). */
static int remove_dir(int libfd, const char *name, const struct ward_idpool *p,
		      struct ward_err *err)
{
	int dfd = open_dir_at(libfd, name);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return errno == ENOENT
			   ? 0
			   : ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, name);
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	if (unlinkat(libfd, name, AT_REMOVEDIR) < 0)
		return ward_fail_errno(err, "ID pool: remove %s/%s", p->lib_dir, name);
	return 0;
}

/* idpool2.d.new from old's allocations, durably: record i's file for allocation i, the map. */
static int write_new_dir(int dirfd, const struct ward_idpool *p, const struct pool *old,
			 struct ward_err *err)
{
	cleanup_free char *path = xasprintf("%s/%s", p->lib_dir, POOL_DIR_NEW);
	cleanup_free struct rec *r = xcalloc(old->n + 1, sizeof(*r));
	cleanup_free char *map = NULL;
	cleanup_fd int nfd = -1;
	size_t len;

	if (remove_dir(dirfd, POOL_DIR_NEW, p, err) < 0)
		return -1;
	if (mkdirat(dirfd, POOL_DIR_NEW, 0700) < 0)
		return ward_fail_errno(err, "ID pool: create %s", path);
	nfd = open_dir_at(dirfd, POOL_DIR_NEW);
	if (nfd < 0)
		return ward_fail_errno(err, "ID pool: open %s", path);
	for (size_t i = 0; i < old->n; i++) {
		const struct alloc *a = &old->v[i];
		cleanup_free char *text = alloc_text(a);
		char name[16];
		rec_name(name, i);
		if (!text || write_file_at(nfd, name, O_CREAT | O_EXCL | O_NOFOLLOW, 0600, text,
					   strlen(text), err) < 0)
			return ward_wrap(err, "ID pool: %s", path);
		r[i] = (struct rec){a->start, a->size, owner_key(a->owner), owner_type(a->owner)};
	}
	/* The files' data before the directory that names them (write_file_at does not
	 * fsync): syncfs would do it for the whole file system; one fsync each is enough. */
	for (size_t i = 0; i < old->n; i++) {
		char name[16];
		cleanup_fd int fd = -1;
		rec_name(name, i);
		fd = openat(nfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || fsync(fd) < 0)
			return ward_fail_errno(err, "ID pool: fsync %s/%s", path, name);
	}
	map = map_text(r, old->n, &len);
	if (write_file_at(nfd, MAP_FILE, O_CREAT | O_EXCL | O_NOFOLLOW, 0600, map, len, err) < 0)
		return ward_wrap(err, "ID pool: %s", path);
	if (fsync(nfd) < 0)
		return ward_fail_errno(err, "ID pool: fsync %s", path);
	return 0;
}

/* The older formats (or none) -> idpool2.d, durably, under the exclusive lock (see the top
 * of the file for the steps and what a migration cut short leaves). */
static int pool_migrate(int dirfd, const struct ward_idpool *p, struct ward_err *err)
{
	struct pool old = {0};
	int kind = old_file_kind(dirfd, p, err), rc = -1;

	if (kind < 0)
		return -1;
	if (kind == 2) {
		/* The marker: idpool2.d.new was complete before it was written. */
		if (faccessat(dirfd, POOL_DIR_NEW, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			return fail_as(err, EINVAL,
				       "%s/%s is corrupt: it says the pool is in %s, which is "
				       "missing, and so is %s (fix or remove it by hand)",
				       p->lib_dir, OLD_FILE, POOL_DIR, POOL_DIR_NEW);
	} else {
		if (read_old(dirfd, p, &old, err) < 0 || write_new_dir(dirfd, p, &old, err) < 0)
			goto out;
		if (write_fresh(dirfd, p->lib_dir, MARKER_TMP, OLD_FILE, MARKER, strlen(MARKER),
				true, err) < 0)
			goto out;
	}
	/* idpool.d moved aside in one step: an older ward sees it whole or not at all. */
	if (remove_dir(dirfd, OLD_DIR_GONE, p, err) < 0)
		goto out;
	if (renameat(dirfd, OLD_DIR, dirfd, OLD_DIR_GONE) < 0 && errno != ENOENT) {
		ward_fail_errno(err, "ID pool: move %s/%s aside", p->lib_dir, OLD_DIR);
		goto out;
	}
	if (fsync(dirfd) < 0 || remove_dir(dirfd, OLD_DIR_GONE, p, err) < 0)
		goto out;
	if (renameat(dirfd, POOL_DIR_NEW, dirfd, POOL_DIR) < 0 || fsync(dirfd) < 0) {
		ward_fail_errno(err, "ID pool: move %s/%s to %s", p->lib_dir, POOL_DIR_NEW,
				POOL_DIR);
		goto out;
	}
	rc = 0;
out:
	pool_free(&old);
	return rc;
}

/* Whether lib_dir holds a pool of an older format (or a migration's marker). */
static bool has_old(int dirfd)
{
	return faccessat(dirfd, OLD_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	       faccessat(dirfd, OLD_DIR, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

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
	lp->pdfd = open_dir_at(lp->dirfd, POOL_DIR);
	if (lp->pdfd < 0) {
		if (errno != ENOENT)
			return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_DIR);
		if (!create && !has_old(lp->dirfd))
			return 1;
		if (pool_migrate(lp->dirfd, p, err) < 0)
			return -1;
		lp->pdfd = open_dir_at(lp->dirfd, POOL_DIR);
		if (lp->pdfd < 0)
			return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_DIR);
	}
	lp->path = xasprintf("%s/%s", p->lib_dir, POOL_DIR);
	return map_load(lp, p, err);
}

static json_t *pool_json(const struct pool *pl)
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
	if (!owner_valid(owner))
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
	uint32_t key = owner_key(owner);
	char type = owner_type(owner);
	int hit = 0;

	for (size_t i = 0; i < lp->n; i++) {
		const struct rec *r = &lp->r[i];
		struct found g = FOUND_INIT;
		int rc;

		if (r->type != type || r->key != key)
			continue;
		rc = read_file(lp->pdfd, POOL_DIR, i, true, p, &g, err);
		if (rc != 0 || g.a.start != r->start || g.a.size != r->size ||
		    owner_key(g.a.owner) != key || owner_type(g.a.owner) != type) {
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
			return bad(err, p, file, what, NULL);
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
		rec_name(name, n - 1);
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
 * checked empty, the record written, then the file. 0, -1, STALE (the file of a free
 * record is not empty). */
static int add_alloc(struct locked_pool *lp, const struct alloc *a, struct ward_err *err)
{
	cleanup_free char *text = alloc_text(a);
	cleanup_fd int fd = -1;
	bool durable = !is_pod_owner(a->owner);
	struct stat st;
	char name[16];
	size_t i = 0;

	while (i < lp->n && lp->r[i].type != '-')
		i++;
	if (i >= MAP_MAX_REC)
		return fail_as(err, ENOSPC, "ID pool: %s: %u records", lp->path, MAP_MAX_REC);
	rec_name(name, i);
	fd = openat(lp->pdfd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fstat(fd, &st) < 0)
		return ward_fail_errno(err, "ID pool: open %s/%s", lp->path, name);
	if (st.st_size != 0)
		return STALE;
	if (map_put(lp, i,
		    (struct rec){a->start, a->size, owner_key(a->owner), owner_type(a->owner)},
		    err) < 0)
		return -1;
	if (!text || pwrite_all(fd, text, strlen(text), 0) < 0 || (durable && fsync(fd) < 0) ||
	    (durable && fsync(lp->pdfd) < 0)) {
		ward_fail_errno(err, "ID pool: write %s/%s", lp->path, name);
		(void)!ftruncate(fd, 0);
		map_put(lp, i, (struct rec){.type = '-'}, &(struct ward_err){0});
		return -1;
	}
	return 0;
}

/* A user came or went: a line appended to record i's file (f, read), or the whole file
 * written again as one line when the log has grown (see COMPACT_MIN). */
static int log_user(struct locked_pool *lp, size_t i, struct found *f, bool add, const char *user,
		    struct ward_err *err)
{
	cleanup_free char *line = log_text(add, user);
	cleanup_free char *snap = NULL;
	bool durable = !is_pod_owner(f->a.owner);
	char name[16], tmp[24];

	rec_name(name, i);
	if (!line)
		return ward_fail(err, ENOMEM, "ID pool: encode %s/%s", lp->path, name);
	if (add)
		f->a.users = strv_append(f->a.users, user);
	else
		drop_user(f->a.users, user);
	snap = alloc_text(&f->a);
	if (snap && f->committed + strlen(line) > COMPACT_MIN &&
	    f->committed + strlen(line) > 2 * strlen(snap)) {
		snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
		return write_fresh(lp->pdfd, lp->path, tmp, name, snap, strlen(snap), durable, err);
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

	rec_name(name, i);
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
			if (!user || has_user(f.a.users, user))
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
		rc = RETRY_STALE(&lp, p, err, add_alloc(&lp, &a, err));
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
		if (rc <= 0 || !user || !has_user(f.a.users, user))
			return rc < 0 ? -1 : 0; /* nothing changes */
		if (is_pod_owner(owner) && !f.a.users[1])
			return free_alloc(&lp, i, &f, err);
		return log_user(&lp, i, &f, false, user, err);
	}
}

char *ward_idpool_dump(const struct ward_idpool *p, struct ward_err *err)
{
	cleanup_locked_pool struct locked_pool lp = LOCKED_POOL_INIT;
	json_t *j;
	char *text;
	int rc = 0;

	if (check_params(p, err) < 0)
		return NULL;
	if (pool_lock(p, false, LOCK_SH, &lp, err) < 0)
		return NULL;
	/* idpool2.d; a migration's complete idpool2.d.new where the marker is there; else the
	 * older files (a dump changes nothing). */
	if (lp.dirfd >= 0) {
		const char *dir = POOL_DIR;
		lp.pdfd = open_dir_at(lp.dirfd, dir);
		if (lp.pdfd < 0 && errno == ENOENT) {
			int kind = old_file_kind(lp.dirfd, p, err);
			if (kind < 0)
				return NULL;
			dir = kind == 2 ? POOL_DIR_NEW : OLD_DIR;
			lp.pdfd = kind == 2 ? open_dir_at(lp.dirfd, dir) : -1;
			errno = ENOENT;
		}
		if (lp.pdfd >= 0)
			rc = scan_dir(lp.pdfd, dir, p, &lp.pl, NULL, NULL, err);
		else if (errno != ENOENT)
			rc = ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, dir);
		else
			rc = read_old(lp.dirfd, p, &lp.pl, err);
	}
	if (rc < 0)
		return NULL;
	j = pool_json(&lp.pl);
	text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!text)
		ward_fail(err, ENOMEM, "ID pool: encode");
	return text;
}
