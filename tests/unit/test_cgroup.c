/* cgroup.c's teardown wait: ward_cgroup_wait_empty wakes on the kernel's cgroup.events
 * notification (no fixed polling step) and keeps its bound; ward_cgroup_destroy removes a
 * populated cgroup. Needs root and cgroup v2 (skipped otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "tap.h"
#include "util.h"

static char cg[256], home[4200];

static long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, s, strlen(s));
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* This process's cgroup v2 directory (the "0::" line of /proc/self/cgroup). */
static int own_cgroup(const char *v2)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int ok = -1;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(home, sizeof(home), "%s%s", v2, line + 3);
		ok = 0;
	}
	if (f)
		fclose(f);
	return ok;
}

/* A child that joins cg, tells the parent, and after leave_ms (if >= 0) moves back to the
 * parent's cgroup; then it sleeps until killed. */
static pid_t child_in_cgroup(long leave_ms)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		char procs[300], back[4300];
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
		snprintf(back, sizeof(back), "%s/cgroup.procs", home);
		if (write_file(procs, "0") < 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		if (leave_ms >= 0) {
			struct timespec ts = {leave_ms / 1000, (leave_ms % 1000) * 1000000L};
			nanosleep(&ts, NULL);
			if (write_file(back, "0") < 0)
				_exit(1);
		}
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1) {
		close(p[0]);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return -1;
	}
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	struct ward_err err = {0};
	const char *v2 = ward_cgroup_v2_root(&err);
	unsigned reads = 0;
	long t0, dt;
	pid_t pid;
	int r;

	if (geteuid() != 0 || !v2 || own_cgroup(v2) < 0) {
		printf("ok %d # skip not root or no cgroup v2\n", ++tap_n);
		TAP_DONE();
	}
	snprintf(cg, sizeof(cg), "%s/ward-unit-cgroup-%d", v2, (int)getpid());
	if (ward_cgroup_create(cg, &err) < 0) {
		CHECK(0, "create a test cgroup");
		printf("#   %s\n", err.msg);
		TAP_DONE();
	}

	/* An empty cgroup: at once, one read. */
	r = ward_cgroup_wait_empty(cg, 2000, &reads);
	CHECK(r == 1 && reads == 1, "wait_empty: an empty cgroup at once");

	/* A process leaves after 200 ms: the wait returns right after, woken by the kernel's
	 * cgroup.events notification (a few reads, not one per millisecond). */
	pid = child_in_cgroup(200);
	CHECK(pid > 0, "a child in the test cgroup");
	if (pid > 0) {
		reads = 0;
		t0 = now_ms();
		r = ward_cgroup_wait_empty(cg, 10000, &reads);
		dt = now_ms() - t0;
		CHECK(r == 1, "wait_empty: empty once the process left");
		CHECK(dt >= 150, "wait_empty: not before the process left");
		CHECK(reads <= 4, "wait_empty: woken by the event, not by a polling step");
		printf("#   waited %ld ms, %u reads of cgroup.events\n", dt, reads);
		reap(pid);
	}

	/* A process that stays: the bound holds. */
	pid = child_in_cgroup(-1);
	if (pid > 0) {
		reads = 0;
		t0 = now_ms();
		r = ward_cgroup_wait_empty(cg, 100, &reads);
		dt = now_ms() - t0;
		CHECK(r == 0 && dt >= 100 && dt < 5000, "wait_empty: times out at its bound");
		CHECK(reads <= 3, "wait_empty: no polling while it waits");
		/* destroy kills what is left, waits for the cgroup to empty, removes it */
		t0 = now_ms();
		r = ward_cgroup_destroy(cg, &err);
		dt = now_ms() - t0;
		CHECK(r == 0 && access(cg, F_OK) < 0 && errno == ENOENT,
		      "destroy: a populated cgroup is killed and removed");
		CHECK(dt < 5000, "destroy: returns (its own bound is 2 s)");
		CHECK(waitpid(pid, &r, 0) == pid && WIFSIGNALED(r) && WTERMSIG(r) == SIGKILL,
		      "destroy: the process in it was killed");
	}

	/* A cgroup the workload made inside (a nested runtime): destroy kills the subtree,
	 * removes the child cgroup, then its own. */
	if (ward_cgroup_create(cg, &err) == 0) {
		char outer[sizeof(cg)];
		snprintf(outer, sizeof(outer), "%s", cg);
		snprintf(cg, sizeof(cg), "%.240s/nested", outer);
		pid = ward_cgroup_create(cg, &err) == 0 ? child_in_cgroup(-1) : -1;
		snprintf(cg, sizeof(cg), "%s", outer);
		CHECK(pid > 0, "a child in a nested cgroup");
		t0 = now_ms();
		r = ward_cgroup_destroy(cg, &err);
		dt = now_ms() - t0;
		CHECK(r == 0 && access(cg, F_OK) < 0 && dt < 5000,
		      "destroy: a cgroup with a populated child cgroup is removed");
		if (pid > 0)
			CHECK(waitpid(pid, &r, 0) == pid && WIFSIGNALED(r) &&
				  WTERMSIG(r) == SIGKILL,
			      "destroy: the process in the child cgroup was killed");
	}

	/* No cgroup.events to watch: -1, so the caller falls back to its polling loop. */
	CHECK(ward_cgroup_wait_empty("/nonexistent-ward-cgroup", 100, NULL) == -1,
	      "wait_empty: -1 without cgroup.events");

	{
		char nested[sizeof(cg) + 8];
		snprintf(nested, sizeof(nested), "%s/nested", cg);
		rmdir(nested);
		rmdir(cg);
	}
	TAP_DONE();
}
