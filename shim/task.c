/* containerd.task.v2.Task over the ward CLI. One table of containers (init + execs), every
 * method a handler on the ttrpc loop thread; ward commands run to completion inside the
 * handler, so events keep their order (/tasks/start is published before the loop can reap
 * the init and publish /tasks/exit). Exits come from SIGCHLD (we are the subreaper: inits
 * and execs are reparented to us). stdio: the FIFOs containerd gives go straight to the
 * container (no copy); with a terminal the pty master comes over a console socket and is
 * copied to/from the FIFOs on the loop. A FIFO containerd has not opened yet is held open
 * and the exit waits for its reader (struct fifo_hold), so that nothing is lost at exit. */
#include "task.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "github.com/containerd/containerd/api/events/task.pb-c.h"
#include "github.com/containerd/containerd/runtime/v2/task/shim.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "log.h"
#include "util.h"

#include "events.h"
#include "stats.h"

#define SERVICE "containerd.task.v2.Task"

struct container;

/* A stdout/stderr FIFO the process got before containerd's reader opened it (containerd's
 * cio opens its read ends lazily, in goroutines): the FIFO's buffer dies with its last open
 * fd, so we hold one (a dup of the process's O_RDWR fd) and watch the FIFO for opens; the
 * process's exit is published only once a reader has opened it (or after the bound), and
 * then the hold is closed so that the reader sees the data, then EOF. */
struct fifo_hold {
	int fd;	   /* O_RDWR on the FIFO, or -1 */
	int wd;	   /* its inotify watch (IN_OPEN) */
	dev_t dev; /* the FIFO */
	ino_t ino;
	unsigned opens; /* IN_OPEN events seen since our own opens */
};

struct proc {
	char *id; /* the exec id; the container id for the init */
	struct container *c;
	pid_t pid;
	bool started, exited;
	uint32_t exit_status;
	struct timespec exited_at;
	char *stdin_path, *stdout_path, *stderr_path;
	bool terminal;
	int master;	    /* terminal: the pty master, else -1 */
	int stdin_fd;	    /* terminal: the stdin FIFO copied to the master, else -1 */
	int out_fd;	    /* terminal: the stdout FIFO the master is copied to, else -1 */
	char *process_file; /* exec: the OCI process JSON */
	struct ttrpc_call **waits;
	size_t n_waits;
	bool reaped;		  /* the kernel's exit is in, its publication maybe held */
	struct fifo_hold hold[2]; /* stdout, stderr */
	int ino_fd;		  /* inotify on the held FIFOs, or -1 */
	int wait_fd;		  /* timerfd bounding the wait for their readers, or -1 */
};

struct container {
	char *id, *bundle, *config;
	bool mounted;
	char *cgroup;	   /* the init's cgroup v2 directory while memory.events is watched */
	int oom_fd;	   /* inotify on <cgroup>/memory.events, or -1 */
	uint64_t oom_last; /* oom_kill count last seen */
	struct proc init;
	struct proc **execs;
	size_t n_execs;
	struct container *next;
};

static struct {
	const struct shim_opts *o;
	struct ttrpc_server *srv;
	char *ward, *root;
	struct container *list;
	unsigned console_seq;
} T;

/* ---- small helpers ------------------------------------------------------------------- */

static bool safe_id(const char *s)
{
	if (!*s || strlen(s) > 200 || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s < 0x20)
			return false;
	return true;
}

static struct container *find(const char *id)
{
	for (struct container *c = T.list; c; c = c->next)
		if (!strcmp(c->id, id))
			return c;
	return NULL;
}

static struct proc *find_exec(struct container *c, const char *exec_id)
{
	for (size_t i = 0; i < c->n_execs; i++)
		if (!strcmp(c->execs[i]->id, exec_id))
			return c->execs[i];
	return NULL;
}

/* The process (init or exec) a request names, or fail the call with NotFound. */
static struct proc *lookup(struct ttrpc_call *call, const char *id, const char *exec_id)
{
	struct container *c = find(id);
	if (!c) {
		ttrpc_call_fail(call, TTRPC_NOT_FOUND, "container %s: not found", id);
		return NULL;
	}
	if (!exec_id || !*exec_id)
		return &c->init;
	struct proc *p = find_exec(c, exec_id);
	if (!p)
		ttrpc_call_fail(call, TTRPC_NOT_FOUND, "exec %s in container %s: not found",
				exec_id, id);
	return p;
}

static Google__Protobuf__Timestamp ts_of(const struct timespec *t)
{
	Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	ts.seconds = t->tv_sec;
	ts.nanos = (int32_t)t->tv_nsec;
	return ts;
}

static void reply_empty(struct ttrpc_call *call)
{
	Google__Protobuf__Empty e = GOOGLE__PROTOBUF__EMPTY__INIT;
	ttrpc_call_reply_msg(call, &e.base);
}

static void publish(const char *topic, const ProtobufCMessage *m)
{
	if (shim_event_publish(topic, m) < 0)
		ward_warn("publish %s failed", topic);
}

/* ---- running ward -------------------------------------------------------------------- */

/* Last non-empty line of text, without a "ward: " prefix, into msg. */
static void last_line(const char *text, char *msg, size_t cap)
{
	const char *best = NULL, *best_end = NULL;
	for (const char *p = text; p && *p;) {
		const char *e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		if (e > p) {
			best = p;
			best_end = e;
		}
		p = *e ? e + 1 : NULL;
	}
	if (!best) {
		msg[0] = '\0';
		return;
	}
	if (best_end - best > 6 && !strncmp(best, "ward: ", 6))
		best += 6;
	snprintf(msg, cap, "%.*s", (int)(best_end - best), best);
}

/* The last error message of a ward --log-format json log file. */
static void log_error(const char *path, char *msg, size_t cap)
{
	cleanup_free char *text = read_file_at(AT_FDCWD, path, NULL, &(struct ward_err){0});
	msg[0] = '\0';
	if (!text)
		return;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		json_t *j = json_loads(line, 0, NULL);
		const char *lvl = json_string_value(json_object_get(j, "level"));
		const char *m = json_string_value(json_object_get(j, "msg"));
		if (lvl && m && (!strcmp(lvl, "error") || !strcmp(lvl, "fatal")))
			snprintf(msg, cap, "%s", m);
		json_decref(j);
	}
}

static void move_fd(int from, int to)
{
	if (from == to)
		fcntl(to, F_SETFD, 0);
	else
		dup2(from, to);
}

struct ward_run {
	const char *config; /* --config, or NULL */
	const char *log;    /* --log (json), or NULL */
	int in, out, err;   /* the child's stdio; -1: /dev/null (in), captured (out, err) */
	const char *input;  /* written to a stdin pipe when set */
	char *output;	    /* captured stdout (malloc'd) */
	char msg[512];	    /* on failure: one line */
};

