/* sync.c: the runtime <-> init channel. A send to a peer that has exited reports the error
 * the peer left in the channel (its reason), not the broken pipe; messages and fds arrive
 * as sent. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sync.h"
#include "tap.h"
#include "util.h"

static void pair(int sp[2])
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		abort();
}

static void test_round_trip(void)
{
	struct ward_err err = {0};
	struct ward_sync m;
	int sp[2], fd = -1;

	pair(sp);
	CHECK(ward_sync_send(sp[0], WARD_SYNC_GO, 42, &err) == 0 &&
		  ward_sync_expect(sp[1], WARD_SYNC_GO, &m, NULL, &err) == 0 && m.value == 42,
	      "a message arrives with its value");
	CHECK(ward_sync_send_fd(sp[0], WARD_SYNC_MOUNTFD, STDIN_FILENO, &err) == 0 &&
		  ward_sync_expect(sp[1], WARD_SYNC_MOUNTFD, &m, &fd, &err) == 0 && fd >= 0 &&
		  (fcntl(fd, F_GETFD) & FD_CLOEXEC),
	      "an fd arrives with its message, close-on-exec");
	if (fd >= 0)
		close(fd);
	CHECK(ward_sync_send(sp[0], WARD_SYNC_READY, 0, &err) == 0 &&
		  ward_sync_expect(sp[1], WARD_SYNC_GO, &m, NULL, &err) < 0 && err.errnum == EPROTO,
	      "an unexpected message type is a protocol error");
	close(sp[0]);
	close(sp[1]);
}

/* The runtime's end (sp[0]) of a channel whose init has exited: unread, the runtime's
 * message the init never read (0: none); sent, a message the init sent first (0: none);
 * then the init's error, if error, and its close. */
static struct ward_err init_error = {.msg = "mount tmpfs on /mnt: Invalid argument",
				     .errnum = EINVAL};

static int init_gone(enum ward_sync_msg unread, enum ward_sync_msg sent, bool error)
{
	struct ward_err ignored;
	int sp[2];

	pair(sp);
	if (unread)
		ward_sync_send(sp[0], unread, 0, &ignored);
	if (sent)
		ward_sync_send(sp[1], sent, 0, &ignored);
	if (error)
		ward_sync_send_err(sp[1], &init_error);
	close(sp[1]);
	return sp[0];
}

static void test_peer_gone(void)
{
	struct ward_err err = {0};
	struct ward_sync m;
	int fd;

	/* the init failed, said why, and exited before the runtime's next message */
	fd = init_gone(0, 0, true);
	CHECK(ward_sync_send(fd, WARD_SYNC_GO, 0, &err) < 0 &&
		  strcmp(err.msg, init_error.msg) == 0 && err.errnum == EINVAL,
	      "a send to an init that exited reports the error it left");
	close(fd);

	/* the same for a message with an fd, behind another message the init had sent */
	fd = init_gone(0, WARD_SYNC_HOOKS, true);
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_send_fd(fd, WARD_SYNC_SECCOMP, STDIN_FILENO, &err) < 0 &&
		  strcmp(err.msg, init_error.msg) == 0,
	      "an fd sent to an init that exited: the error it left, behind another message");
	close(fd);

	/* the init failed and exited with the runtime's last message unread: the kernel
	 * reports the reset before the error the init left, which is still read */
	fd = init_gone(WARD_SYNC_SECCOMP, 0, true);
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_expect(fd, WARD_SYNC_READY, &m, NULL, &err) < 0 &&
		  strcmp(err.msg, init_error.msg) == 0,
	      "a receive from an init that exited with our message unread: the error it left");
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_recv(fd, &m, NULL, &err) < 0 && err.errnum == EPIPE &&
		  strstr(err.msg, "exited"),
	      "then the end of the channel");
	close(fd);

	/* and when our next step is a send: the first send after such an exit fails with
	 * ECONNRESET (the second with EPIPE) */
	fd = init_gone(WARD_SYNC_MOUNTFD, 0, true);
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_send_fd(fd, WARD_SYNC_SECCOMP, STDIN_FILENO, &err) < 0 &&
		  strcmp(err.msg, init_error.msg) == 0,
	      "a send to an init that exited with our message unread: the error it left");
	close(fd);

	/* gone without a word: the broken pipe itself */
	fd = init_gone(0, WARD_SYNC_HOOKS, false);
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_send(fd, WARD_SYNC_GO, 0, &err) < 0 && err.errnum == EPIPE &&
		  strstr(err.msg, "sync: send"),
	      "a send to an init that exited without an error: the broken pipe");
	close(fd);
}

int main(void)
{
	test_round_trip();
	test_peer_gone();
	TAP_DONE();
}
