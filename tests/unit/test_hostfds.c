/* hostfds.c: each host path a pod names is opened once, and what is reported is the object
 * the fd holds; namespace paths that are not namespace files are refused before anything
 * reads them. */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hostfds.h"
#include "tap.h"
#include "util.h"

static char dir[PATH_MAX];

/* ward_hostfds_open on the bundle dir, opened as effective.c opens it */
static int hostfds_open(json_t *o, struct ward_hostfds *t, struct ward_err *err)
{
	cleanup_fd int bfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return ward_hostfds_open(o, bfd, dir, t, err);
}

static json_t *pod(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static json_t *pod(const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	json_t *o;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	o = json_loads(buf, 0, NULL);
	if (!o)
		printf("# bad JSON: %s\n", buf);
	return o;
}

static void test_root_and_mounts(void)
{
	struct ward_hostfds t;
	struct ward_err err = {0};
	char p[PATH_MAX + 64];
	const struct ward_hostfd *r, *m0, *m1, *m2;
	json_t *o;

	snprintf(p, sizeof(p), "%s/real", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/link", dir);
	if (symlink("real", p) < 0 && errno != EEXIST)
		perror("symlink");
	o = pod("{\"root\": {\"path\": \"link\"}, \"mounts\": ["
		"{\"destination\": \"/a\", \"type\": \"bind\", \"source\": \"%s/link\"},"
		"{\"destination\": \"/b\", \"source\": \"%s/link\", \"options\": [\"rbind\"]},"
		"{\"destination\": \"/c\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"},"
		"{\"destination\": \"/d\", \"type\": \"bind\", \"source\": \"missing\"}]}",
		dir, dir);
	CHECK(hostfds_open(o, &t, &err) == 0, "root and bind sources opened");
	r = ward_hostfds_root(&t);
	snprintf(p, sizeof(p), "%s/real", dir);
	CHECK(r && r->fd >= 0 && r->path && !strcmp(r->path, p) && S_ISDIR(r->st.st_mode),
	      "root.path: a relative symlink is reported as what the fd holds");
	m0 = ward_hostfds_mount(&t, 0);
	m1 = ward_hostfds_mount(&t, 1);
	CHECK(m0 && m0 == m1, "the same source named twice is opened once (one object)");
	CHECK(m0 && m0->fd >= 0 && !strcmp(m0->path, p), "bind source: real path from the fd");
	CHECK(!ward_hostfds_mount(&t, 2), "not a bind: nothing opened");
	m2 = ward_hostfds_mount(&t, 3);
	CHECK(m2 && m2->fd < 0 && m2->errnum == ENOENT, "a missing source is recorded, not fatal");
	CHECK(ward_hostfd_get(m2, "source", &err) < 0, "using a missing source fails");
	snprintf(p, sizeof(p), "source %s/missing", dir);
	CHECK_STR_CONTAINS(err.msg, p, "and names it");
	snprintf(p, sizeof(p), "%s/link", dir);
	CHECK(ward_hostfds_find(&t, p) == m0, "found by its name");
	ward_hostfds_close(&t);
	json_decref(o);
}

static void refused_ns(const char *path, const char *why, const char *name)
{
	struct ward_hostfds t;
	struct ward_err err = {0};
	char want[PATH_MAX + 64];
	json_t *o = pod("{\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, "
			"{\"type\": \"network\", \"path\": \"%s\"}]}}",
			path);

	CHECK(hostfds_open(o, &t, &err) < 0, name);
	snprintf(want, sizeof(want), "linux.namespaces[1] (network): %s %s", path, why);
	CHECK_STR_CONTAINS(err.msg, want, "the error names the entry, its type and the path");
	CHECK(t.n == 0 && t.v == NULL, "nothing is left open");
	json_decref(o);
}

static void test_namespaces(void)
{
	struct ward_hostfds t;
	struct ward_err err = {0};
	char p[PATH_MAX + 64];
	json_t *o;

	snprintf(p, sizeof(p), "%s/fifo", dir);
	mkfifo(p, 0600);
	refused_ns(p, "is not a namespace file", "a FIFO is refused without blocking");
	snprintf(p, sizeof(p), "%s/file", dir);
	close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	refused_ns(p, "is not a namespace file", "a regular file is refused");
	refused_ns(dir, "is not a namespace file", "a directory is refused");
	refused_ns("/dev/null", "is not a namespace file", "a device node is refused");
	refused_ns("/proc/self/ns/uts", "is not a network namespace",
		   "a namespace of another kind is refused");

	o = pod("{\"linux\": {\"namespaces\": [{\"type\": \"network\", \"path\": "
		"\"/proc/self/ns/net\"}]}}");
	CHECK(hostfds_open(o, &t, &err) == 0, "a network namespace file is held");
	CHECK(ward_hostfds_ns(&t, CLONE_NEWNET) && ward_hostfds_ns(&t, CLONE_NEWNET)->fd >= 0 &&
		  (fcntl(ward_hostfds_ns(&t, CLONE_NEWNET)->fd, F_GETFL) & O_ACCMODE) == O_RDONLY,
	      "held O_RDONLY (setns takes it)");
	CHECK(ward_hostfds_find_ns(&t, "/proc/self/ns/net") != NULL &&
		  ward_hostfds_find(&t, "/proc/self/ns/net") == NULL,
	      "namespace entries are apart from paths");
	ward_hostfds_close(&t);
	json_decref(o);
}

/* A source through /proc/PID/root into another mount namespace: the kernel reports the
 * object's path as that namespace sees it; the entry is refused, not checked by that path. */
static void test_other_mount_ns(void)
{
	struct ward_hostfds t;
	struct ward_err err = {0};
	char p[PATH_MAX + 128], inner[PATH_MAX];
	int ready[2], done[2];
	pid_t pid;
	json_t *o;

	snprintf(inner, sizeof(inner), "%.4000s/other", dir);
	mkdir(inner, 0755);
	if (pipe(ready) < 0 || pipe(done) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		char c = 0;
		snprintf(p, sizeof(p), "%s/only-there", inner);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) < 0 ||
		    mount("tmpfs", inner, "tmpfs", 0, NULL) < 0 || mkdir(p, 0755) < 0)
			c = 1;
		if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	{
		char c = 1;
		if (read(ready[0], &c, 1) != 1 || c) {
			CHECK(0, "another mount namespace (needs root)");
			goto out;
		}
	}
	o = pod("{\"mounts\": [{\"destination\": \"/a\", \"type\": \"bind\", \"source\": "
		"\"/proc/%d/root%s/only-there\"}]}",
		(int)pid, inner);
	CHECK(hostfds_open(o, &t, &err) == 0, "a source in another mount namespace");
	CHECK(ward_hostfds_mount(&t, 0) && ward_hostfds_mount(&t, 0)->fd < 0 &&
		  ward_hostfds_mount(&t, 0)->errnum == EXDEV,
	      "is not taken for the path the kernel reports for it");
	CHECK(ward_hostfd_get(ward_hostfds_mount(&t, 0), "source", &err) < 0, "using it fails");
	CHECK_STR_CONTAINS(err.msg, "an object of another mount namespace", "saying why");
	ward_hostfds_close(&t);
	json_decref(o);
out:
	if (write(done[1], "x", 1) < 0)
		perror("write");
	waitpid(pid, NULL, 0);
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
}

