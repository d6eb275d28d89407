/* OCI hooks: fork, exec path with args and env, state JSON on stdin, optional timeout.
 * Waits only for the hook's own pid (through a pidfd), never for other children. */
#include "hooks.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "state.h"
#include "util.h"

const char *ward_hook_kind_name(enum ward_hook_kind k)
{
	if ((unsigned)k >= WARD_HOOK__COUNT)
		return "unknown";
	return ward_hook_names[k];
}

/* In the forked child: only async-signal-safe calls. stdin becomes the read end of
 * the state pipe, every other fd >= 3 except the CLOEXEC error pipe is closed. */
static __attribute__((noreturn)) void child_exec(int in_r, int err_w, const char *path,
						 char *const argv[], char *const envp[])
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t none;
	int e, in;

	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &dfl, NULL); /* fails harmlessly for KILL, STOP, RT */
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)setpgid(0, 0); /* so a timeout also kills what the hook started */

	e = fcntl(err_w, F_DUPFD_CLOEXEC, 3);
	in = fcntl(in_r, F_DUPFD_CLOEXEC, 3);
	if (e < 0 || in < 0 || dup2(in, STDIN_FILENO) < 0)
		goto fail;
	if ((e > 3 && close_range(3, (unsigned)e - 1, 0) < 0) ||
	    close_range((unsigned)e + 1, ~0U, 0) < 0)
		for (int fd = 3; fd < 65536; fd++) /* kernels before 5.9 */
			if (fd != e)
				(void)close(fd);
	execve(path, argv, envp);
fail:
	e = e < 0 ? err_w : e;
	{
		int errnum = errno;
		(void)!write(e, &errnum, sizeof(errnum));
	}
	_exit(127);
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Write more of the state to the hook; closes *fd when done or the hook closed stdin. */
static void feed_stdin(int *fd, const char *data, size_t len, size_t *off)
{
	while (*off < len) {
		ssize_t w = write(*fd, data + *off, len - *off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0)
			break; /* EPIPE: the hook does not read its stdin; that is its choice */
		*off += (size_t)w;
	}
	close(*fd);
	*fd = -1;
}

struct hook_result {
	int exec_errno; /* execve failed */
	bool timed_out;
	int status; /* waitpid status */
};

/* SIGKILL the hook and what it started (its process group). */
static void kill_hook(pid_t pid, int pidfd)
{
	(void)kill(-pid, SIGKILL);
	if (pidfd < 0 || ward_pidfd_send_signal(pidfd, SIGKILL) < 0)
		(void)kill(pid, SIGKILL); /* not reaped yet, so the pid is still ours */
}

/* Without pidfds (kernels before 5.3, valgrind) exit is noticed by polling waitpid. */
#define NO_PIDFD_TICK_MS 20

/* Parent side: feed stdin, watch for exec failure and exit, enforce the timeout. */
static int supervise(pid_t pid, int in_w, int err_r, int timeout, const char *json,
		     struct hook_result *res, struct ward_err *err)
{
	size_t len = json ? strlen(json) : 0, off = 0;
	long deadline = timeout > 0 ? now_ms() + (long)timeout * 1000 : -1;
	cleanup_fd int pidfd = ward_pidfd_open(pid, 0);
	bool exited = false, reaped = false;
	int rc = 0;

	if (pidfd < 0 && errno != ENOSYS) {
		rc = ward_fail_errno(err, "pidfd_open");
		kill_hook(pid, -1);
		exited = true;
	}
	(void)fcntl(in_w, F_SETFL, O_NONBLOCK);
	if (len == 0) {
		close(in_w);
		in_w = -1;
	}
	while (!exited) {
		struct pollfd fds[3] = {
		    {.fd = pidfd, .events = POLLIN},
		    {.fd = in_w, .events = POLLOUT},
		    {.fd = err_r, .events = POLLIN},
		};
		int wait_ms = -1, n;

		if (deadline >= 0) {
			wait_ms = (int)(deadline - now_ms());
			if (wait_ms <= 0) {
				res->timed_out = true;
				kill_hook(pid, pidfd);
				break;
			}
		}
		if (pidfd < 0 && (wait_ms < 0 || wait_ms > NO_PIDFD_TICK_MS))
			wait_ms = NO_PIDFD_TICK_MS;
		n = poll(fds, 3, wait_ms);
		if (n < 0 && errno != EINTR) {
			rc = ward_fail_errno(err, "poll");
			kill_hook(pid, pidfd);
			break;
		}
		if (n > 0 && fds[1].revents)
			feed_stdin(&in_w, json, len, &off);
		if (n > 0 && fds[2].revents) {
			int errnum;
			ssize_t r = read_exact(err_r, &errnum, sizeof(errnum));
			if (r == (ssize_t)sizeof(errnum))
				res->exec_errno = errnum;
			close(err_r);
			err_r = -1;
		}
		if (pidfd >= 0)
			exited = n > 0 && fds[0].revents;
		else
			exited = reaped = waitpid(pid, &res->status, WNOHANG) == pid;
	}
	if (in_w >= 0)
		close(in_w);
	while (!reaped && waitpid(pid, &res->status, 0) < 0) {
		if (errno != EINTR)
			return ward_fail_errno(err, "waitpid %d", (int)pid);
	}
	if (err_r >= 0) { /* the child is gone: the pipe holds its errno or EOF */
		int errnum;
		if (read_exact(err_r, &errnum, sizeof(errnum)) == (ssize_t)sizeof(errnum))
			res->exec_errno = errnum;
		close(err_r);
	}
	return rc;
}

