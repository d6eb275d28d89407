/* ward-net-hook address allocation (see net_ipam.h). */
#include "net_ipam.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int ipam_parse_subnet(const char *cidr, struct ipam_subnet *out, struct ward_err *err)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(cidr, '/');
	struct in_addr in;
	uint64_t prefix;
	uint32_t mask;

	if (!slash || (size_t)(slash - cidr) >= sizeof(addr))
		return ward_fail(err, 0, "subnet \"%s\": expected ADDRESS/PREFIX", cidr);
	memcpy(addr, cidr, (size_t)(slash - cidr));
	addr[slash - cidr] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1)
		return ward_fail(err, 0, "subnet \"%s\": \"%s\" is not an IPv4 address", cidr,
				 addr);
	if (parse_u64(slash + 1, &prefix) < 0 || prefix < 8 || prefix > 30)
		return ward_fail(err, 0, "subnet \"%s\": prefix must be 8 to 30", cidr);
	mask = ~0U << (32 - prefix);
	out->net = ntohl(in.s_addr);
	out->prefix = (int)prefix;
	if (out->net & ~mask)
		return ward_fail(err, 0, "subnet \"%s\": host bits are set", cidr);
	return 0;
}

uint32_t ipam_gateway(const struct ipam_subnet *s)
{
	return s->net + 1;
}

const char *ipam_ntoa(uint32_t addr, char buf[16])
{
	snprintf(buf, 16, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff, (addr >> 8) & 0xff,
		 addr & 0xff);
	return buf;
}

static void subnet_text(const struct ipam_subnet *s, char buf[24])
{
	char a[16];
	snprintf(buf, 24, "%s/%d", ipam_ntoa(s->net, a), s->prefix);
}

/* mkdir -p with mode 0700 for what it creates; the path must be absolute. */
static int mkdir_p(const char *path, struct ward_err *err)
{
	cleanup_free char *p = xstrdup(path);

	if (p[0] != '/')
		return ward_fail(err, 0, "state dir \"%s\": not an absolute path", path);
	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0700) < 0 && errno != EEXIST)
				return ward_fail_errno(err, "create state dir %s", p);
			*s = c;
			if (c == '\0')
				break;
		}
	}
	return 0;
}

int ipam_open(struct ipam *p, const char *state_dir, const char *bridge, struct ward_err *err)
{
	cleanup_free char *lock = xasprintf("%s.lock", bridge);
	cleanup_free char *text = NULL;
	json_error_t jerr;

	*p = (struct ipam){.dirfd = -1, .lockfd = -1};
	if (mkdir_p(state_dir, err) < 0)
		return -1;
	p->dirfd = open(state_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0)
		return ward_fail_errno(err, "open state dir %s", state_dir);
	p->lockfd = openat(p->dirfd, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (p->lockfd < 0)
		return ward_fail_errno(err, "open %s/%s", state_dir, lock);
	while (flock(p->lockfd, LOCK_EX) < 0)
		if (errno != EINTR)
			return ward_fail_errno(err, "lock %s/%s", state_dir, lock);
	p->file = xasprintf("%s.json", bridge);
	text = read_file_at(p->dirfd, p->file, NULL, err);
	if (!text && err->errnum != ENOENT)
		return ward_wrap(err, "%s", state_dir);
	p->doc = text ? json_loads(text, 0, &jerr) : json_object();
	if (!p->doc || !json_is_object((json_t *)p->doc))
		return ward_fail(err, 0, "%s/%s: corrupt: %s", state_dir, p->file,
				 p->doc ? "not an object" : jerr.text);
	if (!json_is_object(json_object_get(p->doc, "leases")))
		json_object_set_new(p->doc, "leases", json_object());
	return 0;
}

static json_t *leases(const struct ipam *p)
{
	return json_object_get(p->doc, "leases");
}

static bool in_use(const struct ipam *p, const char *addr)
{
	const char *key;
	json_t *v;

	json_object_foreach(leases(p), key, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), addr) == 0)
			return true;
	}
	return false;
}

int ipam_lease(struct ipam *p, const struct ipam_subnet *s, const char *id, uint32_t *addr,
	       struct ward_err *err)
{
	const char *have = json_string_value(json_object_get(p->doc, "subnet"));
	json_t *mine = json_object_get(leases(p), id);
	uint32_t last = s->net + (uint32_t)((1ULL << (32 - s->prefix)) - 2);
	char want[24], buf[16];
	struct in_addr in;

	subnet_text(s, want);
	if (have && strcmp(have, want) != 0 && json_object_size(leases(p)) > 0)
		return ward_fail(err, 0, "the bridge's addresses come from subnet %s, not %s", have,
				 want);
	json_object_set_new(p->doc, "subnet", json_string(want));
	if (json_is_string(mine) && inet_pton(AF_INET, json_string_value(mine), &in) == 1 &&
	    ntohl(in.s_addr) > ipam_gateway(s) && ntohl(in.s_addr) <= last) {
		*addr = ntohl(in.s_addr);
		return 0;
	}
	for (uint32_t a = ipam_gateway(s) + 1; a <= last; a++) {
		if (in_use(p, ipam_ntoa(a, buf)))
			continue;
		json_object_set_new(leases(p), id, json_string(buf));
		*addr = a;
		return 0;
	}
	return ward_fail(err, 0, "subnet %s: no free address", want);
}

bool ipam_release(struct ipam *p, const char *id)
{
	return json_object_del(leases(p), id) == 0;
}

bool ipam_bridge_created(const struct ipam *p)
{
	return json_is_true(json_object_get(p->doc, "bridge_created"));
}

void ipam_set_bridge_created(struct ipam *p, bool created)
{
	json_object_set_new(p->doc, "bridge_created", json_boolean(created));
}

int ipam_save(struct ipam *p, struct ward_err *err)
{
	cleanup_free char *tmp = xasprintf("%s.tmp", p->file);
	char *text;
	int r;

	if (json_object_size(leases(p)) == 0 && !ipam_bridge_created(p)) {
		if (unlinkat(p->dirfd, p->file, 0) < 0 && errno != ENOENT)
			return ward_fail_errno(err, "remove %s", p->file);
		return 0;
	}
	text = json_dumps(p->doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!text)
		return ward_fail(err, ENOMEM, "encode %s", p->file);
	r = write_file_at(p->dirfd, tmp, O_CREAT | O_TRUNC | O_NOFOLLOW, 0600, text, strlen(text),
			  err);
	free(text);
	if (r < 0)
		return -1;
	if (renameat(p->dirfd, tmp, p->dirfd, p->file) < 0)
		return ward_fail_errno(err, "rename %s", tmp);
	return 0;
}

void ipam_close(struct ipam *p)
{
	if (p->doc)
		json_decref(p->doc);
	free(p->file);
	if (p->lockfd >= 0)
		close(p->lockfd); /* releases the flock */
	if (p->dirfd >= 0)
		close(p->dirfd);
	*p = (struct ipam){.dirfd = -1, .lockfd = -1};
}
