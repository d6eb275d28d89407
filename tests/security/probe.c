/* ward-probe: the container escape battery (tests/security/escape.bats).
 *
 *   ward-probe [OPTIONS] NAME|GROUP|all...   run techniques, one TAP line each:
 *       ok N - NAME: blocked (EPERM: what was refused)
 *       not ok N - NAME: SUCCEEDED: what worked
 *       ok N - NAME # SKIP why                    (a parameter below is missing)
 *       not ok N - NAME: PROBE ERROR: ...         (the probe itself misbehaved)
 *     exit status 0 when every attack failed, 1 otherwise.
 *   ward-probe --list                          "NAME GROUP" per technique
 *   ward-probe --host-ns                       this process's namespaces as "TYPE:INODE ..."
 *                                              (for WARD_PROBE_HOST_NS, run on the host)
 *   ward-probe --make-shm KEY                  create a SysV shm segment (host side), print its id
 *   ward-probe --sleep                         sleep forever, non-dumpable (a container's pid 1
 *                                              while the probe runs through `ward exec`)
 *
 * Options (host self-test only): --chroot DIR (chroot + chdir /), --chroot-keep-cwd DIR
 * (chroot, cwd left outside), both before the technique names.
 *
 * Every technique attempts the real thing (a mount, a syscall, a write) and reports SUCCEEDED
 * only when it worked. Each runs in its own child process, so one technique's side effects
 * (a new namespace, a chroot) never leak into the next. Where a success could change the host
 * the probe writes back the value it read (core_pattern, sysfs knobs, cgroup limits), mounts
 * inside a private mount namespace when it can, or passes arguments the kernel rejects only
 * after its permission check (kexec_load, finit_module, swapon: EINVAL/EBADF/ENOENT there
 * means "permitted" and is reported as SUCCEEDED).
 *
 * Parameters from the environment (set by the bats suite; the host-side values):
 *   WARD_PROBE_SENTINEL, WARD_PROBE_SENTINEL_TEXT   a host file and its content
 *   WARD_PROBE_SHM_KEY                              key of a host SysV shm segment
 *   WARD_PROBE_MARKER                               argv[0] of a host process
 *   WARD_PROBE_HOST_NS                              output of --host-ns on the host
 *
 * Static, no libward: it runs inside minimal container root filesystems. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/io.h>
#include <sys/ipc.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/if_ether.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

enum verdict { BLOCKED, SUCCEEDED, SKIPPED, BROKEN };

struct result {
	int verdict;
	char msg[900];
};

static void verdict(struct result *r, int v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void verdict(struct result *r, int v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	r->verdict = v;
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

#define BLOCK(r, ...)  verdict(r, BLOCKED, __VA_ARGS__)
#define WIN(r, ...)    verdict(r, SUCCEEDED, __VA_ARGS__)
#define SKIP(r, ...)   verdict(r, SKIPPED, __VA_ARGS__)
#define BROKEN(r, ...) verdict(r, BROKEN, __VA_ARGS__)

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);
	return n ? n : "E?";
}

/* "blocked (EPERM: WHAT)" */
static void refused(struct result *r, int e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void refused(struct result *r, int e, const char *fmt, ...)
{
	char what[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	BLOCK(r, "%s: %s", ename(e), what);
}

/* Append to a fixed buffer. */
static void cat(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;
	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------------------------------ */
/* Helpers */

static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;
	if (fd < 0)
		return -1;
	while ((size_t)total + 1 < size && (n = read(fd, buf + total, size - 1 - total)) > 0)
		total += n;
	int e = errno;
	close(fd);
	buf[total] = '\0';
	if (n < 0 && total == 0) {
		errno = e;
		return -1;
	}
	return total;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, s, strlen(s));
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	return 0;
}

static bool is_devnull_fd(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

/* A fresh empty directory to mount on or create nodes in. */
static int scratch_dir(char *out, size_t size)
{
	static const char *const bases[] = {"/tmp", "/var/tmp", "/dev/shm", "/run", "/root", "/"};
	for (size_t i = 0; i < sizeof bases / sizeof *bases; i++) {
		snprintf(out, size, "%s/ward-probe.XXXXXX", strcmp(bases[i], "/") ? bases[i] : "");
		if (mkdtemp(out))
			return 0;
	}
	return -1;
}

/* Mount attempts happen in a private copy of the mount namespace when the process may make
 * one (the host self-test, a privileged pod): the permission checks are the same, and nothing
 * is left behind. Failing to make one is fine: the attempt then runs where the probe is. */
static void private_mounts(void)
{
	if (unshare(CLONE_NEWNS) == 0)
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

/* A new user namespace in which this process is root (its own uid/gid mapped to 0). */
static int enter_userns(void)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER) < 0)
		return -1;
	write_str("/proc/self/setgroups", "deny");
	snprintf(map, sizeof map, "0 %u 1\n", uid);
	if (write_str("/proc/self/uid_map", map) < 0)
		return -1;
	snprintf(map, sizeof map, "0 %u 1\n", gid);
	if (write_str("/proc/self/gid_map", map) < 0)
		return -1;
	return 0;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Calls fn(pid, arg) for every numeric entry of /proc; stops when fn returns nonzero. */
static int for_each_pid(int (*fn)(pid_t, void *), void *arg)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int ret = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (!all_digits(de->d_name))
			continue;
		ret = fn((pid_t)atoi(de->d_name), arg);
		if (ret)
			break;
	}
	closedir(d);
	return ret;
}

struct marker_search {
	const char *marker;
	pid_t found;
	int seen;
};

static int match_marker(pid_t pid, void *arg)
{
	struct marker_search *m = arg;
	char path[64], buf[4096];
	m->seen++;
	snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
	ssize_t n = read_small(path, buf, sizeof buf);
	if (n <= 0)
		return 0;
	/* argv[0] first; the marker anywhere in the NUL-separated command line */
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		if (strstr(buf + i, m->marker)) {
			m->found = pid;
			return 1;
		}
	return 0;
}

/* The pid of the host marker process if it is visible here, else 0. */
static pid_t find_marker(const char *marker, int *seen)
{
	struct marker_search m = {.marker = marker};
	for_each_pid(match_marker, &m);
	if (seen)
		*seen = m.seen;
	return m.found;
}

static bool sentinel_readable(const char *path, const char *text)
{
	char buf[512];
	ssize_t n = read_small(path, buf, sizeof buf);
	return n > 0 && strncmp(buf, text, strlen(text)) == 0;
}

/* Open PATH for writing and write DATA to it; DATA NULL: write back what PATH holds now, so
 * a success changes nothing. Returns 1 when the write went through (detail in *out). */
static int attempt_write(const char *path, const char *data, char *out, size_t size)
{
	char cur[4096];
	bool have_cur = false;
	if (!data) {
		ssize_t n = read_small(path, cur, sizeof cur);
		if (n > 0) {
			/* sysfs choice files ("always [madvise] never"): the bracketed word */
			char *lb = strchr(cur, '['), *rb = lb ? strchr(lb, ']') : NULL;
			if (lb && rb) {
				*rb = '\0';
				memmove(cur, lb + 1, strlen(lb + 1) + 1);
			}
			have_cur = true;
			data = cur;
		}
	}
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(out, size, "%s: open %s for writing", ename(errno), path);
		return 0;
	}
	if (is_devnull_fd(fd)) {
		close(fd);
		snprintf(out, size, "masked: %s is /dev/null", path);
		return 0;
	}
	if (!data) {
		/* not readable, but writable: say so without writing an unknown value */
		close(fd);
		snprintf(out, size, "opened %s for writing (not written: its value is unreadable)",
			 path);
		return 1;
	}
	ssize_t w = write(fd, data, strlen(data));
	int e = errno;
	close(fd);
	if (w < 0) {
		snprintf(out, size, "%s: write %s", ename(e), path);
		return 0;
	}
	snprintf(out, size, "wrote %zd bytes to %s%s", w, path, have_cur ? " (its own value)" : "");
	return 1;
}

static void write_technique(struct result *r, const char *const *paths, const char *data)
{
	char all[800] = "", one[300];
	for (; *paths; paths++) {
		if (attempt_write(*paths, data, one, sizeof one)) {
			WIN(r, "%s", one);
			return;
		}
		cat(all, sizeof all, "%s%s", *all ? "; " : "", one);
	}
	BLOCK(r, "%s", all);
}

/* ------------------------------------------------------------------------------------------ */
/* State recorded when the probe starts, before it opens anything */

struct start_fd {
	int fd;
	bool isdir;
	char target[PATH_MAX];
};
static struct start_fd start_fds[64];
static int n_start_fds = -1;

static void record_start_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	if (!d)
		return;
	n_start_fds = 0;
	while ((de = readdir(d)) && n_start_fds < 64) {
		if (!all_digits(de->d_name))
			continue;
		int fd = atoi(de->d_name);
		if (fd == dirfd(d))
			continue;
		struct start_fd *s = &start_fds[n_start_fds++];
		struct stat st;
		char link[64];
		s->fd = fd;
		s->isdir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, s->target, sizeof s->target - 1);
		s->target[n > 0 ? n : 0] = '\0';
	}
	closedir(d);
}

/* ------------------------------------------------------------------------------------------ */
/* Nested user namespaces */