/* Run `ward --root R [--config C] [--log L --log-format json] ARGS...`; 0 if it exited 0. */
static int run_ward(struct ward_run *r, const char *const *args)
{
	const char *argv[32];
	size_t n = 0;
	int inp[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
	argv[n++] = T.ward;
	argv[n++] = "--root";
	argv[n++] = T.root;
	if (r->config) {
		argv[n++] = "--config";
		argv[n++] = r->config;
	}
	if (r->log) {
		argv[n++] = "--log";
		argv[n++] = r->log;
		argv[n++] = "--log-format";
		argv[n++] = "json";
		unlink(r->log);
	}
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	r->output = NULL;
	r->msg[0] = '\0';

	if ((r->input && pipe2(inp, O_CLOEXEC) < 0) || (r->out < 0 && pipe2(outp, O_CLOEXEC) < 0) ||
	    (r->err < 0 && pipe2(errp, O_CLOEXEC) < 0)) {
		snprintf(r->msg, sizeof(r->msg), "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(r->msg, sizeof(r->msg), "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		int in = r->input ? inp[0] : r->in >= 0 ? r->in : open("/dev/null", O_RDONLY);
		int out = r->out >= 0 ? r->out : outp[1];
		int err = r->err >= 0 ? r->err : errp[1];
		/* above 2 first, so that no dup2 clobbers another source */
		in = fcntl(in, F_DUPFD_CLOEXEC, 10);
		out = fcntl(out, F_DUPFD_CLOEXEC, 10);
		err = fcntl(err, F_DUPFD_CLOEXEC, 10);
		if (in < 0 || out < 0 || err < 0)
			_exit(127);
		move_fd(in, 0);
		move_fd(out, 1);
		move_fd(err, 2);
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "exec %s: %m\n", argv[0]);
		_exit(127);
	}
	if (inp[0] >= 0)
		close(inp[0]);
	if (outp[1] >= 0)
		close(outp[1]);
	if (errp[1] >= 0)
		close(errp[1]);
	if (r->input) {
		size_t len = strlen(r->input), off = 0;
		while (off < len) {
			ssize_t w = write(inp[1], r->input + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		close(inp[1]);
	}
	char *bufs[2] = {NULL, NULL};
	size_t lens[2] = {0, 0};
	struct pollfd pf[2] = {{.fd = outp[0], .events = POLLIN},
			       {.fd = errp[0], .events = POLLIN}};
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			char tmp[8192];
			ssize_t got = read(pf[i].fd, tmp, sizeof(tmp));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
				continue;
			}
			bufs[i] = xrealloc(bufs[i], lens[i] + (size_t)got + 1);
			memcpy(bufs[i] + lens[i], tmp, (size_t)got);
			lens[i] += (size_t)got;
			bufs[i][lens[i]] = '\0';
		}
	}
	for (int i = 0; i < 2; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->output = bufs[0] ? bufs[0] : xstrdup("");
	int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (!ok) {
		if (r->log)
			log_error(r->log, r->msg, sizeof(r->msg));
		if (!r->msg[0] && bufs[1])
			last_line(bufs[1], r->msg, sizeof(r->msg));
		if (!r->msg[0])
			snprintf(r->msg, sizeof(r->msg), "ward %s: exit status %d", args[0],
				 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	free(bufs[1]);
	if (r->log)
		unlink(r->log);
	return ok ? 0 : -1;
}

/* A plain ward command on a container; on failure the call fails with Internal. */
static int ward_cmd(struct ttrpc_call *call, struct container *c, const char *const *args,
		    const char *input, char **output)
{
	struct ward_run r = {
	    .config = c ? c->config : NULL, .in = -1, .out = -1, .err = -1, .input = input};
	int rc = run_ward(&r, args);
	if (rc < 0 && call)
		ttrpc_call_fail(call, TTRPC_INTERNAL, "%s", r.msg);
	if (output && rc == 0)
		*output = r.output;
	else
		free(r.output);
	return rc;
}

/* ---- stdio --------------------------------------------------------------------------- */

static int open_null(int flags)
{
	return open("/dev/null", flags | O_CLOEXEC);
}

/* How long the exit of a process waits for containerd to open the FIFOs of its output (it
 * may never: a client gone, or one that never attaches). */
#define STDIO_WAIT_MS_DEFAULT 3000
static long stdio_wait_ms = STDIO_WAIT_MS_DEFAULT;

/* Count the opens of the held FIFOs. */
static void hold_count(struct proc *p)
{
	union {
		char buf[4096];
		struct inotify_event align;
	} u;
	ssize_t n;
	while (p->ino_fd >= 0 && (n = read(p->ino_fd, u.buf, sizeof(u.buf))) > 0) {
		for (char *q = u.buf; q < u.buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)q;
			for (int i = 0; i < 2; i++) {
				struct fifo_hold *h = &p->hold[i];
				if (h->fd < 0)
					continue;
				if (ev->mask & IN_Q_OVERFLOW) /* lost count: do not wait on it */
					h->opens++;
				else if (ev->wd == h->wd && (ev->mask & IN_OPEN))
					h->opens++;
			}
			q += sizeof(*ev) + ev->len;
		}
	}
}

/* Stream i (0 stdout, 1 stderr) of p to write to: O_WRONLY when containerd reads it already,
 * else O_RDWR so that we never block on an absent reader, with a hold on the FIFO (struct
 * fifo_hold) so that what the process writes survives until a reader comes. The path is
 * opened once (O_PATH); the watch, the probe and the opens go through that fd. */
static int open_fifo_w(struct proc *p, int i)
{
	const char *path = i ? p->stderr_path : p->stdout_path;
	struct fifo_hold *h = &p->hold[i];
	if (!path || !*path)
		return open_null(O_WRONLY);
	cleanup_fd int opath = open(path, O_PATH | O_CLOEXEC);
	if (opath < 0)
		return -1;
	char self[64];
	snprintf(self, sizeof(self), "/proc/self/fd/%d", opath);
	struct stat st;
	if (fstat(opath, &st) < 0)
		return -1;
	/* stderr into the FIFO stdout is held in: one hold, one more open of ours */
	struct fifo_hold *same =
	    i && p->hold[0].fd >= 0 && p->hold[0].dev == st.st_dev && p->hold[0].ino == st.st_ino
		? &p->hold[0]
		: NULL;
	int wd = -1;
	if (S_ISFIFO(st.st_mode) && !same) {
		if (p->ino_fd < 0)
			p->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		/* before the probe: a reader that opens after it is seen */
		if (p->ino_fd >= 0)
			wd = inotify_add_watch(p->ino_fd, self, IN_OPEN);
		if (wd < 0)
			ward_warn("watch %s for its reader: %m", path);
	}
	/* (our hold counts as a reader: the probe succeeds on the FIFO stdout is held in) */
	int fd = open(self, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && same) {
		hold_count(p);
		same->opens = 0; /* that open was ours */
	} else if (fd < 0 && errno == ENXIO) {
		fd = open(self, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 && wd >= 0) {
			h->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			if (h->fd >= 0) {
				h->wd = wd;
				h->dev = st.st_dev;
				h->ino = st.st_ino;
				wd = -1;
				/* read our own open's event now: inotify merges an event into an
				 * identical one still unread, and a reader's open must count */
				hold_count(p);
				h->opens = 0;
			}
		}
	}
	if (wd >= 0)
		inotify_rm_watch(p->ino_fd, wd);
	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

static int open_fifo_r(const char *path, bool keep_nonblock)
{
	if (!path || !*path)
		return open_null(O_RDONLY);
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && !keep_nonblock)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

static void put_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		buf += w;
		len -= (size_t)w;
	}
}

static void close_stdin(struct proc *p)
{
	if (p->stdin_fd >= 0) {
		ttrpc_server_unwatch_fd(T.srv, p->stdin_fd);
		close(p->stdin_fd);
		p->stdin_fd = -1;
	}
}

/* Copy what the master has to the stdout FIFO; false at its end (EIO: no slave left). */
static bool master_copy(struct proc *p)
{
	char buf[16384];
	for (;;) {
		ssize_t n = read(p->master, buf, sizeof(buf));
		if (n > 0) {
			if (p->out_fd >= 0)
				put_all(p->out_fd, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno == EAGAIN;
	}
}

static void master_stop(struct proc *p)
{
	ttrpc_server_unwatch_fd(T.srv, p->master);
	if (p->out_fd >= 0) {
		close(p->out_fd);
		p->out_fd = -1;
	}
}

static void on_master(int fd, uint32_t events, void *data)
{
	struct proc *p = data;
	(void)fd;
	(void)events;
	if (!master_copy(p))
		master_stop(p);
}

static void on_stdin(int fd, uint32_t events, void *data)
{
	struct proc *p = data;
	char buf[16384];
	(void)events;
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n > 0) {
		if (p->master >= 0)
			put_all(p->master, buf, (size_t)n);
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		close_stdin(p);
	}
}

/* A listening console socket at a fresh path (into path). */
static int console_listen(char *path, size_t cap, char *msg, size_t mcap)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(path, cap, "%s/.console-%d-%u.sock", SHIM_WARD_ROOT_DIR, getpid(),
		 T.console_seq++);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(msg, mcap, "console socket: %s", strerror(errno));
		return -1;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, 1) < 0) {
		snprintf(msg, mcap, "console socket %.200s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

/* The pty master ward sent over the console socket (already queued: ward has returned). */
static int console_receive(int lfd, char *msg, size_t mcap)
{
	cleanup_fd int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (cfd < 0) {
		snprintf(msg, mcap, "console socket: no connection from ward: %s", strerror(errno));
		return -1;
	}
	char name[256];
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = name, .iov_len = sizeof(name)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	if (recvmsg(cfd, &mh, MSG_CMSG_CLOEXEC) < 0) {
		snprintf(msg, mcap, "console socket: recvmsg: %s", strerror(errno));
		return -1;
	}
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int))) {
		snprintf(msg, mcap, "console socket: no pty master received");
		return -1;
	}
	int master;
	memcpy(&master, CMSG_DATA(cm), sizeof(int));
	fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
	return master;
}

