/* An overlayfs root rebuilt with idmapped lower layers (see overlay.h). */
#include "overlay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "sync.h"
#include "sys.h"
#include "util.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/* fsconfig takes string values of at most 255 bytes. */
#define FSCONFIG_VALUE_MAX 255

void ward_overlay_opts_clear(struct ward_overlay_opts *o)
{
	strv_free(o->lower);
	strv_free(o->other);
	free(o->upper);
	free(o->work);
	*o = (struct ward_overlay_opts){0};
}

/* mountinfo escapes space, tab, newline, backslash (and, for overlay's own options, comma
 * and '=') as \ooo. */
static char *unescape_octal(const char *s, size_t n)
{
	char *out = xcalloc(1, n + 1), *d = out;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3' &&
		    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
			*d++ =
			    (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			*d++ = s[i];
		}
	}
	return out;
}

/* lowerdir: layers separated by ':', a literal ':' escaped as "\:". */
static int split_lower(const char *v, char ***out, struct ward_err *err)
{
	char **layers = xcalloc(1, sizeof(char *));
	cleanup_free char *cur = xcalloc(1, strlen(v) + 1);
	size_t n = 0;

	for (const char *p = v;; p++) {
		if (*p == '\\' && p[1]) {
			cur[n++] = *++p;
			continue;
		}
		if (*p && *p != ':') {
			cur[n++] = *p;
			continue;
		}
		cur[n] = 0;
		if (n == 0) {
			strv_free(layers);
			return ward_fail(err, EINVAL, "overlay lowerdir \"%s\": %s", v,
					 *p == ':' ? "data-only layers (\"::\") are not supported"
						   : "an empty layer");
		}
		if (cur[0] != '/') {
			strv_free(layers);
			return ward_fail(err, EINVAL,
					 "overlay lowerdir \"%s\": layer \"%s\" is not an absolute "
					 "path",
					 v, cur);
		}
		layers = strv_append(layers, cur);
		n = 0;
		if (!*p)
			break;
	}
	*out = layers;
	return 0;
}

int ward_overlay_parse(const char *superopts, struct ward_overlay_opts *o, struct ward_err *err)
{
	const char *p = superopts;

	*o = (struct ward_overlay_opts){.other = xcalloc(1, sizeof(char *))};
	while (*p) {
		const char *end = strchrnul(p, ',');
		cleanup_free char *opt = unescape_octal(p, (size_t)(end - p));
		char **dest = NULL;

		if (!strcmp(opt, "ro"))
			o->readonly = true;
		else if (!strcmp(opt, "rw") || !opt[0])
			;
		else if (!strncmp(opt, "lowerdir=", 9)) {
			if (o->lower) {
				ward_fail(err, EINVAL, "overlay option lowerdir given twice");
				goto fail;
			}
			if (split_lower(opt + 9, &o->lower, err) < 0)
				goto fail;
		} else if (!strncmp(opt, "upperdir=", 9))
			dest = &o->upper;
		else if (!strncmp(opt, "workdir=", 8))
			dest = &o->work;
		else if (!strncmp(opt, "lowerdir+", 9) || !strncmp(opt, "datadir+", 8)) {
			ward_fail(err, EINVAL, "overlay option \"%s\" is not supported", opt);
			goto fail;
		} else
			o->other = strv_append(o->other, opt);
		if (dest) {
			const char *v = strchr(opt, '=') + 1;
			if (*dest || v[0] != '/') {
				ward_fail(err, EINVAL, "overlay option \"%s\": %s", opt,
					  *dest ? "given twice" : "not an absolute path");
				goto fail;
			}
			*dest = xstrdup(v);
		}
		p = *end ? end + 1 : end;
	}
	if (!o->lower || !o->lower[0]) {
		ward_fail(err, EINVAL, "overlay without lowerdir");
		goto fail;
	}
	if (!o->upper != !o->work) {
		ward_fail(err, EINVAL, "overlay with %s but no %s",
			  o->upper ? "upperdir" : "workdir", o->upper ? "workdir" : "upperdir");
		goto fail;
	}
	return 0;
fail:
	ward_overlay_opts_clear(o);
	return -1;
}

