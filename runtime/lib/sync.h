/* The runtime <-> container init channel: a SOCK_SEQPACKET socketpair carrying small
 * typed messages, an error text, or a file descriptor. */
#ifndef WARD_SYNC_H
#define WARD_SYNC_H

#include <stdint.h>

#include "err.h"

enum ward_sync_msg {
	WARD_SYNC_USERNS = 1,  /* init -> runtime: write my id maps */
	WARD_SYNC_USERNS_DONE, /* runtime -> init */
	WARD_SYNC_PID,	       /* stage 1 -> runtime: value = pid of the container init */
	WARD_SYNC_GO,	       /* runtime -> init: you are in your cgroup, go on */
	WARD_SYNC_HOOKS,       /* init -> runtime: mounts ready, run prestart/createRuntime */
	WARD_SYNC_HOOKS_DONE,  /* runtime -> init */
	WARD_SYNC_CONSOLE,     /* init -> runtime: carries the pty master fd */
	WARD_SYNC_READY,       /* init -> runtime: created, waiting for start */
	WARD_SYNC_MOUNTFD,     /* runtime -> init: a detached mount made on the host side */
	WARD_SYNC_SECCOMP,     /* runtime -> init: carries a memfd with the seccomp filters */
	WARD_SYNC_ERROR,       /* either way: text carries the error */
};

struct ward_sync {
	uint32_t type;
	int32_t value;
	int32_t errnum;
	char text[1024];
};

int ward_sync_send(int sock, enum ward_sync_msg type, int32_t value, struct ward_err *err);
/* Send an error (from a ward_err) to the other side. Never fails loudly. */
void ward_sync_send_err(int sock, const struct ward_err *e);
/* Send a message with an fd attached. */
int ward_sync_send_fd(int sock, enum ward_sync_msg type, int fd, struct ward_err *err);
/* Receive one message; fd (if non-NULL) receives an attached fd or -1. An ERROR message
 * becomes a failure carrying the peer's text. EOF fails with "peer exited". */
int ward_sync_recv(int sock, struct ward_sync *m, int *fd, struct ward_err *err);
/* Receive and require a given type. */
int ward_sync_expect(int sock, enum ward_sync_msg type, struct ward_sync *m, int *fd,
		     struct ward_err *err);

#endif
