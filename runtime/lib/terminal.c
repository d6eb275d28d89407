/* Terminals: pty pairs, runc's console-socket protocol, the foreground proxy. */
#include "terminal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

int ward_pty_open(int *master, int *slave, struct ward_err *err)
{
	cleanup_fd int m = -1;
	int s;

	m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0)
		return ward_fail_errno(err, "open /dev/ptmx");
	if (grantpt(m) < 0)
		return ward_fail_errno(err, "grantpt");
	if (unlockpt(m) < 0)
		return ward_fail_errno(err, "unlockpt");
	/* The peer of this very master, without looking up /dev/pts/N by name. */
	s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		return ward_fail_errno(err, "ioctl(TIOCGPTPEER)");
	*slave = s;
	*master = steal_fd(m);
	return 0;
}

int ward_pty_set_size(int fd, unsigned rows, unsigned cols, struct ward_err *err)
{
	struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
	if (ioctl(fd, TIOCSWINSZ, &ws) < 0)
		return ward_fail_errno(err, "set terminal size %ux%u", rows, cols);
	return 0;
}

int ward_pty_chown(int slave, uint32_t uid, struct ward_err *err)
{
	struct stat st;

	if (fstat(slave, &st) < 0)
		return ward_fail_errno(err, "stat the pty");
	if (st.st_uid == uid)
		return 0;
	if (fchown(slave, uid, (gid_t)-1) < 0)
		return ward_fail_errno(err, "chown the pty to uid %u", uid);
	return 0;
}

int ward_pty_make_stdio(int slave, struct ward_err *err)
{
	if (setsid() < 0 && getsid(0) != getpid())
		return ward_fail_errno(err, "setsid");
	if (ioctl(slave, TIOCSCTTY, 0) < 0)
		return ward_fail_errno(err, "ioctl(TIOCSCTTY)");
	for (int fd = 0; fd <= 2; fd++)
		if (fd != slave && dup2(slave, fd) < 0)
			return ward_fail_errno(err, "dup2 terminal to fd %d", fd);
	/* the slave already sitting on 0-2 keeps its close-on-exec flag: clear it */
	if (slave <= 2 && fcntl(slave, F_SETFD, 0) < 0)
		return ward_fail_errno(err, "fcntl terminal fd");
	return 0;
}

/* ---- fd passing ---- */

int ward_fd_send(int sock, int fd, const char *name, struct ward_err *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	/* at least one byte of data, or the fd does not travel on a stream socket */
	const char *payload = name && *name ? name : "\0";
	struct iovec iov = {.iov_base = (void *)payload,
			    .iov_len = name && *name ? strlen(name) : 1};
	struct msghdr msg = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = ctl.buf,
	    .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ward_fail_errno(err, "send fd");
	return 0;
}

int ward_console_send(const char *socket_path, int master, struct ward_err *err)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	cleanup_fd int sock = -1;
	unsigned ptn = 0;
	char name[64] = "/dev/ptmx";

	if (strlen(socket_path) >= sizeof(addr.sun_path))
		return ward_fail(err, ENAMETOOLONG, "console socket %s", socket_path);
	strcpy(addr.sun_path, socket_path);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return ward_fail_errno(err, "console socket: socket");
	if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return ward_fail_errno(err, "connect to console socket %s", socket_path);
	/* runc sends the pty's name; the number comes from the master, not a path lookup */
	if (ioctl(master, TIOCGPTN, &ptn) == 0)
		snprintf(name, sizeof(name), "/dev/pts/%u", ptn);
	if (ward_fd_send(sock, master, name, err) < 0)
		return ward_wrap(err, "console socket %s", socket_path);
	return 0;
}

/* ---- foreground proxy ---- */

/* Write all of buf to a possibly non-blocking fd. */
static int write_full(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(fd, buf, len);
		if (w < 0) {
			struct pollfd p = {.fd = fd, .events = POLLOUT};
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -1;
			(void)poll(&p, 1, -1);
			continue;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static void copy_winsize(int from, int to)
{
	struct winsize ws;
	if (ioctl(from, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(to, TIOCSWINSZ, &ws);
}

/* Read what the master has and copy it to stdout. Returns 1 when the pty is done. */
static int pump_output(int master)
{
	char buf[16384];
	for (;;) {
		ssize_t n = read(master, buf, sizeof(buf));
		if (n > 0) {
			if (write_full(STDOUT_FILENO, buf, (size_t)n) < 0)
				return 1; /* nobody reads our output any more */
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		return 1; /* EIO: every slave fd closed; or EOF */
	}
}

int ward_pty_proxy(int master)
{
	bool tty = isatty(STDIN_FILENO);
	bool in_open = true;
	struct termios saved;
	bool raw = false;
	sigset_t winch, oldmask;
	cleanup_fd int sfd = -1;
	int mflags = fcntl(master, F_GETFL);
	char pending[4096];
	size_t plen = 0, poff = 0;

	if (tty && tcgetattr(STDIN_FILENO, &saved) == 0) {
		struct termios t = saved;
		cfmakeraw(&t);
		raw = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
	}
	if (tty) {
		copy_winsize(STDIN_FILENO, master);
		sigemptyset(&winch);
		sigaddset(&winch, SIGWINCH);
		if (sigprocmask(SIG_BLOCK, &winch, &oldmask) == 0)
			sfd = signalfd(-1, &winch, SFD_CLOEXEC | SFD_NONBLOCK);
	}
	if (mflags >= 0)
		(void)fcntl(master, F_SETFL, mflags | O_NONBLOCK);

	for (;;) {
		struct pollfd fds[3] = {
		    {.fd = master, .events = POLLIN | (plen > poff ? POLLOUT : 0)},
		    {.fd = in_open && plen == poff ? STDIN_FILENO : -1, .events = POLLIN},
		    {.fd = sfd, .events = POLLIN},
		};
		if (poll(fds, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			/* on hangup, pump_output drains what is left until EIO */
			if (pump_output(master))
				break;
			if (fds[0].revents & (POLLHUP | POLLERR) && !(fds[0].revents & POLLIN))
				break;
		}
		if (fds[0].revents & POLLOUT && plen > poff) {
			ssize_t w = write(master, pending + poff, plen - poff);
			if (w > 0)
				poff += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				plen = poff = 0; /* the container side is gone */
			if (poff == plen)
				plen = poff = 0;
		}
		if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(STDIN_FILENO, pending, sizeof(pending));
			if (n > 0) {
				plen = (size_t)n;
				poff = 0;
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				in_open = false; /* stdin closed: keep copying output */
			}
		}
		if (sfd >= 0 && fds[2].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				;
			copy_winsize(STDIN_FILENO, master);
		}
	}

	if (mflags >= 0)
		(void)fcntl(master, F_SETFL, mflags);
	if (tty)
		(void)sigprocmask(SIG_SETMASK, &oldmask, NULL);
	if (raw)
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return 0;
}