/* The super options of the mount whose root root_fd holds, from /proc/self/mountinfo:
 * "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS". */
static char *mount_superopts(int root_fd, struct ward_err *err)
{
	struct statx stx;
	cleanup_free char *info = NULL;
	char id[32];
	size_t idlen;

	if (statx(root_fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx) < 0) {
		ward_fail_errno(err, "statx");
		return NULL;
	}
	if (!(stx.stx_mask & STATX_MNT_ID) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
		ward_fail(err, ENOSYS, "this kernel does not tell a mount's id (statx)");
		return NULL;
	}
	if (!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
		ward_fail(err, EINVAL,
			  "a directory inside an overlay, not its mount point: only a whole "
			  "overlay can be rebuilt with idmapped layers");
		return NULL;
	}
	if (!(info = read_file_at(AT_FDCWD, "/proc/self/mountinfo", NULL, err)))
		return NULL;
	idlen = (size_t)snprintf(id, sizeof(id), "%llu ", (unsigned long long)stx.stx_mnt_id);
	for (char *line = info; *line;) {
		char *nl = strchrnul(line, '\n'), *sep, *fstype, *rest;
		bool last = !*nl;
		*nl = 0;
		if (!strncmp(line, id, idlen) && (sep = strstr(line, " - "))) {
			/* fields 4 and 5: the mount's root within its filesystem, its mount point
			 */
			const char *root = line;
			for (int f = 0; f < 3 && root; f++)
				root = strchr(root, ' ') ? strchr(root, ' ') + 1 : NULL;
			if (!root || strncmp(root, "/ ", 2)) {
				ward_fail(err, EINVAL,
					  "a bind mount of a directory inside an overlay: only a "
					  "whole overlay can be rebuilt with idmapped layers");
				return NULL;
			}
			fstype = sep + 3;
			rest = strchr(fstype, ' ');
			if (!rest || strncmp(fstype, "overlay ", 8)) {
				ward_fail(err, EINVAL, "not an overlay");
				return NULL;
			}
			rest = strchr(rest + 1, ' '); /* after the source */
			if (!rest) {
				ward_fail(err, EINVAL, "mountinfo: no super options");
				return NULL;
			}
			return xstrdup(rest + 1);
		}
		if (last)
			break;
		line = nl + 1;
	}
	ward_fail(err, ENOENT, "mount %.*s not in /proc/self/mountinfo", (int)idlen - 1, id);
	return NULL;
}

static int fscfg(int fs, const char *key, const char *value, struct ward_err *err)
{
	unsigned cmd = value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG;
	if (sys_fsconfig(fs, cmd, key, value, 0) < 0)
		return ward_fail_errno(err, "overlay option %s%s%s", key, value ? "=" : "",
				       value ? value : "");
	return 0;
}

/* An idmapped clone of the directory at path (one layer). The path is the layer as the
 * kernel recorded it when the engine mounted the overlay, and is resolved as the kernel
 * resolved it then: containers/storage names its layers by short symlinks
 * (<graph root>/overlay/l/<id> -> ../<layer>/diff, in its root-only graph root), so a final
 * symlink is followed; what it names must be a directory (a clone of a mount rooted at a
 * symlink cannot be a layer). */
static int idmapped_layer(const char *path, int userns_fd, struct ward_err *err)
{
	cleanup_fd int tree = sys_open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	struct stat st;

	if (tree < 0)
		return ward_fail_errno(err, "overlay layer %s: open_tree", path);
	if (fstat(tree, &st) < 0)
		return ward_fail_errno(err, "overlay layer %s", path);
	if (!S_ISDIR(st.st_mode))
		return ward_fail(err, ENOTDIR, "overlay layer %s: not a directory", path);
	if (sys_mount_idmap_fd(tree, 0, userns_fd) < 0)
		return ward_fail_errno(err, "overlay layer %s: idmap", path);
	return steal_fd(tree);
}

