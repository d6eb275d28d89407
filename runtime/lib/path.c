/* Paths inside the container: every lookup is scoped to the root fd with openat2
 * RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS; creation happens relative to the fd of an
 * already-resolved parent, never through a string joined onto the rootfs. */
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sys.h"
#include "util.h"

#define IN_ROOT	    (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
#define MAX_RETRIES 32 /* EAGAIN from openat2 and create/lookup races */
#define MAX_LINKS   40 /* dangling symlinks followed while creating (like MAXSYMLINKS) */

static int openat2_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
	    .flags = (unsigned long long)(flags | O_CLOEXEC),
	    /* O_TMPFILE includes O_DIRECTORY: test all of its bits. */
	    .mode = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? 0644 : 0,
	    .resolve = IN_ROOT,
	};
	if (path[0] == '\0')
		path = ".";
	for (int i = 0; i < MAX_RETRIES; i++) {
		int fd = sys_openat2(rootfd, path, &how);
		if (fd >= 0 || errno != EAGAIN)
			return fd;
	}
	return -1; /* errno == EAGAIN */
}

int ward_path_open(int rootfd, const char *path, int flags, struct ward_err *err)
{
	int fd = openat2_in_root(rootfd, path, flags);
	if (fd < 0)
		return ward_fail_errno(err, "open %s in rootfs", path);
	return fd;
}

const char *ward_fd_path(int fd, char *buf)
{
	snprintf(buf, 32, "/proc/self/fd/%d", fd);
	return buf;
}

char *ward_path_clean(const char *path)
{
	size_t len = strlen(path);
	char *out = xmalloc(len + 2);
	size_t n = 0; /* out[0..n) is the cleaned prefix, without trailing '/' */
	const char *p = path;

	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t clen = (size_t)(end - p);
		if (clen == 0 || (clen == 1 && p[0] == '.')) {
			/* skip */
		} else if (clen == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--; /* drop the '/' too */
		} else {
			out[n++] = '/';
			memcpy(out + n, p, clen);
			n += clen;
		}
		p = *end ? end + 1 : end;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return out;
}

/* Split path into components (skipping "" and "."), in a malloc'd NULL-terminated vector
 * whose strings point into a copy of path kept in *buf. */