static void t_userns_unshare(struct result *r)
{
	if (unshare(CLONE_NEWUSER) < 0) {
		refused(r, errno, "unshare(CLONE_NEWUSER)");
		return;
	}
	WIN(r, "unshare(CLONE_NEWUSER) made a nested user namespace");
}

static void reap(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

static void t_userns_clone(struct result *r)
{
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, NULL, NULL, 0);
	if (pid < 0) {
		refused(r, errno, "clone(CLONE_NEWUSER)");
		return;
	}
	if (pid == 0)
		_exit(0);
	reap((pid_t)pid);
	WIN(r, "clone(CLONE_NEWUSER) made a child in a nested user namespace");
}

struct probe_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static void t_userns_clone3(struct result *r)
{
	struct probe_clone_args a = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
	long pid = syscall(SYS_clone3, &a, sizeof a);
	if (pid < 0) {
		refused(r, errno, "clone3(CLONE_NEWUSER)");
		return;
	}
	if (pid == 0)
		_exit(0);
	reap((pid_t)pid);
	WIN(r, "clone3(CLONE_NEWUSER) made a child in a nested user namespace");
}

/* ------------------------------------------------------------------------------------------ */
/* The mount family */

static void try_mount(struct result *r, const char *src, const char *type, unsigned long flags,
		      const char *data)
{
	char d[PATH_MAX];
	if (scratch_dir(d, sizeof d) < 0) {
		BROKEN(r, "no writable directory to mount on: %s", ename(errno));
		return;
	}
	private_mounts();
	if (mount(src, d, type, flags, data) < 0) {
		int e = errno;
		rmdir(d);
		refused(r, e, "mount -t %s %s", type, d);
		return;
	}
	umount2(d, MNT_DETACH);
	rmdir(d);
	WIN(r, "mounted a new %s on %s", type, d);
}

