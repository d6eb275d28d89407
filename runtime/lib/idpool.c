/* The persistent ID allocator. Everything happens under an exclusive flock on
 * <lib_dir>/idpool.lock: read idpool.json (strictly: a file that does not parse or does not
 * make sense is an error naming it, never silently reset), change the list, rewrite it
 * atomically (temp file, fsync, rename, fsync of the directory).
 *
 * idpool.json:
 *   {"version": 1,
 *    "allocations": [{"owner": "pod:a/web", "start": 524288, "size": 65536,
 *                     "users": ["web-1"]}, ...]}
 *
 * Allocation is first fit over the pool's slices (base + k * 65536), skipping reserved
 * ranges and every existing allocation (also those outside the pool, left by an older
 * configuration). A range never contains host ID 0 or 4294967295 ((uid_t)-1, which no ID
 * map may contain). */
#include "idpool.h"

#include <errno.h>
#include <fcntl.h>
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
#define POOL_FILE    "idpool.json"
#define POOL_TMP     "idpool.json.tmp"
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
};

static void pool_free(struct pool *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].owner);
		strv_free(p->v[i].users);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
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

/* Open lib_dir (creating it if create) and take the lock (LOCK_EX or LOCK_SH). Returns the
 * directory fd and the lock fd, or -1. With create false, a missing lib_dir gives 0 and
 * *dirfd = -1 (nothing allocated yet). */
static int pool_lock(const struct ward_idpool *p, bool create, int op, int *dirfd, int *lockfd,
		     struct ward_err *err)
{
	cleanup_fd int dfd = -1;
	cleanup_fd int lfd = -1;

	*dirfd = *lockfd = -1;
	if (create && mkdir_lib(p->lib_dir, err) < 0)
		return ward_wrap(err, "ID pool: lib_dir");
	dfd = open(p->lib_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		if (!create && errno == ENOENT)
			return 0;
		return ward_fail_errno(err, "ID pool: open %s", p->lib_dir);
	}
	lfd = openat(dfd, POOL_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0)
		return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, POOL_LOCK);
	while (flock(lfd, op) < 0) {
		if (errno != EINTR)
			return ward_fail_errno(err, "ID pool: lock %s/%s", p->lib_dir, POOL_LOCK);
	}
	*dirfd = steal_fd(dfd);
	*lockfd = steal_fd(lfd);
	return 0;
}

/* ---- idpool.json ---- */