static char **split_components(const char *path, char **buf)
{
	size_t n = 0;
	char **v = xcalloc(strlen(path) / 2 + 2, sizeof(char *));
	char *save = NULL;
	*buf = xstrdup(path);
	for (char *c = strtok_r(*buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") != 0)
			v[n++] = c;
	}
	v[n] = NULL;
	return v;
}

static char *join_rest(const char *head, char *const *rest)
{
	size_t len = strlen(head) + 1;
	char *s, *p;
	for (size_t i = 0; rest[i]; i++)
		len += strlen(rest[i]) + 1;
	s = p = xmalloc(len);
	p = stpcpy(p, head);
	for (size_t i = 0; rest[i]; i++) {
		*p++ = '/';
		p = stpcpy(p, rest[i]);
	}
	return s;
}

/* The component `name` (in parentfd, reached by prefix) could neither be opened in root
 * nor created: if it is a dangling symlink, compute the path to continue with (target
 * then the remaining components) in *redirect; the new path is again resolved in root. */
static int follow_dangling(int parentfd, const char *parent_prefix, const char *name,
			   char *const *rest, char **redirect)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;
	cleanup_free char *head = NULL;

	if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
		return -1;
	n = readlinkat(parentfd, name, target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	if (n == 0) {
		errno = ENOENT;
		return -1;
	}
	target[n] = '\0';
	if (target[0] == '/')
		head = xstrdup(target);
	else
		head = xasprintf("%s/%s", parent_prefix, target);
	*redirect = join_rest(head, rest);
	return 0;
}

/* Create the missing component `name` in parentfd. Returns 0, or -1 with errno
 * (EEXIST when something is already there). */
static int create_component(int parentfd, const char *name, bool last, enum ward_path_kind kind)
{
	if (last && kind == WARD_PATH_FILE) {
		int fd = openat(parentfd, name,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			return -1;
		close(fd);
		return 0;
	}
	return mkdirat(parentfd, name, 0755);
}

/* Open a component we just created, without following it. -1 if it is gone or was
 * swapped for a symlink or something else meanwhile. */
static int open_created(int parentfd, const char *name, int flags)
{
	struct stat st;
	int fd = openat(parentfd, name, flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode) ||
	    ((flags & O_DIRECTORY) ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One walk over path. Returns the fd (>= 0), -1 with err set, or -2 with *redirect set
 * when a dangling symlink has to be followed. */
static int walk(int rootfd, const char *path, enum ward_path_kind kind, char **redirect,
		struct ward_err *err)
{
	cleanup_free char *buf = NULL;
	cleanup_free char **comp = split_components(path, &buf);
	cleanup_free char *prefix = xmalloc(strlen(path) + 2);
	cleanup_fd int parent = -1;
	size_t plen = 0, start = 0, n = 0;

	while (comp[n])
		n++;
	/* The walk below opens each prefix of the path in root, creating what is missing. All
	 * of the path there (the usual case): it ends in this one open of the whole path. All
	 * but the last component there: it reaches the last one with this open of the parent,
	 * and goes on from there. */
	if (n > 0) {
		cleanup_free char *whole = join_rest("", comp);
		int fd = openat2_in_root(rootfd, whole,
					 O_PATH | (kind == WARD_PATH_FILE ? 0 : O_DIRECTORY));
		if (fd >= 0)
			return fd;
		if (errno == ENOENT && n > 1) {
			whole[strlen(whole) - strlen(comp[n - 1]) - 1] = '\0';
			parent = openat2_in_root(rootfd, whole, O_PATH | O_DIRECTORY);
			if (parent >= 0) {
				plen = (size_t)(stpcpy(prefix, whole) - prefix);
				start = n - 1;
			}
		}
	}
	if (parent < 0) {
		parent = openat2_in_root(rootfd, "/", O_PATH | O_DIRECTORY);
		if (parent < 0)
			return ward_fail_errno(err, "open rootfs");
		prefix[0] = '\0';
	}
	if (!comp[0]) {
		if (kind != WARD_PATH_DIR)
			return ward_fail(err, EISDIR, "%s", path);
		return steal_fd(parent);
	}

	for (size_t i = start; comp[i]; i++) {
		const char *name = comp[i];
		bool last = comp[i + 1] == NULL;
		int flags = O_PATH | ((last && kind == WARD_PATH_FILE) ? 0 : O_DIRECTORY);
		size_t parent_len = plen;
		int fd = -1;

		prefix[plen++] = '/';
		plen = (size_t)(stpcpy(prefix + plen, name) - prefix);

		for (int attempt = 0; fd < 0; attempt++) {
			if (attempt == MAX_RETRIES)
				return ward_fail(err, EAGAIN, "%s: lookup keeps racing", prefix);
			fd = openat2_in_root(rootfd, prefix, flags);
			if (fd >= 0)
				break;
			if (errno != ENOENT || strcmp(name, "..") == 0)
				return ward_fail_errno(err, "%s", prefix);
			if (create_component(parent, name, last, kind) == 0) {
				ward_debug("created %s in rootfs", prefix);
				/* Ours: open it without following anything; if it was
				 * replaced under us, resolve again in root. */
				fd = open_created(parent, name, flags);
				continue;
			}
			if (errno != EEXIST)
				return ward_fail_errno(err, "create %s", prefix);
			/* Something is there but does not resolve in root: a dangling
			 * symlink is followed (inside the root), anything else raced. */
			prefix[parent_len] = '\0';
			if (follow_dangling(parent, prefix, name, comp + i + 1, redirect) == 0)
				return -2;
			prefix[parent_len] = '/';
		}
		close(parent);
		parent = fd;
	}
	return steal_fd(parent);
}

int ward_path_mkdir_p(int rootfd, const char *path, enum ward_path_kind kind, struct ward_err *err)
{
	cleanup_free char *want = xstrdup(path);

	for (int links = 0; links <= MAX_LINKS; links++) {
		char *redirect = NULL;
		int fd = walk(rootfd, want, kind, &redirect, err);
		if (fd != -2) {
			if (fd < 0 && strcmp(want, path) != 0)
				ward_wrap(err, "%s", path);
			return fd < 0 ? -1 : fd;
		}
		free(want);
		want = redirect;
	}
	return ward_fail(err, ELOOP, "%s", path);
}
