/* path.c: lookups and creation stay inside the root, whatever symlinks the rootfs holds. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "path.h"
#include "tap.h"
#include "util.h"

static char tmp[64];   /* /tmp/ward-path-XXXXXX */
static char root[128]; /* tmp/root */
static char tag[80];   /* unique name part for probes outside the root */

static void xsymlink(const char *target, const char *name)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", root, name);
	if (symlink(target, p) < 0)
		perror(p);
}

static void xmkdir(const char *name)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/%s", root, name);
	if (mkdir(p, 0755) < 0)
		perror(p);
}

static void xtouch(const char *name)
{
	char p[512];
	int fd;
	snprintf(p, sizeof(p), "%s/%s", root, name);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		perror(p);
	else
		close(fd);
}

/* The fd is the inode at root/rel (lstat, no following). */
static bool fd_is(int fd, const char *rel)
{
	char p[512];
	struct stat a, b;
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return fd >= 0 && fstat(fd, &a) == 0 && lstat(p, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static bool exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

static bool host_untouched(void)
{
	char p[256];
	bool ok = !exists("/etc/ward-test-should-not-exist") &&
		  !exists("/etc/ward-test-should-not-exist2");
	snprintf(p, sizeof(p), "/tmp/%s", tag);
	ok = ok && !exists(p);
	snprintf(p, sizeof(p), "/%s", tag);
	ok = ok && !exists(p);
	snprintf(p, sizeof(p), "%s/%s", tmp, tag);
	ok = ok && !exists(p);
	snprintf(p, sizeof(p), "%s/x", tmp);
	return ok && !exists(p);
}

static int rm_entry(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	return remove(p);
}

static void test_clean(void)
{
	static const char *const cases[][2] = {
	    {"", "/"},
	    {"/", "/"},
	    {".", "/"},
	    {"a", "/a"},
	    {"//a//b/", "/a/b"},
	    {"/a/./b/../c", "/a/c"},
	    {"/../..", "/"},
	    {"a/../../b", "/b"},
	    {"/a/b/..", "/a"},
	    {"/a/.../b", "/a/.../b"},
	    {"..a/b.", "/..a/b."},
	    {"/proc/../../etc/passwd", "/etc/passwd"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_free char *c = ward_path_clean(cases[i][0]);
		char name[128];
		snprintf(name, sizeof(name), "clean \"%s\" -> \"%s\"", cases[i][0], cases[i][1]);
		CHECK(strcmp(c, cases[i][1]) == 0, name);
	}
}

static void test_open(int rootfd)
{
	struct ward_err err = {0};
	char buf[32];
	int fd;

	fd = ward_path_open(rootfd, "inside", O_PATH | O_DIRECTORY, &err);
	CHECK(fd_is(fd, "inside"), "open plain directory");
	CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "opened fd is close-on-exec");
	close(fd);

	fd = ward_path_open(rootfd, "escape", O_PATH | O_DIRECTORY, &err);
	CHECK(fd_is(fd, "."), "symlink ../../../../ resolves to the root");
	close(fd);

	fd = ward_path_open(rootfd, "escape/inside", O_PATH | O_DIRECTORY, &err);
	CHECK(fd_is(fd, "inside"), "escape/inside stays inside");
	close(fd);

	fd = ward_path_open(rootfd, "../../../../..", O_PATH | O_DIRECTORY, &err);
	CHECK(fd_is(fd, "."), "\"..\" above the root is the root");
	close(fd);

	fd = ward_path_open(rootfd, "/../inside/../../inside", O_PATH | O_DIRECTORY, &err);
	CHECK(fd_is(fd, "inside"), "\"..\" mixed into an absolute path");
	close(fd);

	fd = ward_path_open(rootfd, "abs1", O_PATH | O_DIRECTORY, &err);
	CHECK(fd_is(fd, "real"), "absolute symlink chain abs1 -> /abs2 -> /real");
	close(fd);

	fd = ward_path_open(rootfd, "/abs1/../inside", O_PATH | O_DIRECTORY, &err);
	CHECK(fd_is(fd, "inside"), "\"..\" after a symlink");
	close(fd);

	fd = ward_path_open(rootfd, "up/tmp", O_PATH, &err);
	CHECK(fd < 0 && err.errnum == ENOENT, "sub/../../../tmp does not reach the host /tmp");

	fd = ward_path_open(rootfd, "hostetc/passwd", O_RDONLY, &err);
	CHECK(fd < 0 && err.errnum == ENOENT, "hostetc -> /etc does not reach the host /etc");
	CHECK_STR_CONTAINS(err.msg, "hostetc/passwd", "error names the path");

	fd = ward_path_open(rootfd, "dangling", O_RDONLY, &err);
	CHECK(fd < 0 && err.errnum == ENOENT, "dangling symlink: ENOENT");

	fd = ward_path_open(rootfd, "loop", O_PATH, &err);
	CHECK(fd < 0 && err.errnum == ELOOP, "symlink loop: ELOOP");

	fd = ward_path_open(rootfd, "dangling", O_PATH | O_NOFOLLOW, &err);
	CHECK(fd_is(fd, "dangling"), "O_NOFOLLOW opens the symlink itself");
	close(fd);

	/* Magic links (/proc/self/root, /proc/self/fd/N) are refused even inside a root. */
	{
		cleanup_fd int hostroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		fd = ward_path_open(hostroot, "/proc/self/root/etc", O_PATH, &err);
		CHECK(fd < 0 && err.errnum == ELOOP, "magic link /proc/self/root refused");
		if (fd >= 0)
			close(fd);
		fd = ward_path_open(hostroot, "/proc/self/fd/0", O_PATH, &err);
		CHECK(fd < 0 && err.errnum == ELOOP, "magic link /proc/self/fd/0 refused");
		if (fd >= 0)
			close(fd);
	}

	CHECK(strcmp(ward_fd_path(7, buf), "/proc/self/fd/7") == 0, "ward_fd_path");
}

static void test_mkdir_p(int rootfd)
{
	struct ward_err err = {0};
	struct stat st;
	char p[512];
	int fd;

	fd = ward_path_mkdir_p(rootfd, "a/b/c", WARD_PATH_DIR, &err);
	CHECK(fd_is(fd, "a/b/c"), "creates a/b/c");
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_PATH), "returns an O_PATH fd");
	CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "returns a close-on-exec fd");
	snprintf(p, sizeof(p), "%s/a/b", root);
	{
		mode_t mask = umask(022);
		umask(mask);
		CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
			  (st.st_mode & 0777) == (0755 & ~mask),
		      "intermediate directory mode 0755 (less umask)");
	}
	close(fd);

	fd = ward_path_mkdir_p(rootfd, "/f1/f2/file", WARD_PATH_FILE, &err);
	snprintf(p, sizeof(p), "%s/f1/f2/file", root);
	CHECK(fd_is(fd, "f1/f2/file") && stat(p, &st) == 0 && S_ISREG(st.st_mode) &&
		  st.st_size == 0,
	      "creates an empty regular file and its parents");
	close(fd);

	fd = ward_path_mkdir_p(rootfd, "./a//b/./c/", WARD_PATH_DIR, &err);
	CHECK(fd_is(fd, "a/b/c"), "existing directory with . and // is accepted");
	close(fd);

	fd = ward_path_mkdir_p(rootfd, "/", WARD_PATH_DIR, &err);
	CHECK(fd_is(fd, "."), "\"/\" is the root");
	close(fd);

	fd = ward_path_mkdir_p(rootfd, "file", WARD_PATH_FILE, &err);
	CHECK(fd_is(fd, "file"), "existing file accepted as FILE");
	close(fd);

	fd = ward_path_mkdir_p(rootfd, "file", WARD_PATH_DIR, &err);
	CHECK(fd < 0 && err.errnum == ENOTDIR, "existing file refused as DIR");

	fd = ward_path_mkdir_p(rootfd, "file/sub", WARD_PATH_DIR, &err);
	CHECK(fd < 0 && err.errnum == ENOTDIR, "file as intermediate component: ENOTDIR");

	fd = ward_path_mkdir_p(rootfd, "escape/../../x/y", WARD_PATH_DIR, &err);
	CHECK(fd_is(fd, "x/y"), "escape/../../x/y is created inside the root");
	close(fd);

	/* hostetc -> /etc: in the root /etc does not exist, so it is created there. */
	fd = ward_path_mkdir_p(rootfd, "hostetc/ward-test-should-not-exist", WARD_PATH_DIR, &err);
	CHECK(fd_is(fd, "etc/ward-test-should-not-exist"),
	      "dangling hostetc -> /etc: created as root/etc/...");
	close(fd);

	/* A dangling symlink as the last component: its target is created, in the root. */
	fd = ward_path_mkdir_p(rootfd, "dangling", WARD_PATH_FILE, &err);
	CHECK(fd_is(fd, "etc/ward-test-should-not-exist2"),
	      "dangling last component (FILE) created inside the root");
	close(fd);

	snprintf(p, sizeof(p), "%s/sub", tag);
	fd = ward_path_mkdir_p(rootfd, "relup/sub", WARD_PATH_DIR, &err);
	CHECK(fd_is(fd, p), "dangling relative ../../../X symlink: X created inside the root");
	close(fd);

	fd = ward_path_mkdir_p(rootfd, "up/tmp/z", WARD_PATH_DIR, &err);
	CHECK(fd_is(fd, "tmp/z"), "sub/up -> ../../../../tmp: created as root/tmp/z");
	close(fd);

	fd = ward_path_mkdir_p(rootfd, "abs1/new", WARD_PATH_DIR, &err);
	CHECK(fd_is(fd, "real/new"), "absolute symlink chain followed inside the root");
	close(fd);

	fd = ward_path_mkdir_p(rootfd, "loop/x", WARD_PATH_DIR, &err);
	CHECK(fd < 0 && err.errnum == ELOOP, "symlink loop: ELOOP, nothing created");

	fd = ward_path_mkdir_p(rootfd, "selfloop/x", WARD_PATH_DIR, &err);
	CHECK(fd < 0, "dangling symlink chain that loops through creation fails");

	{
		cleanup_fd int hostroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		fd = ward_path_mkdir_p(hostroot, "/proc/self/root/tmp/ward-test-should-not-exist",
				       WARD_PATH_DIR, &err);
		CHECK(fd < 0 && err.errnum == ELOOP, "mkdir_p refuses magic links");
		CHECK(!exists("/tmp/ward-test-should-not-exist"), "nothing created via magic link");
	}

	fd = ward_path_mkdir_p(rootfd, "", WARD_PATH_FILE, &err);
	CHECK(fd < 0, "empty path as FILE is refused");

	CHECK(host_untouched(), "nothing was created outside the root");
}