static void t_mount_proc(struct result *r)
{
	try_mount(r, "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}
static void t_mount_tmpfs(struct result *r)
{
	try_mount(r, "tmpfs", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m");
}
static void t_mount_sysfs(struct result *r)
{
	try_mount(r, "sysfs", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}
static void t_mount_debugfs(struct result *r)
{
	try_mount(r, "debugfs", "debugfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}
static void t_mount_securityfs(struct result *r)
{
	try_mount(r, "securityfs", "securityfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}
static void t_mount_bpf(struct result *r)
{
	try_mount(r, "bpf", "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

static int fsopen_cgroup(char *out, size_t size)
{
	int fd = fsopen("cgroup", FSOPEN_CLOEXEC);
	if (fd < 0) {
		snprintf(out, size, "%s: fsopen(\"cgroup\")", ename(errno));
		return 0;
	}
	if (fsconfig(fd, FSCONFIG_SET_STRING, "source", "ward-probe", 0) < 0) {
		snprintf(out, size, "%s: fsconfig(SET_STRING source) after fsopen worked",
			 ename(errno));
		close(fd);
		return 0;
	}
	close(fd);
	snprintf(out, size, "fsopen(\"cgroup\") + fsconfig(FSCONFIG_SET_STRING) accepted");
	return 1;
}

static void t_fsopen_cgroup(struct result *r)
{
	char d[300];
	if (fsopen_cgroup(d, sizeof d))
		WIN(r, "%s", d);
	else
		BLOCK(r, "%s", d);
}

/* CVE-2022-0185: a user namespace of one's own (CAP_SYS_ADMIN there), a mount namespace it
 * owns, then the fs_context parser. */
static void t_fsopen_cgroup_userns(struct result *r)
{
	char d[300];
	if (enter_userns() < 0) {
		refused(r, errno, "new user namespace");
		return;
	}
	if (unshare(CLONE_NEWNS) < 0) {
		refused(r, errno, "unshare(CLONE_NEWNS) in a new user namespace");
		return;
	}
	if (fsopen_cgroup(d, sizeof d))
		WIN(r, "in a nested user+mount namespace: %s", d);
	else
		BLOCK(r, "%s", d);
}

static void t_open_tree_clone(struct result *r)
{
	int fd = open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fd < 0) {
		refused(r, errno, "open_tree(\"/\", OPEN_TREE_CLONE)");
		return;
	}
	close(fd);
	WIN(r, "open_tree(\"/\", OPEN_TREE_CLONE) gave a detached copy of the root mount");
}

/* CVE-2022-0492: mount a cgroup v1 hierarchy and write its release_agent (written back with
 * its own value: an empty agent on a fresh hierarchy). */
static int release_agent(char *out, size_t size)
{
	static const char *const opts[] = {"rdma", "none,name=ward-probe"};
	char d[PATH_MAX], p[PATH_MAX + 32], one[300];
	int mounted = -1, e = 0;
	if (scratch_dir(d, sizeof d) < 0) {
		snprintf(out, size, "no writable directory: %s", ename(errno));
		return 0;
	}
	for (size_t i = 0; i < 2 && mounted < 0; i++) {
		if (mount("cgroup", d, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts[i]) == 0)
			mounted = (int)i;
		else if (i == 0 || errno != EINVAL)
			e = errno;
	}
	if (mounted < 0) {
		rmdir(d);
		snprintf(out, size, "%s: mount -t cgroup -o rdma|name=ward-probe", ename(e));
		return 0;
	}
	snprintf(p, sizeof p, "%s/release_agent", d);
	int ok = attempt_write(p, NULL, one, sizeof one);
	umount2(d, MNT_DETACH);
	rmdir(d);
	snprintf(out, size, "mounted cgroup v1 (-o %s), %s", opts[mounted], one);
	return ok;
}

static void t_cgroup1_release_agent(struct result *r)
{
	char direct[400], nested[400];
	private_mounts();
	if (release_agent(direct, sizeof direct)) {
		WIN(r, "%s", direct);
		return;
	}
	/* the published path: unshare -UrmC, then mount */
	if (enter_userns() < 0 || unshare(CLONE_NEWNS | CLONE_NEWCGROUP) < 0) {
		BLOCK(r, "%s; nested userns: %s", direct, ename(errno));
		return;
	}
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	if (release_agent(nested, sizeof nested)) {
		WIN(r, "in a nested user namespace: %s", nested);
		return;
	}
	BLOCK(r, "%s; in a nested userns: %s", direct, nested);
}

struct mnt {
	char mountpoint[PATH_MAX];
	char root[PATH_MAX];
	char opts[256];
	char fstype[64];
	char super[512];
};

/* Mounts from /proc/self/mountinfo (octal escapes in paths decoded). */
static int read_mounts(struct mnt *m, int max)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int n = 0;
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof line, f)) {
		char root[PATH_MAX], mp[PATH_MAX], opts[256], rest[2048];
		if (sscanf(line, "%*s %*s %*s %4095s %4095s %255s %2047[^\n]", root, mp, opts,
			   rest) != 4)
			continue;
		/* optional fields, then "- FSTYPE SOURCE SUPEROPTS" */
		char *dash = !strncmp(rest, "- ", 2) ? rest - 1 : strstr(rest, " - ");
		if (!dash)
			continue;
		struct mnt *x = &m[n];
		if (sscanf(dash + 3, "%63s %*s %511s", x->fstype, x->super) < 1)
			continue;
		for (int k = 0; k < 2; k++) {
			const char *src = k ? root : mp;
			char *dst = k ? x->root : x->mountpoint;
			size_t j = 0;
			for (size_t i = 0; src[i] && j + 1 < PATH_MAX; i++) {
				if (src[i] == '\\' && isdigit((unsigned char)src[i + 1])) {
					dst[j++] = (char)strtol(
					    (char[]){src[i + 1], src[i + 2], src[i + 3], 0}, NULL,
					    8);
					i += 3;
				} else {
					dst[j++] = src[i];
				}
			}
			dst[j] = '\0';
		}
		snprintf(x->opts, sizeof x->opts, "%s", opts);
		n++;
	}
	fclose(f);
	return n;
}

static bool has_opt(const char *opts, const char *o)
{
	size_t len = strlen(o);
	for (const char *p = opts; (p = strstr(p, o)); p += len)
		if ((p == opts || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

static unsigned long locked_flags(const char *opts)
{
	unsigned long f = 0;
	if (has_opt(opts, "nosuid"))
		f |= MS_NOSUID;
	if (has_opt(opts, "nodev"))
		f |= MS_NODEV;
	if (has_opt(opts, "noexec"))
		f |= MS_NOEXEC;
	if (has_opt(opts, "noatime"))
		f |= MS_NOATIME;
	if (has_opt(opts, "nodiratime"))
		f |= MS_NODIRATIME;
	if (has_opt(opts, "relatime"))
		f |= MS_RELATIME;
	return f;
}

static struct mnt mounts[512];

/* Remount every read-only mount read-write (in a private copy of the mount table). */
static void t_remount_rw(struct result *r)
{
	char tried[600] = "";
	int n = read_mounts(mounts, 512), nro = 0;
	if (n < 0) {
		BROKEN(r, "read mountinfo: %s", ename(errno));
		return;
	}
	private_mounts();
	for (int i = 0; i < n; i++) {
		if (!has_opt(mounts[i].opts, "ro"))
			continue;
		nro++;
		unsigned long fl = MS_REMOUNT | MS_BIND | locked_flags(mounts[i].opts);
		if (mount(NULL, mounts[i].mountpoint, NULL, fl, NULL) == 0) {
			WIN(r, "remounted read-only %s read-write", mounts[i].mountpoint);
			return;
		}
		if (nro <= 6)
			cat(tried, sizeof tried, "%s%s %s", *tried ? ", " : "",
			    mounts[i].mountpoint, ename(errno));
	}
	if (!nro)
		BLOCK(r, "no read-only mount to remount");
	else
		BLOCK(r, "%d read-only mounts stay read-only (%s%s)", nro, tried,
		      nro > 6 ? ", ..." : "");
}

/* umount the read-only bind mounts (/proc/sys, /proc/sysrq-trigger, ...) to reach what lies
 * beneath. */
static void t_umount_readonly(struct result *r)
{
	char tried[600] = "";
	int n = read_mounts(mounts, 512), nro = 0;
	if (n < 0) {
		BROKEN(r, "read mountinfo: %s", ename(errno));
		return;
	}
	private_mounts();
	for (int i = n - 1; i >= 0; i--) {
		if (!has_opt(mounts[i].opts, "ro") || !strcmp(mounts[i].mountpoint, "/"))
			continue;
		nro++;
		if (umount2(mounts[i].mountpoint, MNT_DETACH) == 0) {
			WIN(r, "unmounted read-only %s", mounts[i].mountpoint);
			return;
		}
		if (nro <= 6)
			cat(tried, sizeof tried, "%s%s %s", *tried ? ", " : "",
			    mounts[i].mountpoint, ename(errno));
	}
	if (!nro)
		BLOCK(r, "no read-only mount below / to unmount");
	else
		BLOCK(r, "%d read-only mounts stay (%s%s)", nro, tried, nro > 6 ? ", ..." : "");
}

/* ------------------------------------------------------------------------------------------ */
/* Kernel interfaces: keyring, bpf, perf, io_uring, userfaultfd */

static void t_keyctl_join(struct result *r)
{
	long k = syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "ward-probe");
	if (k < 0) {
		refused(r, errno, "keyctl(KEYCTL_JOIN_SESSION_KEYRING)");
		return;
	}
	WIN(r, "joined a new session keyring (serial %ld)", k);
}

static void t_add_key(struct result *r)
{
	long k = syscall(SYS_add_key, "user", "ward-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	if (k < 0) {
		refused(r, errno, "add_key(\"user\")");
		return;
	}
	WIN(r, "add_key made key %ld", k);
}

static void t_bpf_prog_load(struct result *r)
{
	struct bpf_insn insns[2] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insn_cnt = 2;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.license = (uint64_t)(uintptr_t) "GPL";
	long fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
	if (fd < 0) {
		refused(r, errno, "bpf(BPF_PROG_LOAD, socket filter)");
		return;
	}
	close((int)fd);
	WIN(r, "loaded a BPF socket filter program");
}

static void t_bpf_map_create(struct result *r)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 1;
	long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
	if (fd < 0) {
		refused(r, errno, "bpf(BPF_MAP_CREATE, array)");
		return;
	}
	close((int)fd);
	WIN(r, "created a BPF array map");
}

static void t_perf_event_open(struct result *r)
{
	int e1 = 0;
	for (int user_only = 0; user_only < 2; user_only++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof a);
		a.type = PERF_TYPE_SOFTWARE;
		a.size = sizeof a;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.disabled = 1;
		a.exclude_kernel = (unsigned)user_only;
		a.exclude_hv = 1;
		long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		if (fd >= 0) {
			close((int)fd);
			WIN(r, "perf_event_open(SW_CPU_CLOCK, self%s) worked",
			    user_only ? ", user space only" : ", kernel included");
			return;
		}
		if (!user_only)
			e1 = errno;
	}
	BLOCK(r, "%s: perf_event_open with kernel, %s: user space only", ename(e1), ename(errno));
}

static void t_io_uring_setup(struct result *r)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	long fd = syscall(SYS_io_uring_setup, 1, &p);
	if (fd < 0) {
		refused(r, errno, "io_uring_setup(1)");
		return;
	}
	close((int)fd);
	WIN(r, "io_uring_setup made a ring");
}

static void t_userfaultfd(struct result *r)
{
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	int e1 = errno;
	if (fd < 0)
		fd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd >= 0) {
		close((int)fd);
		WIN(r, "userfaultfd() gave a descriptor");
		return;
	}
	int e2 = errno;
	int dfd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dfd >= 0) {
		close(dfd);
		WIN(r, "opened /dev/userfaultfd");
		return;
	}
	BLOCK(r, "%s: userfaultfd(0), %s: userfaultfd(UFFD_USER_MODE_ONLY), %s: /dev/userfaultfd",
	      ename(e1), ename(e2), ename(errno));
}

/* ------------------------------------------------------------------------------------------ */
/* Sockets */

static void try_socket(struct result *r, int family, int type, int proto, const char *what)
{
	int fd = socket(family, type | SOCK_CLOEXEC, proto);
	if (fd < 0) {
		refused(r, errno, "socket(%s)", what);
		return;
	}
	close(fd);
	WIN(r, "socket(%s) made a socket", what);
}

static void t_socket_packet(struct result *r)
{
	try_socket(r, AF_PACKET, SOCK_RAW, htons(ETH_P_ALL), "AF_PACKET, SOCK_RAW");
}
static void t_socket_vsock(struct result *r)
{
	try_socket(r, AF_VSOCK, SOCK_STREAM, 0, "AF_VSOCK, SOCK_STREAM");
}
static void t_socket_alg(struct result *r)
{
	try_socket(r, AF_ALG, SOCK_SEQPACKET, 0, "AF_ALG, SOCK_SEQPACKET");
}

/* The 32-bit system call table from a 64-bit process (int $0x80): seccomp sees
 * AUDIT_ARCH_I386, and socketcall(2) hides the address family from argument filters. */
static long int80(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "0"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

#define I386_SOCKETCALL 102
#define I386_SOCKET	359

static void try_socket_i386(struct result *r, int family, int type, const char *name)
{
	unsigned int *args = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (args == MAP_FAILED) {
		BROKEN(r, "mmap(MAP_32BIT): %s", ename(errno));
		return;
	}
	int fd = (int)int80(I386_SOCKET, family, type, 0);
	if (fd >= 0) {
		close(fd);
		WIN(r, "i386 socket(%s) made a socket", name);
		return;
	}
	int e1 = -fd;
	args[0] = (unsigned)family;
	args[1] = (unsigned)type;
	args[2] = 0;
	fd = (int)int80(I386_SOCKETCALL, 1 /* SYS_SOCKET */, (long)(uintptr_t)args, 0);
	if (fd >= 0) {
		close(fd);
		WIN(r, "i386 socketcall(SYS_SOCKET, %s) made a socket", name);
		return;
	}
	BLOCK(r, "%s: i386 socket(%s), %s: i386 socketcall(SYS_SOCKET)", ename(e1), name,
	      ename(-fd));
}

static void t_socket_alg_i386(struct result *r)
{
	try_socket_i386(r, AF_ALG, SOCK_SEQPACKET, "AF_ALG");
}
static void t_socket_vsock_i386(struct result *r)
{
	try_socket_i386(r, AF_VSOCK, SOCK_STREAM, "AF_VSOCK");
}

/* ------------------------------------------------------------------------------------------ */
/* Devices */

/* mknod a block device and read its first sector: 8:0 (sda), then every block device the
 * kernel lists in /sys/dev/block (the node needs a device that exists). */
static void t_mknod_block(struct result *r)
{
	char d[PATH_MAX], node[PATH_MAX + 8], why[600] = "";
	unsigned maj[32] = {8}, min[32] = {0};
	int n = 1;
	DIR *sd = opendir("/sys/dev/block");
	struct dirent *de;
	while (sd && (de = readdir(sd)) && n < 32)
		if (sscanf(de->d_name, "%u:%u", &maj[n], &min[n]) == 2)
			n++;
	if (sd)
		closedir(sd);
	if (scratch_dir(d, sizeof d) < 0) {
		BROKEN(r, "no writable directory: %s", ename(errno));
		return;
	}
	snprintf(node, sizeof node, "%s/blk", d);
	for (int i = 0; i < n; i++) {
		unlink(node);
		if (mknod(node, S_IFBLK | 0600, makedev(maj[i], min[i])) < 0) {
			cat(why, sizeof why, "%s: mknod b %u %u", ename(errno), maj[i], min[i]);
			break; /* the same answer for every device */
		}
		int fd = open(node, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cat(why, sizeof why, "%smknod b %u %u worked, %s: open", *why ? "; " : "",
			    maj[i], min[i], ename(errno));
			continue;
		}
		char sector[512];
		ssize_t got = read(fd, sector, sizeof sector);
		close(fd);
		if (got > 0) {
			unlink(node);
			rmdir(d);
			WIN(r, "mknod b %u %u and read %zd bytes of it", maj[i], min[i], got);
			return;
		}
		cat(why, sizeof why, "%sb %u %u opened, read: %s", *why ? "; " : "", maj[i], min[i],
		    ename(errno));
	}
	unlink(node);
	rmdir(d);
	BLOCK(r, "%s", why);
}

/* mknod the memory devices (/dev/mem, /dev/port, /dev/kmsg) and open them. */
static void t_mknod_mem(struct result *r)
{
	static const struct {
		unsigned min;
		const char *name;
	} devs[] = {{1, "mem"}, {4, "port"}, {11, "kmsg"}};
	char d[PATH_MAX], node[PATH_MAX + 8], why[600] = "";
	if (scratch_dir(d, sizeof d) < 0) {
		BROKEN(r, "no writable directory: %s", ename(errno));
		return;
	}
	for (size_t i = 0; i < sizeof devs / sizeof *devs; i++) {
		snprintf(node, sizeof node, "%s/%s", d, devs[i].name);
		if (mknod(node, S_IFCHR | 0600, makedev(1, devs[i].min)) < 0) {
			cat(why, sizeof why, "%s%s: mknod c 1 %u", *why ? "; " : "", ename(errno),
			    devs[i].min);
			continue;
		}
		int fd = open(node, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		int e = errno;
		unlink(node);
		if (fd >= 0) {
			close(fd);
			rmdir(d);
			WIN(r, "mknod c 1 %u (%s) and opened it", devs[i].min, devs[i].name);
			return;
		}
		cat(why, sizeof why, "%smknod c 1 %u worked, %s: open", *why ? "; " : "",
		    devs[i].min, ename(e));
	}
	rmdir(d);
	BLOCK(r, "%s", why);
}

static bool allowed_dev(mode_t mode, dev_t rdev)
{
	unsigned ma = major(rdev), mi = minor(rdev);
	if (!S_ISCHR(mode))
		return false;
	if (ma == 1 && (mi == 3 || mi == 5 || mi == 7 || mi == 8 || mi == 9))
		return true; /* null zero full random urandom */
	if (ma == 5 && (mi == 0 || mi == 2))
		return true; /* tty ptmx */
	return ma == 136;    /* pts */
}

/* Open every device node under /dev that is not one of the standard container devices. */
static void scan_dev(const char *dir, int depth, char *opened, size_t osize, int *nfound)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d))) {
		char p[PATH_MAX];
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth < 2 && strcmp(de->d_name, "shm") && strcmp(de->d_name, "mqueue"))
				scan_dev(p, depth + 1, opened, osize, nfound);
			continue;
		}
		if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
			continue;
		if (allowed_dev(st.st_mode, st.st_rdev))
			continue;
		/* opening these has side effects on a host */
		if (strstr(de->d_name, "watchdog") || !strcmp(de->d_name, "snapshot"))
			continue;
		(*nfound)++;
		int fd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			cat(opened, osize, "%s%s (%c %u:%u)", *opened ? ", " : "", p,
			    S_ISBLK(st.st_mode) ? 'b' : 'c', major(st.st_rdev), minor(st.st_rdev));
		}
	}
	closedir(d);
}

