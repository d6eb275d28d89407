/* ward-net-hook's netlink work (see net_link.h), in runtime/lib/net.c's style: libnl
 * objects, no `ip`. */
#include "net_link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>
#include <sched.h>
#include <string.h>

#include "net_ipam.h"
#include "util.h"

struct nl_sock *netlink_open_in(int nsfd, int selffd, struct ward_err *err)
{
	struct nl_sock *sk;
	int r;

	if (setns(nsfd, CLONE_NEWNET) < 0) {
		ward_fail_errno(err, "enter network namespace");
		return NULL;
	}
	sk = nl_socket_alloc();
	r = sk ? nl_connect(sk, NETLINK_ROUTE) : -NLE_NOMEM;
	if (setns(selffd, CLONE_NEWNET) < 0) {
		ward_fail_errno(err, "return to own network namespace");
		nl_socket_free(sk);
		return NULL;
	}
	if (r < 0) {
		ward_fail(err, 0, "netlink connect: %s", nl_geterror(r));
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

void netlink_close(struct nl_sock *sk)
{
	if (sk)
		nl_socket_free(sk);
}

static bool not_found(int r)
{
	return r == -NLE_OBJ_NOTFOUND || r == -NLE_NODEV;
}

static int link_up(struct nl_sock *sk, struct rtnl_link *link)
{
	struct rtnl_link *change = rtnl_link_alloc();
	int r;

	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, link, change, 0);
	rtnl_link_put(change);
	return r;
}

/* addr/prefix on ifindex; an address already there is fine. */
static int addr_add(struct nl_sock *sk, int ifindex, uint32_t addr, int prefix)
{
	uint32_t be = htonl(addr);
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *local = nl_addr_build(AF_INET, &be, sizeof(be));
	int r;

	if (!a || !local) {
		rtnl_addr_put(a);
		nl_addr_put(local);
		return -NLE_NOMEM;
	}
	nl_addr_set_prefixlen(local, prefix);
	rtnl_addr_set_ifindex(a, ifindex);
	rtnl_addr_set_family(a, AF_INET);
	r = rtnl_addr_set_local(a, local);
	if (r == 0)
		r = rtnl_addr_add(sk, a, NLM_F_CREATE | NLM_F_EXCL);
	nl_addr_put(local);
	rtnl_addr_put(a);
	return r == -NLE_EXIST ? 0 : r;
}

int netlink_bridge_ensure(struct nl_sock *sk, const char *name, uint32_t gw, int prefix,
			  bool *created, int *ifindex, struct ward_err *err)
{
	struct rtnl_link *br = NULL;
	const char *type;
	char a[16];
	int r;

	*created = false;
	r = rtnl_link_get_kernel(sk, 0, name, &br);
	if (not_found(r)) {
		r = rtnl_link_bridge_add(sk, name);
		if (r < 0)
			return ward_fail(err, 0, "create bridge %s: %s", name, nl_geterror(r));
		*created = true;
		r = rtnl_link_get_kernel(sk, 0, name, &br);
	}
	if (r < 0)
		return ward_fail(err, 0, "bridge %s: %s", name, nl_geterror(r));
	type = rtnl_link_get_type(br);
	if (!type || strcmp(type, "bridge") != 0) {
		rtnl_link_put(br);
		return ward_fail(err, 0, "link %s exists and is not a bridge (%s)", name,
				 type ? type : "no type");
	}
	*ifindex = rtnl_link_get_ifindex(br);
	r = addr_add(sk, *ifindex, gw, prefix);
	if (r < 0) {
		rtnl_link_put(br);
		return ward_fail(err, 0, "bridge %s: add address %s/%d: %s", name, ipam_ntoa(gw, a),
				 prefix, nl_geterror(r));
	}
	r = link_up(sk, br);
	rtnl_link_put(br);
	if (r < 0)
		return ward_fail(err, 0, "bridge %s: set up: %s", name, nl_geterror(r));
	return 0;
}

int netlink_bridge_ports(struct nl_sock *sk, const char *name, bool *exists, struct ward_err *err)
{
	struct rtnl_link *br = NULL;
	struct nl_cache *cache = NULL;
	int r, ifindex, n = 0;

	r = rtnl_link_get_kernel(sk, 0, name, &br);
	if (not_found(r)) {
		*exists = false;
		return 0;
	}
	if (r < 0)
		return ward_fail(err, 0, "bridge %s: %s", name, nl_geterror(r));
	*exists = true;
	ifindex = rtnl_link_get_ifindex(br);
	rtnl_link_put(br);
	r = rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache);
	if (r < 0)
		return ward_fail(err, 0, "list links: %s", nl_geterror(r));
	for (struct nl_object *o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o))
		if (rtnl_link_get_master((struct rtnl_link *)o) == ifindex)
			n++;
	nl_cache_free(cache);
	return n;
}