/* openat2(2) is there (kernel >= 5.6; valgrind 3.19 does not know it and says ENOSYS). */
static bool have_openat2(void)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));
	if (fd < 0)
		return errno != ENOSYS;
	close(fd);
	return true;
}

int main(void)
{
	cleanup_fd int rootfd = -1;
	char p[256];

	snprintf(tmp, sizeof(tmp), "/tmp/ward-path-XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(tag, sizeof(tag), "ward-out-%s", tmp + strlen("/tmp/ward-path-"));
	mkdir(root, 0755);

	xmkdir("inside");
	xmkdir("real");
	xmkdir("sub");
	xtouch("file");
	xsymlink("/etc", "hostetc");
	xsymlink("../../../../", "escape");
	xsymlink("/abs2", "abs1");
	xsymlink("/real", "abs2");
	xsymlink("/etc/ward-test-should-not-exist2", "dangling");
	xsymlink("loop", "loop");
	xsymlink("sub/up", "up");
	xsymlink("../../../../..", "sub/up");
	snprintf(p, sizeof(p), "../../../%s", tag);
	xsymlink(p, "relup");
	xsymlink("/selfloop2/x", "selfloop");
	xsymlink("/selfloop", "selfloop2");

	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		perror(root);
		return 1;
	}

	test_clean();
	if (have_openat2()) {
		test_open(rootfd);
		test_mkdir_p(rootfd);
	} else {
		printf("ok %d # skip openat2 unavailable (old kernel, or valgrind < 3.20)\n",
		       ++tap_n);
	}

	nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	CHECK(!exists(tmp), "temporary tree removed");
	TAP_DONE();
}
