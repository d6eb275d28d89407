/* The persistent ID allocator. Everything happens under an flock on <lib_dir>/idpool.lock
 * (exclusive to change, shared to dump). The allocations live in <lib_dir>/idpool.d/, one
 * file per allocation, named by its first host ID (decimal), holding the rest:
 *
 *   idpool.d/524288:  {"owner":"pod:a/web","size":65536,"users":["web-1"]}
 *
 A new allocation is written into a new file (O_EXCL: the slot is the name) or into an empty
 * one at its start; a freed pod allocation's file is emptied (truncated) and kept for the next
 * allocation there (up to KEEP_EMPTY such files; beyond, removed); a change of an
 * allocation's users rewrites that one file (temp file, rename over it). An empty file is
 * free: a freed slot, or one whose data never reached the disk before a crash (a pod's file
 * is not fsync'd: the pod dies with the host) or whose writer was killed before it wrote.
 * Tenant allocations are durable (fsync of the file and the directory). Reading is strict:
 * a file that does not parse or does not make sense is an error naming it, never silently
 * reset. So a container of a pod of its own renames nothing over a file and, once the pool
 * has its files, creates no inode: ext4 writes a file out when a rename replaces one, and
 * allocates inodes slowly in a directory with many recently deleted ones; both were most of
 * the pool's cost when every change rewrote one idpool.json.
 *
 * The format before idpool.d, one <lib_dir>/idpool.json (a host upgraded with running
 * containers), is read and migrated once, under the exclusive lock, by the first change:
 *   {"version": 1,
 *    "allocations": [{"owner": "pod:a/web", "start": 524288, "size": 65536,
 *                     "users": ["web-1"]}, ...]}
 * into idpool.d.new (durably), renamed to idpool.d, then idpool.json is removed. A dump (shared
 * lock) of a pool not migrated yet reads idpool.json.
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
#define POOL_FILE    "idpool.json" /* the format before idpool.d: migrated once */
#define POOL_DIR     "idpool.d"
#define POOL_DIR_NEW "idpool.d.new"
#define POOL_LOCK    "idpool.lock"
#define POOL_VERSION 1
/* The end of the usable ID space: (uid_t)-1 is never mapped. */
#define ID_LIMIT 0xffffffffull

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
	uint32_t *empty; /* starts of idpool.d's empty files (free, kept for reuse) */
	size_t n_empty;
};

/* How many empty files idpool.d keeps for the next allocations at their starts (a pod's
 * file is emptied, not removed, when it is freed: ext4 creates an inode slowly on a
 * directory with many recently deleted ones); beyond, a freed pod's file is removed. */
#define KEEP_EMPTY 32

enum write_mode {
	WRITE_NEW,     /* a new file, O_EXCL: the slot is the name */
	WRITE_EMPTY,   /* into an empty file of idpool.d (a freed slot kept) */
	WRITE_REPLACE, /* the users changed: temp file, renamed over the old one */
};

static void pool_free(struct pool *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].owner);
		strv_free(p->v[i].users);
	}
	free(p->v);
	free(p->empty);
	*p = (struct pool){0};
}

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

/* The pool under its lock: lib_dir, the lock, and for a dump or a change idpool.d and the
 * allocations read from it. Its cleanup closes the fds (so the lock goes) and frees the rest. */
struct locked_pool {
	int dirfd, lockfd, pdfd; /* -1: not open */
	char *path;		 /* <lib_dir>/idpool.d, for messages */
	struct pool pl;
};

#define LOCKED_POOL_INIT    ((struct locked_pool){.dirfd = -1, .lockfd = -1, .pdfd = -1})
#define cleanup_locked_pool __attribute__((cleanup(locked_pool_end)))

static void locked_pool_end(struct locked_pool *lp)
{
	close_fdp(&lp->pdfd);
	close_fdp(&lp->lockfd);
	close_fdp(&lp->dirfd);
	free(lp->path);
	pool_free(&lp->pl);
}

