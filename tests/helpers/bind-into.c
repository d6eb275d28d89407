/* bind-into PID HOST_PATH CONTAINER_PATH: an attacker's move for tests/gpu.bats. Bind
 * HOST_PATH (a device node of another tenant's GPU) onto CONTAINER_PATH inside the running
 * container PID (an empty file is made there as the container's root), bypassing ward, so
 * the test can check that the container's device program still refuses to open it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

static unsigned root_of(const char *pid, const char *map)
{
	char path[64];
	unsigned inside, host, n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/%s", pid, map);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fscanf(f, "%u %u %u", &inside, &host, &n) == 3)
		if (inside == 0) {
			fclose(f);
			return host;
		}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	char ns[64];
	int tree, nsfd, fd;
	unsigned uid, gid;

	if (argc != 4) {
		fprintf(stderr, "usage: bind-into PID HOST_PATH CONTAINER_PATH\n");
		return 2;
	}
	uid = root_of(argv[1], "uid_map");
	gid = root_of(argv[1], "gid_map");
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, argv[2], OPEN_TREE_CLONE | O_CLOEXEC);
	snprintf(ns, sizeof(ns), "/proc/%s/ns/mnt", argv[1]);
	nsfd = open(ns, O_RDONLY | O_CLOEXEC);
	if (tree < 0 || nsfd < 0 || setns(nsfd, CLONE_NEWNS) < 0 || chdir("/") < 0) {
		perror("bind-into: open_tree/setns");
		return 1;
	}
	setfsgid(gid);
	setfsuid(uid);
	fd = open(argv[3], O_CREAT | O_WRONLY | O_CLOEXEC, 0666);
	if (fd < 0) {
		perror(argv[3]);
		return 1;
	}
	close(fd);
	if (syscall(SYS_move_mount, tree, "", AT_FDCWD, argv[3], MOVE_MOUNT_F_EMPTY_PATH) < 0) {
		perror("bind-into: move_mount");
		return 1;
	}
	return 0;
}
