#include "selfexe.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
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

/* Not writable by others and without an access ACL (which could name a mapped ID). */
static bool no_wide_access(int fd, const struct stat *st)
{
	return !(st->st_mode & S_IWOTH) && fgetxattr(fd, "system.posix_acl_access", NULL, 0) < 0 &&
	       (errno == ENODATA || errno == EOPNOTSUPP);
}

bool ward_selfexe_userns_guards(const struct ward_config *cfg)
{
	cleanup_fd int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;

	for (size_t i = 0; i < cfg->n_tenants; i++)
		if (cfg->tenants[i].trusted)
			return false;
	return self >= 0 && fstat(self, &st) == 0 && st.st_uid < cfg->pool_base &&
	       st.st_gid < cfg->pool_base && no_wide_access(self, &st);
}

static char **saved_argv, **saved_envp;

void ward_selfexe_remember(char **argv, char **envp)
{
	saved_argv = argv;
	saved_envp = envp;
}

/* id is a host ID of /proc/<pid>/<file>'s map: 1, 0 (not), -1 (unreadable). */
static int id_mapped(pid_t pid, const char *file, uint32_t id)
{
	char path[64];
	FILE *f;
	uint32_t inside, host, len;
	int mapped = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fscanf(f, "%" SCNu32 " %" SCNu32 " %" SCNu32, &inside, &host, &len) == 3)
		if ((uint64_t)id >= host && (uint64_t)id < (uint64_t)host + len)
			mapped = 1;
	fclose(f);
	return mapped;
}

int ward_selfexe_guard_pid(pid_t pid, struct ward_err *err)
{
	cleanup_fd int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (self < 0 || fstat(self, &st) < 0)
		return ward_fail_errno(err, "stat /proc/self/exe");
	if (is_sealed(self) || on_readonly_mount(self))
		return 0;
	if (no_wide_access(self, &st) && id_mapped(pid, "uid_map", st.st_uid) == 0 &&
	    id_mapped(pid, "gid_map", st.st_gid) == 0)
		return 0;
	if (!saved_argv)
		return ward_fail(err, 0, "CVE-2019-5736: no argv to re-exec with");
	return ward_selfexe_ensure_sealed(saved_argv, saved_envp, err);
}