/* Open lib_dir (creating it if create) into lp->dirfd and take the lock (LOCK_EX or LOCK_SH)
 * on lp->lockfd: 0, or -1 with err set. With create false, a missing lib_dir gives 0 and
 * dirfd -1 (nothing allocated yet). */
static int pool_lock(const struct ward_idpool *p, bool create, int op, struct locked_pool *lp,
		     struct ward_err *err)
{
	if (create && mkdir_lib(p->lib_dir, err) < 0)
		return ward_wrap(err, "ID pool: lib_dir");
	lp->dirfd = open(p->lib_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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

/* ---- reading ---- */

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

/* One allocation: an element of idpool.json's list (legacy: "start" is a member) or the
 * content of idpool.d/<start> (start from the name). where: the prefix of the messages. */
static int parse_alloc(json_t *a, const char *file, const char *where, bool legacy, uint32_t start,
		       struct alloc *out, const struct ward_idpool *p, struct ward_err *err)
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
		    (!legacy || strcmp(key, "start"))) {
			snprintf(what, sizeof(what), ": unknown key \"%.64s\"", key);
			return bad(err, p, file, where, what);
		}
	}
	if (!json_is_string(owner) || !owner_valid(json_string_value(owner)))
		return bad(err, p, file, where,
			   ".owner: expected a string \"pod:...\" or \"tenant:...\"");
	out->start = start;
	if (legacy && get_u32(a, "start", &out->start) < 0)
		return bad(err, p, file, where, ".start: expected an integer in 0..4294967295");
	if (get_u32(a, "size", &out->size) < 0 || out->size == 0 || out->size % SLICE)
		return bad(err, p, file, where, ".size: expected a positive multiple of 65536");
	if (out->start == 0 || (uint64_t)out->start + out->size > ID_LIMIT)
		return bad(err, p, file, where,
			   ": range contains host ID 0 or 4294967295, which are never mapped");
	if (users && !json_is_array(users))
		return bad(err, p, file, where, ".users: expected an array of strings");
	json_array_foreach(users, j, u)
	{
		if (!json_is_string(u))
			return bad(err, p, file, where, ".users: expected an array of strings");
		out->users = strv_append(out->users, json_string_value(u));
	}
	out->owner = xstrdup(json_string_value(owner));
	return 0;
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

/* idpool.json, the format before idpool.d (missing = empty). */
static int pool_read_legacy(int dirfd, const struct ward_idpool *p, struct pool *out,
			    struct ward_err *err)
{
	cleanup_fd int fd = openat(dirfd, POOL_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	cleanup_free char *text = NULL;
	char why[160];
	json_t *root, *allocs, *a;
	size_t len, i;
	int rc = -1;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_FILE);
	}
	text = read_all_fd(fd, &len, err);
	if (!text)
		return ward_wrap(err, "ID pool: %s/%s", p->lib_dir, POOL_FILE);
	root =
	    ward_json_list_file(text, len, POOL_VERSION, "allocations", &allocs, why, sizeof(why));
	if (!root)
		return bad(err, p, POOL_FILE, why, NULL);
	json_array_foreach(allocs, i, a)
	{
		char where[48];
		snprintf(where, sizeof(where), "allocations[%zu]", i);
		if (parse_alloc(a, POOL_FILE, where, true, 0, pool_add(out), p, err) < 0)
			goto out;
	}
	rc = pool_check(out, p, POOL_FILE, err);
out:
	json_decref(root);
	return rc;
}

/* A name of idpool.d: the canonical decimal form of a host ID (no sign, no leading zero). */
static bool parse_start(const char *name, uint32_t *start)
{
	uint64_t v = 0;
	if (!*name || (name[0] == '0' && name[1]) || strlen(name) > 10)
		return false;
	for (const char *c = name; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		v = v * 10 + (uint64_t)(*c - '0');
	}
	*start = (uint32_t)v;
	return v <= ID_LIMIT;
}