/* Run ward create/exec (args) with p's stdio; terminal: via a console socket. */
static int run_with_stdio(struct container *c, struct proc *p, const char **args, size_t nargs,
			  const char *log, char *msg, size_t mcap)
{
	struct ward_run r = {.config = c->config, .log = log, .in = -1, .out = -1, .err = -1};
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	cleanup_fd int lfd = -1;
	cleanup_fd int in = -1;
	cleanup_fd int out = -1;
	cleanup_fd int err = -1;
	if (p->terminal) {
		lfd = console_listen(sock, sizeof(sock), msg, mcap);
		if (lfd < 0)
			return -1;
		/* insert "--console-socket S" before the id (the last argument) */
		const char *id = args[nargs - 1];
		args[nargs - 1] = "--console-socket";
		args[nargs] = sock;
		args[nargs + 1] = id;
		args[nargs + 2] = NULL;
		in = open_null(O_RDONLY);
		out = open_null(O_WRONLY);
		err = open_null(O_WRONLY);
	} else {
		in = open_fifo_r(p->stdin_path, false);
		out = open_fifo_w(p, 0);
		err = open_fifo_w(p, 1);
		if (in < 0 || out < 0 || err < 0) {
			snprintf(msg, mcap, "open stdio FIFOs of %s: %s", p->id, strerror(errno));
			return -1;
		}
	}
	r.in = in;
	r.out = out;
	r.err = err;
	int rc = run_ward(&r, args);
	free(r.output);
	if (p->terminal)
		unlink(sock);
	if (rc < 0) {
		snprintf(msg, mcap, "%s", r.msg);
		return -1;
	}
	if (p->terminal) {
		struct ward_err e = {0};
		p->master = console_receive(lfd, msg, mcap);
		if (p->master < 0)
			return -1;
		p->out_fd = p->stdout_path && *p->stdout_path ? open_fifo_w(p, 0) : -1;
		if (p->stdin_path && *p->stdin_path)
			p->stdin_fd = open_fifo_r(p->stdin_path, true);
		if (ttrpc_server_watch_fd(T.srv, p->master, on_master, p, &e) < 0)
			ward_warn("%s", e.msg);
		if (p->stdin_fd >= 0 &&
		    ttrpc_server_watch_fd(T.srv, p->stdin_fd, on_stdin, p, &e) < 0)
			ward_warn("%s", e.msg);
	}
	return 0;
}

static pid_t read_pid_file(const char *path)
{
	cleanup_free char *t = read_file_at(AT_FDCWD, path, NULL, &(struct ward_err){0});
	long v = t ? strtol(t, NULL, 10) : 0;
	return v > 0 && v < INT_MAX ? (pid_t)v : 0;
}

/* ---- OOM events (cgroup v2 memory.events) -------------------------------------------- */

/* The cgroup v2 directory of pid: the "0::" line of /proc/<pid>/cgroup (relative to our
 * cgroup namespace, the host's) below the cgroup2 mount, as ward placed the container. NULL
 * (one debug line) when there is none. */
static char *pid_cgroup(pid_t pid)
{
	struct ward_err e = {0};
	const char *v2 = ward_cgroup_v2_root(&e);
	if (!v2) {
		ward_debug("oom watch: %s", e.msg);
		return NULL;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	cleanup_free char *text = read_file_at(AT_FDCWD, path, NULL, &e);
	if (!text) {
		ward_debug("oom watch: %s", e.msg);
		return NULL;
	}
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, "0::/", 4) && line[4])
			return xasprintf("%s%s", v2, line + 3);
	}
	ward_debug("oom watch: pid %d has no cgroup v2 directory of its own", (int)pid);
	return NULL;
}

/* Publish /tasks/oom when oom_kill went up since last seen. Called on every inotify wake-up
 * and right before a /tasks/exit of the container, so that an OOM kill is published before
 * the exit it caused (the kernel counts the kill before it sends SIGKILL). */
static void oom_poll(struct container *c)
{
	if (c->oom_fd < 0 || !shim_oom_check(c->cgroup, &c->oom_last))
		return;
	ward_info("container %s: OOM kill (oom_kill %llu in %s/memory.events)", c->id,
		  (unsigned long long)c->oom_last, c->cgroup);
	Containerd__Events__TaskOOM m = CONTAINERD__EVENTS__TASK_OOM__INIT;
	m.container_id = c->id;
	publish(SHIM_TOPIC_TASK_OOM, &m.base);
}

static void on_oom(int fd, uint32_t events, void *data)
{
	(void)events;
	/* IN_IGNORED (the cgroup is gone): the fd stays registered but never wakes again;
	 * delete closes it (unwatching itself here would free the watch under the loop). */
	if (shim_oom_drain(fd))
		ward_debug("container %s: %s removed", ((struct container *)data)->id,
			   "memory.events");
	oom_poll(data);
}

static void oom_stop(struct container *c)
{
	if (c->oom_fd >= 0) {
		ttrpc_server_unwatch_fd(T.srv, c->oom_fd);
		close(c->oom_fd);
		c->oom_fd = -1;
	}
	free(c->cgroup);
	c->cgroup = NULL;
}