static void t_dev_host_nodes(struct result *r)
{
	char opened[800] = "";
	int nfound = 0;
	scan_dev("/dev", 0, opened, sizeof opened, &nfound);
	if (*opened)
		WIN(r, "opened host device nodes: %s", opened);
	else if (nfound)
		BLOCK(r, "%d non-standard device nodes in /dev, none could be opened", nfound);
	else
		BLOCK(r, "no device node beyond null zero full random urandom tty ptmx pts");
}

/* ------------------------------------------------------------------------------------------ */
/* Kernel knobs in /proc and /sys */

static void t_write_sysrq_trigger(struct result *r)
{
	/* 'h' only prints the SysRq help to the kernel log */
	write_technique(r, (const char *const[]){"/proc/sysrq-trigger", NULL}, "h");
}
static void t_write_core_pattern(struct result *r)
{
	write_technique(r, (const char *const[]){"/proc/sys/kernel/core_pattern", NULL}, NULL);
}
static void t_write_uevent_helper(struct result *r)
{
	write_technique(r, (const char *const[]){"/sys/kernel/uevent_helper", NULL}, NULL);
}
static void t_write_modprobe(struct result *r)
{
	write_technique(r, (const char *const[]){"/proc/sys/kernel/modprobe", NULL}, NULL);
}
static void t_write_proc_sys(struct result *r)
{
	write_technique(r,
			(const char *const[]){"/proc/sys/kernel/panic", "/proc/sys/kernel/sysrq",
					      "/proc/sys/vm/overcommit_memory", NULL},
			NULL);
}
static void t_write_sysfs(struct result *r)
{
	write_technique(r,
			(const char *const[]){"/sys/kernel/mm/transparent_hugepage/enabled",
					      "/sys/kernel/mm/ksm/run", "/sys/kernel/profiling",
					      "/sys/block/vda/queue/read_ahead_kb",
					      "/sys/block/sda/queue/read_ahead_kb", NULL},
			NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* Masked paths */

/* What reading PATH gives: "ELF core (N bytes)", "N bytes", "empty", "/dev/null", or an error. */
static void read_verdict(const char *path, char *out, size_t size, bool *content)
{
	char buf[256];
	*content = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		snprintf(out, size, "%s: open", ename(errno));
		return;
	}
	if (is_devnull_fd(fd)) {
		close(fd);
		snprintf(out, size, "masked (/dev/null)");
		return;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		DIR *d = opendir(path);
		int entries = 0;
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				entries++;
		if (d)
			closedir(d);
		*content = entries > 0;
		snprintf(out, size, "directory with %d entries", entries);
		return;
	}
	ssize_t n = read(fd, buf, sizeof buf);
	int e = errno;
	close(fd);
	if (n < 0)
		snprintf(out, size, "%s: read", ename(e));
	else if (n >= 4 && !memcmp(buf, "\177ELF", 4))
		snprintf(out, size, "ELF core image");
	else
		snprintf(out, size, "%zd bytes", n);
	*content = n > 0;
}

static void umount_mask(struct result *r, const char *path)
{
	char rd[200];
	bool content;
	private_mounts();
	if (umount2(path, MNT_DETACH) < 0) {
		refused(r, errno, "umount %s", path);
		return;
	}
	read_verdict(path, rd, sizeof rd, &content);
	WIN(r, "unmounted the mask on %s; reading it now: %s", path, rd);
}

static void t_umount_mask_kcore(struct result *r)
{
	umount_mask(r, "/proc/kcore");
}
static void t_umount_mask_keys(struct result *r)
{
	umount_mask(r, "/proc/keys");
}

static void t_read_kcore(struct result *r)
{
	char rd[200];
	bool content;
	read_verdict("/proc/kcore", rd, sizeof rd, &content);
	if (content)
		WIN(r, "read /proc/kcore: %s", rd);
	else
		BLOCK(r, "/proc/kcore: %s", rd);
}

/* containerd's maskedPaths: every one that exists must read as nothing. */
static void t_read_masked(struct result *r)
{
	static const char *const paths[] = {
	    "/proc/acpi",
	    "/proc/asound",
	    "/proc/kcore",
	    "/proc/keys",
	    "/proc/latency_stats",
	    "/proc/timer_list",
	    "/proc/timer_stats",
	    "/proc/sched_debug",
	    "/proc/scsi",
	    "/sys/firmware",
	    "/sys/devices/virtual/powercap",
	};
	char leaked[800] = "", seen[800] = "", rd[200];
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		bool content;
		struct stat st;
		if (lstat(paths[i], &st) < 0)
			continue;
		read_verdict(paths[i], rd, sizeof rd, &content);
		cat(content ? leaked : seen, content ? sizeof leaked : sizeof seen, "%s%s: %s",
		    *(content ? leaked : seen) ? ", " : "", paths[i], rd);
	}
	if (*leaked)
		WIN(r, "readable: %s", leaked);
	else
		BLOCK(r, "masked: %s", *seen ? seen : "none of them exists");
}

/* ------------------------------------------------------------------------------------------ */
/* Descriptors, cwd, executables */

static void t_fd_leak(struct result *r)
{
	char leaks[800] = "";
	if (n_start_fds < 0) {
		BROKEN(r, "/proc/self/fd was unreadable at start");
		return;
	}
	for (int i = 0; i < n_start_fds; i++) {
		struct start_fd *s = &start_fds[i];
		if (s->fd <= 2 && !s->isdir)
			continue;
		cat(leaks, sizeof leaks, "%sfd %d -> %s%s", *leaks ? ", " : "", s->fd, s->target,
		    s->isdir ? " (a directory)" : "");
	}
	if (*leaks)
		WIN(r, "open at start: %s", leaks);
	else
		BLOCK(r, "only fds 0 1 2 at start, none a directory");
}

static void t_cwd_outside(struct result *r)
{
	char buf[PATH_MAX];
	long n = syscall(SYS_getcwd, buf, sizeof buf);
	if (n < 0) {
		WIN(r, "getcwd failed (%s): the cwd is not below the root", ename(errno));
		return;
	}
	if (!strncmp(buf, "(unreachable)", 13)) {
		WIN(r, "the cwd is outside the root: %s", buf);
		return;
	}
	/* walk .. from the cwd: the top must be this process's root */
	struct stat top, root, cur;
	int fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &top) < 0 || stat("/", &root) < 0) {
		BROKEN(r, "stat cwd or /: %s", ename(errno));
		return;
	}
	for (int i = 0; i < 256; i++) {
		int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || fstat(up, &cur) < 0)
			break;
		close(fd);
		fd = up;
		if (cur.st_dev == top.st_dev && cur.st_ino == top.st_ino)
			break;
		top = cur;
	}
	close(fd);
	if (top.st_dev != root.st_dev || top.st_ino != root.st_ino)
		WIN(r, "'..' from the cwd (%s) climbs past the root", buf);
	else
		BLOCK(r, "cwd %s is below the root", buf);
}

