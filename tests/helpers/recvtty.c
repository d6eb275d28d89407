/* recvtty [--input STRING] [--size] SOCKET_PATH
 *
 * Test helper for --console-socket: listen on SOCKET_PATH, accept one connection, receive
 * one pty master with SCM_RIGHTS, then (--size) print "ROWS COLS" of the pty, (--input)
 * write STRING to it, and copy everything the container writes to stdout until the pty
 * reports EIO/EOF (every slave closed: the container exited). Exits 0 on that. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "err.h"
#include "terminal.h"
#include "util.h"

static int usage(void)
{
	fprintf(stderr, "usage: recvtty [--input STRING] [--size] SOCKET_PATH\n");
	return 2;
}

/* One fd received with SCM_RIGHTS (the name sent with it is ignored; extra fds are
 * closed): the fd, or -1 with errno set. */
static int recv_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} ctl;
	char data[4096];
	struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	int got = -1;
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (got < 0)
				got = f;
			else
				close(f);
		}
	}
	if (got < 0)
		errno = n == 0 ? ECONNRESET : EBADMSG;
	return got;
}

static int die(const char *what, int errnum)
{
	fprintf(stderr, "recvtty: %s: %s\n", what, strerror(errnum));
	return 1;
}

int main(int argc, char **argv)
{
	const char *input = NULL, *path = NULL;
	bool size = false;
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	cleanup_fd int lsock = -1, conn = -1, pty = -1;
	char buf[16384];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--input") == 0 && i + 1 < argc)
			input = argv[++i];
		else if (strcmp(argv[i], "--size") == 0)
			size = true;
		else if (argv[i][0] == '-' || path)
			return usage();
		else
			path = argv[i];
	}
	if (!path || strlen(path) >= sizeof(addr.sun_path))
		return usage();
	strcpy(addr.sun_path, path);

	lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lsock < 0)
		return die("socket", errno);
	(void)unlink(path); /* a stale socket from an earlier run */
	if (bind(lsock, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return die(path, errno);
	if (listen(lsock, 1) < 0)
		return die("listen", errno);
	do
		conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	while (conn < 0 && errno == EINTR);
	if (conn < 0)
		return die("accept", errno);
	if ((pty = recv_fd(conn)) < 0)
		return die("receive the pty", errno);
	close(steal_fd(conn));
	close(steal_fd(lsock));
	(void)unlink(path);

	if (size) {
		struct winsize ws;
		if (ioctl(pty, TIOCGWINSZ, &ws) < 0)
			return die("TIOCGWINSZ", errno);
		int n = snprintf(buf, sizeof(buf), "%u %u\n", ws.ws_row, ws.ws_col);
		if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
			return die("write stdout", errno);
	}
	if (input && write_all(pty, input, strlen(input)) < 0)
		return die("write pty", errno);

	for (;;) {
		ssize_t n = read(pty, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EIO: the container side is closed */
		if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
			return die("write stdout", errno);
	}
	return 0;
}