/* A listing of directory fd on a second fd of its own (closedir closes that one). */
static DIR *opendir_fd(int fd)
{
	int dup = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dup < 0 ? NULL : fdopendir(dup);

	if (!d && dup >= 0)
		close(dup);
	return d;
}

/* How deep shift_host_made goes (an engine makes a few levels: etc/mtab, run/...). */
#define SHIFT_DEPTH_MAX 64

/* One entry of the upper dir (at dfd/name, or dfd itself with name ""): an owner the host
 * made (an ID below ids: no process of the container can have written it, its IDs are
 * uid..uid+ids-1) moves to the same ID of the container's range, its set-id bits kept. */
static int shift_entry(int dfd, const char *name, const struct stat *st, uid_t uid, gid_t gid,
		       uint32_t ids, const char *upper, struct ward_err *err)
{
	int flags = *name ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH;
	uid_t u = st->st_uid < ids ? uid + st->st_uid : st->st_uid;
	gid_t g = st->st_gid < ids ? gid + st->st_gid : st->st_gid;

	if (u == st->st_uid && g == st->st_gid)
		return 0;
	if (fchownat(dfd, name, u, g, flags) < 0)
		return ward_fail_errno(err, "overlay upperdir %s: %s: chown to %u:%u", upper,
				       *name ? name : ".", (unsigned)u, (unsigned)g);
	/* chown clears set-id bits (root's too); an engine's file keeps what it had */
	if (S_ISREG(st->st_mode) && (st->st_mode & (S_ISUID | S_ISGID)) &&
	    fchmodat(dfd, name, st->st_mode & 07777, AT_SYMLINK_NOFOLLOW) < 0)
		return ward_fail_errno(err, "overlay upperdir %s: %s: chmod", upper, name);
	return 0;
}

/* An upper dir that is not fresh: what the engine made in it as the host's root (podman
 * writes etc/mtab into a new container's upper dir before the runtime runs) is given to the
 * container's range, so that "/" and those entries are its root's inside, as in the layers
 * (idmapped: their IDs 0..ids-1 show as the container's). Walked through fds, never
 * following a symlink; entries of the container's own (IDs in its range) stay as they are. */
static int shift_host_made(int fd, const char *upper, uid_t uid, gid_t gid, uint32_t ids, int depth,
			   struct ward_err *err)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (!ids || depth > SHIFT_DEPTH_MAX)
		return ids ? ward_fail(err, ELOOP, "overlay upperdir %s: nested too deep", upper)
			   : 0;
	if (uid < ids || gid < ids) {
		/* the range starts below its size: the container's IDs and those the host made
		 * cannot be told apart, so nothing is moved */
		ward_debug("overlay upperdir %s: range at %u:%u below %u IDs: owners kept", upper,
			   (unsigned)uid, (unsigned)gid, ids);
		return 0;
	}
	if (fstat(fd, &st) < 0)
		return ward_fail_errno(err, "overlay upperdir %s", upper);
	if (shift_entry(fd, "", &st, uid, gid, ids, upper, err) < 0)
		return -1;
	if (!(d = opendir_fd(fd)))
		return ward_fail_errno(err, "overlay upperdir %s", upper);
	while (rc == 0 && (e = readdir(d))) {
		cleanup_fd int sub = -1;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = ward_fail_errno(err, "overlay upperdir %s: %s", upper, e->d_name);
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			rc = shift_entry(dirfd(d), e->d_name, &st, uid, gid, ids, upper, err);
			continue;
		}
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		rc = sub < 0 ? ward_fail_errno(err, "overlay upperdir %s: %s", upper, e->d_name)
			     : shift_host_made(sub, upper, uid, gid, ids, depth + 1, err);
	}
	closedir(d);
	return rc;
}

