/* Network namespace setup: a new network namespace gets "lo" up (libnl, no `ip`). */
#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "ns.h"

int ward_net_lo_up(struct ward_err *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *lo = NULL, *change = NULL;
	int r;

	if (!sk)
		return ward_fail(err, ENOMEM, "bring up lo: netlink socket");
	r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0) {
		nl_socket_free(sk);
		return ward_fail(err, 0, "bring up lo: netlink connect: %s", nl_geterror(r));
	}
	/* In a namespace we just created, lo is always interface 1: no lookup needed. */
	lo = rtnl_link_alloc();
	rtnl_link_set_ifindex(lo, 1);
	change = rtnl_link_alloc();
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, lo, change, 0);
	rtnl_link_put(change);
	rtnl_link_put(lo);
	nl_socket_free(sk);
	if (r < 0)
		return ward_fail(err, 0, "bring up lo: %s", nl_geterror(r));
	return 0;
}
