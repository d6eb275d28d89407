/* hooks.c: state on stdin, args and env passed, failures reported with the hook's index
 * and path, timeout kills, only the hook's own pid is reaped. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "log.h"
#include "tap.h"
#include "util.h"

static char tmpdir[] = "/tmp/ward-test-hooks-XXXXXX";
static const char *state = "{\"ociVersion\":\"1.3.0\",\"id\":\"hooked\",\"status\":\"creating\"}";

static char *tmp_path(const char *name)
{
	return xasprintf("%s/%s", tmpdir, name);
}

static char *slurp(const char *path)
{
	struct ward_err err;
	return read_file_at(AT_FDCWD, path, NULL, &err);
}

/* One hook: /bin/sh -c SCRIPT. */
static int run_sh(const char *script, char **env, int timeout, struct ward_err *err)
{
	char *args[] = {"sh", "-c", (char *)script, NULL};
	struct ward_hook h = {.path = "/bin/sh", .args = args, .env = env, .timeout = timeout};
	struct ward_hooks hooks = {.v = &h, .n = 1};
	ward_err_clear(err);
	return ward_hooks_run(&hooks, WARD_HOOK_CREATE_RUNTIME, state, err);
}

static void test_kind_names(void)
{
	CHECK(strcmp(ward_hook_kind_name(WARD_HOOK_PRESTART), "prestart") == 0, "prestart name");
	CHECK(strcmp(ward_hook_kind_name(WARD_HOOK_CREATE_RUNTIME), "createRuntime") == 0,
	      "createRuntime name");
	CHECK(strcmp(ward_hook_kind_name(WARD_HOOK_POSTSTOP), "poststop") == 0, "poststop name");
}

static void test_success_stdin(void)
{
	struct ward_err err;
	cleanup_free char *out = tmp_path("state");
	cleanup_free char *script = xasprintf("cat > %s", out);
	cleanup_free char *got = NULL;

	CHECK(run_sh(script, NULL, 0, &err) == 0, "hook that reads stdin succeeds");
	got = slurp(out);
	CHECK(got && strcmp(got, state) == 0, "hook received the state JSON on stdin");
}

static void test_failures(void)
{
	struct ward_err err;
	char *args[] = {"sh", "-c", "exit 0", NULL};
	char *args4[] = {"sh", "-c", "exit 4", NULL};
	struct ward_hook two[2] = {{.path = "/bin/sh", .args = args},
				   {.path = "/bin/sh", .args = args4}};
	struct ward_hooks hooks = {.v = two, .n = 2};
	struct ward_hook missing = {.path = "/nonexistent/ward-hook"};

	CHECK(run_sh("exit 3", NULL, 0, &err) < 0, "exit 3 fails");
	CHECK_STR_CONTAINS(err.msg,
			   "error running hook #1 (createRuntime, /bin/sh): exited with status 3",
			   "exit status message");
	CHECK(run_sh("kill -9 $$", NULL, 0, &err) < 0, "killed hook fails");
	CHECK_STR_CONTAINS(err.msg,
			   "error running hook #1 (createRuntime, /bin/sh): killed by signal 9 "
			   "(killed)",
			   "signal message, in runc's words (runc's seccomp.bats matches them)");

	ward_err_clear(&err);
	CHECK(ward_hooks_run(&hooks, WARD_HOOK_POSTSTART, state, &err) < 0, "second hook fails");
	CHECK_STR_CONTAINS(err.msg,
			   "error running hook #2 (poststart, /bin/sh): exited with status 4",
			   "message names the second hook");

	hooks = (struct ward_hooks){.v = &missing, .n = 1};
	ward_err_clear(&err);
	CHECK(ward_hooks_run(&hooks, WARD_HOOK_CREATE_CONTAINER, state, &err) < 0,
	      "missing binary fails");
	CHECK_STR_CONTAINS(
	    err.msg,
	    "error running hook #1 (createContainer, /nonexistent/ward-hook): exec: No such file "
	    "or directory",
	    "exec error message");
	CHECK(err.errnum == ENOENT, "exec error keeps errno");

	hooks = (struct ward_hooks){.v = NULL, .n = 0};
	CHECK(ward_hooks_run(&hooks, WARD_HOOK_PRESTART, state, &err) == 0, "no hooks: success");
}

