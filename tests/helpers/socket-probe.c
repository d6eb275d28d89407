/* socket-probe KIND...
 *
 * Test helper, run inside containers (linked statically: the test rootfs is busybox only).
 * For each KIND creates one socket and prints one line:
 *   "KIND: ok"                       the socket was created
 *   "KIND: ERRNO_NAME (strerror)"    it was refused, e.g. "alg: EACCES (Permission denied)"
 * KIND: alg (AF_ALG SOCK_SEQPACKET; then bind to hash "sha256", so "ok" means usable),
 * packet (AF_PACKET SOCK_RAW), packet-dgram (AF_PACKET SOCK_DGRAM), raw (AF_INET SOCK_RAW
 * ICMP), tcp (AF_INET SOCK_STREAM), udp (AF_INET SOCK_DGRAM), unix (AF_UNIX SOCK_STREAM).
 * Exits 0 when every socket was created, 1 when one was refused, 2 on bad usage. */
#include <errno.h>
#include <linux/if_alg.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

static const char *errno_name(int e)
{
	switch (e) {
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	case EAFNOSUPPORT:
		return "EAFNOSUPPORT";
	case EPROTONOSUPPORT:
		return "EPROTONOSUPPORT";
	case ENOENT:
		return "ENOENT";
	case EINVAL:
		return "EINVAL";
	case ENOSYS:
		return "ENOSYS";
	default:
		return "E?";
	}
}

static int probe(const char *kind)
{
	int domain, type, proto = 0, fd;

	if (!strcmp(kind, "alg"))
		domain = AF_ALG, type = SOCK_SEQPACKET;
	else if (!strcmp(kind, "packet"))
		domain = AF_PACKET, type = SOCK_RAW, proto = htons(ETH_P_ALL);
	else if (!strcmp(kind, "packet-dgram"))
		domain = AF_PACKET, type = SOCK_DGRAM, proto = htons(ETH_P_ALL);
	else if (!strcmp(kind, "raw"))
		domain = AF_INET, type = SOCK_RAW, proto = IPPROTO_ICMP;
	else if (!strcmp(kind, "tcp"))
		domain = AF_INET, type = SOCK_STREAM;
	else if (!strcmp(kind, "udp"))
		domain = AF_INET, type = SOCK_DGRAM;
	else if (!strcmp(kind, "unix"))
		domain = AF_UNIX, type = SOCK_STREAM;
	else {
		fprintf(stderr, "socket-probe: unknown kind \"%s\"\n", kind);
		return 2;
	}
	fd = socket(domain, type | SOCK_CLOEXEC, proto);
	if (fd >= 0 && domain == AF_ALG) {
		struct sockaddr_alg sa = {.salg_family = AF_ALG};
		strcpy((char *)sa.salg_type, "hash");
		strcpy((char *)sa.salg_name, "sha256");
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			int e = errno;
			close(fd);
			printf("%s: bind: %s (%s)\n", kind, errno_name(e), strerror(e));
			return 1;
		}
	}
	if (fd < 0) {
		int e = errno;
		printf("%s: %s (%s)\n", kind, errno_name(e), strerror(e));
		return 1;
	}
	close(fd);
	printf("%s: ok\n", kind);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: socket-probe KIND...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int r = probe(argv[i]);
		if (r > rc)
			rc = r;
	}
	return rc;
}