/* A fresh upper dir (empty, owned by the host's root) becomes the container root's, as
 * its "/" would otherwise show as nobody's inside; in one that is not empty, what the host
 * made (shift_host_made). *given tells whether a fresh one was chowned (to undo if the
 * overlay cannot be made). */
static int give_upper(int fd, const char *upper, uid_t uid, gid_t gid, uint32_t ids, bool *given,
		      struct ward_err *err)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	bool empty = true;

	if (fstat(fd, &st) < 0)
		return ward_fail_errno(err, "overlay upperdir %s", upper);
	if (uid == 0 && gid == 0)
		return 0;
	if (st.st_uid != 0 || st.st_gid != 0) /* used: what the engine made since */
		return shift_host_made(fd, upper, uid, gid, ids, 0, err);
	/* a second fd for the listing: closedir closes it, fd stays ours for fchown */
	if (!(d = opendir_fd(fd)))
		return ward_fail_errno(err, "overlay upperdir %s", upper);
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	if (!empty)
		return shift_host_made(fd, upper, uid, gid, ids, 0, err);
	if (fchown(fd, uid, gid) < 0)
		return ward_fail_errno(err, "overlay upperdir %s: chown to %u:%u", upper,
				       (unsigned)uid, (unsigned)gid);
	*given = true;
	return 0;
}

/* A volatile overlay (podman's for `run --rm`) marks its work dir (work/incompat/volatile)
 * and overlayfs refuses any other mount of that work dir while the mark is there. The
 * rebuilt overlay gets a work dir of its own inside the engine's (the same filesystem as the
 * upper dir, removed with it), and is not volatile: a work dir reused by the next create
 * must not carry the mark either (volatile only spares syncs). *work becomes its fd. */
