/* Network namespace setup: a new network namespace gets "lo" up (no `ip`, no netlink
 * round trip: the two interface-flag ioctls on a datagram socket of the namespace). */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ns.h"
#include "util.h"

int ward_net_lo_up(struct ward_err *err)
{
	struct ifreq ifr = {0};
	cleanup_fd int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (sock < 0)
		return ward_fail_errno(err, "bring up lo: socket");
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(sock, SIOCGIFFLAGS, &ifr) < 0)
		return ward_fail_errno(err, "bring up lo: read its flags");
	if (ifr.ifr_flags & IFF_UP)
		return 0;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(sock, SIOCSIFFLAGS, &ifr) < 0)
		return ward_fail_errno(err, "bring up lo");
	return 0;
}