static int run_one(const struct ward_hook *h, const char *what, const char *json,
		   struct ward_err *err)
{
	char *default_argv[] = {h->path, NULL};
	/* runc hands a hook without env its own whole environment; ward gives only a PATH,
	 * so what a hook does never depends on the engine's environment. */
	char default_env[] = "PATH=" WARD_HOOK_DEFAULT_PATH;
	char *no_env[] = {default_env, NULL};
	char *const *argv = h->args && h->args[0] ? h->args : default_argv;
	char *const *envp = h->env ? h->env : no_env;
	int in[2] = {-1, -1}, ep[2] = {-1, -1};
	struct sigaction chld, dfl = {.sa_handler = SIG_DFL};
	bool restore_chld = false;
	sigset_t pipe_set, oldmask, pending;
	bool pipe_was_pending;
	struct hook_result res = {0};
	pid_t pid;
	int rc;

	if (pipe2(in, O_CLOEXEC) < 0)
		return ward_fail_errno(err, "%s: pipe", what);
	if (pipe2(ep, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return ward_fail_errno(err, "%s: pipe", what);
	}
	/* An ignored SIGCHLD would reap the hook before we can read its status. */
	if (sigaction(SIGCHLD, NULL, &chld) == 0 &&
	    (chld.sa_handler == SIG_IGN || (chld.sa_flags & SA_NOCLDWAIT)))
		restore_chld = sigaction(SIGCHLD, &dfl, NULL) == 0;
	/* A hook that exits without reading stdin must not kill us with SIGPIPE. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &oldmask);
	sigpending(&pending);
	pipe_was_pending = sigismember(&pending, SIGPIPE);

	pid = fork();
	if (pid == 0)
		child_exec(in[0], ep[1], h->path, argv, envp);
	if (pid > 0)
		(void)setpgid(pid, pid); /* the child does it too; whoever is first wins */
	close(in[0]);
	close(ep[1]);
	if (pid < 0) {
		rc = ward_fail_errno(err, "%s: fork", what);
		close(in[1]);
		close(ep[0]);
	} else {
		rc = supervise(pid, in[1], ep[0], h->timeout, json, &res, err);
		if (rc < 0)
			ward_wrap(err, "%s", what);
	}

	sigpending(&pending);
	if (!pipe_was_pending && sigismember(&pending, SIGPIPE)) {
		struct timespec zero = {0, 0};
		(void)sigtimedwait(&pipe_set, NULL, &zero);
	}
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	if (restore_chld)
		sigaction(SIGCHLD, &chld, NULL);
	if (rc < 0)
		return -1;

	if (res.exec_errno)
		return ward_fail(err, res.exec_errno, "%s: exec", what);
	if (res.timed_out)
		return ward_fail(err, 0, "%s: timed out after %d s", what, h->timeout);
	if (WIFSIGNALED(res.status)) {
		/* "killed by signal 31 (bad system call)": the words runc says, lower case */
		char name[64];
		snprintf(name, sizeof(name), "%s", strsignal(WTERMSIG(res.status)));
		for (char *c = name; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		return ward_fail(err, 0, "%s: killed by signal %d (%s)", what, WTERMSIG(res.status),
				 name);
	}
	if (WIFEXITED(res.status) && WEXITSTATUS(res.status) != 0)
		return ward_fail(err, 0, "%s: exited with status %d", what,
				 WEXITSTATUS(res.status));
	return 0;
}

int ward_hooks_run(const struct ward_hooks *h, enum ward_hook_kind kind, const char *state_json,
		   struct ward_err *err)
{
	for (size_t i = 0; h && i < h->n; i++) {
		char what[512];
		snprintf(what, sizeof(what), "error running hook #%zu (%s, %s)", i + 1,
			 ward_hook_kind_name(kind), h->v[i].path);
		if (run_one(&h->v[i], what, state_json, err) < 0)
			return -1;
	}
	return 0;
}

json_t *ward_hook_read_state(int fd, bool need_pid, struct ward_err *err)
{
	size_t len;
	cleanup_free char *text = read_all_fd(fd, &len, err);
	json_error_t je;
	json_t *st, *id, *pid;

	if (!text) {
		ward_wrap(err, "state on stdin");
		return NULL;
	}
	st = json_loadb(text, len, 0, &je);
	if (!json_is_object(st)) {
		ward_fail(err, 0, "state on stdin: %s", st ? "not a JSON object" : je.text);
		json_decref(st);
		return NULL;
	}
	id = json_object_get(st, "id");
	pid = json_object_get(st, "pid");
	if (!json_is_string(id) || !ward_id_valid(json_string_value(id)))
		ward_fail(err, 0, "state on stdin: no valid container \"id\"");
	else if (need_pid && (!json_is_integer(pid) || json_integer_value(pid) <= 0))
		ward_fail(err, 0, "state on stdin: no \"pid\" of a running init");
	else
		return st;
	json_decref(st);
	return NULL;
}
