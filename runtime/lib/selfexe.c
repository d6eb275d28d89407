#include "selfexe.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
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

/* Writable by nobody but its owner (no group or other write), and without an access ACL
 * (which could name a mapped ID). */
static bool no_wide_access(int fd, const struct stat *st)
{
	return !(st->st_mode & (S_IWGRP | S_IWOTH)) &&
	       fgetxattr(fd, "system.posix_acl_access", NULL, 0) < 0 &&
	       (errno == ENODATA || errno == EOPNOTSUPP);
}

/* ---- what this boot has seen: <lib_dir>/selfexe/ ----
 *
 *   since            the boot id under which this ward first decided, or "-" when lib_dir
 *                    held nothing then (no older ward had used it)
 *   exposed-<boot>   a create/run of this boot ran under a configuration with a trusted
 *                    tenant (or with the binary writable to a mappable ID)
 *
 * A container made then may still run, as host root, and could be handed an fd of an
 * unprotected binary by a later container: while that may be so (the rest of the boot),
 * create, run and exec re-exec as before. Likewise for the boot in which this ward replaced
 * an older one, whose containers recorded nothing. */
#define SELFEXE_DIR "selfexe"

/* Whether lib_dir holds anything but our own record (an older ward used it). */
static bool lib_dir_used(int libfd)
{
	cleanup_fd int fd = openat(libfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	bool used = fd < 0;

	if (d)
		fd = -1; /* the DIR owns it */
	while (d && !used && (e = readdir(d)))
		used = strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		       strcmp(e->d_name, SELFEXE_DIR);
	if (d)
		closedir(d);
	return used;
}

/* lib_dir, created (0700) if missing; -1 on failure. */
static int open_lib_dir(const struct ward_config *cfg)
{
	struct ward_err ignored = {0};

	if (!cfg->lib_dir || ward_mkdir_p(cfg->lib_dir, 0700, &ignored) < 0)
		return -1;
	return open(cfg->lib_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The record's directory in lib_dir, created (0700) if missing; -1 on failure. */
static int record_dir(int libfd)
{
	if (libfd < 0 || (mkdirat(libfd, SELFEXE_DIR, 0700) < 0 && errno != EEXIST))
		return -1;
	return openat(libfd, SELFEXE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* This boot has made no container that could write the binary, as far as ward knows. */
static bool boot_guarded(const struct ward_config *cfg, const char *boot)
{
	cleanup_fd int libfd = open_lib_dir(cfg);
	cleanup_fd int dfd = record_dir(libfd);
	char exposed[96], since[64];
	ssize_t n;
	int fd;

	if (dfd < 0)
		return false;
	snprintf(exposed, sizeof(exposed), "exposed-%s", boot);
	if (faccessat(dfd, exposed, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return false;
	fd = openat(dfd, "since", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* First decision with this lib_dir: an older ward's containers may run now
		 * (only then is lib_dir read: what else it holds). */
		bool lib_fresh = !lib_dir_used(libfd);
		const char *v = lib_fresh ? "-" : boot;
		fd = openat(dfd, "since", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0) {
			bool ok = write(fd, v, strlen(v)) == (ssize_t)strlen(v);
			close(fd);
			return ok && lib_fresh;
		}
		fd = openat(dfd, "since", O_RDONLY | O_NOFOLLOW | O_CLOEXEC); /* a racing ward's */
	}
	if (fd < 0)
		return false;
	n = read(fd, since, sizeof(since) - 1);
	close(fd);
	if (n <= 0)
		return false;
	since[n] = '\0';
	return strcmp(since, boot) != 0;
}

int ward_selfexe_mark_exposed(const struct ward_config *cfg, struct ward_err *err)
{
	cleanup_fd int libfd = open_lib_dir(cfg);
	cleanup_fd int dfd = record_dir(libfd);
	char boot[37], exposed[96];
	int fd;

	if (!ward_boot_id(boot))
		return ward_fail(err, 0, "CVE-2019-5736 record: cannot read this boot's id");
	if (dfd < 0)
		return ward_fail_errno(err, "CVE-2019-5736 record: %s/%s", cfg->lib_dir,
				       SELFEXE_DIR);
	snprintf(exposed, sizeof(exposed), "exposed-%s", boot);
	fd = openat(dfd, exposed, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return ward_fail_errno(err, "CVE-2019-5736 record: %s/%s/%s", cfg->lib_dir,
				       SELFEXE_DIR, exposed);
	close(fd);
	return 0;
}

bool ward_selfexe_userns_guards(const struct ward_config *cfg)
{
	cleanup_fd int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;
	char boot[37];

	for (size_t i = 0; i < cfg->n_tenants; i++)
		if (cfg->tenants[i].trusted)
			return false;
	return self >= 0 && fstat(self, &st) == 0 && st.st_uid < cfg->pool_base &&
	       st.st_gid < cfg->pool_base && no_wide_access(self, &st) && ward_boot_id(boot) &&
	       boot_guarded(cfg, boot);
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