/* Watch the memory.events of the new init's cgroup. Without one (no cgroup v2 memory
 * controller, as on hybrid hosts) there is no watch and one debug line. */
static void oom_start(struct container *c)
{
	struct ward_err e = {0};
	c->oom_fd = -1;
	if (c->init.pid <= 0)
		return;
	c->cgroup = pid_cgroup(c->init.pid);
	if (!c->cgroup)
		return;
	c->oom_fd = shim_oom_fd(c->cgroup, &c->oom_last);
	if (c->oom_fd >= 0 && ttrpc_server_watch_fd(T.srv, c->oom_fd, on_oom, c, &e) < 0) {
		ward_warn("oom watch of %s: %s", c->id, e.msg);
		close(c->oom_fd);
		c->oom_fd = -1;
	}
	if (c->oom_fd < 0) {
		free(c->cgroup);
		c->cgroup = NULL;
		return;
	}
	ward_debug("container %s: watching %s/memory.events (oom_kill %llu)", c->id, c->cgroup,
		   (unsigned long long)c->oom_last);
}

/* ---- the table ----------------------------------------------------------------------- */

static void proc_init(struct proc *p, struct container *c, const char *id, const char *in,
		      const char *out, const char *errp, bool terminal)
{
	p->id = xstrdup(id);
	p->c = c;
	p->stdin_path = xstrdup(in ? in : "");
	p->stdout_path = xstrdup(out ? out : "");
	p->stderr_path = xstrdup(errp ? errp : "");
	p->terminal = terminal;
	p->master = p->stdin_fd = p->out_fd = -1;
	p->hold[0].fd = p->hold[1].fd = -1;
	p->ino_fd = p->wait_fd = -1;
}

static void complete_waits(struct proc *p)
{
	Containerd__Task__V2__WaitResponse w = CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
	Google__Protobuf__Timestamp ts = ts_of(&p->exited_at);
	w.exit_status = p->exit_status;
	w.exited_at = &ts;
	for (size_t i = 0; i < p->n_waits; i++)
		ttrpc_call_reply_msg(p->waits[i], &w.base);
	free(p->waits);
	p->waits = NULL;
	p->n_waits = 0;
}

/* ---- an exit held for its output's reader (struct fifo_hold) -------------------------- */

static void unwatch_close(int *fd)
{
	if (*fd >= 0) {
		ttrpc_server_unwatch_fd(T.srv, *fd); /* a no-op when not watched */
		close(*fd);
		*fd = -1;
	}
}

static void hold_release(struct proc *p)
{
	for (int i = 0; i < 2; i++)
		if (p->hold[i].fd >= 0) {
			close(p->hold[i].fd);
			p->hold[i].fd = -1;
		}
	unwatch_close(&p->wait_fd);
	unwatch_close(&p->ino_fd);
}

/* true while one of the held FIFOs has had no reader open it yet */
static bool hold_waiting(struct proc *p)
{
	hold_count(p);
	for (int i = 0; i < 2; i++)
		if (p->hold[i].fd >= 0 && !p->hold[i].opens)
			return true;
	return false;
}

/* p's exit, now that its output is with a reader (or no reader came in time): /tasks/exit,
 * the Waits, State's stopped. Closing the holds gives the reader its EOF. */
static void publish_exit(struct proc *p)
{
	hold_release(p);
	p->exited = true;
	Containerd__Events__TaskExit ev = CONTAINERD__EVENTS__TASK_EXIT__INIT;
	Google__Protobuf__Timestamp ts = ts_of(&p->exited_at);
	ev.container_id = p->c->id;
	ev.id = p->id;
	ev.pid = (uint32_t)p->pid;
	ev.exit_status = p->exit_status;
	ev.exited_at = &ts;
	publish("/tasks/exit", &ev.base);
	complete_waits(p);
}

static void on_hold(int fd, uint32_t events, void *data)
{
	struct proc *p = data;
	(void)events;
	if (fd == p->wait_fd) {
		ward_warn("container %s: process %s: no reader opened its output FIFO within %ld "
			  "ms; its exit is published without",
			  p->c->id, p->id, stdio_wait_ms);
		publish_exit(p);
	} else if (!hold_waiting(p)) {
		publish_exit(p);
	}
}

/* true: p's exit waits (on the loop, at most stdio_wait_ms) for the readers of its held
 * FIFOs; on_hold publishes it. false: publish it now. */
static bool hold_exit(struct proc *p)
{
	struct ward_err e = {0};
	if (stdio_wait_ms <= 0 || !hold_waiting(p))
		return false;
	struct itimerspec its = {.it_value = {.tv_sec = stdio_wait_ms / 1000,
					      .tv_nsec = (stdio_wait_ms % 1000) * 1000000}};
	p->wait_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (p->wait_fd < 0 || timerfd_settime(p->wait_fd, 0, &its, NULL) < 0) {
		ward_warn("timerfd: %m");
		return false;
	}
	if (ttrpc_server_watch_fd(T.srv, p->wait_fd, on_hold, p, &e) < 0 ||
	    ttrpc_server_watch_fd(T.srv, p->ino_fd, on_hold, p, &e) < 0) {
		ward_warn("%s", e.msg);
		return false;
	}
	ward_debug("container %s: process %s exited; its exit waits for a reader of its output",
		   p->c->id, p->id);
	return true;
}

static void proc_free(struct proc *p)
{
	hold_release(p);
	close_stdin(p);
	if (p->master >= 0) {
		master_stop(p);
		close(p->master);
	}
	if (p->n_waits) {
		for (size_t i = 0; i < p->n_waits; i++)
			ttrpc_call_fail(p->waits[i], TTRPC_NOT_FOUND, "process %s was deleted",
					p->id);
		free(p->waits);
	}
	if (p->process_file)
		unlink(p->process_file);
	free(p->process_file);
	free(p->id);
	free(p->stdin_path);
	free(p->stdout_path);
	free(p->stderr_path);
}

static void container_remove(struct container *c)
{
	for (struct container **pp = &T.list; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	for (size_t i = 0; i < c->n_execs; i++) {
		proc_free(c->execs[i]);
		free(c->execs[i]);
	}
	free(c->execs);
	proc_free(&c->init);
	oom_stop(c);
	free(c->id);
	free(c->bundle);
	free(c->config);
	free(c);
}

/* The kernel's exit of p (published by the caller: publish_exit, or p->exited on Delete). */
static void record_exit(struct proc *p, int st)
{
	p->reaped = true;
	p->exit_status = WIFEXITED(st)	   ? (uint32_t)WEXITSTATUS(st)
			 : WIFSIGNALED(st) ? 128u + (uint32_t)WTERMSIG(st)
					   : 255;
	clock_gettime(CLOCK_REALTIME, &p->exited_at);
	if (p->master >= 0) {
		master_copy(p); /* what the process wrote last */
		master_stop(p);
	}
}

void shim_task_reap(void)
{
	int st;
	pid_t pid;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		struct proc *p = NULL;
		for (struct container *c = T.list; c && !p; c = c->next) {
			if (c->init.pid == pid)
				p = &c->init;
			for (size_t i = 0; !p && i < c->n_execs; i++)
				if (c->execs[i]->pid == pid)
					p = c->execs[i];
		}
		if (!p || p->reaped)
			continue;
		record_exit(p, st);
		ward_debug("container %s: process %s (pid %d) exited with %u", p->c->id, p->id, pid,
			   p->exit_status);
		/* an OOM kill goes out before the exit it caused */
		oom_poll(p->c);
		if (p == &p->c->init)
			oom_stop(p->c); /* the rest of the container died with its init */
		/* not before its output is with a reader: containerd's client takes the exit as
		 * the end and cancels its reader that has not opened yet */
		if (!hold_exit(p))
			publish_exit(p);
	}
}

