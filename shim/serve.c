/* The shim's server: the containerd.task.v2.Task service (task.c) on the ttrpc server
 * (ttrpc.c), with a signalfd on the loop for SIGCHLD (we are the subreaper: container inits
 * and execs are reparented to us) and SIGTERM/SIGINT. */
#include "serve.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "events.h"
#include "log.h"
#include "task.h"
#include "ttrpc.h"
#include "util.h"

static struct ttrpc_server *srv;
static bool terminated;

static void on_signal(int fd, uint32_t events, void *data)
{
	struct signalfd_siginfo si;
	bool reap = false;
	(void)events;
	(void)data;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD) {
			reap = true;
		} else {
			ward_info("signal %u: shutting down", si.ssi_signo);
			terminated = true;
			ttrpc_server_stop(srv);
		}
	}
	/* SIGCHLDs coalesce: reap every exited child each time */
	if (reap)
		shim_task_reap();
}

int shim_serve(int listen_fd, const struct shim_opts *o)
{
	struct ward_err err = {0};
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
		ward_error("block signals: %m");
		return 1;
	}
	cleanup_fd int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		ward_error("signalfd: %m");
		return 1;
	}
	/* the publisher thread inherits the blocked signals */
	shim_events_init(o);
	srv = ttrpc_server_new(&err);
	if (!srv) {
		ward_error("%s", err.msg);
		return 1;
	}
	shim_task_register(srv, o);
	/* the loop accepts until EAGAIN: a blocking listener would stall it */
	fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
	if (ttrpc_server_add_listener(srv, listen_fd, &err) < 0 ||
	    ttrpc_server_watch_fd(srv, sfd, on_signal, NULL, &err) < 0) {
		ward_error("%s", err.msg);
		ttrpc_server_free(srv);
		return 1;
	}
	/* children that exited before the signalfd existed */
	shim_task_reap();
	int rc = ttrpc_server_run(srv, &err);
	if (rc < 0)
		ward_error("%s", err.msg);
	/* SIGTERM leaves the containers running: containerd's `delete` cleans them up */
	if (terminated)
		ward_info("exiting with %zu containers left", shim_task_count());
	ttrpc_server_unwatch_fd(srv, sfd);
	ttrpc_server_free(srv);
	shim_events_shutdown(3000);
	return rc < 0 ? 1 : 0;
}