int netlink_link_exists(struct nl_sock *sk, const char *name, bool *exists, struct ward_err *err)
{
	struct rtnl_link *link = NULL;
	int r = rtnl_link_get_kernel(sk, 0, name, &link);

	*exists = r == 0;
	rtnl_link_put(link);
	if (r < 0 && !not_found(r))
		return ward_fail(err, 0, "link %s: %s", name, nl_geterror(r));
	return 0;
}

int netlink_link_delete(struct nl_sock *sk, const char *name, struct ward_err *err)
{
	struct rtnl_link *link = rtnl_link_alloc();
	int r;

	if (!link)
		return ward_fail(err, ENOMEM, "delete link %s", name);
	rtnl_link_set_name(link, name);
	r = rtnl_link_delete(sk, link);
	rtnl_link_put(link);
	if (r < 0 && !not_found(r))
		return ward_fail(err, 0, "delete link %s: %s", name, nl_geterror(r));
	return 0;
}

int netlink_veth_add(struct nl_sock *sk, const char *host_name, int bridge_ifindex,
		     const char *peer_name, int peer_nsfd, struct ward_err *err)
{
	struct rtnl_link *veth = rtnl_link_veth_alloc(), *peer;
	int r;

	if (!veth)
		return ward_fail(err, ENOMEM, "create veth %s", host_name);
	rtnl_link_set_name(veth, host_name);
	rtnl_link_set_master(veth, bridge_ifindex);
	rtnl_link_set_flags(veth, IFF_UP);
	peer = rtnl_link_veth_get_peer(veth);
	rtnl_link_set_name(peer, peer_name);
	rtnl_link_set_ns_fd(peer, peer_nsfd);
	rtnl_link_put(peer);
	r = rtnl_link_add(sk, veth, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_link_veth_release(veth);
	if (r < 0)
		return ward_fail(err, 0, "create veth %s (peer %s in the container): %s", host_name,
				 peer_name, nl_geterror(r));
	return 0;
}

static int default_route(struct nl_sock *sk, int ifindex, uint32_t gw)
{
	uint32_t be = htonl(gw);
	struct rtnl_route *route = rtnl_route_alloc();
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	struct nl_addr *dst = NULL, *via = nl_addr_build(AF_INET, &be, sizeof(be));
	int r;

	if (!route || !nh || !via) {
		r = -NLE_NOMEM;
		goto out;
	}
	r = nl_addr_parse("default", AF_INET, &dst);
	if (r < 0)
		goto out;
	rtnl_route_set_family(route, AF_INET);
	rtnl_route_set_table(route, RT_TABLE_MAIN);
	rtnl_route_set_scope(route, RT_SCOPE_UNIVERSE);
	rtnl_route_set_type(route, RTN_UNICAST);
	rtnl_route_set_protocol(route, RTPROT_BOOT);
	r = rtnl_route_set_dst(route, dst);
	if (r < 0)
		goto out;
	rtnl_route_nh_set_ifindex(nh, ifindex);
	rtnl_route_nh_set_gateway(nh, via);
	rtnl_route_add_nexthop(route, nh);
	nh = NULL; /* owned by the route now */
	r = rtnl_route_add(sk, route, NLM_F_CREATE | NLM_F_EXCL);
out:
	if (nh)
		rtnl_route_nh_free(nh);
	nl_addr_put(via);
	nl_addr_put(dst);
	rtnl_route_put(route);
	return r;
}

int netlink_iface_configure(struct nl_sock *sk, const char *ifname, uint32_t addr, int prefix,
			    uint32_t gw, struct ward_err *err)
{
	struct rtnl_link *link = NULL;
	int r, ifindex;

	r = rtnl_link_get_kernel(sk, 0, ifname, &link);
	if (r < 0)
		return ward_fail(err, 0, "%s: %s", ifname, nl_geterror(r));
	ifindex = rtnl_link_get_ifindex(link);
	r = addr_add(sk, ifindex, addr, prefix);
	if (r < 0) {
		rtnl_link_put(link);
		return ward_fail(err, 0, "%s: add address: %s", ifname, nl_geterror(r));
	}
	r = link_up(sk, link);
	rtnl_link_put(link);
	if (r < 0)
		return ward_fail(err, 0, "%s: set up: %s", ifname, nl_geterror(r));
	r = default_route(sk, ifindex, gw);
	if (r < 0)
		return ward_fail(err, 0, "%s: default route: %s", ifname, nl_geterror(r));
	return 0;
}