size_t shim_task_count(void)
{
	size_t n = 0;
	for (struct container *c = T.list; c; c = c->next)
		n++;
	return n;
}

/* ---- rootfs -------------------------------------------------------------------------- */

static int mount_rootfs(Containerd__Types__Mount **m, size_t n, const char *target, char *msg,
			size_t cap)
{
	for (size_t i = 0; i < n; i++) {
		unsigned long flags = 0;
		size_t dlen = 0;
		char *data = xcalloc(1, 1);
		for (size_t k = 0; k < m[i]->n_options; k++) {
			const char *opt = m[i]->options[k];
			if (!strcmp(opt, "ro"))
				flags |= MS_RDONLY;
			else if (!strcmp(opt, "rw"))
				;
			else if (!strcmp(opt, "nosuid"))
				flags |= MS_NOSUID;
			else if (!strcmp(opt, "nodev"))
				flags |= MS_NODEV;
			else if (!strcmp(opt, "noexec"))
				flags |= MS_NOEXEC;
			else if (!strcmp(opt, "rbind"))
				flags |= MS_BIND | MS_REC;
			else if (!strcmp(opt, "bind"))
				flags |= MS_BIND;
			else {
				size_t l = strlen(opt);
				data = xrealloc(data, dlen + l + 2);
				if (dlen)
					data[dlen++] = ',';
				memcpy(data + dlen, opt, l + 1);
				dlen += l;
			}
		}
		const char *type = m[i]->type;
		int rc;
		if (!strcmp(type, "bind") || !strcmp(type, "rbind")) {
			flags |= MS_BIND | (!strcmp(type, "rbind") ? MS_REC : 0);
			rc = mount(m[i]->source, target, NULL, flags & (MS_BIND | MS_REC), NULL);
			if (rc == 0 && (flags & MS_RDONLY))
				rc = mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | flags, NULL);
		} else {
			rc = mount(m[i]->source, target, type, flags, dlen ? data : NULL);
		}
		int e = errno;
		free(data);
		if (rc < 0) {
			snprintf(msg, cap, "mount %s (%s) on %s: %s", m[i]->source, type, target,
				 strerror(e));
			for (size_t k = 0; k < i; k++)
				umount2(target, MNT_DETACH);
			return -1;
		}
	}
	return 0;
}

/* ---- handlers ------------------------------------------------------------------------ */

/* A method: its handler gets the request decoded (NULL when the method takes none) and
 * must complete the call; the message is freed when the handler returns. */
typedef void (*method_fn)(struct ttrpc_call *call, void *request, struct proc *p);

static void h_create(struct ttrpc_call *call, void *request, struct proc *p)
{
	Containerd__Task__V2__CreateTaskRequest *r = request;
	char msg[600];
	(void)p; /* the container is new */
	if (!safe_id(r->id) || !r->bundle[0]) {
		ttrpc_call_fail(call, TTRPC_INVALID_ARGUMENT, "invalid container id %s or bundle",
				r->id);
		return;
	}
	if (find(r->id)) {
		ttrpc_call_fail(call, TTRPC_ALREADY_EXISTS, "container %s: already exists", r->id);
		return;
	}
	if (r->checkpoint[0]) {
		ttrpc_call_fail(call, TTRPC_UNIMPLEMENTED, "checkpoint is not supported by ward");
		return;
	}
	struct container *c = xcalloc(1, sizeof(*c));
	c->oom_fd = -1;
	c->id = xstrdup(r->id);
	c->bundle = xstrdup(r->bundle);
	c->config = shim_options_config_dir(r->options);
	proc_init(&c->init, c, r->id, r->stdin, r->stdout, r->stderr, r->terminal);
	cleanup_free char *rootfs = xasprintf("%s/rootfs", c->bundle);
	cleanup_free char *pidfile = xasprintf("%s/init.pid", c->bundle);
	cleanup_free char *log = xasprintf("%s/ward-create.log", c->bundle);
	/* ward's policy runs every container in a user namespace of its own: its root must be
	 * able to search the bundle down to the rootfs. containerd 1.6 opens the bundle (0711)
	 * only when config.json itself has a user namespace. Searchable, not readable. */
	{
		struct stat bst;
		if (stat(c->bundle, &bst) == 0 && S_ISDIR(bst.st_mode) &&
		    (bst.st_mode & 0011) != 0011)
			(void)chmod(c->bundle, (bst.st_mode & 07777) | 0011);
	}
	if (r->n_rootfs) {
		if (mount_rootfs(r->rootfs, r->n_rootfs, rootfs, msg, sizeof(msg)) < 0) {
			ttrpc_call_fail(call, TTRPC_INTERNAL, "create %s: %s", r->id, msg);
			container_remove(c);
			return;
		}
		c->mounted = true;
	}
	const char *args[12] = {"create", "--bundle", c->bundle, "--pid-file",
				pidfile,  c->id,      NULL};
	unlink(pidfile);
	if (run_with_stdio(c, &c->init, args, 6, log, msg, sizeof(msg)) < 0) {
		/* a half-made container (the pty never came): force it away */
		const char *del[] = {"delete", "--force", c->id, NULL};
		ward_cmd(NULL, c, del, NULL, NULL);
		if (c->mounted)
			umount2(rootfs, MNT_DETACH);
		ttrpc_call_fail(call, TTRPC_INTERNAL, "%s", msg);
		container_remove(c);
		return;
	}
	c->init.pid = read_pid_file(pidfile);
	c->next = T.list;
	T.list = c;
	oom_start(c);

	Containerd__Task__V2__CreateTaskResponse resp =
	    CONTAINERD__TASK__V2__CREATE_TASK_RESPONSE__INIT;
	resp.pid = (uint32_t)c->init.pid;
	ttrpc_call_reply_msg(call, &resp.base);

	Containerd__Events__TaskCreate ev = CONTAINERD__EVENTS__TASK_CREATE__INIT;
	Containerd__Events__TaskIO io = CONTAINERD__EVENTS__TASK_IO__INIT;
	io.stdin = r->stdin;
	io.stdout = r->stdout;
	io.stderr = r->stderr;
	io.terminal = r->terminal;
	ev.container_id = c->id;
	ev.bundle = c->bundle;
	ev.n_rootfs = r->n_rootfs;
	ev.rootfs = r->rootfs;
	ev.io = &io;
	ev.pid = resp.pid;
	publish("/tasks/create", &ev.base);
}

/* p runs: answer Start with its pid, publish /tasks/start (the init) or
 * /tasks/exec-started. */
