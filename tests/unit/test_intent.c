/* Unit tests: intent.json round trip, the pod's tenant check seeing creates under way
 * (intent without state.json), the pod lock, the state dir made locked, kill points. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fault.h"
#include "intent.h"
#include "pod.h"
#include "pod_member.h"
#include "state.h"
#include "tap.h"
#include "tenant.h"
#include "util.h"

static char *tmpdir(void)
{
	char tmpl[] = "/tmp/ward-intent-XXXXXX";
	char *d = mkdtemp(tmpl);
	return d ? xstrdup(d) : NULL;
}

static void rm_rf(const char *path)
{
	char *cmd = xasprintf("rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", path);
	free(cmd);
}

static void test_roundtrip(void)
{
	cleanup_free char *root = tmpdir();
	struct ward_err err = {0};
	struct ward_intent in = {0}, back = {0};
	cleanup_fd int fd = -1;

	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(ward_intent_read(fd, &back, &err) < 0 && err.errnum == ENOENT,
	      "no intent.json: ENOENT");
	in.tenant = xstrdup("a");
	in.pod = xstrdup("pod-1");
	in.bundle = xstrdup("/b");
	in.ids_owner = xstrdup("pod:a/pod-1");
	in.ids_start = 524288;
	in.ids_size = 65536;
	in.gpus = strv_append(strv_append(xcalloc(1, sizeof(char *)), "GPU-1"), "GPU-2");
	in.cgroup = xstrdup("/sys/fs/cgroup/ward/a/c1");
	in.ran = true;
	CHECK(ward_intent_write(fd, &in, &err) == 0, "intent written");
	CHECK(faccessat(fd, WARD_INTENT_JSON ".tmp", F_OK, 0) < 0, "no temporary file left");
	CHECK(ward_intent_read(fd, &back, &err) == 0, "intent read back");
	CHECK(back.tenant && !strcmp(back.tenant, "a") && back.pod && !strcmp(back.pod, "pod-1") &&
		  back.bundle && !strcmp(back.bundle, "/b"),
	      "tenant, pod, bundle");
	CHECK(back.ids_owner && !strcmp(back.ids_owner, "pod:a/pod-1") &&
		  back.ids_start == 524288 && back.ids_size == 65536,
	      "ID-pool owner and range");
	CHECK(back.gpus && strv_len(back.gpus) == 2 && !strcmp(back.gpus[1], "GPU-2"), "GPUs");
	CHECK(back.cgroup && !strcmp(back.cgroup, in.cgroup) && back.ran, "cgroup and ran");
	ward_intent_clear(&back);

	/* only what is known yet */
	ward_intent_clear(&in);
	in.tenant = xstrdup("a");
	in.pod = xstrdup("p");
	CHECK(ward_intent_write(fd, &in, &err) == 0, "a partial intent is written");
	CHECK(ward_intent_read(fd, &back, &err) == 0 && !back.ids_owner && !back.gpus &&
		  !back.cgroup && !back.ran,
	      "what is not named reads as nothing");
	ward_intent_clear(&back);
	ward_intent_clear(&in);

	CHECK(write_file_at(fd, WARD_INTENT_JSON, O_TRUNC, 0600, "{nope", 5, &err) == 0,
	      "corrupt the intent");
	CHECK(ward_intent_read(fd, &back, &err) < 0 && err.errnum == EINVAL, "corrupt: EINVAL");
	CHECK_STR_CONTAINS(err.msg, "intent.json", "the error names the file");
	rm_rf(root);
}

static void test_check_pod(void)
{
	cleanup_free char *root = tmpdir();
	struct ward_err err = {0};
	struct ward_intent in = {.tenant = "a", .pod = "pod-1"};
	cleanup_fd int rootfd = -1;
	cleanup_fd int dfd = -1;

	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dfd = ward_state_create(rootfd, "c1", &err);
	CHECK(dfd >= 0, "state dir made");
	CHECK(ward_intent_write(dfd, &in, &err) == 0, "intent of a create under way");
	CHECK(ward_pod_check_tenant(rootfd, "pod-1", "b", &err) < 0,
	      "another tenant is refused while c1 is only an intent");
	CHECK_STR_CONTAINS(err.msg, "pod \"pod-1\" already has container \"c1\" of tenant \"a\"",
			   "the refusal names the pod, the container and its tenant");
	CHECK(ward_pod_check_tenant(rootfd, "pod-1", "a", &err) == 0, "the same tenant is fine");
	CHECK(ward_pod_check_tenant(rootfd, "pod-2", "b", &err) == 0, "another pod is fine");
	rm_rf(root);
}