struct exe_search {
	char opened[600];
	char refused[400];
	int n;
};

static int try_exe(pid_t pid, void *arg)
{
	struct exe_search *s = arg;
	char p[64], target[PATH_MAX];
	snprintf(p, sizeof p, "/proc/%d/exe", pid);
	ssize_t n = readlink(p, target, sizeof target - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	s->n++;
	/* no O_TRUNC and no write: opening for writing is the attack's first step */
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		cat(s->opened, sizeof s->opened, "%s%s (%s)", *s->opened ? ", " : "", p, target);
	} else if (!strstr(s->refused, ename(errno))) {
		cat(s->refused, sizeof s->refused, "%s%s", *s->refused ? "/" : "", ename(errno));
	}
	return 0;
}

/* CVE-2019-5736: open the executables of the processes in sight (this probe, pid 1, any
 * runtime process joining the container) for writing. */
static void t_exe_overwrite(struct result *r)
{
	struct exe_search s = {.n = 0};
	int fd = open("/proc/self/exe", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		WIN(r, "opened /proc/self/exe for writing");
		return;
	}
	int e = errno;
	for_each_pid(try_exe, &s);
	if (*s.opened)
		WIN(r, "opened for writing: %s", s.opened);
	else
		BLOCK(r, "%s: /proc/self/exe; %s: /proc/PID/exe of %d processes", ename(e),
		      *s.refused ? s.refused : "-", s.n);
}

/* Escape a chroot with chdir(".."): a process's root that is not its mount namespace's root
 * (a runtime that chroots instead of pivot_root) lets it climb to the host. */
static void t_chroot_escape(struct result *r)
{
	const char *path = env("WARD_PROBE_SENTINEL"), *text = env("WARD_PROBE_SENTINEL_TEXT");
	char d[PATH_MAX], why[600] = "";
	if (!path || !text) {
		SKIP(r, "WARD_PROBE_SENTINEL(_TEXT) not set");
		return;
	}
	if (sentinel_readable(path, text)) {
		WIN(r, "the host file %s is readable directly", path);
		return;
	}
	cat(why, sizeof why, "%s: %s directly", ename(errno), path);
	for (int variant = 0; variant < 2; variant++) {
		int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (scratch_dir(d, sizeof d) < 0 || chroot(d) < 0) {
			cat(why, sizeof why, "; %s: chroot", ename(errno));
			close(rootfd);
			break;
		}
		/* variant 0: back to the old root through a kept fd; 1: the cwd left outside */
		if (variant == 0 && fchdir(rootfd) < 0)
			cat(why, sizeof why, "; fchdir: %s", ename(errno));
		close(rootfd);
		for (int i = 0; i < 64; i++)
			if (chdir("..") < 0)
				break;
		if (chroot(".") < 0) {
			cat(why, sizeof why, "; %s: chroot(\".\")", ename(errno));
			break;
		}
		if (sentinel_readable(path, text)) {
			WIN(r, "chroot + chdir(\"..\") x64 (%s) reached the host file %s",
			    variant ? "cwd outside" : "kept root fd", path);
			return;
		}
		cat(why, sizeof why, "; %s: after chroot+.. (%s)", ename(errno),
		    variant ? "cwd outside" : "kept fd");
	}
	BLOCK(r, "%s", why);
}

struct root_search {
	const char *path, *text;
	pid_t found;
};

static int try_root(pid_t pid, void *arg)
{
	struct root_search *s = arg;
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "/proc/%d/root%s", pid, s->path);
	if (sentinel_readable(p, s->text)) {
		s->found = pid;
		return 1;
	}
	snprintf(p, sizeof p, "/proc/%d/cwd/../../../../../../../../../../../..%s", pid, s->path);
	if (sentinel_readable(p, s->text)) {
		s->found = -pid;
		return 1;
	}
	return 0;
}

/* The host file through /proc/PID/root and /proc/PID/cwd of every process in sight. */
static void t_proc_root_escape(struct result *r)
{
	struct root_search s = {env("WARD_PROBE_SENTINEL"), env("WARD_PROBE_SENTINEL_TEXT"), 0};
	if (!s.path || !s.text) {
		SKIP(r, "WARD_PROBE_SENTINEL(_TEXT) not set");
		return;
	}
	for_each_pid(try_root, &s);
	if (s.found)
		WIN(r, "read the host file %s through /proc/%d/%s", s.path,
		    s.found > 0 ? s.found : -s.found, s.found > 0 ? "root" : "cwd");
	else
		BLOCK(r, "ENOENT: %s through no /proc/PID/root or cwd", s.path);
}

/* ------------------------------------------------------------------------------------------ */
/* The host's processes, IPC, network, namespaces */

static void t_sysv_ipc_host(struct result *r)
{
	const char *k = env("WARD_PROBE_SHM_KEY");
	char buf[65536];
	if (!k) {
		SKIP(r, "WARD_PROBE_SHM_KEY not set");
		return;
	}
	key_t key = (key_t)strtol(k, NULL, 0);
	int id = shmget(key, 0, 0);
	if (id >= 0) {
		WIN(r, "shmget(key %s) found the host segment (id %d)", k, id);
		return;
	}
	int e = errno;
	if (read_small("/proc/sysvipc/shm", buf, sizeof buf) > 0) {
		char *line = strchr(buf, '\n');
		while (line && *++line) {
			long lk = strtol(line, NULL, 10);
			if (lk == (long)key) {
				WIN(r, "/proc/sysvipc/shm lists the host segment (key %s)", k);
				return;
			}
			line = strchr(line, '\n');
		}
	}
	refused(r, e, "shmget(key %s); not in /proc/sysvipc/shm", k);
}

static void t_host_pids(struct result *r)
{
	const char *marker = env("WARD_PROBE_MARKER");
	int seen = 0;
	if (!marker) {
		SKIP(r, "WARD_PROBE_MARKER not set");
		return;
	}
	pid_t pid = find_marker(marker, &seen);
	if (pid)
		WIN(r, "the host process %s is visible as pid %d (%d pids in /proc)", marker, pid,
		    seen);
	else
		BLOCK(r, "ESRCH: host process not in /proc (%d pids visible)", seen);
}

static void t_ptrace_host(struct result *r)
{
	const char *marker = env("WARD_PROBE_MARKER");
	if (!marker) {
		SKIP(r, "WARD_PROBE_MARKER not set");
		return;
	}
	pid_t pid = find_marker(marker, NULL);
	if (!pid) {
		BLOCK(r, "ESRCH: the host process is not in sight");
		return;
	}
	/* SEIZE, not ATTACH: the tracee never stops, and our exit detaches it */
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0) {
		refused(r, errno, "ptrace(PTRACE_SEIZE, %d) of the host process", pid);
		return;
	}
	WIN(r, "ptrace(PTRACE_SEIZE) of the host process %d", pid);
}

/* A process without privilege over pid 1 must not trace it: the tracer becomes uid 65534
 * when it can and drops every capability; when pid 1 is this probe, it is non-dumpable
 * meanwhile (run_one), so even a tracer of the same uid needs CAP_SYS_PTRACE. */
static void t_ptrace_pid1(struct result *r)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct none[2];
	char who[64] = "uid 0";
	memset(none, 0, sizeof none);
	/* setgroups may be denied (/proc/self/setgroups "deny"): then keep the groups */
	setgroups(0, NULL);
	if (setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0)
		snprintf(who, sizeof who, "uid 65534");
	if (syscall(SYS_capset, &h, none) < 0) {
		BROKEN(r, "capset(none): %s", ename(errno));
		return;
	}
	cat(who, sizeof who, " without capabilities");
	if (ptrace(PTRACE_SEIZE, 1, NULL, NULL) < 0) {
		refused(r, errno, "ptrace(PTRACE_SEIZE, 1) as %s", who);
		return;
	}
	WIN(r, "%s traced pid 1", who);
}

static void t_host_netif(struct result *r)
{
	struct if_nameindex *ifs = if_nameindex();
	char names[600] = "";
	bool foreign = false;
	if (!ifs) {
		refused(r, errno, "if_nameindex");
		return;
	}
	for (struct if_nameindex *i = ifs; i->if_index; i++) {
		cat(names, sizeof names, "%s%s", *names ? " " : "", i->if_name);
		if (strcmp(i->if_name, "lo"))
			foreign = true;
	}
	if_freenameindex(ifs);
	if (foreign)
		WIN(r, "interfaces beyond lo: %s", names);
	else
		BLOCK(r, "only %s", *names ? names : "no interface");
}

static const char *const ns_types[] = {"cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts"};
#define N_NS (sizeof ns_types / sizeof *ns_types)

static int print_host_ns(void)
{
	for (size_t i = 0; i < N_NS; i++) {
		char p[64];
		struct stat st;
		snprintf(p, sizeof p, "/proc/self/ns/%s", ns_types[i]);
		if (stat(p, &st) == 0)
			printf("%s%s:%lu", i ? " " : "", ns_types[i], (unsigned long)st.st_ino);
	}
	printf("\n");
	return 0;
}

struct ns_search {
	unsigned long host[N_NS], own[N_NS];
	char joined[400], refused[400];
	int reached;
};

