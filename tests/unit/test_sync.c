/* sync.c: the runtime <-> init channel. A send to a peer that has exited reports the error
 * the peer left in the channel (its reason), not the broken pipe; messages and fds arrive
 * as sent. */
#include <errno.h>
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

static void test_peer_gone(void)
{
	struct ward_err err = {0}, peer = {0};
	struct ward_sync m;
	int sp[2];

	/* the init failed, said why, and exited before the runtime's next message */
	pair(sp);
	snprintf(peer.msg, sizeof(peer.msg), "mount tmpfs on /mnt: Invalid argument");
	peer.errnum = EINVAL;
	ward_sync_send_err(sp[1], &peer);
	close(sp[1]);
	CHECK(ward_sync_send(sp[0], WARD_SYNC_GO, 0, &err) < 0 &&
		  strcmp(err.msg, "mount tmpfs on /mnt: Invalid argument") == 0 &&
		  err.errnum == EINVAL,
	      "a send to an init that exited reports the error it left");
	close(sp[0]);

	/* the same for a message with an fd, behind another message the init had sent */
	pair(sp);
	ward_sync_send(sp[1], WARD_SYNC_HOOKS, 0, &err);
	ward_sync_send_err(sp[1], &peer);
	close(sp[1]);
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_send_fd(sp[0], WARD_SYNC_SECCOMP, STDIN_FILENO, &err) < 0 &&
		  strcmp(err.msg, peer.msg) == 0,
	      "an fd sent to an init that exited: the error it left, behind another message");
	close(sp[0]);

	/* the init failed and exited with the runtime's last message unread: the kernel
	 * reports the reset before the error the init left, which is still read */
	pair(sp);
	ward_sync_send(sp[0], WARD_SYNC_SECCOMP, 0, &err);
	ward_sync_send_err(sp[1], &peer);
	close(sp[1]);
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_expect(sp[0], WARD_SYNC_READY, &m, NULL, &err) < 0 &&
		  strcmp(err.msg, peer.msg) == 0,
	      "a receive from an init that exited with our message unread: the error it left");
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_recv(sp[0], &m, NULL, &err) < 0 && err.errnum == EPIPE &&
		  strstr(err.msg, "exited"),
	      "then the end of the channel");
	close(sp[0]);

	/* and when our next step is a send: the first send after such an exit fails with
	 * ECONNRESET (the second with EPIPE) */
	pair(sp);
	ward_sync_send_fd(sp[0], WARD_SYNC_MOUNTFD, STDIN_FILENO, &err);
	ward_sync_send_err(sp[1], &peer);
	close(sp[1]);
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_send_fd(sp[0], WARD_SYNC_SECCOMP, STDIN_FILENO, &err) < 0 &&
		  strcmp(err.msg, peer.msg) == 0,
	      "a send to an init that exited with our message unread: the error it left");
	close(sp[0]);

	/* gone without a word: the broken pipe itself */
	pair(sp);
	ward_sync_send(sp[1], WARD_SYNC_HOOKS, 0, &err);
	close(sp[1]);
	memset(&err, 0, sizeof(err));
	CHECK(ward_sync_send(sp[0], WARD_SYNC_GO, 0, &err) < 0 && err.errnum == EPIPE &&
		  strstr(err.msg, "sync: send"),
	      "a send to an init that exited without an error: the broken pipe");
	close(sp[0]);
}

int main(void)
{
	test_round_trip();
	test_peer_gone();
	TAP_DONE();
}
