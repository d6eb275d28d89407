#include "sync.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util.h"

/* One message (n == sizeof(*m)), or n = 0 at the peer's close, -1 with errno; an fd that
 * came with it in *fd (closed if fd is NULL). */
static ssize_t recv_raw(int sock, struct ward_sync *m, int *fd, int flags)
{
	struct iovec iov = {.iov_base = m, .iov_len = sizeof(*m)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf)};
	bool reset = false;
	ssize_t n;

	if (fd)
		*fd = -1;
	/* A peer that closed with our messages unread leaves ECONNRESET, reported before what
	 * it sent us and still queued; reporting it clears it, so ask once more. */
	for (;;) {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | flags);
		if (n >= 0)
			break;
		if (errno == ECONNRESET && !reset)
			reset = true;
		else if (errno != EINTR)
			return -1;
	}
	if (n == 0)
		return 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int got;
			memcpy(&got, CMSG_DATA(c), sizeof(int));
			if (fd)
				*fd = got;
			else
				close(got);
		}
	}
	m->text[sizeof(m->text) - 1] = '\0';
	return n;
}

/* The peer closed its end (EPIPE or ECONNRESET on a send): the error it sent before it
 * went, if it is still queued (its reason, not our broken pipe). errno is kept. */
static bool peer_error(int sock, struct ward_err *err)
{
	int saved = errno;
	struct ward_sync m;
	bool found = false;

	while (!found && recv_raw(sock, &m, NULL, MSG_DONTWAIT) == (ssize_t)sizeof(m))
		if (m.type == WARD_SYNC_ERROR) {
			snprintf(err->msg, sizeof(err->msg), "%s", m.text);
			err->errnum = m.errnum;
			found = true;
		}
	errno = saved;
	return found;
}

static int send_msg(int sock, const struct ward_sync *m, int fd, struct ward_err *err)
{
	struct iovec iov = {.iov_base = (void *)m, .iov_len = sizeof(*m)};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		struct cmsghdr *c;
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0) {
		/* EPIPE, or ECONNRESET once if it exited with our messages unread */
		if ((errno == EPIPE || errno == ECONNRESET) && peer_error(sock, err))
			return -1;
		if (errno != EINTR)
			return ward_fail_errno(err, "sync: send");
	}
	return 0;
}

int ward_sync_send(int sock, enum ward_sync_msg type, int32_t value, struct ward_err *err)
{
	struct ward_sync m = {.type = type, .value = value};
	return send_msg(sock, &m, -1, err);
}

int ward_sync_send_fd(int sock, enum ward_sync_msg type, int fd, struct ward_err *err)
{
	struct ward_sync m = {.type = type};
	return send_msg(sock, &m, fd, err);
}

void ward_sync_send_err(int sock, const struct ward_err *e)
{
	struct ward_sync m = {.type = WARD_SYNC_ERROR, .errnum = e->errnum};
	struct ward_err ignored;
	snprintf(m.text, sizeof(m.text), "%s", e->msg);
	send_msg(sock, &m, -1, &ignored);
}

int ward_sync_recv(int sock, struct ward_sync *m, int *fd, struct ward_err *err)
{
	ssize_t n = recv_raw(sock, m, fd, 0);

	if (n < 0)
		return ward_fail_errno(err, "sync: receive");
	if (n == 0) {
		ward_fail(err, 0, "container init exited unexpectedly");
		err->errnum = EPIPE; /* callers tell a closed channel from a reported error */
		return -1;
	}
	if ((size_t)n != sizeof(*m))
		return ward_fail(err, EPROTO, "sync: short message");
	if (m->type == WARD_SYNC_ERROR) {
		snprintf(err->msg, sizeof(err->msg), "%s", m->text);
		err->errnum = m->errnum;
		return -1;
	}
	return 0;
}

int ward_sync_expect(int sock, enum ward_sync_msg type, struct ward_sync *m, int *fd,
		     struct ward_err *err)
{
	if (ward_sync_recv(sock, m, fd, err) < 0)
		return -1;
	if (m->type != type)
		return ward_fail(err, EPROTO, "sync: expected message %d, got %u", type, m->type);
	return 0;
}