static bool is_tmp_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] == '.' && n > 5 && !strcmp(name + n - 4, ".tmp");
}

/* One file of idpool.d: 0, or 1 for an empty one (free: a freed pod's file kept for reuse,
 * or the remains of a crash or of a killed writer, see the top of the file). */
static int read_alloc_file(int pdfd, const char *name, uint32_t start, const struct ward_idpool *p,
			   struct alloc *out, struct ward_err *err)
{
	char file[sizeof(POOL_DIR) + NAME_MAX + 1]; /* POOL_DIR/d_name */
	cleanup_fd int fd = openat(pdfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	cleanup_free char *text = NULL;
	struct ward_err jerr = {0};
	size_t len;
	json_t *j;
	int rc;

	snprintf(file, sizeof(file), "%s/%s", POOL_DIR, name);
	if (fd < 0)
		return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, file);
	text = read_all_fd(fd, &len, err);
	if (!text)
		return ward_wrap(err, "ID pool: %s/%s", p->lib_dir, file);
	if (len == 0)
		return 1;
	j = ward_json_decode(text, len, &jerr);
	if (!j)
		return bad(err, p, file, jerr.msg, NULL);
	rc = parse_alloc(j, file, "", false, start, out, p, err);
	json_decref(j);
	return rc;
}

/* Every allocation of idpool.d, sorted by start. */
static int pool_read_dir(int pdfd, const struct ward_idpool *p, struct pool *out,
			 struct ward_err *err)
{
	int dfd = fcntl(pdfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	int rc = 0;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return ward_fail_errno(err, "ID pool: read %s/%s", p->lib_dir, POOL_DIR);
	}
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		uint32_t start;
		int r;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    is_tmp_name(de->d_name))
			continue; /* a rewrite's temp file, left by a crash: never read */
		if (!parse_start(de->d_name, &start)) {
			char file[300];
			snprintf(file, sizeof(file), "%s/%.255s", POOL_DIR, de->d_name);
			rc =
			    bad(err, p, file, "not an allocation's name (its first host ID)", NULL);
			break;
		}
		struct alloc a = {0};
		r = read_alloc_file(pdfd, de->d_name, start, p, &a, err);
		if (r == 0) {
			*pool_add(out) = a;
		} else if (r == 1) {
			out->empty = xrealloc(out->empty, (out->n_empty + 1) * sizeof(*out->empty));
			out->empty[out->n_empty++] = start;
		} else if (r < 0) {
			free(a.owner);
			strv_free(a.users);
			rc = -1;
		}
	}
	if (rc == 0 && errno)
		rc = ward_fail_errno(err, "ID pool: read %s/%s", p->lib_dir, POOL_DIR);
	closedir(d);
	return rc < 0 ? -1 : pool_check(out, p, POOL_DIR, err);
}

/* ---- writing ---- */

static char *alloc_text(const struct alloc *a)
{
	json_t *users = json_array();
	for (size_t j = 0; a->users && a->users[j]; j++)
		json_array_append_new(users, json_string(a->users[j]));
	json_t *j = json_pack("{s:s,s:I,s:o}", "owner", a->owner, "size", (json_int_t)a->size,
			      "users", users);
	char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	return text;
}

/* Write a's file in the directory pdfd (path: its name for messages), as mode says (a new
 * or an empty file is emptied or removed again if the write fails). durable: fsync the file,
 * and the directory after. */
