/* Host paths a pod names, opened once: see hostfds.h. */
#include "hostfds.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "json.h"
#include "spec.h"
#include "sys.h"
#include "util.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

char *ward_fd_real_path(int fd)
{
	char link[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = 0;
	return xstrdup(buf);
}

static char *abs_name(const char *bundle, const char *path)
{
	return path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", bundle, path);
}

static int add_entry(struct ward_hostfds *t)
{
	t->v = xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].fd = -1;
	return (int)t->n++;
}

/* The mount the fd's object is on is one of this mount namespace's: through /proc/PID/root
 * an fd can hold another namespace's object, whose path the kernel reports as that
 * namespace sees it. 1 yes, 0 no, from statmount(2) of the mount's unique id, which finds
 * only the mounts of the caller's namespace; -1 when it cannot tell (a kernel before 6.8:
 * in_mountinfo then). */
static int in_our_mount_ns(int fd)
{
	struct ward_statmount sm;
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID_UNIQUE))
		return -1;
	if (sys_statmount(stx.stx_mnt_id, WARD_STATMOUNT_SB_BASIC, &sm) == 0)
		return 1;
	return errno == ENOENT ? 0 : -1;
}

/* The same from mountinfo (the mount's id is in it). true when it cannot tell. */
static bool in_mountinfo(const char *mountinfo, int fd)
{
	struct statx stx;
	char id[32];
	size_t n;

	if (!mountinfo || statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 ||
	    !(stx.stx_mask & STATX_MNT_ID))
		return true;
	n = (size_t)snprintf(id, sizeof(id), "%llu ", (unsigned long long)stx.stx_mnt_id);
	for (const char *l = mountinfo; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, id, n))
			return true;
	return false;
}

/* The entry for path, opened O_PATH (following symlinks: what is checked is the object
 * the fd holds); a relative path through the bundle directory's fd, never its name again.
 * A name already in the table shares its entry. */
static int open_path(struct ward_hostfds *t, int bundle_fd, const char *bundle, const char *path)
{
	cleanup_free char *name = abs_name(bundle, path);
	struct ward_hostfd *e;
	int i;

	for (size_t k = 0; k < t->n; k++)
		if (!strcmp(t->v[k].name, name))
			return (int)k;
	i = add_entry(t);
	e = &t->v[i];
	e->name = steal_ptr(name);
	e->fd = path[0] == '/' ? open(path, O_PATH | O_CLOEXEC)
			       : openat(bundle_fd, path, O_PATH | O_CLOEXEC);
	if (e->fd < 0 || fstat(e->fd, &e->st) < 0 || !(e->path = ward_fd_real_path(e->fd))) {
		e->errnum = errno ? errno : ENOENT;
		if (e->fd >= 0)
			close(e->fd);
		e->fd = -1;
	}
	return i;
}

static bool is_bind(json_t *m)
{
	const char *type = ward_json_str_at(m, "type");
	json_t *opts = json_object_get(m, "options"), *o;
	size_t i;

	if (type && !strcmp(type, "bind"))
		return true;
	json_array_foreach(opts, i, o) if (json_is_string(o) &&
					   (!strcmp(json_string_value(o), "bind") ||
					    !strcmp(json_string_value(o), "rbind"))) return true;
	return false;
}

/* linux.namespaces[i].path: nsfs (checked on the O_PATH fd, before anything reads it),
 * then reopened for setns through the fd and checked for its kind. */