static void started(struct ttrpc_call *call, struct proc *p)
{
	Containerd__Task__V2__StartResponse resp = CONTAINERD__TASK__V2__START_RESPONSE__INIT;
	Containerd__Events__TaskStart init_ev = CONTAINERD__EVENTS__TASK_START__INIT;
	Containerd__Events__TaskExecStarted exec_ev = CONTAINERD__EVENTS__TASK_EXEC_STARTED__INIT;
	p->started = true;
	resp.pid = (uint32_t)p->pid;
	ttrpc_call_reply_msg(call, &resp.base);
	if (p == &p->c->init) {
		init_ev.container_id = p->c->id;
		init_ev.pid = resp.pid;
		publish(SHIM_TOPIC_TASK_START, &init_ev.base);
	} else {
		exec_ev.container_id = p->c->id;
		exec_ev.exec_id = p->id;
		exec_ev.pid = resp.pid;
		publish(SHIM_TOPIC_TASK_EXEC_STARTED, &exec_ev.base);
	}
}

/* An exec whose start failed (ward exec refused it, or its binary is missing) is over: it
 * exits with 255 now, its Waits are answered and /tasks/exit goes out, as for any exec that
 * ends, so containerd's ExecSync and `ctr task exec` do not wait a minute for an exit that
 * never comes (their Delete, which drops the record, waits on it). */
static void exec_failed(struct container *c, struct proc *p)
{
	hold_release(p);
	close_stdin(p);
	if (p->master >= 0) {
		master_stop(p);
		close(p->master);
		p->master = -1;
	}
	p->exited = true;
	p->exit_status = 255;
	clock_gettime(CLOCK_REALTIME, &p->exited_at);
	Containerd__Events__TaskExit ev = CONTAINERD__EVENTS__TASK_EXIT__INIT;
	Google__Protobuf__Timestamp ts = ts_of(&p->exited_at);
	ev.container_id = c->id;
	ev.id = p->id;
	ev.pid = 0;
	ev.exit_status = p->exit_status;
	ev.exited_at = &ts;
	publish("/tasks/exit", &ev.base);
	complete_waits(p);
}

static void start_exec(struct ttrpc_call *call, struct container *c, struct proc *p)
{
	char msg[600];
	cleanup_free char *pidfile = xasprintf("%s/exec-%s.pid", c->bundle, p->id);
	cleanup_free char *log = xasprintf("%s/exec-%s.log", c->bundle, p->id);
	const char *args[14] = {"exec",	      "--process", p->process_file, "--detach",
				"--pid-file", pidfile,	   c->id,	    NULL};
	unlink(pidfile);
	if (run_with_stdio(c, p, args, 7, log, msg, sizeof(msg)) < 0) {
		exec_failed(c, p);
		ttrpc_call_fail(call, TTRPC_INTERNAL, "%s", msg);
		return;
	}
	p->pid = read_pid_file(pidfile);
	unlink(pidfile);
	started(call, p);
}

static void h_start(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	struct container *c = p->c;
	if (p->started || p->exited) {
		ttrpc_call_fail(call, TTRPC_FAILED_PRECONDITION, "%s %s: already started",
				p == &c->init ? "container" : "exec", p->id);
		return;
	}
	if (p != &c->init) {
		if (c->init.exited || !c->init.started) {
			ttrpc_call_fail(call, TTRPC_FAILED_PRECONDITION,
					"container %s: not running", c->id);
			return;
		}
		start_exec(call, c, p);
		return;
	}
	const char *args[] = {"start", c->id, NULL};
	if (ward_cmd(call, c, args, NULL, NULL) < 0)
		return;
	started(call, p);
}

/* ward's view of a live container ("created", "running", "paused", "stopped"), decided as
 * `ward state` decides it (ward_state_status: the init's pidfd and start time, exec.fifo,
 * cgroup.freeze), in this process: containerd asks for State after every Start, and a
 * `ward state` child per call was a fork and two execs on the pod's start path. */
static char *ward_status(struct container *c)
{
	struct ward_err err = {0};
	struct ward_state st = {0};
	cleanup_fd int dirfd = shim_state_open(T.root, c->id, &st, &err);
	if (dirfd < 0) {
		ward_warn("state of %s: %s", c->id, err.msg);
		return NULL;
	}
	char *s = xstrdup(ward_status_name(ward_state_status(dirfd, &st)));
	ward_state_clear(&st);
	return s;
}

static void h_state(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	struct container *c = p->c;
	Containerd__Task__V2__StateResponse resp = CONTAINERD__TASK__V2__STATE_RESPONSE__INIT;
	Google__Protobuf__Timestamp ts = ts_of(&p->exited_at);
	resp.id = p->id;
	resp.exec_id = p == &c->init ? "" : p->id;
	resp.id = c->id;
	resp.bundle = c->bundle;
	resp.pid = (uint32_t)p->pid;
	resp.stdin = p->stdin_path;
	resp.stdout = p->stdout_path;
	resp.stderr = p->stderr_path;
	resp.terminal = p->terminal;
	if (p->exited) {
		resp.status = CONTAINERD__V1__TYPES__STATUS__STOPPED;
		resp.exit_status = p->exit_status;
		resp.exited_at = &ts;
	} else if (!p->started) {
		resp.status = CONTAINERD__V1__TYPES__STATUS__CREATED;
	} else if (p != &c->init) {
		resp.status = CONTAINERD__V1__TYPES__STATUS__RUNNING;
	} else {
		cleanup_free char *s = ward_status(c);
		resp.status = !s		      ? CONTAINERD__V1__TYPES__STATUS__UNKNOWN
			      : !strcmp(s, "paused")  ? CONTAINERD__V1__TYPES__STATUS__PAUSED
			      : !strcmp(s, "pausing") ? CONTAINERD__V1__TYPES__STATUS__PAUSING
			      : !strcmp(s, "created") ? CONTAINERD__V1__TYPES__STATUS__CREATED
			      : !strcmp(s, "stopped") ? CONTAINERD__V1__TYPES__STATUS__RUNNING
						      : CONTAINERD__V1__TYPES__STATUS__RUNNING;
		/* "stopped" before we reaped the init: still running for containerd until the
		 * exit is recorded (and published) by the SIGCHLD handler. */
	}
	ttrpc_call_reply_msg(call, &resp.base);
}