static int own_work_dir(struct ward_overlay_opts *o, int *work, struct ward_err *err)
{
	static const char name[] = "ward";
	size_t i = 0;
	int fd;
	char *path;

	/* the kernel shows the option as "fsync=volatile" since Linux 6.6 */
	while (o->other[i] && strcmp(o->other[i], "volatile") &&
	       strcmp(o->other[i], "fsync=volatile"))
		i++;
	if (!o->other[i])
		return 0;
	if (mkdirat(*work, name, 0700) < 0 && errno != EEXIST)
		return ward_fail_errno(err, "overlay workdir %s: make %s in it", o->work, name);
	fd = openat(*work, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ward_fail_errno(err, "overlay workdir %s/%s", o->work, name);
	close(*work);
	*work = fd;
	path = xasprintf("%s/%s", o->work, name);
	free(o->work);
	o->work = path;
	free(o->other[i]);
	memmove(&o->other[i], &o->other[i + 1],
		strv_len(&o->other[i + 1]) * sizeof(char *) + sizeof(char *));
	return 0;
}

/* "/proc/self/fd/N" */
static char *fd_link(int fd)
{
	return xasprintf("/proc/self/fd/%d", fd);
}

/* A configured and created overlay context, or -1. */
static int configure(struct ward_overlay_opts *o, const int *layer, size_t n, int upper, int work,
		     bool plus, struct ward_err *err)
{
	cleanup_fd int fs = sys_fsopen("overlay", FSOPEN_CLOEXEC);

	if (fs < 0)
		return ward_fail_errno(err, "fsopen overlay");
	if (plus) {
		for (size_t i = 0; i < n; i++) {
			cleanup_free char *l = fd_link(layer[i]);
			if (fscfg(fs, "lowerdir+", l, err) < 0)
				return -1;
		}
	} else {
		cleanup_free char *all = xcalloc(1, 1);
		for (size_t i = 0; i < n; i++) {
			cleanup_free char *l = fd_link(layer[i]);
			char *next = xasprintf("%s%s%s", all, i ? ":" : "", l);
			free(all);
			all = next;
		}
		if (strlen(all) > FSCONFIG_VALUE_MAX)
			return ward_fail(
			    err, E2BIG,
			    "%zu layers are too many for this kernel's lowerdir option "
			    "(Linux 6.5 takes any number)",
			    n);
		if (fscfg(fs, "lowerdir", all, err) < 0)
			return -1;
	}
	if (upper >= 0) {
		cleanup_free char *u = fd_link(upper);
		cleanup_free char *w = fd_link(work);
		if (fscfg(fs, "upperdir", u, err) < 0 || fscfg(fs, "workdir", w, err) < 0)
			return -1;
	}
	for (size_t i = 0; o->other[i]; i++) {
		cleanup_free char *key = xstrdup(o->other[i]);
		char *eq = strchr(key, '=');
		if (eq)
			*eq = 0;
		if (fscfg(fs, key, eq ? eq + 1 : NULL, err) < 0)
			return -1;
	}
	if (o->readonly && fscfg(fs, "ro", NULL, err) < 0)
		return -1;
	if (sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		if (errno == EBUSY && upper >= 0)
			return ward_fail_errno(err,
					       "create the overlay: its upper dir is in use by the "
					       "overlay mounted at the root (overlayfs with "
					       "index=on allows one mount of it; with index=off, "
					       "Debian's default, the kernel only warns)");
		return ward_fail_errno(err, "create the overlay");
	}
	return steal_fd(fs);
}

/* Layers one by one ("lowerdir+", Linux 6.5), else all in one lowerdir value (older
 * kernels take any key at fsconfig time and refuse an unknown one at create). */
static int configure_any(struct ward_overlay_opts *o, const int *layer, size_t n, int upper,
			 int work, struct ward_err *err)
{
	int fs = configure(o, layer, n, upper, work, true, err);
	if (fs < 0 && err->errnum == EINVAL) {
		ward_err_clear(err);
		fs = configure(o, layer, n, upper, work, false, err);
	}
	return fs;
}

/* dir (a path) opened in this mount namespace, and the same directory as held (the fd the
 * runtime opened and checked in the host's), or -1. */
static int reopen_same(const char *dir, int flags, int held, struct ward_err *err)
{
	struct stat a, b;
	cleanup_fd int fd = open(dir, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &a) < 0 || fstat(held, &b) < 0)
		return ward_fail_errno(err, "overlay %s", dir);
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return ward_fail(err, EXDEV, "overlay %s: replaced while the overlay was made",
				 dir);
	return steal_fd(fd);
}

/* In a child, in a mount namespace of its own: the idmapped layers attached there (stacked
 * on its "/", which changes no lookup: the child's root stays the mount below), the upper and
 * work dirs opened again through this namespace's copy of their mount (the kernel wants
 * every layer in the namespace of the caller) and checked to be those held, then the
 * overlay made of them and mounted, detached. */