/* "<lib_dir>/idpool.json is corrupt: <where><what>". */
static int bad(struct ward_err *err, const struct ward_idpool *p, const char *where,
	       const char *what)
{
	return fail_as(err, EINVAL, "%s/%s is corrupt: %s%s (fix or remove it by hand)", p->lib_dir,
		       POOL_FILE, where, what ? what : "");
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

static int parse_alloc(json_t *a, size_t i, struct alloc *out, const struct ward_idpool *p,
		       struct ward_err *err)
{
	char where[160];
	json_t *owner = json_object_get(a, "owner"), *users = json_object_get(a, "users"), *u;
	const char *key;
	json_t *val;
	size_t j;

	snprintf(where, sizeof(where), "allocations[%zu]", i);
	if (!json_is_object(a))
		return bad(err, p, where, ": expected an object");
	json_object_foreach(a, key, val)
	{
		if (strcmp(key, "owner") && strcmp(key, "start") && strcmp(key, "size") &&
		    strcmp(key, "users")) {
			snprintf(where, sizeof(where), "allocations[%zu]: unknown key \"%.64s\"", i,
				 key);
			return bad(err, p, where, NULL);
		}
	}
	if (!json_is_string(owner) || !owner_valid(json_string_value(owner)))
		return bad(err, p, where,
			   ".owner: expected a string \"pod:...\" or \"tenant:...\"");
	if (get_u32(a, "start", &out->start) < 0)
		return bad(err, p, where, ".start: expected an integer in 0..4294967295");
	if (get_u32(a, "size", &out->size) < 0 || out->size == 0 || out->size % SLICE)
		return bad(err, p, where, ".size: expected a positive multiple of 65536");
	if (out->start == 0 || (uint64_t)out->start + out->size > ID_LIMIT)
		return bad(err, p, where,
			   ": range contains host ID 0 or 4294967295, which are never mapped");
	if (users && !json_is_array(users))
		return bad(err, p, where, ".users: expected an array of strings");
	json_array_foreach(users, j, u)
	{
		if (!json_is_string(u))
			return bad(err, p, where, ".users: expected an array of strings");
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

/* Read idpool.json (missing = empty). */
static int pool_read(int dirfd, const struct ward_idpool *p, struct pool *out, struct ward_err *err)
{
	cleanup_fd int fd = openat(dirfd, POOL_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	cleanup_free char *text = NULL;
	char why[160];
	json_t *root, *allocs, *a;
	size_t len, i;
	int rc = -1;

	out->v = NULL;
	out->n = 0;
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
		return bad(err, p, why, NULL);
	out->v = xcalloc(json_array_size(allocs) + 1, sizeof(*out->v));
	json_array_foreach(allocs, i, a)
	{
		if (parse_alloc(a, i, &out->v[i], p, err) < 0) {
			out->n = i + 1;
			goto out;
		}
		out->n = i + 1;
		for (size_t j = 0; j < i; j++) {
			if (strcmp(out->v[j].owner, out->v[i].owner))
				continue;
			char what[160];
			snprintf(what, sizeof(what),
				 "allocations[%zu] and [%zu] have the same owner", j, i);
			bad(err, p, what, NULL);
			goto out;
		}
	}
	/* Overlapping allocations mean the file was edited by hand or something is badly
	 * wrong: handing out more IDs on top would only spread the damage. */
	qsort(out->v, out->n, sizeof(*out->v), cmp_start);
	for (i = 1; i < out->n; i++) {
		const struct alloc *x = &out->v[i - 1], *y = &out->v[i];
		if ((uint64_t)x->start + x->size > y->start) {
			char what[640];
			snprintf(what, sizeof(what), "\"%.200s\" and \"%.200s\" overlap", x->owner,
				 y->owner);
			bad(err, p, what, NULL);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(root);
	if (rc < 0)
		pool_free(out);
	return rc;
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

/* Atomic rewrite: temp file, rename over idpool.json. durable: fsync the file before and
 * the directory after, for changes that must outlive a power cut (a tenant's range). A
 * pod's allocation dies with the host anyway, and readers see the old or the new file
 * either way, so pod changes skip the two fsyncs (they were most of a create's cost). */
static int pool_write(int dirfd, const struct ward_idpool *p, const struct pool *pl, bool durable,
		      struct ward_err *err)
{
	json_t *j = pool_json(pl);
	cleanup_free char *text = json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	cleanup_fd int fd = -1;

	json_decref(j);
	if (!text)
		return ward_fail(err, ENOMEM, "ID pool: encode %s", POOL_FILE);
	fd = openat(dirfd, POOL_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return ward_fail_errno(err, "ID pool: create %s/%s", p->lib_dir, POOL_TMP);
	if (write_all(fd, text, strlen(text)) < 0 || write_all(fd, "\n", 1) < 0)
		return ward_fail_errno(err, "ID pool: write %s/%s", p->lib_dir, POOL_TMP);
	if (durable && fsync(fd) < 0)
		return ward_fail_errno(err, "ID pool: fsync %s/%s", p->lib_dir, POOL_TMP);
	if (renameat(dirfd, POOL_TMP, dirfd, POOL_FILE) < 0)
		return ward_fail_errno(err, "ID pool: rename %s/%s to %s", p->lib_dir, POOL_TMP,
				       POOL_FILE);
	if (durable && fsync(dirfd) < 0)
		return ward_fail_errno(err, "ID pool: fsync %s", p->lib_dir);
	return 0;
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
	cleanup_fd int dirfd = -1;
	cleanup_fd int lockfd = -1;
	struct pool pl = {0};
	struct alloc *a;
	int rc = -1;

	if (check_owner(p, owner, err) < 0)
		return -1;
	if (slices == 0 || slices > p->size / SLICE)
		return fail_as(err, EINVAL, "ID pool: %u slices asked for, the pool has %u", slices,
			       p->size / SLICE);
	if (pool_lock(p, true, LOCK_EX, &dirfd, &lockfd, err) < 0)
		return -1;
	if (pool_read(dirfd, p, &pl, err) < 0)
		return -1;
	a = find_owner(&pl, owner);
	if (!a) {
		uint32_t start = 0;
		if (first_fit(p, &pl, slices, &start, err) < 0) {
			ward_wrap(err, "allocate host IDs for %s", owner);
			goto out;
		}
		pl.v = xrealloc(pl.v, (pl.n + 1) * sizeof(*pl.v));
		a = &pl.v[pl.n++];
		*a = (struct alloc){xstrdup(owner), start, slices * SLICE, NULL};
	} else if (!user || has_user(a->users, user)) {
		/* Nothing changes: no rewrite. */
		*out = (struct ward_idrange){a->start, a->size};
		rc = 0;
		goto out;
	}
	if (user) /* not among the users yet */
		a->users = strv_append(a->users, user);
	*out = (struct ward_idrange){a->start, a->size};
	qsort(pl.v, pl.n, sizeof(*pl.v), cmp_start);
	rc = pool_write(dirfd, p, &pl, !is_pod_owner(owner), err);
out:
	pool_free(&pl);
	return rc;
}

int ward_idpool_release(const struct ward_idpool *p, const char *owner, const char *user,
			struct ward_err *err)
{
	cleanup_fd int dirfd = -1;
	cleanup_fd int lockfd = -1;
	struct pool pl = {0};
	struct alloc *a;
	bool changed = false;
	int rc = -1;

	if (check_owner(p, owner, err) < 0)
		return -1;
	/* Nothing to release if the pool was never written. */
	if (pool_lock(p, false, LOCK_EX, &dirfd, &lockfd, err) < 0)
		return -1;
	if (dirfd < 0)
		return 0;
	if (pool_read(dirfd, p, &pl, err) < 0)
		return -1;
	a = find_owner(&pl, owner);
	if (a && user && has_user(a->users, user)) {
		size_t w = 0;
		for (size_t r = 0; a->users[r]; r++) {
			if (!strcmp(a->users[r], user))
				free(a->users[r]);
			else
				a->users[w++] = a->users[r];
		}
		a->users[w] = NULL;
		changed = true;
	}
	if (a && is_pod_owner(a->owner) && (!a->users || !a->users[0])) {
		size_t i = (size_t)(a - pl.v);
		free(a->owner);
		strv_free(a->users);
		memmove(&pl.v[i], &pl.v[i + 1], (pl.n - i - 1) * sizeof(*pl.v));
		pl.n--;
		changed = true;
	}
	rc = changed ? pool_write(dirfd, p, &pl, !is_pod_owner(owner), err) : 0;
	pool_free(&pl);
	return rc;
}

char *ward_idpool_dump(const struct ward_idpool *p, struct ward_err *err)
{
	cleanup_fd int dirfd = -1;
	cleanup_fd int lockfd = -1;
	struct pool pl = {0};
	json_t *j;
	char *text;

	if (check_params(p, err) < 0)
		return NULL;
	if (pool_lock(p, false, LOCK_SH, &dirfd, &lockfd, err) < 0)
		return NULL;
	if (dirfd >= 0 && pool_read(dirfd, p, &pl, err) < 0)
		return NULL;
	j = pool_json(&pl);
	text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	pool_free(&pl);
	if (!text)
		ward_fail(err, ENOMEM, "ID pool: encode");
	return text;
}