static void h_delete(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	struct container *c = p->c;
	if (p->reaped && !p->exited)
		publish_exit(p); /* its output's reader is not waited for any longer */
	if (p->started && !p->exited) {
		ttrpc_call_fail(call, TTRPC_FAILED_PRECONDITION, "%s %s: still running",
				p == &c->init ? "container" : "exec", p->id);
		return;
	}
	Containerd__Task__V2__DeleteResponse resp = CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
	Google__Protobuf__Timestamp ts;
	if (p != &c->init) {
		if (!p->exited) { /* never started */
			p->exit_status = 0;
			clock_gettime(CLOCK_REALTIME, &p->exited_at);
		}
		ts = ts_of(&p->exited_at);
		resp.pid = (uint32_t)p->pid;
		resp.exit_status = p->exit_status;
		resp.exited_at = &ts;
		ttrpc_call_reply_msg(call, &resp.base);
		for (size_t i = 0; i < c->n_execs; i++) {
			if (c->execs[i] == p) {
				c->execs[i] = c->execs[--c->n_execs];
				break;
			}
		}
		proc_free(p);
		free(p);
		return;
	}
	/* The init's exit status, for the poststop hooks (the audit trail's exit event). */
	char status[16];
	snprintf(status, sizeof(status), "%u", p->exit_status);
	const char *args[] = {"delete", "--force", c->id, NULL, NULL, NULL};
	if (p->exited) {
		args[2] = "--exit-status";
		args[3] = status;
		args[4] = c->id;
	}
	if (ward_cmd(call, c, args, NULL, NULL) < 0)
		return;
	if (!p->exited && p->pid > 0) {
		/* created, never started: ward killed the init; collect it */
		int st = 0;
		for (int i = 0; i < 200; i++) {
			pid_t w = waitpid(p->pid, &st, WNOHANG);
			if (w == p->pid || (w < 0 && errno == ECHILD))
				break;
			usleep(10000);
		}
		record_exit(p, st);
		p->exited = true;
		if (!WIFSIGNALED(st) && !WIFEXITED(st))
			p->exit_status = 137;
		complete_waits(p);
	} else if (!p->exited) {
		record_exit(p, 9);
		p->exited = true;
	}
	if (c->mounted) {
		cleanup_free char *rootfs = xasprintf("%s/rootfs", c->bundle);
		if (umount2(rootfs, MNT_DETACH) < 0)
			ward_warn("unmount %s: %m", rootfs);
	}
	ts = ts_of(&p->exited_at);
	resp.pid = (uint32_t)p->pid;
	resp.exit_status = p->exit_status;
	resp.exited_at = &ts;
	ttrpc_call_reply_msg(call, &resp.base);
	Containerd__Events__TaskDelete ev = CONTAINERD__EVENTS__TASK_DELETE__INIT;
	ev.container_id = c->id;
	ev.id = c->id;
	ev.pid = resp.pid;
	ev.exit_status = resp.exit_status;
	ev.exited_at = &ts;
	publish("/tasks/delete", &ev.base);
	container_remove(c);
}

static void h_pids(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	struct container *c = p->c;
	cleanup_free char *out = NULL;
	const char *args[] = {"ps", "--format", "json", c->id, NULL};
	if (ward_cmd(call, c, args, NULL, &out) < 0)
		return;
	json_t *j = json_loads(out, 0, NULL);
	size_t n = json_is_array(j) ? json_array_size(j) : 0;
	Containerd__V1__Types__ProcessInfo *infos = xcalloc(n + 1, sizeof(*infos));
	Containerd__V1__Types__ProcessInfo **ptrs = xcalloc(n + 1, sizeof(*ptrs));
	for (size_t i = 0; i < n; i++) {
		containerd__v1__types__process_info__init(&infos[i]);
		infos[i].pid = (uint32_t)json_integer_value(json_array_get(j, i));
		ptrs[i] = &infos[i];
	}
	json_decref(j);
	Containerd__Task__V2__PidsResponse resp = CONTAINERD__TASK__V2__PIDS_RESPONSE__INIT;
	resp.n_processes = n;
	resp.processes = ptrs;
	ttrpc_call_reply_msg(call, &resp.base);
	free(infos);
	free(ptrs);
}

static void pause_resume(struct ttrpc_call *call, struct container *c, bool pause)
{
	if (!c->init.started || c->init.exited) {
		ttrpc_call_fail(call, TTRPC_FAILED_PRECONDITION, "container %s: not running",
				c->id);
		return;
	}
	const char *args[] = {pause ? "pause" : "resume", c->id, NULL};
	if (ward_cmd(call, c, args, NULL, NULL) < 0)
		return;
	reply_empty(call);
	if (pause) {
		Containerd__Events__TaskPaused ev = CONTAINERD__EVENTS__TASK_PAUSED__INIT;
		ev.container_id = c->id;
		publish("/tasks/paused", &ev.base);
	} else {
		Containerd__Events__TaskResumed ev = CONTAINERD__EVENTS__TASK_RESUMED__INIT;
		ev.container_id = c->id;
		publish("/tasks/resumed", &ev.base);
	}
}

static void h_pause(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	pause_resume(call, p->c, true);
}

static void h_resume(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	pause_resume(call, p->c, false);
}

static void h_kill(struct ttrpc_call *call, void *request, struct proc *p)
{
	Containerd__Task__V2__KillRequest *r = request;
	struct container *c = p->c;
	if (p->exited || p->reaped || (p != &c->init && !p->started) || p->pid <= 0) {
		ttrpc_call_fail(call, TTRPC_NOT_FOUND, "%s %s: process already finished",
				p == &c->init ? "container" : "exec", p->id);
		return;
	}
	if (p != &c->init) {
		if (kill(p->pid, (int)r->signal) < 0)
			ttrpc_call_fail(call, errno == ESRCH ? TTRPC_NOT_FOUND : TTRPC_INTERNAL,
					"kill exec %s (pid %d): %s", p->id, p->pid,
					strerror(errno));
		else
			reply_empty(call);
		return;
	}
	char sig[16];
	snprintf(sig, sizeof(sig), "%u", r->signal);
	const char *args[] = {"kill", r->all ? "--all" : c->id, r->all ? c->id : sig,
			      r->all ? sig : NULL, NULL};
	if (ward_cmd(call, c, args, NULL, NULL) == 0)
		reply_empty(call);
}

static void h_exec(struct ttrpc_call *call, void *request, struct proc *target)
{
	Containerd__Task__V2__ExecProcessRequest *r = request;
	struct container *c = target->c;
	if (!safe_id(r->exec_id)) {
		ttrpc_call_fail(call, TTRPC_INVALID_ARGUMENT, "invalid exec id \"%s\"", r->exec_id);
		return;
	}
	if (find_exec(c, r->exec_id)) {
		ttrpc_call_fail(call, TTRPC_ALREADY_EXISTS, "exec %s: already exists", r->exec_id);
		return;
	}
	if (c->init.exited) {
		ttrpc_call_fail(call, TTRPC_FAILED_PRECONDITION, "container %s: not running",
				c->id);
		return;
	}
	if (!r->spec || !r->spec->value.len) {
		ttrpc_call_fail(call, TTRPC_INVALID_ARGUMENT, "exec %s: no process spec",
				r->exec_id);
		return;
	}
	struct ward_err e = {0};
	char *file = xasprintf("%s/exec-%s.json", c->bundle, r->exec_id);
	if (write_file_at(AT_FDCWD, file, O_WRONLY | O_CREAT | O_TRUNC, 0600, r->spec->value.data,
			  r->spec->value.len, &e) < 0) {
		ttrpc_call_fail(call, TTRPC_INTERNAL, "exec %s: %s", r->exec_id, e.msg);
		free(file);
		return;
	}
	struct proc *p = xcalloc(1, sizeof(*p));
	proc_init(p, c, r->exec_id, r->stdin, r->stdout, r->stderr, r->terminal);
	p->process_file = file;
	c->execs = xrealloc(c->execs, (c->n_execs + 1) * sizeof(*c->execs));
	c->execs[c->n_execs++] = p;
	reply_empty(call);
	Containerd__Events__TaskExecAdded ev = CONTAINERD__EVENTS__TASK_EXEC_ADDED__INIT;
	ev.container_id = c->id;
	ev.exec_id = p->id;
	publish("/tasks/exec-added", &ev.base);
}