static int try_ns(pid_t pid, void *arg)
{
	struct ns_search *s = arg;
	for (size_t i = 0; i < N_NS; i++) {
		char p[64];
		struct stat st;
		if (!s->host[i] || s->host[i] == s->own[i])
			continue;
		snprintf(p, sizeof p, "/proc/%d/ns/%s", pid, ns_types[i]);
		if (stat(p, &st) < 0 || st.st_ino != s->host[i])
			continue;
		s->reached++;
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cat(s->refused, sizeof s->refused, "%s%s: open %s", *s->refused ? ", " : "",
			    ename(errno), p);
			continue;
		}
		if (setns(fd, 0) == 0)
			cat(s->joined, sizeof s->joined, "%s%s (via %s)", *s->joined ? ", " : "",
			    ns_types[i], p);
		else
			cat(s->refused, sizeof s->refused, "%s%s: setns %s",
			    *s->refused ? ", " : "", ename(errno), p);
		close(fd);
		s->own[i] = s->host[i]; /* joined or not: once per type */
	}
	return 0;
}

/* setns into a namespace of the host through /proc/PID/ns of any process in sight. */
static void t_setns_host(struct result *r)
{
	const char *h = env("WARD_PROBE_HOST_NS");
	struct ns_search s;
	char shared[200] = "";
	memset(&s, 0, sizeof s);
	if (!h) {
		SKIP(r, "WARD_PROBE_HOST_NS not set");
		return;
	}
	for (size_t i = 0; i < N_NS; i++) {
		char key[32], p[64];
		struct stat st;
		snprintf(key, sizeof key, "%s:", ns_types[i]);
		for (const char *q = h; (q = strstr(q, key)); q++)
			if (q == h || q[-1] == ' ') {
				s.host[i] = strtoul(q + strlen(key), NULL, 10);
				break;
			}
		snprintf(p, sizeof p, "/proc/self/ns/%s", ns_types[i]);
		if (stat(p, &st) == 0)
			s.own[i] = st.st_ino;
		if (s.host[i] && s.host[i] == s.own[i])
			cat(shared, sizeof shared, "%s%s", *shared ? " " : "", ns_types[i]);
	}
	for_each_pid(try_ns, &s);
	if (*s.joined)
		WIN(r, "joined host namespaces: %s", s.joined);
	else if (s.reached)
		BLOCK(r, "host namespaces in sight but not joinable: %s (shared with the host: %s)",
		      s.refused, *shared ? shared : "none");
	else
		BLOCK(r, "ESRCH: no host namespace in sight (shared with the host: %s)",
		      *shared ? shared : "none");
}

/* ------------------------------------------------------------------------------------------ */
/* Security labels, personality, IDs */