static int alloc_write(int pdfd, const char *path, const struct alloc *a, enum write_mode mode,
		       bool durable, struct ward_err *err)
{
	static const int flags[] = {
	    [WRITE_NEW] = O_CREAT | O_EXCL,
	    [WRITE_EMPTY] = 0,
	    [WRITE_REPLACE] = O_CREAT | O_TRUNC,
	};
	char name[16], tmp[24];
	cleanup_free char *text = alloc_text(a);
	cleanup_fd int fd = -1;
	const char *target;

	snprintf(name, sizeof(name), "%u", a->start);
	snprintf(tmp, sizeof(tmp), ".%u.tmp", a->start);
	target = mode == WRITE_REPLACE ? tmp : name;
	if (!text)
		return ward_fail(err, ENOMEM, "ID pool: encode %s/%s", path, name);
	fd = openat(pdfd, target, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | flags[mode], 0600);
	if (fd < 0)
		return ward_fail_errno(err, "ID pool: create %s/%s", path, target);
	if (write_all(fd, text, strlen(text)) < 0 || write_all(fd, "\n", 1) < 0 ||
	    (durable && fsync(fd) < 0)) {
		ward_fail_errno(err, "ID pool: write %s/%s", path, target);
		if (mode == WRITE_EMPTY)
			(void)!ftruncate(fd, 0);
		else
			unlinkat(pdfd, target, 0);
		return -1;
	}
	if (mode == WRITE_REPLACE && renameat(pdfd, tmp, pdfd, name) < 0)
		return ward_fail_errno(err, "ID pool: rename %s/%s to %s", path, tmp, name);
	if (durable && fsync(pdfd) < 0)
		return ward_fail_errno(err, "ID pool: fsync %s", path);
	return 0;
}

/* Free a pod's allocation: empty its file, kept for the next allocation at that start
 * (keep), or remove it. Not fsync'd: a pod's allocation dies with the host. */
