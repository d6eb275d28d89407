/* ward-net-hook's netlink work (libnl-route-3): netlink sockets bound to a given network
 * namespace, the host bridge, the veth pair, and eth0's address and default route. */
#ifndef WARD_NET_LINK_H
#define WARD_NET_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

struct nl_sock;

/* A NETLINK_ROUTE socket in the namespace behind nsfd: the process enters it, connects,
 * and returns to selffd (a socket stays in the namespace it was created in). */
struct nl_sock *netlink_open_in(int nsfd, int selffd, struct ward_err *err);
void netlink_close(struct nl_sock *sk);

/* The bridge `name` exists, is up and has gw/prefix (addresses host order). Creates it if
 * missing (*created = true). Refuses a link of that name that is not a bridge. */
int netlink_bridge_ensure(struct nl_sock *sk, const char *name, uint32_t gw, int prefix,
			  bool *created, int *ifindex, struct ward_err *err);
/* Number of links whose master is the bridge; -1 with err set on failure. 0 for a bridge
 * that does not exist (*exists = false). */
int netlink_bridge_ports(struct nl_sock *sk, const char *name, bool *exists, struct ward_err *err);
/* True if a link of that name exists. */
int netlink_link_exists(struct nl_sock *sk, const char *name, bool *exists, struct ward_err *err);
/* Delete a link by name; a missing link is not an error. */
int netlink_link_delete(struct nl_sock *sk, const char *name, struct ward_err *err);

/* A veth pair: host_name attached to the bridge and up, its peer created directly in the
 * namespace behind peer_nsfd as peer_name (down: netlink_iface_configure brings it up). */
int netlink_veth_add(struct nl_sock *sk, const char *host_name, int bridge_ifindex,
		     const char *peer_name, int peer_nsfd, struct ward_err *err);
/* In the socket's namespace: addr/prefix on ifname, ifname up, default route via gw. */
int netlink_iface_configure(struct nl_sock *sk, const char *ifname, uint32_t addr, int prefix,
			    uint32_t gw, struct ward_err *err);

#endif
