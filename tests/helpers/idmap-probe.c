/* idmap-probe DIR
 *
 * Test helper for the VM harness (tests/vm): can the kernel idmap a mount of DIR? Clones the
 * mount at DIR (open_tree OPEN_TREE_CLONE), idmaps it through a new user namespace that maps
 * IDs 0..65535 to 100000..165535 (mount_setattr MOUNT_ATTR_IDMAP), and prints the owner of
 * DIR's root as seen through the idmapped clone ("UID GID"); a root-owned DIR prints
 * "100000 100000". Exits 1 with "idmap-probe: mount_setattr: ..." when the filesystem cannot
 * be idmapped (tmpfs and overlayfs on Linux 6.1), 2 on any other failure. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int fail(const char *what, int errnum, int rc)
{
	fprintf(stderr, "idmap-probe: %s: %s\n", what, strerror(errnum));
	return rc;
}

static int write_map(pid_t pid, const char *file)
{
	char path[64];
	static const char map[] = "0 100000 65536\n";
	int fd, ok;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, map, sizeof(map) - 1) == (ssize_t)(sizeof(map) - 1);
	close(fd);
	return ok ? 0 : -1;
}

/* A user namespace with the 100000 mapping: a child unshares, we write its maps and keep
 * an fd to its namespace; the child is then killed. Returns the fd, or -1 (errno set). */
static int make_userns(void)
{
	int ready[2], hold[2], fd = -1, saved;
	char c = 0, path[64];
	pid_t pid;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(hold, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		/* until the parent closes hold[1] */
		close(hold[1]);
		(void)!read(hold[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	if (read(ready[0], &c, 1) == 1 && write_map(pid, "uid_map") == 0 &&
	    write_map(pid, "gid_map") == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	} else if (errno == 0) {
		errno = ECHILD;
	}
	saved = errno;
	close(hold[1]);
	close(ready[0]);
	waitpid(pid, NULL, 0);
	errno = saved;
	return fd;
}

int main(int argc, char **argv)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP};
	struct stat st;
	int tree, userns;

	if (argc != 2) {
		fprintf(stderr, "usage: idmap-probe DIR\n");
		return 2;
	}
	tree = open_tree(AT_FDCWD, argv[1], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		return fail("open_tree", errno, 2);
	userns = make_userns();
	if (userns < 0)
		return fail("user namespace", errno, 2);
	attr.userns_fd = (unsigned long long)userns;
	if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return fail("mount_setattr", errno, 1);
	if (fstat(tree, &st) < 0)
		return fail("fstat", errno, 2);
	printf("%u %u\n", (unsigned)st.st_uid, (unsigned)st.st_gid);
	return 0;
}