static int open_ns(struct ward_hostfds *t, size_t i, const char *type_name, int type,
		   const char *path, struct ward_err *err)
{
	cleanup_fd int pfd = open(path, O_PATH | O_CLOEXEC);
	char link[64];
	struct statfs sf;
	struct ward_hostfd *e;
	int fd, k, kind;

	if (t->n_ns >= WARD_HOSTFDS_NS_MAX)
		return ward_fail(err, 0, "linux.namespaces: too many namespace paths");
	if (pfd < 0)
		return ward_fail_errno(err, "linux.namespaces[%zu] (%s): %s", i, type_name, path);
	if (fstatfs(pfd, &sf) < 0)
		return ward_fail_errno(err, "linux.namespaces[%zu] (%s): %s", i, type_name, path);
	if ((unsigned long)sf.f_type != (unsigned long)NSFS_MAGIC)
		return ward_fail(err, 0, "linux.namespaces[%zu] (%s): %s is not a namespace file",
				 i, type_name, path);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", pfd);
	fd = open(link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return ward_fail_errno(err, "linux.namespaces[%zu] (%s): %s", i, type_name, path);
	kind = ioctl(fd, NS_GET_NSTYPE);
	if (kind != type) {
		close(fd);
		return ward_fail(err, 0, "linux.namespaces[%zu] (%s): %s is not a %s namespace", i,
				 type_name, path, type_name);
	}
	k = add_entry(t);
	e = &t->v[k];
	e->name = xstrdup(path);
	e->fd = fd;
	if (fstat(fd, &e->st) < 0 || !(e->path = ward_fd_real_path(fd)))
		e->path = xstrdup(path);
	t->ns_type[t->n_ns] = type;
	t->ns[t->n_ns++] = k;
	return 0;
}

static bool is_ns_entry(const struct ward_hostfds *t, size_t k);

int ward_hostfds_add_ns(struct ward_hostfds *t, int type, const char *type_name, const char *path,
			struct ward_err *err)
{
	if (ward_hostfds_ns(t, type))
		return ward_fail(err, EEXIST,
				 "linux.namespaces: the %s namespace is already joined", type_name);
	return open_ns(t, t->n_ns, type_name, type, path, err);
}

int ward_hostfds_open(json_t *pod, int bundle_fd, const char *bundle, struct ward_hostfds *t,
		      struct ward_err *err)
{
	json_t *root = json_object_get(pod, "root");
	json_t *mounts = json_object_get(pod, "mounts"), *m;
	json_t *nss = json_object_get(json_object_get(pod, "linux"), "namespaces"), *ns;
	const char *rp = json_is_object(root) ? ward_json_str_at(root, "path") : NULL;
	struct ward_err ignored;
	cleanup_free char *mountinfo = NULL;
	size_t i;

	memset(t, 0, sizeof(*t));
	t->root = -1;
	/* Namespaces first: a bad one is refused before anything else is opened. */
	json_array_foreach(nss, i, ns)
	{
		const char *type = ward_json_str_at(ns, "type"),
			   *path = ward_json_str_at(ns, "path");
		int flag = ward_ns_type_from_name(type);
		if (!flag || !path || !*path || path[0] != '/')
			continue; /* the spec parser names what is wrong */
		if (open_ns(t, i, type, flag, path, err) < 0) {
			ward_hostfds_close(t);
			return -1;
		}
	}
	if (rp && *rp)
		t->root = open_path(t, bundle_fd, bundle, rp);
	if (json_is_array(mounts)) {
		t->n_mounts = json_array_size(mounts);
		t->mount = xcalloc(t->n_mounts ? t->n_mounts : 1, sizeof(int));
		json_array_foreach(mounts, i, m)
		{
			const char *src = ward_json_str_at(m, "source");
			t->mount[i] = -1;
			if (json_is_object(m) && src && *src && is_bind(m))
				t->mount[i] = open_path(t, bundle_fd, bundle, src);
		}
	}
	/* After the opens: every mount an fd is on is this namespace's, unless it is another
	 * namespace's. Through /proc/PID/root an fd holds such an object, whose path the
	 * kernel reports as that namespace sees it: what the rules would check is not it.
	 * mountinfo (read after the opens) only where statmount cannot tell. */
	for (size_t k = 0; k < t->n; k++) {
		struct ward_hostfd *e = &t->v[k];
		int in;
		if (e->fd < 0 || is_ns_entry(t, k))
			continue;
		in = in_our_mount_ns(e->fd);
		if (in < 0 && !mountinfo)
			mountinfo = read_file_at(AT_FDCWD, "/proc/self/mountinfo", NULL, &ignored);
		if (in > 0 || (in < 0 && in_mountinfo(mountinfo, e->fd)))
			continue;
		e->errnum = EXDEV;
		close(e->fd);
		e->fd = -1;
	}
	return 0;
}

void ward_hostfds_close(struct ward_hostfds *t)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].fd >= 0)
			close(t->v[i].fd);
		free_all(t->v[i].name, t->v[i].path);
	}
	free_all(t->v, t->mount);
	memset(t, 0, sizeof(*t));
	t->root = -1;
}

static bool is_ns_entry(const struct ward_hostfds *t, size_t k)
{
	for (size_t j = 0; j < t->n_ns; j++)
		if ((size_t)t->ns[j] == k)
			return true;
	return false;
}

const struct ward_hostfd *ward_hostfds_find(const struct ward_hostfds *t, const char *name)
{
	for (size_t k = 0; t && k < t->n; k++)
		if (!strcmp(t->v[k].name, name) && !is_ns_entry(t, k))
			return &t->v[k];
	return NULL;
}

const struct ward_hostfd *ward_hostfds_find_ns(const struct ward_hostfds *t, const char *name)
{
	for (size_t j = 0; t && j < t->n_ns; j++)
		if (!strcmp(t->v[t->ns[j]].name, name))
			return &t->v[t->ns[j]];
	return NULL;
}

const struct ward_hostfd *ward_hostfds_root(const struct ward_hostfds *t)
{
	return t && t->root >= 0 && (size_t)t->root < t->n ? &t->v[t->root] : NULL;
}

const struct ward_hostfd *ward_hostfds_mount(const struct ward_hostfds *t, size_t i)
{
	return t && i < t->n_mounts && t->mount[i] >= 0 && (size_t)t->mount[i] < t->n
		   ? &t->v[t->mount[i]]
		   : NULL;
}

const struct ward_hostfd *ward_hostfds_ns(const struct ward_hostfds *t, int type)
{
	for (size_t j = 0; t && j < t->n_ns; j++)
		if (t->ns_type[j] == type)
			return &t->v[t->ns[j]];
	return NULL;
}

int ward_hostfd_get(const struct ward_hostfd *e, const char *what, struct ward_err *err)
{
	if (!e)
		return ward_fail(err, 0, "%s: not opened when the spec was checked", what);
	if (e->fd < 0)
		return e->errnum == EXDEV ? ward_fail(err, 0,
						      "%s %s: an object of another mount "
						      "namespace",
						      what, e->name)
					  : ward_fail(err, e->errnum, "%s %s", what, e->name);
	return e->fd;
}
