/* ward-net-hook: a debug network for bundles run by hand (never under Kubernetes: CNI does
 * that there). An OCI hook; the container's state JSON arrives on stdin.
 *
 *   up   (createRuntime): bridge in the host netns with the subnet's first address, a veth
 *        pair "wv<hash of id>" <-> eth0 in the container's netns, the next free address on
 *        eth0, default route via the bridge.
 *   down (poststop): delete the veth (its peer goes with it), free the address, delete the
 *        bridge once it has no ports if this hook created it. Idempotent.
 *
 * The hook never touches the container's files: it only uses /proc/<pid>/ns/net. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "hooks.h"
#include "net_ipam.h"
#include "net_link.h"
#include "sha256.h"
#include "state.h"
#include "util.h"

#define DEFAULT_BRIDGE	  "ward0"
#define DEFAULT_SUBNET	  "10.203.0.0/24"
#define DEFAULT_STATE_DIR "/run/ward/net"
#define PEER_NAME	  "eth0"

struct opts {
	const char *bridge;
	const char *subnet;
	const char *host_netns; /* NULL: the hook's own */
	const char *state_dir;
};

struct container {
	char *id;
	long long pid;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ward-net-hook up|down [--bridge NAME] [--subnet CIDR] [--host-netns PATH]\n"
		"                     [--state-dir DIR]\n\n"
		"An OCI hook (container state JSON on stdin): up as a createRuntime hook, down as\n"
		"a poststop hook. Defaults: --bridge " DEFAULT_BRIDGE " --subnet " DEFAULT_SUBNET
		" --state-dir " DEFAULT_STATE_DIR ",\n"
		"--host-netns: the hook's own network namespace.\n");
}

static int parse_opts(int argc, char **argv, struct opts *o, struct ward_err *err)
{
	static const struct option longopts[] = {
	    {"bridge", required_argument, NULL, 'b'},
	    {"subnet", required_argument, NULL, 's'},
	    {"host-netns", required_argument, NULL, 'n'},
	    {"state-dir", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	*o = (struct opts){DEFAULT_BRIDGE, DEFAULT_SUBNET, NULL, DEFAULT_STATE_DIR};
	opterr = 0;
	optind = 2; /* argv[1] is the command */
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			o->bridge = optarg;
			break;
		case 's':
			o->subnet = optarg;
			break;
		case 'n':
			o->host_netns = optarg;
			break;
		case 'd':
			o->state_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return ward_fail(err, 0, "unknown or incomplete option \"%s\"",
					 argv[optind - 1]);
		}
	}
	if (optind != argc)
		return ward_fail(err, 0, "unexpected argument \"%s\"", argv[optind]);
	if (!*o->bridge || strlen(o->bridge) >= IF_NAMESIZE || strchr(o->bridge, '/') ||
	    strpbrk(o->bridge, " \t\n:") || strcmp(o->bridge, ".") == 0 ||
	    strcmp(o->bridge, "..") == 0)
		return ward_fail(err, 0, "--bridge \"%s\": not a valid interface name", o->bridge);
	return 0;
}

/* id and pid from the state JSON on stdin. */
static int read_state(struct container *c, bool need_pid, struct ward_err *err)
{
	json_t *o = ward_hook_read_state(STDIN_FILENO, need_pid, err), *pid;

	if (!o)
		return -1;
	pid = json_object_get(o, "pid");
	c->id = xstrdup(json_string_value(json_object_get(o, "id")));
	c->pid = json_is_integer(pid) ? json_integer_value(pid) : 0;
	json_decref(o);
	return 0;
}

/* "wv" + 12 hex digits of sha256(id): unique per id, fits IFNAMSIZ. */
static void host_ifname(const char *id, char name[16])
{
	char hex[65];

	ward_sha256_hex(id, strlen(id), hex);
	snprintf(name, 16, "wv%.12s", hex);
}

static int open_netns(const char *path, struct ward_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ward_fail_errno(err, "open network namespace %s", path);
	return fd;
}

