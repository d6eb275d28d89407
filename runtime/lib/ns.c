#include "ns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "util.h"

/* The order of joins: user first (it decides what else we may join), mount last but
 * before pid/time (which only take effect for children). */
static const int join_order[] = {CLONE_NEWUSER,	  CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWNET,
				 CLONE_NEWCGROUP, CLONE_NEWNS,	CLONE_NEWPID, CLONE_NEWTIME};

int ward_ns_plan(const struct ward_spec *spec, const struct ward_hostfds *fds,
		 struct ward_ns_plan *plan, struct ward_err *err)
{
	memset(plan, 0, sizeof(*plan));
	for (size_t i = 0; i < spec->linux.n_namespaces; i++) {
		const struct ward_namespace *ns = &spec->linux.namespaces[i];
		const struct ward_hostfd *e;
		int fd, type;
		if (!ns->path) {
			plan->new_flags |= ns->type;
			continue;
		}
		/* The namespace file opened (and checked for nsfs) when the spec was: the fd
		 * is what is joined, never the name. */
		e = ward_hostfds_ns(fds, ns->type);
		if (!e || strcmp(e->name, ns->path)) {
			ward_fail(err, 0,
				  "linux.namespaces[%zu] (%s): %s was not opened when the "
				  "spec was checked",
				  i, ward_ns_type_name(ns->type), ns->path);
			ward_ns_plan_close(plan);
			return -1;
		}
		if (ward_hostfd_get(e, "namespace", err) < 0) {
			ward_ns_plan_close(plan);
			return -1;
		}
		fd = fcntl(e->fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0) {
			ward_fail_errno(err, "linux.namespaces[%zu].path: %s", i, ns->path);
			ward_ns_plan_close(plan);
			return -1;
		}
		type = ioctl(fd, NS_GET_NSTYPE);
		if (type != ns->type) {
			close(fd);
			ward_fail(err, 0, "linux.namespaces[%zu].path: %s: not a %s namespace", i,
				  ns->path, ward_ns_type_name(ns->type));
			ward_ns_plan_close(plan);
			return -1;
		}
		plan->join_type[plan->n_join] = ns->type;
		plan->join_fd[plan->n_join++] = fd;
	}
	return 0;
}

void ward_ns_plan_close(struct ward_ns_plan *plan)
{
	for (int i = 0; i < plan->n_join; i++)
		if (plan->join_fd[i] >= 0)
			close(plan->join_fd[i]);
	plan->n_join = 0;
}

int ward_ns_join(const struct ward_ns_plan *plan, int mask, struct ward_err *err)
{
	for (size_t o = 0; o < ARRAY_SIZE(join_order); o++) {
		int type = join_order[o];
		if (!(mask & type))
			continue;
		for (int i = 0; i < plan->n_join; i++) {
			if (plan->join_type[i] != type)
				continue;
			if (setns(plan->join_fd[i], type) < 0)
				return ward_fail_errno(err, "join %s namespace",
						       ward_ns_type_name(type));
		}
	}
	return 0;
}

static int write_map(pid_t pid, const char *file, const struct ward_idmaps *m, struct ward_err *err)
{
	char path[64];
	char buf[4096];
	size_t n = 0;
	for (size_t i = 0; i < m->n && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%u %u %u\n", m->v[i].container_id,
				      m->v[i].host_id, m->v[i].size);
	if (n >= sizeof(buf))
		return ward_fail(err, E2BIG, "%s: too many mappings", file);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if (write_file_at(AT_FDCWD, path, 0, 0, buf, n, err) < 0)
		return ward_wrap(err, "write %s", file);
	return 0;
}

int ward_userns_write_maps(pid_t pid, const struct ward_idmaps *uids,
			   const struct ward_idmaps *gids, struct ward_err *err)
{
	if (write_map(pid, "uid_map", uids, err) < 0)
		return -1;
	return write_map(pid, "gid_map", gids, err);
}

int ward_timens_write_offsets(const struct ward_linux *lx, struct ward_err *err)
{
	char buf[128];
	size_t n = 0;
	if (lx->time_monotonic.set)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "monotonic %lld %u\n",
				      (long long)lx->time_monotonic.secs,
				      lx->time_monotonic.nanosecs);
	if (lx->time_boottime.set)
		n +=
		    (size_t)snprintf(buf + n, sizeof(buf) - n, "boottime %lld %u\n",
				     (long long)lx->time_boottime.secs, lx->time_boottime.nanosecs);
	if (n == 0)
		return 0;
	if (write_file_at(AT_FDCWD, "/proc/self/timens_offsets", 0, 0, buf, n, err) < 0)
		return ward_wrap(err, "linux.timeOffsets");
	return 0;
}
