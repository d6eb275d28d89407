/* The ID pool's older formats, read and migrated into idpool2.d (idpool.c has its format).
 *
 * Read and migrated once, under the exclusive lock, by the first change:
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
 * A dump (shared lock) of a pool not migrated yet reads the old files. */
#include "idpool_migrate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "util.h"

#define OLD_FILE	 "idpool.json"
#define OLD_FILE_VERSION 1
#define OLD_DIR		 "idpool.d"
#define OLD_DIR_GONE	 "idpool.d.old"
#define MARKER_TMP	 ".idpool.json.tmp"
#define MARKER		 "{\"version\": 2, \"allocations\": \"" POOL_DIR "\"}\n"

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
	if (idpool_is_tmp_name(name))
		return 0; /* a rewrite's temp file, left by a crash: never read */
	if (!idpool_parse_index(name, ID_LIMIT, &start))
		return idpool_bad(s->err, s->p, file,
				  "not an allocation's name (its first host ID)", NULL);
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
		return idpool_bad(s->err, s->p, file, jerr.msg, NULL);
	rc = idpool_parse_alloc(j, file, "", FMT_OLD_FILE, (uint32_t)start, &a, s->p, s->err);
	json_decref(j);
	if (rc < 0) {
		idpool_alloc_free(&a);
		return -1;
	}
	*idpool_set_add(s->out) = a;
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
		return idpool_bad(err, p, OLD_FILE, why, NULL);
	json_array_foreach(allocs, i, a)
	{
		char where[48];
		snprintf(where, sizeof(where), "allocations[%zu]", i);
		if (idpool_parse_alloc(a, OLD_FILE, where, FMT_LIST, 0, idpool_set_add(out), p,
				       err) < 0)
			goto out;
	}
	rc = idpool_set_check(out, p, OLD_FILE, err);
out:
	json_decref(root);
	return rc;
}

int idpool_old_kind(int dirfd, const struct ward_idpool *p, struct ward_err *err)
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

int idpool_read_old(int dirfd, const struct ward_idpool *p, struct pool *out, struct ward_err *err)
{
	struct old_dir_scan s = {.p = p, .out = out, .err = err};
	int rc;

	s.pdfd = idpool_open_dir(dirfd, OLD_DIR);
	if (s.pdfd < 0) {
		if (errno != ENOENT)
			return ward_fail_errno(err, "ID pool: open %s/%s", p->lib_dir, OLD_DIR);
		return read_old_file(dirfd, p, out, err);
	}
	rc = idpool_each_name(s.pdfd, OLD_DIR, p, old_dir_entry, &s, err);
	close(s.pdfd);
	return rc < 0 ? -1 : idpool_set_check(out, p, OLD_DIR, err);
}

/* ---- idpool2.d: every file ---- */

/* Remove every file of lib_dir/name, then the directory (a migration's leftover). */
static int remove_dir(int libfd, const char *name, const struct ward_idpool *p,
		      struct ward_err *err)
{
	int dfd = idpool_open_dir(libfd, name);
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
	nfd = idpool_open_dir(dirfd, POOL_DIR_NEW);
	if (nfd < 0)
		return ward_fail_errno(err, "ID pool: open %s", path);
	for (size_t i = 0; i < old->n; i++) {
		const struct alloc *a = &old->v[i];
		cleanup_free char *text = idpool_alloc_text(a);
		char name[16];
		idpool_rec_name(name, i);
		if (!text || write_file_at(nfd, name, O_CREAT | O_EXCL | O_NOFOLLOW, 0600, text,
					   strlen(text), err) < 0)
			return ward_wrap(err, "ID pool: %s", path);
		r[i] = (struct rec){a->start, a->size, idpool_owner_key(a->owner),
				    idpool_owner_type(a->owner)};
	}
	/* The files' data before the directory that names them (write_file_at does not
	 * fsync): syncfs would do it for the whole file system; one fsync each is enough. */
	for (size_t i = 0; i < old->n; i++) {
		char name[16];
		cleanup_fd int fd = -1;
		idpool_rec_name(name, i);
		fd = openat(nfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || fsync(fd) < 0)
			return ward_fail_errno(err, "ID pool: fsync %s/%s", path, name);
	}
	map = idpool_map_text(r, old->n, &len);
	if (write_file_at(nfd, MAP_FILE, O_CREAT | O_EXCL | O_NOFOLLOW, 0600, map, len, err) < 0)
		return ward_wrap(err, "ID pool: %s", path);
	if (fsync(nfd) < 0)
		return ward_fail_errno(err, "ID pool: fsync %s", path);
	return 0;
}

int idpool_migrate(int dirfd, const struct ward_idpool *p, struct ward_err *err)
{
	struct pool old = {0};
	int kind = idpool_old_kind(dirfd, p, err), rc = -1;

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
		if (idpool_read_old(dirfd, p, &old, err) < 0 ||
		    write_new_dir(dirfd, p, &old, err) < 0)
			goto out;
		if (idpool_write_fresh(dirfd, p->lib_dir, MARKER_TMP, OLD_FILE, MARKER,
				       strlen(MARKER), true, err) < 0)
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
	idpool_set_free(&old);
	return rc;
}

int idpool_marker_keep(int dirfd, const struct ward_idpool *p, struct ward_err *err)
{
	if (faccessat(dirfd, OLD_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return 0;
	return idpool_write_fresh(dirfd, p->lib_dir, MARKER_TMP, OLD_FILE, MARKER, strlen(MARKER),
				  true, err);
}

bool idpool_has_old(int dirfd)
{
	return faccessat(dirfd, OLD_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	       faccessat(dirfd, OLD_DIR, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}
