/* Terminals: pty allocation inside the container, runc's console-socket protocol,
 * and a proxy for foreground `run`/`exec` with a terminal. */
#ifndef WARD_TERMINAL_H
#define WARD_TERMINAL_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

/* Open a new pty pair from the current mount namespace's /dev/ptmx (master with
 * O_CLOEXEC, slave via TIOCGPTPEER). */
int ward_pty_open(int *master, int *slave, struct ward_err *err);
int ward_pty_set_size(int fd, unsigned rows, unsigned cols, struct ward_err *err);
/* Give the pty slave to the process's uid (its group, tty from devpts' gid=5, stays), as
 * runc does: the process owns its terminal (mesg, write, chmod of its tty work). */
int ward_pty_chown(int slave, uint32_t uid, struct ward_err *err);
/* setsid, make slave the controlling tty, dup it onto 0/1/2. */
int ward_pty_make_stdio(int slave, struct ward_err *err);

/* Send one fd with SCM_RIGHTS over a unix socket; name travels as data (runc sends the
 * pty path as the payload). The receiving side is the engine's (tests/helpers/recvtty.c). */
int ward_fd_send(int sock, int fd, const char *name, struct ward_err *err);
/* Connect to the console socket at path and send master over it. */
int ward_console_send(const char *socket_path, int master, struct ward_err *err);

/* Foreground terminal: put our stdin in raw mode if it is a tty, copy stdin->master and
 * master->stdout until the master reports hangup; restore the tty. Returns 0. */
int ward_pty_proxy(int master);

#endif