static void test_state_create_locked(void)
{
	cleanup_free char *root = tmpdir();
	struct ward_err err = {0};
	cleanup_fd int rootfd = -1;
	cleanup_fd int dfd = -1;
	cleanup_fd int other = -1;
	char *cmd;

	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dfd = ward_state_create(rootfd, "c1", &err);
	CHECK(dfd >= 0, "state dir made");
	other = openat(rootfd, "c1", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(other >= 0 && flock(other, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK,
	      "it has its name only once it is locked");
	CHECK(ward_state_create(rootfd, "c1", &err) < 0, "a second create of the id fails");
	CHECK_STR_CONTAINS(err.msg, "container with given ID already exists", "runc's wording");
	cmd = xasprintf("test -z \"$(ls -A '%s' | grep -vx c1)\"", root);
	CHECK(system(cmd) == 0, "no temporary dir is left");
	free(cmd);
	rm_rf(root);
}

static void test_pod_lock(void)
{
	cleanup_free char *lib = tmpdir();
	cleanup_free char *sub = NULL;
	cleanup_free char *path = NULL;
	struct ward_err err = {0};
	struct stat st;
	int fd;
	pid_t pid;
	int status;

	sub = xasprintf("%s/lib", lib);
	CHECK(ward_pod_lock_at(sub, "../x", &err) < 0, "an invalid pod id is refused");
	CHECK_STR_CONTAINS(err.msg, "invalid pod id \"../x\"", "the error names it");
	CHECK(ward_pod_lock_at("rel", "p", &err) < 0, "a relative lib_dir is refused");
	fd = ward_pod_lock_at(sub, "p", &err);
	CHECK(fd >= 0, "pod locked");
	path = xasprintf("%s/pods/pods.lock", sub);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "lib_dir/pods/pods.lock, 0600");
	pid = fork();
	if (pid == 0) {
		/* A lock of the whole file meets the pod's byte wherever it is. */
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		int f = open(path, O_RDWR | O_CLOEXEC);
		_exit(f >= 0 && fcntl(f, F_OFD_SETLK, &fl) < 0 && errno == EAGAIN ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "another process cannot take it");
	pid = fork();
	if (pid == 0) {
		struct ward_err e = {0};
		_exit(ward_pod_lock_at(sub, "p", &e) >= 0 ? 1 : 2);
	}
	/* Still waiting after a second: killed then (not with an alarm in the child: under
	 * valgrind a signal does not end a blocked F_OFD_SETLKW). */
	for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(10000);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "another create of the same pod waits for it");
	int fq = ward_pod_lock_at(sub, "q", &err);
	CHECK(fq >= 0, "another pod's lock is not held up by it");
	close(fq);
	cleanup_free char *cmd = xasprintf("test \"$(ls -A '%s/pods')\" = pods.lock", sub);
	CHECK(system(cmd) == 0, "one lock file for every pod, none per pod");
	close(fd);
	fd = ward_pod_lock_at(sub, "p", &err);
	CHECK(fd >= 0, "locked again once released");
	close(fd);
	rm_rf(lib);
}

static void test_fault_points(void)
{
	pid_t pid;
	int status;
	size_t n = 0;

	for (size_t i = 0; ward_fault_points[i]; i++)
		n++;
	CHECK(n >= 15, "the kill points are listed");
	unsetenv(WARD_FAULT_ENV);
	ward_fault_point("create.ids");
	CHECK(true, "unset: a kill point does nothing");
	pid = fork();
	if (pid == 0) {
		setenv(WARD_FAULT_ENV, "create.ids", 1);
		ward_fault_point("create.cgroup");
		ward_fault_point("create.ids");
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "WARD_FAULT_KILL=create.ids: killed at that point, not another");
}

int main(void)
{
	test_roundtrip();
	test_check_pod();
	test_state_create_locked();
	test_pod_lock();
	test_fault_points();
	TAP_DONE();
}