static void t_apparmor_change(struct result *r)
{
	static const char *const paths[] = {"/proc/self/attr/apparmor/current",
					    "/proc/self/attr/current"};
	char why[400] = "", label[256] = "";
	read_small("/proc/self/attr/current", label, sizeof label);
	label[strcspn(label, "\n")] = '\0';
	for (size_t i = 0; i < 2; i++) {
		int fd = open(paths[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			cat(why, sizeof why, "%s%s: open %s", *why ? "; " : "", ename(errno),
			    paths[i]);
			continue;
		}
		const char *cmd = "changeprofile unconfined";
		ssize_t w = write(fd, cmd, strlen(cmd));
		int e = errno;
		close(fd);
		if (w >= 0) {
			char now[256] = "";
			read_small("/proc/self/attr/current", now, sizeof now);
			now[strcspn(now, "\n")] = '\0';
			WIN(r,
			    "'changeprofile unconfined' accepted by %s (label was '%s', now '%s')",
			    paths[i], label, now);
			return;
		}
		cat(why, sizeof why, "%s%s: write %s", *why ? "; " : "", ename(e), paths[i]);
	}
	BLOCK(r, "%s (label '%s')", why, label);
}

static void t_personality(struct result *r)
{
	static const struct {
		unsigned long flag;
		const char *name;
	} flags[] = {{READ_IMPLIES_EXEC, "READ_IMPLIES_EXEC"},
		     {MMAP_PAGE_ZERO, "MMAP_PAGE_ZERO"},
		     {ADDR_NO_RANDOMIZE, "ADDR_NO_RANDOMIZE"}};
	char why[300] = "";
	for (size_t i = 0; i < 3; i++) {
		if (personality(PER_LINUX | flags[i].flag) < 0) {
			cat(why, sizeof why, "%s%s: %s", *why ? ", " : "", ename(errno),
			    flags[i].name);
			continue;
		}
		int now = personality(0xffffffff);
		if (now >= 0 && ((unsigned long)now & flags[i].flag)) {
			WIN(r, "personality(%s) took effect", flags[i].name);
			return;
		}
		cat(why, sizeof why, "%s%s ignored", *why ? ", " : "", flags[i].name);
	}
	BLOCK(r, "%s", why);
}

static void t_uid_map_write(struct result *r)
{
	static const char *const files[] = {"/proc/self/uid_map", "/proc/self/gid_map",
					    "/proc/1/uid_map"};
	char why[400] = "";
	for (size_t i = 0; i < 3; i++) {
		if (write_str(files[i], "0 0 1\n") == 0) {
			WIN(r, "wrote '0 0 1' to %s", files[i]);
			return;
		}
		cat(why, sizeof why, "%s%s: %s", *why ? ", " : "", ename(errno), files[i]);
	}
	if (write_str("/proc/self/setgroups", "allow") == 0) {
		/* "allow" over "allow" is a no-op; only a switch back from "deny" matters */
		char now[16] = "";
		read_small("/proc/self/setgroups", now, sizeof now);
		cat(why, sizeof why, ", setgroups write accepted (now %.5s)", now);
	} else {
		cat(why, sizeof why, ", %s: setgroups", ename(errno));
	}
	BLOCK(r, "%s", why);
}

/* IDs beyond a 65536-ID map: host IDs the container has no right to. */
static void t_gain_ids(struct result *r)
{
	static const unsigned ids[] = {65536, 70000, 1000000};
	char why[400] = "";
	for (size_t i = 0; i < 3; i++) {
		gid_t g = ids[i];
		if (setgroups(1, &g) == 0) {
			WIN(r, "setgroups([%u]) worked", ids[i]);
			return;
		}
		cat(why, sizeof why, "%s%s: setgroups %u", *why ? ", " : "", ename(errno), ids[i]);
		if (setresgid(ids[i], ids[i], ids[i]) == 0) {
			WIN(r, "setresgid(%u) worked", ids[i]);
			return;
		}
		cat(why, sizeof why, ", %s: setresgid", ename(errno));
		if (setresuid(ids[i], ids[i], ids[i]) == 0) {
			WIN(r, "setresuid(%u) worked", ids[i]);
			return;
		}
		cat(why, sizeof why, ", %s: setresuid", ename(errno));
	}
	BLOCK(r, "%s", why);
}

static void t_root_is_host_root(struct result *r)
{
	char buf[4096];
	if (read_small("/proc/self/uid_map", buf, sizeof buf) < 0) {
		BROKEN(r, "read /proc/self/uid_map: %s", ename(errno));
		return;
	}
	for (char *line = buf; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long inside, outside, count;
		if (sscanf(line, "%lu %lu %lu", &inside, &outside, &count) != 3)
			continue;
		/* host uid 0 mapped anywhere, or uid 0 here mapped to host 0 */
		if (outside == 0) {
			WIN(r, "uid %lu maps to host uid 0 (uid_map: %.*s)", inside,
			    (int)strcspn(line, "\n"), line);
			return;
		}
	}
	buf[strcspn(buf, "\n")] = '\0';
	BLOCK(r, "host uid 0 is not mapped (uid_map: %s)", buf);
}

/* ------------------------------------------------------------------------------------------ */
/* cgroups */

/* For each cgroup mount: the directory of this process's own cgroup in it, and whether the
 * mount shows a parent of it. */
struct cg_view {
	char mountpoint[PATH_MAX];
	char own[PATH_MAX + PATH_MAX];
	bool parent_visible;
	bool v2;
};

static int cgroup_views(struct cg_view *v, int max)
{
	char cg[8192];
	int n = read_mounts(mounts, 512), nv = 0;
	if (n < 0 || read_small("/proc/self/cgroup", cg, sizeof cg) < 0)
		return -1;
	for (int i = 0; i < n && nv < max; i++) {
		bool v2 = !strcmp(mounts[i].fstype, "cgroup2");
		if (!v2 && strcmp(mounts[i].fstype, "cgroup"))
			continue;
		/* this process's path in the hierarchy: the 0:: line (v2) or the line naming one
		 * of the mount's controllers (v1) */
		char path[PATH_MAX] = "";
		bool found = false;
		for (char *line = cg; line && *line && !found;) {
			char *next = strchr(line, '\n');
			size_t len = next ? (size_t)(next - line) : strlen(line);
			char entry[PATH_MAX + 512];
			snprintf(entry, sizeof entry, "%.*s", (int)len, line);
			/* "ID:CONTROLLERS:PATH" */
			char *c1 = strchr(entry, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			if (c1 && c2) {
				*c1 = *c2 = '\0';
				const char *ctl = c1 + 1;
				bool match = v2 ? !strcmp(entry, "0") && !*ctl
						: *ctl && has_opt(mounts[i].super, ctl);
				if (match) {
					snprintf(path, sizeof path, "%s", c2 + 1);
					found = true;
				}
			}
			line = next ? next + 1 : NULL;
		}
		if (!found)
			continue;
		const char *root = mounts[i].root;
		size_t rl = strcmp(root, "/") ? strlen(root) : 0;
		if (strncmp(path, root, rl) || (path[rl] != '/' && path[rl] != '\0'))
			continue; /* our cgroup is not below this mount's root */
		struct cg_view *x = &v[nv++];
		snprintf(x->mountpoint, sizeof x->mountpoint, "%s", mounts[i].mountpoint);
		snprintf(x->own, sizeof x->own, "%s%s", mounts[i].mountpoint, path + rl);
		x->parent_visible = path[rl] == '/' && path[rl + 1] != '\0';
		x->v2 = v2;
	}
	return nv;
}

static struct cg_view views[64];

/* Move out of the container's cgroup: write our pid to a parent's cgroup.procs, enable
 * controllers in the parent (its own cgroup.subtree_control, written back). */
static void t_cgroup_parent_write(struct result *r)
{
	char why[700] = "", one[300], p[PATH_MAX * 3], pid[32];
	int n = cgroup_views(views, 64), visible = 0;
	if (n < 0) {
		BROKEN(r, "read mountinfo or /proc/self/cgroup: %s", ename(errno));
		return;
	}
	snprintf(pid, sizeof pid, "%d\n", getpid());
	for (int i = 0; i < n; i++) {
		if (!views[i].parent_visible)
			continue;
		visible++;
		snprintf(p, sizeof p, "%s/../cgroup.procs", views[i].own);
		if (attempt_write(p, pid, one, sizeof one)) {
			WIN(r, "moved into the parent cgroup: %s", one);
			return;
		}
		cat(why, sizeof why, "%s%s", *why ? "; " : "", one);
		if (views[i].v2) {
			snprintf(p, sizeof p, "%s/../cgroup.subtree_control", views[i].own);
			char cur[512] = "", ctl[600] = "";
			if (read_small(p, cur, sizeof cur) > 0) {
				for (char *t = strtok(cur, " \n"); t; t = strtok(NULL, " \n"))
					cat(ctl, sizeof ctl, "+%s ", t);
			}
			if (*ctl && attempt_write(p, ctl, one, sizeof one)) {
				WIN(r, "wrote the parent's subtree_control: %s", one);
				return;
			}
			if (*ctl)
				cat(why, sizeof why, "; %s", one);
		}
	}
	if (!visible)
		BLOCK(r, "ENOENT: no parent of the own cgroup in sight (%d cgroup mounts)", n);
	else
		BLOCK(r, "%s", why);
}

/* Raise the container's own limits: write back memory.max, pids.max, cpu.max (v1:
 * memory.limit_in_bytes, pids.max, cpu.cfs_quota_us) of its cgroup. */
static void t_cgroup_limits_write(struct result *r)
{
	static const char *const files[] = {"memory.max",	"pids.max",
					    "cpu.max",		"memory.limit_in_bytes",
					    "cpu.cfs_quota_us", "memory.high"};
	char why[700] = "", one[300], p[PATH_MAX * 3];
	int n = cgroup_views(views, 64), tried = 0;
	if (n < 0) {
		BROKEN(r, "read mountinfo or /proc/self/cgroup: %s", ename(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
			snprintf(p, sizeof p, "%s/%s", views[i].own, files[f]);
			if (access(p, F_OK) < 0)
				continue;
			tried++;
			if (attempt_write(p, NULL, one, sizeof one)) {
				WIN(r, "%s", one);
				return;
			}
			if (tried <= 4)
				cat(why, sizeof why, "%s%s", *why ? "; " : "", one);
		}
	}
	if (!tried)
		BLOCK(r, "ENOENT: no limit file in sight (%d cgroup mounts)", n);
	else
		BLOCK(r, "%s%s", why, tried > 4 ? "; ..." : "");
}

/* ------------------------------------------------------------------------------------------ */
/* Privileged system calls. Arguments are chosen so that the kernel rejects them only after
 * its permission check: that error means "permitted" (SUCCEEDED) without doing anything. */

static void after_check(struct result *r, long ret, int e, int permitted_errno, const char *what)
{
	if (ret >= 0 || e == permitted_errno)
		WIN(r, "%s passed the permission check (%s)", what,
		    ret >= 0 ? "returned" : ename(e));
	else
		refused(r, e, "%s", what);
}

static void t_kexec_load(struct result *r)
{
	/* 17 segments > KEXEC_SEGMENT_MAX: EINVAL after the permission check */
	long ret = syscall(SYS_kexec_load, 0UL, 17UL, NULL, 0UL);
	int e = errno;
	if (ret >= 0 || e == EINVAL) {
		after_check(r, ret, e, EINVAL, "kexec_load");
		return;
	}
	ret = syscall(SYS_kexec_file_load, -1, -1, 0UL, "", 0UL);
	if (ret >= 0 || errno == EBADF) {
		after_check(r, ret, errno, EBADF, "kexec_file_load");
		return;
	}
	BLOCK(r, "%s: kexec_load, %s: kexec_file_load", ename(e), ename(errno));
}

static void t_finit_module(struct result *r)
{
	long ret = syscall(SYS_finit_module, -1, "", 0);
	int e = errno;
	if (ret >= 0 || e == EBADF) {
		after_check(r, ret, e, EBADF, "finit_module(-1)");
		return;
	}
	ret = syscall(SYS_init_module, NULL, 0UL, "");
	if (ret >= 0 || errno == EFAULT || errno == ENOEXEC) {
		after_check(r, ret, errno, errno, "init_module(NULL)");
		return;
	}
	BLOCK(r, "%s: finit_module, %s: init_module", ename(e), ename(errno));
}

static void t_delete_module(struct result *r)
{
	long ret = syscall(SYS_delete_module, "ward_probe_no_such_module", O_NONBLOCK);
	after_check(r, ret, errno, ENOENT, "delete_module");
}

static void t_swapon(struct result *r)
{
	long ret = swapon("/ward-probe-no-such-file", 0);
	after_check(r, ret, errno, ENOENT, "swapon");
}

static void t_acct(struct result *r)
{
	long ret = acct("/ward-probe-no-such-file");
	after_check(r, ret, errno, ENOENT, "acct");
}

static void t_settime(struct result *r)
{
	/* settimeofday(NULL, NULL): the capability check, then nothing to set */
	long ret = syscall(SYS_settimeofday, NULL, NULL);
	after_check(r, ret, errno, 0, "settimeofday(NULL, NULL)");
}

static void t_ioperm(struct result *r)
{
	if (ioperm(0x80, 1, 1) < 0) {
		refused(r, errno, "ioperm(0x80)");
		return;
	}
	ioperm(0x80, 1, 0);
	WIN(r, "ioperm(0x80) granted port access");
}

static void t_fanotify(struct result *r)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC, O_RDONLY);
	if (fd < 0) {
		refused(r, errno, "fanotify_init(FAN_CLASS_NOTIF)");
		return;
	}
	close(fd);
	WIN(r, "fanotify_init gave a group");
}

static void t_syslog_read(struct result *r)
{
	static char buf[4096];
	int n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof buf);
	if (n < 0) {
		refused(r, errno, "syslog(SYSLOG_ACTION_READ_ALL)");
		return;
	}
	WIN(r, "read %d bytes of the kernel log", n);
}

static void t_open_by_handle_at(struct result *r)
{
	char hbuf[sizeof(struct file_handle) + MAX_HANDLE_SZ] __attribute__((aligned(8)));
	struct file_handle *fh = (struct file_handle *)hbuf;
	int mnt_id, e1;
	int mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0) {
		BROKEN(r, "open /: %s", ename(errno));
		return;
	}
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, "/", fh, &mnt_id, 0) == 0) {
		int fd = open_by_handle_at(mfd, fh, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			close(mfd);
			WIN(r, "open_by_handle_at opened the handle of /");
			return;
		}
		e1 = errno;
	} else {
		e1 = errno;
	}
	/* "shocker": a forged handle of inode 2 (the root of ext4/xfs/btrfs-like filesystems) */
	fh->handle_bytes = 8;
	fh->handle_type = 1; /* FILEID_INO32_GEN */
	uint32_t ino_gen[2] = {2, 0};
	memcpy(fh->f_handle, ino_gen, sizeof ino_gen);
	int fd = open_by_handle_at(mfd, fh, O_RDONLY | O_CLOEXEC);
	int e2 = errno;
	close(mfd);
	if (fd >= 0) {
		close(fd);
		WIN(r, "open_by_handle_at opened a forged handle (inode 2)");
		return;
	}
	BLOCK(r, "%s: open_by_handle_at(handle of /), %s: forged inode-2 handle", ename(e1),
	      ename(e2));
}

/* ------------------------------------------------------------------------------------------ */
/* The table */

struct technique {
	const char *name, *group;
	void (*fn)(struct result *);
};