/* A process that no longer runs: reaped, or dead and not yet reaped by its new parent. */
static bool gone_or_zombie(pid_t pid)
{
	cleanup_free char *path = xasprintf("/proc/%d/stat", (int)pid);
	cleanup_free char *st = slurp(path);
	const char *p = st ? strrchr(st, ')') : NULL;
	return !st || (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* The number on the line "KEY\tN" of /proc/PID/status text (hex for the Sig* masks, else
 * decimal), all ones when absent. */
static unsigned long long sigmask_of(const char *status, const char *key)
{
	const char *p = status ? strstr(status, key) : NULL;
	return p ? strtoull(p + strlen(key), NULL, strncmp(key, "Sig", 3) ? 10 : 16) : ~0ULL;
}

/* What the hook starts with, whatever state the runtime is in: no blocked or ignored
 * signals, a process group of its own (a timeout kills its children too), the state on
 * stdin even when the runtime's own stdin is closed. */
static void test_spawn_state(void)
{
	struct ward_err err;
	cleanup_free char *out = tmp_path("sigs");
	cleanup_free char *pidf = tmp_path("grandchild");
	cleanup_free char *sleeper = xasprintf("sleep 30 & echo $! > %s; wait", pidf);
	cleanup_free char *got = NULL, *gpid = NULL;
	/* the hook is cat itself, no shell between (a shell resets its signal mask) */
	char *args[] = {"cat", "/proc/self/status", NULL};
	struct ward_hook cat = {.path = "/bin/cat", .args = args};
	struct ward_hooks hooks = {.v = &cat, .n = 1};
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_usr2, old_term;
	sigset_t usr1, oldmask;
	unsigned long long blkmask, ignmask, pid, pgid;
	int saved_stdin, saved_stdout, fd, rc;
	pid_t grandchild;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &oldmask);
	sigaction(SIGUSR2, &ign, &old_usr2);
	sigaction(SIGTERM, &ign, &old_term);
	fflush(stdout);
	saved_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	dup2(fd, STDOUT_FILENO); /* the hook's stdout is ours */
	ward_err_clear(&err);
	rc = ward_hooks_run(&hooks, WARD_HOOK_CREATE_RUNTIME, state, &err);
	dup2(saved_stdout, STDOUT_FILENO);
	close(saved_stdout);
	close(fd);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	sigaction(SIGUSR2, &old_usr2, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	CHECK(rc == 0, "hook printing its own status succeeds");
	got = slurp(out);
	blkmask = sigmask_of(got, "SigBlk:");
	ignmask = sigmask_of(got, "SigIgn:");
	pid = sigmask_of(got, "\nPid:");
	pgid = sigmask_of(got, "NSpgid:");
	CHECK(got && !(blkmask & (1ULL << (SIGUSR1 - 1))),
	      "SIGUSR1, blocked in the runtime, is not blocked in the hook");
	CHECK(got && !(ignmask & ((1ULL << (SIGUSR2 - 1)) | (1ULL << (SIGTERM - 1)))),
	      "SIGUSR2 and SIGTERM, ignored in the runtime, are not ignored in the hook");
	CHECK(got && pid != ~0ULL && pid == pgid, "the hook leads a process group of its own");
	if (!got || (blkmask & (1ULL << (SIGUSR1 - 1))) ||
	    (ignmask & ((1ULL << (SIGUSR2 - 1)) | (1ULL << (SIGTERM - 1)))) || pid != pgid)
		printf("#   got %s", got ? got : "(nothing)\n");

	/* a timeout kills what the hook started, not only the hook */
	CHECK(run_sh(sleeper, NULL, 1, &err) < 0, "timed out hook with a child fails");
	gpid = slurp(pidf);
	grandchild = gpid ? (pid_t)atoi(gpid) : 0;
	for (int i = 0; grandchild > 0 && i < 200 && !gone_or_zombie(grandchild); i++)
		usleep(10000); /* killed; reparented to a reaper that may take its time */
	CHECK(grandchild > 0 && gone_or_zombie(grandchild),
	      "the hook's child is killed with it on timeout");
	if (grandchild > 0 && !gone_or_zombie(grandchild))
		kill(grandchild, SIGKILL);

	/* the runtime's stdin closed: the state pipe may be fd 0, the hook still reads it */
	saved_stdin = dup(STDIN_FILENO);
	close(STDIN_FILENO);
	free(got);
	got = NULL;
	{
		cleanup_free char *readback = xasprintf("cat > %s", out);
		CHECK(run_sh(readback, NULL, 5, &err) == 0, "hook with the runtime's stdin closed");
	}
	dup2(saved_stdin, STDIN_FILENO);
	close(saved_stdin);
	got = slurp(out);
	CHECK(got && !strcmp(got, state), "the hook read the whole state although fd 0 was free");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_timeout(void)
{
	struct ward_err err;
	double t0 = now(), took;
	int rc = run_sh("sleep 10", NULL, 1, &err);

	took = now() - t0;
	CHECK(rc < 0, "sleep 10 with timeout 1 fails");
	CHECK_STR_CONTAINS(err.msg,
			   "error running hook #1 (createRuntime, /bin/sh): timed out after 1 s",
			   "timeout message");
	CHECK(took >= 0.9 && took < 3.0, "timeout fires after about 1 s");
	if (!(took >= 0.9 && took < 3.0))
		printf("#   took %.2f s\n", took);
	CHECK(run_sh("exit 0", NULL, 5, &err) == 0, "fast hook with a timeout succeeds");
}

static void test_env_args(void)
{
	struct ward_err err;
	cleanup_free char *out = tmp_path("env");
	cleanup_free char *script = xasprintf("echo \"FOO=$FOO HOME=${HOME-unset}\" > %s", out);
	cleanup_free char *got = NULL;
	cleanup_free char *args_out = tmp_path("args");
	cleanup_free char *hook_path = tmp_path("hook.sh");
	cleanup_free char *hook_text = xasprintf("#!/bin/sh\necho \"$0|$#|$*\" > %s\n", args_out);
	char *env[] = {"FOO=bar", NULL};
	char *args[] = {"my-hook", "one", "two words", NULL};
	struct ward_hook h = {.path = hook_path};
	struct ward_hooks hooks = {.v = &h, .n = 1};

	CHECK(run_sh(script, env, 0, &err) == 0, "hook with env succeeds");
	got = slurp(out);
	CHECK(got && strcmp(got, "FOO=bar HOME=unset\n") == 0, "env is exactly the hook's env");
	free(steal_ptr(got));
	CHECK(run_sh(script, NULL, 0, &err) == 0, "hook without env succeeds");
	got = slurp(out);
	CHECK(got && strcmp(got, "FOO= HOME=unset\n") == 0, "no env: empty environment");
	free(steal_ptr(got));

	CHECK(write_file_at(AT_FDCWD, hook_path, O_CREAT | O_TRUNC, 0755, hook_text,
			    strlen(hook_text), &err) == 0,
	      "write hook script");
	CHECK(ward_hooks_run(&hooks, WARD_HOOK_START_CONTAINER, state, &err) == 0,
	      "hook without args succeeds");
	got = slurp(args_out);
	{
		cleanup_free char *want = xasprintf("%s|0|\n", hook_path);
		CHECK(got && strcmp(got, want) == 0, "no args: argv is {path}");
	}
	free(steal_ptr(got));
	h.args = args;
	CHECK(ward_hooks_run(&hooks, WARD_HOOK_START_CONTAINER, state, &err) == 0,
	      "hook with args succeeds");
	got = slurp(args_out);
	{
		/* the kernel puts the script path where argv[0] was for #! scripts */
		cleanup_free char *want = xasprintf("%s|2|one two words\n", hook_path);
		CHECK(got && strcmp(got, want) == 0, "args passed as argv");
	}
}

static void test_fds_and_stdin(void)
{
	struct ward_err err;
	cleanup_free char *out = tmp_path("fds");
	cleanup_free char *script = xasprintf("exec > %s; echo /proc/$$/fd/*", out);
	cleanup_free char *got = NULL;
	cleanup_free char *big = xmalloc(1 << 20);
	char *args[] = {"sh", "-c", "exit 0", NULL};
	struct ward_hook h = {.path = "/bin/sh", .args = args};
	struct ward_hooks hooks = {.v = &h, .n = 1};
	int leak = dup2(STDERR_FILENO, 77); /* no CLOEXEC on purpose */

	CHECK(run_sh(script, NULL, 0, &err) == 0, "fd listing hook succeeds");
	got = slurp(out);
	CHECK(got && strstr(got, "/fd/0 ") && strstr(got, "/fd/1 ") && strstr(got, "/fd/2"),
	      "hook has fds 0, 1, 2");
	CHECK(got && !strstr(got, "/fd/77"), "inherited fd 77 is closed before exec");
	if (got && strstr(got, "/fd/77"))
		printf("#   got %s", got);
	close(leak);

	/* A hook that never reads a 1 MiB state must not block us or SIGPIPE us. */
	memset(big, 'x', (1 << 20) - 1);
	big[(1 << 20) - 1] = '\0';
	ward_err_clear(&err);
	CHECK(ward_hooks_run(&hooks, WARD_HOOK_POSTSTOP, big, &err) == 0,
	      "hook that ignores a large stdin succeeds");
}

static void test_children(void)
{
	struct ward_err err;
	pid_t other;
	int status = 0;
	struct sigaction ign = {.sa_handler = SIG_IGN}, old;

	fflush(stdout);
	other = fork();
	if (other == 0)
		_exit(7);
	usleep(100000); /* let it become a zombie before the hook runs */
	CHECK(run_sh("exit 0", NULL, 2, &err) == 0, "hook runs beside another child");
	CHECK(waitpid(other, &status, WNOHANG) == other && WEXITSTATUS(status) == 7,
	      "the unrelated child was not reaped by the hook runner");

	sigaction(SIGCHLD, &ign, &old);
	CHECK(run_sh("exit 5", NULL, 0, &err) < 0, "ignored SIGCHLD: status still seen");
	CHECK_STR_CONTAINS(err.msg, "exited with status 5", "ignored SIGCHLD message");
	sigaction(SIGCHLD, NULL, &ign);
	CHECK(ign.sa_handler == SIG_IGN, "SIGCHLD disposition restored");
	sigaction(SIGCHLD, &old, NULL);
}

/* As the container's init: pid 1 of a new pid namespace. */
static void test_as_init(void)
{
	int p[2], status = 0;
	pid_t pid;
	struct {
		int pid, ok_rc, fail_rc;
		char msg[200];
	} r = {0};

	fflush(stdout);
	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	pid = fork();
	if (pid == 0) {
		pid_t init;
		if (unshare(CLONE_NEWPID) < 0)
			_exit(3);
		init = fork();
		if (init == 0) {
			struct ward_err err;
			r.pid = getpid();
			r.ok_rc = run_sh("read x; exit 0", NULL, 2, &err);
			r.fail_rc = run_sh("exit 3", NULL, 0, &err);
			snprintf(r.msg, sizeof(r.msg), "%.150s", err.msg);
			(void)!write(p[1], &r, sizeof(r));
			_exit(0);
		}
		waitpid(init, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 4);
	}
	close(p[1]);
	if (read_exact(p[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		r.pid = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	if (r.pid == -1 && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
		printf("ok %d - hooks as pid 1 # skip unshare(CLONE_NEWPID) not permitted\n",
		       ++tap_n);
		return;
	}
	CHECK(r.pid == 1, "runner is pid 1 of a new pid namespace");
	CHECK(r.ok_rc == 0, "hook succeeds when run from pid 1");
	CHECK(r.fail_rc < 0, "failing hook reported from pid 1");
	CHECK_STR_CONTAINS(r.msg, "exited with status 3", "pid 1 failure message");
}

/* ward_hook_read_state: what ward's hook programs accept on stdin. */
static json_t *state_from(const char *text, bool need_pid, struct ward_err *err)
{
	int p[2];
	json_t *st;

	if (pipe(p) < 0)
		return NULL;
	(void)!write(p[1], text, strlen(text));
	close(p[1]);
	st = ward_hook_read_state(p[0], need_pid, err);
	close(p[0]);
	return st;
}

static void test_read_state(void)
{
	struct ward_err err = {0};
	json_t *st;

	st = state_from("{\"ociVersion\": \"1.2.0\", \"id\": \"c1\", \"pid\": 42, "
			"\"status\": \"creating\", \"bundle\": \"/b\"}",
			true, &err);
	CHECK(st && json_integer_value(json_object_get(st, "pid")) == 42, "read_state: a state");
	json_decref(st);
	st = state_from("[1]", false, &err);
	CHECK(!st && strstr(err.msg, "state on stdin: not a JSON object"),
	      "read_state: not an object");
	st = state_from("{\"id\": ", false, &err);
	CHECK(!st && strstr(err.msg, "state on stdin: "), "read_state: malformed JSON");
	st = state_from("{\"id\": \"../x\"}", false, &err);
	CHECK(!st && strstr(err.msg, "no valid container \"id\""), "read_state: a bad id");
	st = state_from("{\"id\": \"c1\"}", true, &err);
	CHECK(!st && strstr(err.msg, "no \"pid\""), "read_state: no pid where one is needed");
	st = state_from("{\"id\": \"c1\", \"pid\": 0}", false, &err);
	CHECK(st != NULL, "read_state: no pid needed (poststop)");
	json_decref(st);
}

int main(void)
{
	cleanup_free char *cmd = NULL;

	/* line-buffered: a forked child (valgrind turns a failed exec into an exit) must not
	 * repeat buffered TAP lines */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ward_log_open("/dev/null", false, true);
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_kind_names();
	test_success_stdin();
	test_failures();
	test_timeout();
	test_env_args();
	test_fds_and_stdin();
	test_spawn_state();
	test_children();
	test_as_init();
	test_read_state();
	cmd = xasprintf("rm -rf %s", tmpdir);
	(void)!system(cmd);
	TAP_DONE();
}