static int alloc_free(int pdfd, const char *path, uint32_t start, bool keep, struct ward_err *err)
{
	char name[16];
	cleanup_fd int fd = -1;

	snprintf(name, sizeof(name), "%u", start);
	if (!keep) {
		if (unlinkat(pdfd, name, 0) < 0)
			return ward_fail_errno(err, "ID pool: remove %s/%s", path, name);
		return 0;
	}
	fd = openat(pdfd, name, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ward_fail_errno(err, "ID pool: empty %s/%s", path, name);
	return 0;
}

/* Remove every file of lib_dir/name, then the directory (a migration's leftover). */
static int remove_dir(int libfd, const char *name, const struct ward_idpool *p,
		      struct ward_err *err)
{
	int dfd = openat(libfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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

/* idpool.json -> idpool.d, durably, under the exclusive lock: every allocation into a fresh
 * idpool.d.new, renamed to idpool.d, then idpool.json removed. A crash before the rename
 * leaves idpool.json authoritative (idpool.d.new is redone); one after it leaves idpool.d
 * (idpool.json is then removed, pool_open). */
static int pool_migrate(int dirfd, const struct ward_idpool *p, struct ward_err *err)
{
	struct pool old = {0};
	cleanup_free char *path = xasprintf("%s/%s", p->lib_dir, POOL_DIR_NEW);
	cleanup_fd int nfd = -1;
	int rc = -1;

	if (pool_read_legacy(dirfd, p, &old, err) < 0)
		goto out;
	if (remove_dir(dirfd, POOL_DIR_NEW, p, err) < 0)
		goto out;
	if (mkdirat(dirfd, POOL_DIR_NEW, 0700) < 0) {
		ward_fail_errno(err, "ID pool: create %s", path);
		goto out;
	}
	nfd = openat(dirfd, POOL_DIR_NEW, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nfd < 0) {
		ward_fail_errno(err, "ID pool: open %s", path);
		goto out;
	}
	for (size_t i = 0; i < old.n; i++)
		if (alloc_write(nfd, path, &old.v[i], WRITE_NEW, true, err) < 0)
			goto out;
	if (fsync(nfd) < 0 || renameat(dirfd, POOL_DIR_NEW, dirfd, POOL_DIR) < 0 ||
	    fsync(dirfd) < 0) {
		ward_fail_errno(err, "ID pool: move %s to %s/%s", path, p->lib_dir, POOL_DIR);
		goto out;
	}
	if ((unlinkat(dirfd, POOL_FILE, 0) < 0 && errno != ENOENT) || fsync(dirfd) < 0) {
		ward_fail_errno(err, "ID pool: remove %s/%s after its migration", p->lib_dir,
				POOL_FILE);
		goto out;
	}
	rc = 0;
out:
	pool_free(&old);
	return rc;
}

/* The pool's directory (lib_dir's fd, the exclusive lock held), migrated from idpool.json
 * or created when create; -1 with err set, or -2 (no error) when there is no pool and create
 * is false. */
static int pool_open(int dirfd, const struct ward_idpool *p, bool create, struct ward_err *err)
{
	int fd = openat(dirfd, POOL_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		/* A migration that stopped after its rename: idpool.d is authoritative. */
		if (unlinkat(dirfd, POOL_FILE, 0) == 0)
			fsync(dirfd);
		return fd;
	}
	if (errno != ENOENT) {
		ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_DIR);
		return -1;
	}
	if (faccessat(dirfd, POOL_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		if (pool_migrate(dirfd, p, err) < 0)
			return -1;
	} else if (!create) {
		return -2;
	} else if (mkdirat(dirfd, POOL_DIR, 0700) < 0 && errno != EEXIST) {
		ward_fail_errno(err, "ID pool: create %s/%s", p->lib_dir, POOL_DIR);
		return -1;
	}
	fd = openat(dirfd, POOL_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_DIR);
	return fd;
}

/* Begin a change: the exclusive lock, idpool.d (see pool_open) and its allocations read into
 * lp. 0, -1 with err set, or 1 (no error) when there is no pool and create is false. */
static int pool_begin(const struct ward_idpool *p, bool create, struct locked_pool *lp,
		      struct ward_err *err)
{
	if (pool_lock(p, create, LOCK_EX, lp, err) < 0)
		return -1;
	if (lp->dirfd < 0)
		return 1;
	lp->pdfd = pool_open(lp->dirfd, p, create, err);
	if (lp->pdfd < 0)
		return lp->pdfd == -2 ? 1 : -1;
	lp->path = xasprintf("%s/%s", p->lib_dir, POOL_DIR);
	return pool_read_dir(lp->pdfd, p, &lp->pl, err);
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
	return json_pack("{s:i,s:o}", "version", POOL_VERSION, "allocations", allocs);
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

static int first_fit(const struct ward_idpool *p, const struct pool *pl, uint32_t slices,
		     uint32_t *start, struct ward_err *err)
{
	size_t n = pl->n + p->n_reserved;
	cleanup_free struct span *s = xcalloc(n + 1, sizeof(*s));
	uint64_t need = (uint64_t)slices * SLICE;
	uint64_t limit = (uint64_t)p->base + p->size;
	uint64_t cur = p->base, used = 0;
	size_t k = 0;

	if (limit > ID_LIMIT)
		limit = ID_LIMIT; /* the last slice of the ID space contains (uid_t)-1 */
	for (size_t i = 0; i < pl->n; i++)
		s[k++] = (struct span){pl->v[i].start, (uint64_t)pl->v[i].start + pl->v[i].size};
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
	return fail_as(err, ENOSPC,
		       "ID pool [%u, %llu) exhausted: %llu of %u slices in use (%zu allocations, "
		       "%zu reserved ranges), no room for %u more consecutive slice%s",
		       p->base, (unsigned long long)p->base + p->size, (unsigned long long)used,
		       p->size / SLICE, pl->n, p->n_reserved, slices, slices == 1 ? "" : "s");
}

/* ---- API ---- */

/* The owner's form and the pool's parameters, before any file is touched. */
static int check_owner(const struct ward_idpool *p, const char *owner, struct ward_err *err)
{
	if (!owner_valid(owner))
		return fail_as(err, EINVAL, "ID pool: owner \"%s\": expected pod:... or tenant:...",
			       owner ? owner : "");
	return check_params(p, err);
}

static struct alloc *find_owner(const struct pool *pl, const char *owner)
{
	for (size_t i = 0; i < pl->n; i++)
		if (!strcmp(pl->v[i].owner, owner))
			return &pl->v[i];
	return NULL;
}

static bool has_empty(const struct pool *pl, uint32_t start)
{
	for (size_t i = 0; i < pl->n_empty; i++)
		if (pl->empty[i] == start)
			return true;
	return false;
}

static bool has_user(char *const *users, const char *u)
{
	for (size_t i = 0; users && users[i]; i++)
		if (!strcmp(users[i], u))
			return true;
	return false;
}

int ward_idpool_acquire(const struct ward_idpool *p, const char *owner, const char *user,
			uint32_t slices, struct ward_idrange *out, struct ward_err *err)
{
	cleanup_locked_pool struct locked_pool lp = LOCKED_POOL_INIT;
	struct alloc *a;
	enum write_mode mode = WRITE_REPLACE;

	if (check_owner(p, owner, err) < 0)
		return -1;
	if (slices == 0 || slices > p->size / SLICE)
		return fail_as(err, EINVAL, "ID pool: %u slices asked for, the pool has %u", slices,
			       p->size / SLICE);
	if (pool_begin(p, true, &lp, err) < 0)
		return -1;
	a = find_owner(&lp.pl, owner);
	if (!a) {
		uint32_t start = 0;
		if (first_fit(p, &lp.pl, slices, &start, err) < 0)
			return ward_wrap(err, "allocate host IDs for %s", owner);
		a = pool_add(&lp.pl);
		*a = (struct alloc){xstrdup(owner), start, slices * SLICE, NULL};
		mode = has_empty(&lp.pl, start) ? WRITE_EMPTY : WRITE_NEW;
	} else if (!user || has_user(a->users, user)) {
		*out = (struct ward_idrange){a->start, a->size};
		return 0; /* nothing changes: no write */
	}
	if (user) /* not among the users yet */
		a->users = strv_append(a->users, user);
	if (alloc_write(lp.pdfd, lp.path, a, mode, !is_pod_owner(owner), err) < 0)
		return -1;
	*out = (struct ward_idrange){a->start, a->size};
	return 0;
}

int ward_idpool_release(const struct ward_idpool *p, const char *owner, const char *user,
			struct ward_err *err)
{
	cleanup_locked_pool struct locked_pool lp = LOCKED_POOL_INIT;
	struct alloc *a;
	size_t w = 0;
	int rc;

	if (check_owner(p, owner, err) < 0)
		return -1;
	rc = pool_begin(p, false, &lp, err);
	if (rc != 0)
		return rc < 0 ? -1 : 0; /* 1: the pool was never written, nothing to release */
	a = find_owner(&lp.pl, owner);
	if (!a || !user || !has_user(a->users, user))
		return 0; /* nothing changes */
	for (size_t r = 0; a->users[r]; r++) {
		if (!strcmp(a->users[r], user))
			free(a->users[r]);
		else
			a->users[w++] = a->users[r];
	}
	a->users[w] = NULL;
	if (is_pod_owner(a->owner) && !a->users[0])
		return alloc_free(lp.pdfd, lp.path, a->start, lp.pl.n_empty < KEEP_EMPTY, err);
	return alloc_write(lp.pdfd, lp.path, a, WRITE_REPLACE, !is_pod_owner(owner), err);
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
	/* idpool.d, or idpool.json while it is not migrated (a dump changes nothing). */
	if (lp.dirfd >= 0)
		lp.pdfd =
		    openat(lp.dirfd, POOL_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lp.pdfd >= 0)
		rc = pool_read_dir(lp.pdfd, p, &lp.pl, err);
	else if (lp.dirfd >= 0 && errno != ENOENT)
		rc = ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_DIR);
	else if (lp.dirfd >= 0)
		rc = pool_read_legacy(lp.dirfd, p, &lp.pl, err);
	if (rc < 0)
		return NULL;
	j = pool_json(&lp.pl);
	text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!text)
		ward_fail(err, ENOMEM, "ID pool: encode");
	return text;
}
