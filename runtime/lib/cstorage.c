/* containers/storage: a container's overlay layer (see cstorage.h). */
#include "cstorage.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys.h"
#include "util.h"

const char *ward_cstorage_layer_in(json_t *list, const char *id)
{
	size_t i;
	json_t *c;

	if (!json_is_array(list))
		return NULL;
	json_array_foreach(list, i, c)
	{
		const char *cid = json_string_value(json_object_get(c, "id"));
		if (cid && !strcmp(cid, id))
			return json_string_value(json_object_get(c, "layer"));
	}
	return NULL;
}

/* The layer listed in dir/overlay-containers/name: 0 and *layer (NULL when the file is
 * missing or does not list id), or -1. */
static int layer_from(const char *dir, const char *name, const char *id, char **layer,
		      struct ward_err *err)
{
	struct open_how how = {.flags = O_RDONLY | O_CLOEXEC,
			       .resolve =
				   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	cleanup_free char *rel = xasprintf("overlay-containers/%s", name);
	cleanup_fd int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_fd int fd = -1;
	json_error_t jerr;
	json_t *list;
	const char *l;

	if (dfd < 0 && errno == ENOENT)
		return 0;
	if (dfd < 0)
		return ward_fail_errno(err, "containers/storage %s", dir);
	fd = sys_openat2(dfd, rel, &how);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return ward_fail_errno(err, "containers/storage %s/%s", dir, rel);
	list = json_loadfd(fd, 0, &jerr);
	if (!list)
		return ward_fail(err, EINVAL, "containers/storage %s/%s: line %d: %s", dir, rel,
				 jerr.line, jerr.text);
	l = ward_cstorage_layer_in(list, id);
	*layer = l ? xstrdup(l) : NULL;
	json_decref(list);
	return 0;
}

int ward_cstorage_layer(const char *graph_root, const char *run_root, const char *id, char **layer,
			struct ward_err *err)
{
	*layer = NULL;
	if (graph_root && layer_from(graph_root, "containers.json", id, layer, err) < 0)
		return -1;
	if (!*layer && run_root &&
	    layer_from(run_root, "volatile-containers.json", id, layer, err) < 0)
		return -1;
	return 0;
}

bool ward_cstorage_is_layer_root(const char *graph_root, const char *path)
{
	size_t n = graph_root ? strlen(graph_root) : 0;
	const char *layer, *slash;

	if (!n || strncmp(path, graph_root, n) || strncmp(path + n, "/overlay/", 9))
		return false;
	layer = path + n + 9;
	slash = strchr(layer, '/');
	return slash && slash > layer && !strcmp(slash, "/merged");
}

bool ward_cstorage_layer_owner_ok(int root_fd, uint32_t start, uint32_t size, char *why, size_t len)
{
	uint64_t end = (uint64_t)start + size; /* exclusive */
	struct stat st;

	if (fstat(root_fd, &st) < 0) {
		snprintf(why, len, "fstat: %s", strerror(errno));
		return false;
	}
	if (st.st_uid == 0 && st.st_gid == 0)
		return true;
	if (st.st_uid >= start && st.st_uid < end && st.st_gid >= start && st.st_gid < end)
		return true;
	snprintf(why, len, "owned by %u:%u, outside the pod's host IDs %u-%" PRIu64,
		 (unsigned)st.st_uid, (unsigned)st.st_gid, (unsigned)start, end - 1);
	return false;
}

/* Is b (the bundle's fstat) the directory <dir>/overlay-containers/<id>/userdata (the same
 * inode on the same device), that one opened beneath dir without following symlinks? */
static bool userdata_is(const struct stat *b, const char *dir, const char *id)
{
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve =
				   RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	cleanup_free char *rel = xasprintf("overlay-containers/%s/userdata", id);
	cleanup_fd int dfd = -1;
	cleanup_fd int fd = -1;
	struct stat u;

	if (!dir || (dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return false;
	fd = sys_openat2(dfd, rel, &how);
	return fd >= 0 && fstat(fd, &u) == 0 && u.st_dev == b->st_dev && u.st_ino == b->st_ino;
}

bool ward_cstorage_bundle_is_userdata(int bundle_fd, const char *graph_root, const char *run_root,
				      const char *id)
{
	struct stat b;

	if (bundle_fd < 0 || !ward_id_valid(id) || fstat(bundle_fd, &b) < 0 || !S_ISDIR(b.st_mode))
		return false;
	return userdata_is(&b, graph_root, id) || userdata_is(&b, run_root, id);
}