static int attached_overlay(struct ward_overlay_opts *o, const int *layer, size_t n, int upper,
			    int work, struct ward_err *err)
{
	cleanup_fd int fs = -1;
	cleanup_fd int u = -1;
	cleanup_fd int w = -1;
	int mnt;

	if (unshare(CLONE_NEWNS) < 0)
		return ward_fail_errno(err, "unshare a mount namespace");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return ward_fail_errno(err, "make the mount namespace private");
	if (upper >= 0 && ((u = reopen_same(o->upper, O_RDONLY, upper, err)) < 0 ||
			   (w = reopen_same(o->work, O_PATH, work, err)) < 0))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (sys_move_mount(layer[i], "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return ward_fail_errno(err, "overlay layer %s: attach it", o->lower[i]);
	if ((fs = configure_any(o, layer, n, u, w, err)) < 0)
		return -1;
	if ((mnt = sys_fsmount(fs, FSMOUNT_CLOEXEC, 0)) < 0)
		return ward_fail_errno(err, "fsmount overlay");
	return mnt;
}

/* Before Linux 6.15 overlayfs takes no detached mount as a layer (clone_private_mount wants
 * a mount of the caller's mount namespace: EINVAL, "failed to clone lowerpath"), and the
 * runtime must not attach the idmapped layers in the host's: a child attaches them in a
 * private mount namespace, makes the overlay there and passes the detached overlay back
 * (it keeps private clones of its layers, and outlives the child's namespace). */
static int overlay_in_own_ns(struct ward_overlay_opts *o, const int *layer, size_t n, int upper,
			     int work, struct ward_err *err)
{
	int sp[2], fd = -1, status;
	struct ward_sync m;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return ward_fail_errno(err, "overlay: socketpair");
	if ((pid = fork()) < 0) {
		close(sp[0]);
		close(sp[1]);
		return ward_fail_errno(err, "overlay: fork");
	}
	if (pid == 0) {
		struct ward_err e = {0};
		int mnt;
		close(sp[0]);
		mnt = attached_overlay(o, layer, n, upper, work, &e);
		if (mnt < 0)
			ward_sync_send_err(sp[1], &e);
		else if (ward_sync_send_fd(sp[1], WARD_SYNC_MOUNTFD, mnt, &e) < 0)
			_exit(1);
		_exit(mnt < 0);
	}
	close(sp[1]);
	if (ward_sync_expect(sp[0], WARD_SYNC_MOUNTFD, &m, &fd, err) < 0)
		fd = -1;
	close(sp[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (fd < 0)
		return ward_wrap(err, "layers attached in a private mount namespace");
	return fd;
}

int ward_overlay_open_idmapped(int root_fd, const char *root_path, int userns_fd, uid_t root_uid,
			       gid_t root_gid, uint32_t ids, struct ward_err *err)
{
	cleanup_free char *superopts = mount_superopts(root_fd, err);
	struct ward_overlay_opts o = {0};
	int *layer = NULL;
	size_t n = 0;
	cleanup_fd int fs = -1;
	cleanup_fd int upper = -1;
	cleanup_fd int work = -1;
	int mnt = -1;
	bool given = false;

	if (!superopts || ward_overlay_parse(superopts, &o, err) < 0)
		goto out;
	n = strv_len(o.lower);
	layer = xcalloc(n, sizeof(int));
	for (size_t i = 0; i < n; i++)
		layer[i] = -1;
	for (size_t i = 0; i < n; i++)
		if ((layer[i] = idmapped_layer(o.lower[i], userns_fd, err)) < 0)
			goto out;
	if (o.upper) {
		upper = open(o.upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		work = open(o.work, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (upper < 0 || work < 0) {
			ward_fail_errno(err, "overlay %s %s", upper < 0 ? "upperdir" : "workdir",
					upper < 0 ? o.upper : o.work);
			goto out;
		}
		if (own_work_dir(&o, &work, err) < 0 ||
		    give_upper(upper, o.upper, root_uid, root_gid, ids, &given, err) < 0)
			goto out;
	}
	if ((fs = configure_any(&o, layer, n, upper, work, err)) < 0 &&
	    (err->errnum == EINVAL || err->errnum == E2BIG)) {
		/* Linux < 6.15: the layers must be attached (overlay_in_own_ns) */
		ward_err_clear(err);
		mnt = overlay_in_own_ns(&o, layer, n, upper, work, err);
		goto out;
	}
	if (fs < 0)
		goto out;
	mnt = sys_fsmount(fs, FSMOUNT_CLOEXEC, 0);
	if (mnt < 0)
		ward_fail_errno(err, "fsmount overlay");
out:
	for (size_t i = 0; layer && i < n; i++)
		if (layer[i] >= 0)
			close(layer[i]);
	free(layer);
	if (mnt < 0 && given && fchown(upper, 0, 0) < 0) /* back to the host's root, as it was */
		ward_warn("overlay upperdir %s: cannot give it back to root: %m", o.upper);
	ward_overlay_opts_clear(&o);
	if (mnt < 0)
		ward_wrap(err, "root %s: overlay with idmapped layers", root_path);
	return mnt;
}
