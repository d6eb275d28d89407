/* /dev inside the container, through fds only: default filesystems, default devices
 * bind-mounted from the host, linux.devices (mknod, or a bind of the host node in a user
 * namespace), the standard links, and /dev/console after pivot. */
#include "dev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "mount.h"
#include "path.h"
#include "util.h"

const struct ward_default_dev ward_default_devices[] = {
    {"/dev/null", 'c', 1, 3},	{"/dev/zero", 'c', 1, 5},    {"/dev/full", 'c', 1, 7},
    {"/dev/random", 'c', 1, 8}, {"/dev/urandom", 'c', 1, 9}, {"/dev/tty", 'c', 5, 0},
};
const unsigned ward_n_default_devices = ARRAY_SIZE(ward_default_devices);

/* Filesystems mounted when the spec has none at that place. */
static char *dev_opts[] = {"nosuid", "strictatime", "mode=755", "size=65536k", NULL};
static char *pts_opts[] = {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", NULL};
static char *shm_opts[] = {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL};
static const struct ward_mount default_mounts[] = {
    {.destination = "/dev", .type = "tmpfs", .source = "tmpfs", .options = dev_opts},
    {.destination = "/dev/pts", .type = "devpts", .source = "devpts", .options = pts_opts},
    {.destination = "/dev/shm", .type = "tmpfs", .source = "shm", .options = shm_opts},
};

static const char *const dev_links[][2] = {
    {"fd", "/proc/self/fd"},	   {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
    {"stderr", "/proc/self/fd/2"}, {"ptmx", "pts/ptmx"},
};

/* The last spec mount at dest, or (under = true) whether any mount lies below dest. */
static const struct ward_mount *spec_mount(const struct ward_spec *spec, const char *dest,
					   bool under)
{
	const struct ward_mount *found = NULL;
	size_t len = strlen(dest);
	for (size_t i = 0; i < spec->n_mounts; i++) {
		cleanup_free char *c = ward_path_clean(spec->mounts[i].destination);
		if (under ? (strncmp(c, dest, len) == 0 && c[len] == '/') : strcmp(c, dest) == 0)
			found = &spec->mounts[i];
	}
	return found;
}

static bool spec_has_device(const struct ward_spec *spec, const char *path)
{
	for (size_t i = 0; i < spec->linux.n_devices; i++) {
		cleanup_free char *c = ward_path_clean(spec->linux.devices[i].path);
		if (strcmp(c, path) == 0)
			return true;
	}
	return false;
}

static mode_t type_bits(char type)
{
	switch (type) {
	case 'b':
		return S_IFBLK;
	case 'p':
		return S_IFIFO;
	default: /* 'c', 'u' */
		return S_IFCHR;
	}
}

/* Bind the host's node at path (same path on the host, resolved before pivot) onto a
 * placeholder file at path inside the root, after checking the host node is what the
 * spec says. */
static int bind_host_node(int rootfd, const char *path, char type, int64_t maj, int64_t min,
			  struct ward_err *err)
{
	struct stat st;
	cleanup_fd int host = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	cleanup_fd int dest = -1;

	if (host < 0)
		return ward_fail_errno(err, "%s: open host node", path);
	if (fstat(host, &st) < 0)
		return ward_fail_errno(err, "%s: stat host node", path);
	if ((st.st_mode & S_IFMT) != type_bits(type) ||
	    (type != 'p' && (major(st.st_rdev) != maj || minor(st.st_rdev) != min)))
		return ward_fail(err, ENODEV, "%s: host node is not %c %lld:%lld", path, type,
				 (long long)maj, (long long)min);
	dest = ward_path_mkdir_p(rootfd, path, WARD_PATH_FILE, err);
	if (dest < 0)
		return -1;
	if (ward_mount_bind_at(host, "", dest, err) < 0)
		return ward_wrap(err, "%s: bind host node", path);
	return 0;
}

static int create_device(int rootfd, const struct ward_device *d, bool in_userns,
			 struct ward_err *err)
{
	cleanup_free char *path = ward_path_clean(d->path);
	char *slash = strrchr(path, '/');
	const char *name = slash + 1;
	cleanup_fd int parent = -1;
	mode_t mode = (d->has_file_mode ? d->file_mode : 0666) & 07777;
	mode_t old_umask;
	int r;

	if (!*name)
		return ward_fail(err, EINVAL, "%s: not a device path", d->path);
	if (in_userns && d->type != 'p')
		return bind_host_node(rootfd, path, d->type, d->major, d->minor, err);

	*slash = '\0';
	parent = ward_path_mkdir_p(rootfd, *path ? path : "/", WARD_PATH_DIR, err);
	*slash = '/';
	if (parent < 0)
		return -1;
	old_umask = umask(0);
	r = mknodat(parent, name, mode | type_bits(d->type),
		    makedev((unsigned)d->major, (unsigned)d->minor));
	umask(old_umask);
	if (r < 0 && errno == EEXIST)
		return 0; /* as runc: an existing node is kept */
	if (r < 0 && errno == EPERM && d->type != 'p')
		return bind_host_node(rootfd, path, d->type, d->major, d->minor, err);
	if (r < 0)
		return ward_fail_errno(err, "%s: mknod", path);
	if (fchownat(parent, name, d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0,
		     AT_SYMLINK_NOFOLLOW) < 0)
		return ward_fail_errno(err, "%s: chown", path);
	return 0;
}

static int make_links(int rootfd, struct ward_err *err)
{
	cleanup_fd int dev = ward_path_open(rootfd, "/dev", O_PATH | O_DIRECTORY, err);

	if (dev < 0)
		return -1;
	/* /dev/ptmx must be the devpts one. */
	if (unlinkat(dev, "ptmx", 0) < 0 && errno != ENOENT)
		return ward_fail_errno(err, "remove /dev/ptmx");
	for (size_t i = 0; i < ARRAY_SIZE(dev_links); i++)
		if (symlinkat(dev_links[i][1], dev, dev_links[i][0]) < 0 && errno != EEXIST)
			return ward_fail_errno(err, "symlink /dev/%s", dev_links[i][0]);
	return 0;
}

/* A terminal's /dev/console is its pty bound there after pivot_root (ward_dev_console); the
 * file it is bound onto is made now, while /dev is still writable: a read-only /dev mount
 * goes read-only once /dev is populated (runc's [ro /dev mount] with a terminal). */
static int console_mount_point(int rootfd, struct ward_err *err)
{
	cleanup_fd int dev = ward_path_open(rootfd, "/dev", O_PATH | O_DIRECTORY, err);
	int fd;

	if (dev < 0)
		return ward_wrap(err, "/dev/console");
	fd = openat(dev, "console", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno != EEXIST)
		return ward_fail_errno(err, "create /dev/console");
	if (fd >= 0)
		close(fd);
	return 0;
}

int ward_dev_setup(int rootfd, const struct ward_spec *spec, bool in_userns, struct ward_err *err)
{
	const struct ward_mount *devm = spec_mount(spec, "/dev", false);

	/* A bind of a host /dev is used as it is (runc does the same). */
	if (devm && ward_mount_is_bind(devm)) {
		ward_debug("/dev is a bind mount: not populated");
		return 0;
	}
	/* No tmpfs over /dev when the spec mounted things below it: that would hide them. */
	for (size_t i = 0; i < ARRAY_SIZE(default_mounts); i++) {
		const char *d = default_mounts[i].destination;
		if (spec_mount(spec, d, false) || (i == 0 && spec_mount(spec, d, true)))
			continue;
		if (ward_mount_one(rootfd, &default_mounts[i], -1, err) < 0)
			return -1;
	}
	for (unsigned i = 0; i < ward_n_default_devices; i++) {
		const struct ward_default_dev *d = &ward_default_devices[i];
		if (spec_has_device(spec, d->path))
			continue;
		struct ward_device dd = {.type = d->type,
					 .path = (char *)d->path,
					 .major = d->major,
					 .minor = d->minor,
					 .has_file_mode = true,
					 .file_mode = 0666};
		/* mknod where we may (cheaper than a mount), the host's node in a user ns. */
		if (create_device(rootfd, &dd, in_userns, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < spec->linux.n_devices; i++)
		if (create_device(rootfd, &spec->linux.devices[i], in_userns, err) < 0)
			return ward_wrap(err, "linux.devices");
	if (spec->process && spec->process->terminal && console_mount_point(rootfd, err) < 0)
		return -1;
	return make_links(rootfd, err);
}

/* Unix98 pty slaves: majors 136..143. */
#define PTY_SLAVE_MAJOR_FIRST 136
#define PTY_SLAVE_MAJOR_LAST  143

int ward_dev_console(int slave_fd, struct ward_err *err)
{
	struct stat st;
	cleanup_fd int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_fd int dev = -1;
	cleanup_fd int console = -1;

	if (fstat(slave_fd, &st) < 0)
		return ward_fail_errno(err, "/dev/console: stat pty");
	if (!S_ISCHR(st.st_mode) || major(st.st_rdev) < PTY_SLAVE_MAJOR_FIRST ||
	    major(st.st_rdev) > PTY_SLAVE_MAJOR_LAST)
		return ward_fail(err, ENOTTY, "/dev/console: fd is not a pty slave");
	if (root < 0)
		return ward_fail_errno(err, "open /");
	dev = ward_path_open(root, "/dev", O_PATH | O_DIRECTORY, err);
	if (dev < 0)
		return ward_wrap(err, "/dev/console");
	/* The last component is never followed (CVE-2025-52565): a file of ours or an
	 * existing non-symlink, non-directory node. */
	console = openat(dev, "console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (console < 0 && errno == ENOENT) {
		int fd = openat(dev, "console",
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return ward_fail_errno(err, "create /dev/console");
		if (fd >= 0)
			close(fd);
		console = openat(dev, "console", O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	if (console < 0)
		return ward_fail_errno(err, "open /dev/console");
	if (fstat(console, &st) < 0)
		return ward_fail_errno(err, "stat /dev/console");
	if (S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode))
		return ward_fail(err, EPERM, "/dev/console is a %s",
				 S_ISLNK(st.st_mode) ? "symlink" : "directory");
	if (ward_mount_bind_at(slave_fd, "", console, err) < 0)
		return ward_wrap(err, "bind pty onto /dev/console");
	return 0;
}