static void h_resize_pty(struct ttrpc_call *call, void *request, struct proc *p)
{
	Containerd__Task__V2__ResizePtyRequest *r = request;
	if (p->master < 0) {
		ttrpc_call_fail(call, TTRPC_FAILED_PRECONDITION, "process %s has no terminal",
				p->id);
		return;
	}
	struct winsize ws = {.ws_row = (unsigned short)r->height,
			     .ws_col = (unsigned short)r->width};
	if (ioctl(p->master, TIOCSWINSZ, &ws) < 0)
		ttrpc_call_fail(call, TTRPC_INTERNAL, "resize the terminal of %s: %s", p->id,
				strerror(errno));
	else
		reply_empty(call);
}

static void h_close_io(struct ttrpc_call *call, void *request, struct proc *p)
{
	Containerd__Task__V2__CloseIORequest *r = request;
	if (r->stdin) {
		close_stdin(p);
		if (p->master >= 0)
			put_all(p->master, "\x04", 1); /* EOF for the terminal's reader */
	}
	reply_empty(call);
}

static void h_update(struct ttrpc_call *call, void *request, struct proc *p)
{
	Containerd__Task__V2__UpdateTaskRequest *r = request;
	struct container *c = p->c;
	if (!r->resources || !r->resources->value.len) {
		ttrpc_call_fail(call, TTRPC_INVALID_ARGUMENT, "update %s: no resources", r->id);
		return;
	}
	cleanup_free char *json =
	    strndup((const char *)r->resources->value.data, r->resources->value.len);
	const char *args[] = {"update", "-r", "-", c->id, NULL};
	if (ward_cmd(call, c, args, json, NULL) == 0)
		reply_empty(call);
}

static void h_wait(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	p->waits = xrealloc(p->waits, (p->n_waits + 1) * sizeof(*p->waits));
	p->waits[p->n_waits++] = call;
	if (p->exited)
		complete_waits(p);
}

static void h_stats(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	struct ward_err err = {0};
	struct container *c = p->c;
	cleanup_free char *cgroup = NULL;
	cleanup_free uint8_t *buf = NULL;
	size_t len;
	cgroup = shim_stats_cgroup(T.root, c->id, &err);
	buf = cgroup ? shim_stats_metrics(cgroup, &len, &err) : NULL;
	if (!buf) {
		ttrpc_call_fail(call, TTRPC_INTERNAL, "stats of %s: %s", c->id, err.msg);
		return;
	}
	Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
	any.type_url = SHIM_METRICS_TYPE_URL;
	any.value.data = buf;
	any.value.len = len;
	Containerd__Task__V2__StatsResponse resp = CONTAINERD__TASK__V2__STATS_RESPONSE__INIT;
	resp.stats = &any;
	ttrpc_call_reply_msg(call, &resp.base);
}

static void h_connect(struct ttrpc_call *call, void *request, struct proc *p)
{
	Containerd__Task__V2__ConnectRequest *r = request;
	struct container *c = find(r->id); /* none yet is no error */
	(void)p;
	Containerd__Task__V2__ConnectResponse resp = CONTAINERD__TASK__V2__CONNECT_RESPONSE__INIT;
	resp.shim_pid = (uint32_t)getpid();
	resp.task_pid = c ? (uint32_t)c->init.pid : 0;
	resp.version = WARD_VERSION;
	ttrpc_call_reply_msg(call, &resp.base);
}

static void h_shutdown(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	(void)p;
	reply_empty(call);
	if (T.list) {
		ward_debug("shutdown ignored: %zu containers remain", shim_task_count());
		return;
	}
	ward_info("shutdown: no containers left");
	ttrpc_server_stop(T.srv);
}

static void h_checkpoint(struct ttrpc_call *call, void *request, struct proc *p)
{
	(void)request;
	(void)p;
	ttrpc_call_fail(call, TTRPC_UNIMPLEMENTED, "checkpoint is not supported by ward");
}

/* What the dispatcher looks up before the handler runs: nothing, the container of
 * request.id (its init), or the process of request.id and request.exec_id. */
enum target { NONE, CONTAINER, PROCESS };

#define METHOD(name, fn, lower, target)                                                            \
	{                                                                                          \
		name, fn, &containerd__task__v2__##lower##__descriptor, target                     \
	}

static const struct method {
	const char *name;
	method_fn fn;
	const ProtobufCMessageDescriptor *in; /* NULL: the request is not read */
	enum target target;
} methods[] = {
    METHOD("Create", h_create, create_task_request, NONE),
    METHOD("Start", h_start, start_request, PROCESS),
    METHOD("State", h_state, state_request, PROCESS),
    METHOD("Delete", h_delete, delete_request, PROCESS),
    METHOD("Pids", h_pids, pids_request, CONTAINER),
    METHOD("Pause", h_pause, pause_request, CONTAINER),
    METHOD("Resume", h_resume, resume_request, CONTAINER),
    METHOD("Kill", h_kill, kill_request, PROCESS),
    METHOD("Exec", h_exec, exec_process_request, CONTAINER),
    METHOD("ResizePty", h_resize_pty, resize_pty_request, PROCESS),
    METHOD("CloseIO", h_close_io, close_iorequest, PROCESS),
    METHOD("Update", h_update, update_task_request, CONTAINER),
    METHOD("Wait", h_wait, wait_request, PROCESS),
    METHOD("Stats", h_stats, stats_request, CONTAINER),
    METHOD("Connect", h_connect, connect_request, NONE),
    {"Shutdown", h_shutdown, NULL, NONE},
    {"Checkpoint", h_checkpoint, NULL, NONE},
};

/* The string field `name` of a decoded request ("" when it has none). */
static const char *field_str(const ProtobufCMessage *msg, const char *name)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, name);
	if (!f || f->type != PROTOBUF_C_TYPE_STRING)
		return "";
	return *(const char *const *)((const char *)msg + f->offset);
}

/* Every method: decode the request, find what it names (or fail NotFound), run the
 * handler, free the request. */
static void dispatch(struct ttrpc_call *call, const struct ttrpc_request *req, void *data)
{
	const struct method *m = data;
	ProtobufCMessage *msg = NULL;
	struct proc *p = NULL;
	if (m->in) {
		msg = protobuf_c_message_unpack(m->in, NULL, req->payload_len, req->payload);
		if (!msg) {
			ttrpc_call_fail(call, TTRPC_INVALID_ARGUMENT, "malformed %s",
					m->in->short_name);
			return;
		}
	}
	if (m->target != NONE)
		p = lookup(call, field_str(msg, "id"),
			   m->target == PROCESS ? field_str(msg, "exec_id") : NULL);
	if (m->target == NONE || p)
		m->fn(call, msg, p);
	if (msg)
		protobuf_c_message_free_unpacked(msg, NULL);
}

void shim_task_register(struct ttrpc_server *srv, const struct shim_opts *o)
{
	T.o = o;
	T.srv = srv;
	T.ward = shim_ward_binary();
	/* tests: a bound other than the default for the wait of an exit on its output's reader */
	const char *wait = getenv("WARD_SHIM_STDIO_WAIT_MS");
	if (wait && *wait)
		stdio_wait_ms = strtol(wait, NULL, 10);
	T.root = shim_ward_root(o->namespace);
	mkdir(SHIM_WARD_ROOT_DIR, 0711);
	mkdir(T.root, 0711);
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		ttrpc_server_register(srv, SERVICE, methods[i].name, dispatch, (void *)&methods[i]);
}
