/* The host paths a pod names (root.path, bind-mount sources, linux.namespaces[].path),
 * each opened once with O_PATH|O_CLOEXEC when the effective spec is built. What is checked
 * afterwards is the object the fd holds (its path read back from /proc/self/fd/N, fstat,
 * fstatfs), and what create mounts or joins is that fd: never the name again. A pod that
 * swaps a directory for a symlink between the check and the use gets what was checked.
 *
 * A name is opened once per table: a second mount of the same source shares the first's
 * fd, so every answer the policy gets about a name is about the object that is used.
 * Namespace paths are checked for nsfs (fstatfs NSFS_MAGIC) on the O_PATH fd before
 * anything reads them, then reopened O_RDONLY through /proc/self/fd/N (setns needs that)
 * and checked for their kind (NS_GET_NSTYPE): a FIFO, a regular file, /dev/kmsg or a
 * directory is refused at once. */
#ifndef WARD_HOSTFDS_H
#define WARD_HOSTFDS_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "err.h"

struct ward_hostfd {
	char *name; /* as the spec names it, made absolute against the bundle */
	char *path; /* the object's real path (readlink /proc/self/fd/N), NULL if not open */
	int fd;	    /* O_PATH|O_CLOEXEC (namespaces: O_RDONLY, nsfs), or -1 */
	int errnum; /* why fd is -1: the open's errno, or EXDEV: the object is on a mount of
		     * another mount namespace (through /proc/PID/root), whose path the
		     * kernel reports as that namespace sees it */
	struct stat st;
};

#define WARD_HOSTFDS_NS_MAX 8

struct ward_hostfds {
	struct ward_hostfd *v; /* one entry per distinct name */
	size_t n;
	int root;   /* index into v of root.path, -1 if the spec has none */
	int *mount; /* per mounts[] index: index into v of a bind's source, else -1 */
	size_t n_mounts;
	int ns_type[WARD_HOSTFDS_NS_MAX]; /* CLONE_NEW* of a namespace joined by path */
	int ns[WARD_HOSTFDS_NS_MAX];	  /* its index into v */
	size_t n_ns;
};

/* Open what pod (config.json as written) names: a relative name through bundle_fd (the
 * bundle directory, opened once by the caller; bundle is its absolute name, for the
 * entries' names and messages). A source or root that cannot be opened is recorded
 * (errnum) for the policy or create to report in its place; a namespace path that is not a
 * namespace file of its kind fails here: "linux.namespaces[1] (network): /x is not a
 * namespace file". On failure nothing is left open. */
int ward_hostfds_open(json_t *pod, int bundle_fd, const char *bundle, struct ward_hostfds *t,
		      struct ward_err *err);
void ward_hostfds_close(struct ward_hostfds *t);

/* Open and hold one more namespace to join, one the runtime chose (a pod member's
 * sandbox user namespace, /proc/PID/ns/user), checked like those the spec names. */
int ward_hostfds_add_ns(struct ward_hostfds *t, int type, const char *type_name, const char *path,
			struct ward_err *err);

/* The entry opened for name (absolute), or NULL. */
const struct ward_hostfd *ward_hostfds_find(const struct ward_hostfds *t, const char *name);

/* The namespace entry opened for name, or NULL. */
const struct ward_hostfd *ward_hostfds_find_ns(const struct ward_hostfds *t, const char *name);

/* The held entry of root.path, of the source of mounts[i], of the namespace of type
 * (CLONE_NEW*): NULL if the table has none. */
const struct ward_hostfd *ward_hostfds_root(const struct ward_hostfds *t);
const struct ward_hostfd *ward_hostfds_mount(const struct ward_hostfds *t, size_t i);
const struct ward_hostfd *ward_hostfds_ns(const struct ward_hostfds *t, int type);

/* The fd of e, or -1 with err naming what and why ("root.path /x: No such file ..."). */
int ward_hostfd_get(const struct ward_hostfd *e, const char *what, struct ward_err *err);

/* The real path of the object fd holds (readlink /proc/self/fd/N), malloc'd, or NULL. */
char *ward_fd_real_path(int fd);

#endif