static const struct technique techniques[] = {
    {"userns_unshare", "userns", t_userns_unshare},
    {"userns_clone", "userns", t_userns_clone},
    {"userns_clone3", "userns", t_userns_clone3},
    {"mount_proc", "mount", t_mount_proc},
    {"mount_tmpfs", "mount", t_mount_tmpfs},
    {"mount_sysfs", "mount", t_mount_sysfs},
    {"mount_debugfs", "mount", t_mount_debugfs},
    {"mount_securityfs", "mount", t_mount_securityfs},
    {"mount_bpf", "mount", t_mount_bpf},
    {"fsopen_cgroup", "mount", t_fsopen_cgroup},
    {"fsopen_cgroup_userns", "mount", t_fsopen_cgroup_userns},
    {"open_tree_clone", "mount", t_open_tree_clone},
    {"cgroup1_release_agent", "mount", t_cgroup1_release_agent},
    {"remount_rw", "mount", t_remount_rw},
    {"umount_readonly", "mount", t_umount_readonly},
    {"keyctl_join", "kernel", t_keyctl_join},
    {"add_key", "kernel", t_add_key},
    {"bpf_prog_load", "kernel", t_bpf_prog_load},
    {"bpf_map_create", "kernel", t_bpf_map_create},
    {"perf_event_open", "kernel", t_perf_event_open},
    {"io_uring_setup", "kernel", t_io_uring_setup},
    {"userfaultfd", "kernel", t_userfaultfd},
    {"socket_packet", "socket", t_socket_packet},
    {"socket_vsock", "socket", t_socket_vsock},
    {"socket_alg", "socket", t_socket_alg},
    {"socket_alg_i386", "socket", t_socket_alg_i386},
    {"socket_vsock_i386", "socket", t_socket_vsock_i386},
    {"mknod_block", "device", t_mknod_block},
    {"mknod_mem", "device", t_mknod_mem},
    {"dev_host_nodes", "device", t_dev_host_nodes},
    {"write_sysrq_trigger", "knob", t_write_sysrq_trigger},
    {"write_core_pattern", "knob", t_write_core_pattern},
    {"write_uevent_helper", "knob", t_write_uevent_helper},
    {"write_modprobe", "knob", t_write_modprobe},
    {"write_proc_sys", "knob", t_write_proc_sys},
    {"write_sysfs", "knob", t_write_sysfs},
    {"umount_mask_kcore", "mask", t_umount_mask_kcore},
    {"umount_mask_keys", "mask", t_umount_mask_keys},
    {"read_kcore", "mask", t_read_kcore},
    {"read_masked", "mask", t_read_masked},
    {"fd_leak", "escape", t_fd_leak},
    {"cwd_outside", "escape", t_cwd_outside},
    {"exe_overwrite", "escape", t_exe_overwrite},
    {"chroot_escape", "escape", t_chroot_escape},
    {"proc_root_escape", "escape", t_proc_root_escape},
    {"sysv_ipc_host", "host", t_sysv_ipc_host},
    {"host_pids", "host", t_host_pids},
    {"ptrace_host", "host", t_ptrace_host},
    {"ptrace_pid1", "host", t_ptrace_pid1},
    {"host_netif", "host", t_host_netif},
    {"setns_host", "host", t_setns_host},
    {"apparmor_change", "ids", t_apparmor_change},
    {"personality", "ids", t_personality},
    {"uid_map_write", "ids", t_uid_map_write},
    {"gain_ids", "ids", t_gain_ids},
    {"root_is_host_root", "ids", t_root_is_host_root},
    {"cgroup_parent_write", "cgroup", t_cgroup_parent_write},
    {"cgroup_limits_write", "cgroup", t_cgroup_limits_write},
    {"open_by_handle_at", "syscall", t_open_by_handle_at},
    {"kexec_load", "syscall", t_kexec_load},
    {"finit_module", "syscall", t_finit_module},
    {"delete_module", "syscall", t_delete_module},
    {"swapon", "syscall", t_swapon},
    {"acct", "syscall", t_acct},
    {"settime", "syscall", t_settime},
    {"ioperm", "syscall", t_ioperm},
    {"fanotify", "syscall", t_fanotify},
    {"syslog_read", "syscall", t_syslog_read},
};
#define N_TECH (sizeof techniques / sizeof *techniques)

/* Run one technique in a child; its result comes back through a pipe. */
static void run_one(const struct technique *t, struct result *r)
{
	int p[2];
	memset(r, 0, sizeof *r);
	if (pipe2(p, O_CLOEXEC) < 0) {
		BROKEN(r, "pipe: %s", ename(errno));
		return;
	}
	fflush(stdout);
	/* ptrace_pid1: pid 1 (this probe, in a container) is non-dumpable while it runs */
	bool nondumpable = t->fn == t_ptrace_pid1 && getpid() == 1;
	if (nondumpable)
		prctl(PR_SET_DUMPABLE, 0);
	pid_t pid = fork();
	if (pid < 0) {
		BROKEN(r, "fork: %s", ename(errno));
		if (nondumpable)
			prctl(PR_SET_DUMPABLE, 1);
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		struct result res;
		close(p[0]);
		alarm(20);
		BROKEN(&res, "the technique set no verdict");
		t->fn(&res);
		ssize_t w = write(p[1], &res, sizeof res);
		_exit(w == (ssize_t)sizeof res ? 0 : 1);
	}
	close(p[1]);
	ssize_t got = 0, n;
	while ((size_t)got < sizeof *r && ((n = read(p[0], (char *)r + got, sizeof *r - got)) > 0 ||
					   (n < 0 && errno == EINTR)))
		if (n > 0)
			got += n;
	close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (nondumpable)
		prctl(PR_SET_DUMPABLE, 1);
	if ((size_t)got == sizeof *r)
		return;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
		BLOCK(r, "SIGSYS: killed by seccomp");
	else if (WIFSIGNALED(st))
		BROKEN(r, "the technique died of signal %d (%s)", WTERMSIG(st),
		       strsignal(WTERMSIG(st)));
	else
		BROKEN(r, "the technique exited with status %d without a verdict", WEXITSTATUS(st));
}

static int usage(void)
{
	fprintf(stderr,
		"usage: ward-probe [--chroot DIR | --chroot-keep-cwd DIR] NAME|GROUP|all...\n"
		"       ward-probe --list | --host-ns | --make-shm KEY | --sleep\n");
	return 2;
}

int main(int argc, char **argv)
{
	record_start_fds();
	int i = 1;
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (size_t t = 0; t < N_TECH; t++)
			printf("%s %s\n", techniques[t].name, techniques[t].group);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--sleep")) {
		/* a container's pid 1 for `ward exec ... ward-probe`: non-dumpable, so that
		 * ptrace_pid1 from the exec'd probe needs a privilege it must not have */
		prctl(PR_SET_DUMPABLE, 0);
		for (;;)
			pause();
	}
	if (argc == 2 && !strcmp(argv[1], "--host-ns"))
		return print_host_ns();
	if (argc == 3 && !strcmp(argv[1], "--syscall")) {
		/* the raw syscall NR with no arguments: prints "ok" or the errno's name */
		long r = syscall(strtol(argv[2], NULL, 0), 0, 0, 0, 0, 0, 0);
		printf("%s\n", r < 0 ? strerrorname_np(errno) : "ok");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--make-shm")) {
		int id = shmget((key_t)strtol(argv[2], NULL, 0), 4096, IPC_CREAT | IPC_EXCL | 0666);
		if (id < 0) {
			fprintf(stderr, "ward-probe: shmget %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		printf("%d\n", id);
		return 0;
	}
	if (argc >= 3 && (!strcmp(argv[1], "--chroot") || !strcmp(argv[1], "--chroot-keep-cwd"))) {
		if (chroot(argv[2]) < 0) {
			fprintf(stderr, "ward-probe: chroot %s: %s\n", argv[2], strerror(errno));
			return 2;
		}
		if (!strcmp(argv[1], "--chroot") && chdir("/") < 0)
			return 2;
		i = 3;
	}
	if (i >= argc)
		return usage();

	bool want[N_TECH] = {false};
	for (; i < argc; i++) {
		bool matched = false;
		for (size_t t = 0; t < N_TECH; t++)
			if (!strcmp(argv[i], "all") || !strcmp(argv[i], techniques[t].name) ||
			    !strcmp(argv[i], techniques[t].group)) {
				want[t] = matched = true;
			}
		if (!matched) {
			fprintf(stderr,
				"ward-probe: no technique or group named '%s' (see --list)\n",
				argv[i]);
			return 2;
		}
	}
	int planned = 0, n = 0, bad = 0;
	for (size_t t = 0; t < N_TECH; t++)
		planned += want[t];
	printf("1..%d\n", planned);
	for (size_t t = 0; t < N_TECH; t++) {
		struct result r;
		if (!want[t])
			continue;
		run_one(&techniques[t], &r);
		n++;
		r.msg[sizeof r.msg - 1] = '\0';
		switch (r.verdict) {
		case BLOCKED:
			printf("ok %d - %s: blocked (%s)\n", n, techniques[t].name, r.msg);
			break;
		case SKIPPED:
			printf("ok %d - %s # SKIP %s\n", n, techniques[t].name, r.msg);
			break;
		case SUCCEEDED:
			printf("not ok %d - %s: SUCCEEDED: %s\n", n, techniques[t].name, r.msg);
			bad++;
			break;
		default:
			printf("not ok %d - %s: PROBE ERROR: %s\n", n, techniques[t].name, r.msg);
			bad++;
			break;
		}
		fflush(stdout);
	}
	return bad ? 1 : 0;
}