/* A relative root goes through the bundle's fd: a bundle directory swapped under its name
 * after it was opened (its config.json read through that fd) does not change what the
 * root is. */
static void test_bundle_swapped(void)
{
	char b1[PATH_MAX + 16], moved[PATH_MAX + 16], p[PATH_MAX + 48];
	struct ward_hostfds t;
	struct ward_err err = {0};
	struct stat want;
	const struct ward_hostfd *r;
	json_t *o = pod("{\"root\": {\"path\": \"rootfs\"}}");
	int bfd;

	snprintf(b1, sizeof(b1), "%s/bundle", dir);
	snprintf(moved, sizeof(moved), "%s/bundle.moved", dir);
	snprintf(p, sizeof(p), "%s/rootfs", b1);
	if (mkdir(b1, 0755) < 0 || mkdir(p, 0755) < 0 || stat(p, &want) < 0)
		abort();
	bfd = open(b1, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* swapped: the name now holds another bundle with another rootfs */
	if (rename(b1, moved) < 0 || mkdir(b1, 0755) < 0 || mkdir(p, 0755) < 0)
		abort();
	CHECK(ward_hostfds_open(o, bfd, b1, &t, &err) == 0, "bundle swapped: opened");
	r = ward_hostfds_root(&t);
	CHECK(r && r->fd >= 0 && r->st.st_ino == want.st_ino && r->st.st_dev == want.st_dev,
	      "bundle swapped under its name: the root is the one in the directory opened");
	ward_hostfds_close(&t);
	json_decref(o);
	close(bfd);
}

int main(void)
{
	char tmpl[] = "/tmp/ward-test-hostfds-XXXXXX";

	if (!mkdtemp(tmpl))
		return 1;
	snprintf(dir, sizeof(dir), "%s", tmpl);
	test_root_and_mounts();
	test_namespaces();
	test_other_mount_ns();
	test_bundle_swapped();
	{
		char cmd[PATH_MAX + 16];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	TAP_DONE();
}
