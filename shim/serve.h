/* The shim's server: what the serving process runs once bootstrap (bootstrap.c) has set it
 * up. The ttrpc server (ttrpc.c, the containerd.task.v2.Task service) implements it. */
#ifndef WARD_SHIM_SERVE_H
#define WARD_SHIM_SERVE_H

#include "options.h"

/* Serve containerd on listen_fd (a listening, CLOEXEC AF_UNIX stream socket at
 * o->socket_path) until the shim should exit; returns the process exit status (0 after a
 * Shutdown with no containers left). Runs with: cwd = the first container's bundle, stdin
 * and stdout on /dev/null, stderr on the bundle's `log` fifo (or /dev/null) with ward_log
 * writing runc JSON lines to it, SIGPIPE ignored, PR_SET_CHILD_SUBREAPER set, in its own
 * session. The caller unlinks o->socket_path afterwards. */
int shim_serve(int listen_fd, const struct shim_opts *o);

#endif
