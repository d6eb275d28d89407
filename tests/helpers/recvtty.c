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
	struct ward_err err = {0};
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
	if (ward_fd_recv(conn, &pty, &err) < 0) {
		fprintf(stderr, "recvtty: %s\n", err.msg);
		return 1;
	}
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