static bool same_ns(int a, int b)
{
	struct stat sa, sb;
	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* *self: the hook's own netns (to come back to); *host: where the bridge lives. */
static int open_host(const struct opts *o, int *self, int *host, struct ward_err *err)
{
	*self = open_netns("/proc/self/ns/net", err);
	if (*self < 0)
		return -1;
	*host = o->host_netns ? open_netns(o->host_netns, err) : fcntl(*self, F_DUPFD_CLOEXEC, 3);
	if (*host < 0)
		return o->host_netns ? -1 : ward_fail_errno(err, "dup");
	return 0;
}

/* Delete id's veth, free its address, delete the bridge if ours and empty. Lock held. */
static int teardown(struct nl_sock *sk, struct ipam *p, const struct opts *o, const char *id,
		    struct ward_err *err)
{
	char ifname[16];
	bool exists;
	int ports;

	host_ifname(id, ifname);
	if (netlink_link_delete(sk, ifname, err) < 0)
		return -1;
	ipam_release(p, id);
	ports = netlink_bridge_ports(sk, o->bridge, &exists, err);
	if (ports < 0)
		return -1;
	if (!exists) {
		ipam_set_bridge_created(p, false);
	} else if (ports == 0 && ipam_bridge_created(p)) {
		if (netlink_link_delete(sk, o->bridge, err) < 0)
			return -1;
		ipam_set_bridge_created(p, false);
	}
	return ipam_save(p, err);
}

static int net_up(const struct opts *o, const struct container *c, struct ward_err *err)
{
	struct ipam_subnet subnet;
	cleanup_fd int self = -1, host = -1, ctr = -1;
	struct nl_sock *sk_host = NULL, *sk_ctr = NULL;
	struct ipam pool = {.dirfd = -1, .lockfd = -1};
	char path[64], ifname[16], a[16];
	bool created, exists;
	uint32_t addr;
	int br_index, rc = -1;

	if (ipam_parse_subnet(o->subnet, &subnet, err) < 0)
		return -1;
	if (open_host(o, &self, &host, err) < 0)
		goto out;
	snprintf(path, sizeof(path), "/proc/%lld/ns/net", c->pid);
	ctr = open_netns(path, err);
	if (ctr < 0)
		goto out;
	if (same_ns(ctr, self) || same_ns(ctr, host)) {
		ward_fail(err, 0,
			  "the container shares the host's network namespace: ward-net-hook needs "
			  "one of its own (add {\"type\": \"network\"} to linux.namespaces)");
		goto out;
	}
	sk_host = netlink_open_in(host, self, err);
	if (!sk_host) {
		ward_wrap(err, "host network namespace");
		goto out;
	}
	sk_ctr = netlink_open_in(ctr, self, err);
	if (!sk_ctr) {
		ward_wrap(err, "container network namespace");
		goto out;
	}
	if (ipam_open(&pool, o->state_dir, o->bridge, err) < 0)
		goto out;
	host_ifname(c->id, ifname);
	if (netlink_link_exists(sk_host, ifname, &exists, err) < 0)
		goto out;
	if (exists) {
		ward_fail(err, 0, "link %s already exists: is the hook registered twice?", ifname);
		goto out;
	}
	if (ipam_lease(&pool, &subnet, c->id, &addr, err) < 0)
		goto out;
	if (netlink_bridge_ensure(sk_host, o->bridge, ipam_gateway(&subnet), subnet.prefix,
				  &created, &br_index, err) < 0)
		goto undo;
	if (created)
		ipam_set_bridge_created(&pool, true);
	if (ipam_save(&pool, err) < 0 ||
	    netlink_veth_add(sk_host, ifname, br_index, PEER_NAME, ctr, err) < 0 ||
	    netlink_iface_configure(sk_ctr, PEER_NAME, addr, subnet.prefix, ipam_gateway(&subnet),
				    err) < 0) {
		ward_wrap(err, "%s %s/%d", PEER_NAME, ipam_ntoa(addr, a), subnet.prefix);
		goto undo;
	}
	rc = 0;
	goto out;
undo : {
	struct ward_err ignored;
	(void)teardown(sk_host, &pool, o, c->id, &ignored);
}
out:
	ipam_close(&pool);
	netlink_close(sk_ctr);
	netlink_close(sk_host);
	return rc;
}

static int net_down(const struct opts *o, const struct container *c, struct ward_err *err)
{
	cleanup_fd int self = -1, host = -1;
	struct ipam pool = {.dirfd = -1, .lockfd = -1};
	struct nl_sock *sk = NULL;
	int rc = -1;

	if (open_host(o, &self, &host, err) < 0)
		goto out;
	sk = netlink_open_in(host, self, err);
	if (!sk) {
		ward_wrap(err, "host network namespace");
		goto out;
	}
	if (ipam_open(&pool, o->state_dir, o->bridge, err) < 0)
		goto out;
	rc = teardown(sk, &pool, o, c->id, err);
out:
	ipam_close(&pool);
	netlink_close(sk);
	return rc;
}

int main(int argc, char **argv)
{
	struct ward_err err = {0};
	struct container c = {0};
	struct opts o;
	bool up;
	int rc;

	/* Nothing of the caller's environment or working directory is used. */
	clearenv();
	if (chdir("/") < 0) {
		fprintf(stderr, "ward-net-hook: chdir /: %s\n", strerror(errno));
		return 1;
	}
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 2 || (strcmp(argv[1], "up") != 0 && strcmp(argv[1], "down") != 0)) {
		fprintf(stderr, "ward-net-hook: expected command \"up\" or \"down\"\n");
		usage(stderr);
		return 1;
	}
	up = strcmp(argv[1], "up") == 0;
	if (parse_opts(argc, argv, &o, &err) < 0) {
		fprintf(stderr, "ward-net-hook: %s: %s\n", argv[1], err.msg);
		return 1;
	}
	if (read_state(&c, up, &err) < 0) {
		fprintf(stderr, "ward-net-hook: %s: %s\n", argv[1], err.msg);
		return 1;
	}
	rc = up ? net_up(&o, &c, &err) : net_down(&o, &c, &err);
	if (rc < 0)
		fprintf(stderr, "ward-net-hook: %s \"%s\": %s\n", argv[1], c.id, err.msg);
	free(c.id);
	return rc < 0 ? 1 : 0;
}
