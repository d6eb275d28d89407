/* ward-net-hook address allocation: one JSON file per bridge in the state dir, read and
 * written under an exclusive flock of "<bridge>.lock", so concurrent hooks never hand out
 * one address twice. The lock is held from ipam_open to ipam_close: the caller does its
 * link work inside it, which also serialises creating and deleting the bridge. */
#ifndef WARD_NET_IPAM_H
#define WARD_NET_IPAM_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

struct ipam_subnet {
	uint32_t net; /* host byte order, host bits zero */
	int prefix;   /* 8..30 */
};

struct ipam {
	int dirfd;
	int lockfd;
	char *file; /* "<bridge>.json" */
	void *doc;  /* json_t: {"subnet", "bridge_created", "leases": {id: "a.b.c.d"}} */
};

/* "10.203.0.0/24" -> subnet. Refuses host bits, prefixes outside 8..30. */
int ipam_parse_subnet(const char *cidr, struct ipam_subnet *out, struct ward_err *err);
/* The first host address (the bridge's): net + 1. */
uint32_t ipam_gateway(const struct ipam_subnet *s);
/* Dotted quad of a host-order address into buf (16 bytes). */
const char *ipam_ntoa(uint32_t addr, char buf[16]);

/* Create state_dir (0700) if needed, take the bridge's lock, read its file. */
int ipam_open(struct ipam *p, const char *state_dir, const char *bridge, struct ward_err *err);
/* The address of id: its existing lease, else the lowest free one in s (never the network,
 * gateway or broadcast address). Fails if the file's leases are from another subnet. */
int ipam_lease(struct ipam *p, const struct ipam_subnet *s, const char *id, uint32_t *addr,
	       struct ward_err *err);
/* Drop id's lease; true if it had one. */
bool ipam_release(struct ipam *p, const char *id);
bool ipam_bridge_created(const struct ipam *p);
void ipam_set_bridge_created(struct ipam *p, bool created);
/* Write the file atomically (or remove it when it holds nothing worth keeping). */
int ipam_save(struct ipam *p, struct ward_err *err);
/* Release the lock and free everything. */
void ipam_close(struct ipam *p);

#endif
