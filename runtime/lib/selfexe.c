#include "selfexe.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"
#include "util.h"

#define WARD_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static bool is_sealed(int fd)
{
	int seals = fcntl(fd, F_GET_SEALS);
	return seals >= 0 && (seals & WARD_SEALS) == WARD_SEALS;
}

/* The binary is on a read-only mount: opening /proc/<pid>/exe for writing fails (EROFS),
 * and only CAP_SYS_ADMIN over the mount could make it writable again. */
static bool on_readonly_mount(int fd)
{
	struct statvfs v;
	return fstatvfs(fd, &v) == 0 && (v.f_flag & ST_RDONLY);
}

/* Re-exec from a detached, read-only clone of the binary's own mount (open_tree +
 * mount_setattr): no copy of the binary (a memfd copy is 2 MB of memory and about 0.8 ms
 * per command). Returns only on failure (-1: the caller falls back to the memfd). */
static int exec_readonly_clone(char **argv, char **envp)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
	cleanup_fd int tree =
	    sys_open_tree(AT_FDCWD, "/proc/self/exe", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (tree < 0 || sys_mount_setattr_fd(tree, 0, &attr) < 0 || !on_readonly_mount(tree))
		return -1;
	sys_execveat(tree, "", argv, envp, AT_EMPTY_PATH);
	return -1;
}

int ward_selfexe_ensure_sealed(char **argv, char **envp, struct ward_err *err)
{
	cleanup_fd int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	cleanup_fd int mfd = -1;
	struct stat st;
	off_t off = 0;

	if (self < 0)
		return ward_fail_errno(err, "open /proc/self/exe");
	if (is_sealed(self) || on_readonly_mount(self))
		return 0;
	exec_readonly_clone(argv, envp);
	if (fstat(self, &st) < 0)
		return ward_fail_errno(err, "stat /proc/self/exe");
	mfd = memfd_create("ward", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return ward_fail_errno(err, "memfd_create");
	while (off < st.st_size) {
		ssize_t n = sendfile(mfd, self, &off, (size_t)(st.st_size - off));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ward_fail_errno(err, "copy ward binary into memfd");
	}
	if (fcntl(mfd, F_ADD_SEALS, WARD_SEALS) < 0)
		return ward_fail_errno(err, "seal memfd");
	sys_execveat(mfd, "", argv, envp, AT_EMPTY_PATH);
	return ward_fail_errno(err, "re-exec sealed ward binary");
}
