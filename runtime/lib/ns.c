#include "ns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "util.h"

/* The order of joins: user first (it decides what else we may join), mount last but
 * before pid/time (which only take effect for children). */
static const int join_order[] = {CLONE_NEWUSER,	  CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWNET,
				 CLONE_NEWCGROUP, CLONE_NEWNS,	CLONE_NEWPID, CLONE_NEWTIME};

static int joined_fd(const struct ward_ns_plan *plan, int type)
{
	for (int i = 0; i < plan->n_join; i++)
		if (plan->join_type[i] == type)
			return plan->join_fd[i];
	return -1;
}

/* Does the container's user namespace own the network namespace it joins by path? */
static int net_ownership(const struct ward_spec *spec, struct ward_ns_plan *plan,
			 struct ward_err *err)
{
	int net = joined_fd(plan, CLONE_NEWNET), user = joined_fd(plan, CLONE_NEWUSER);
	bool keyed = false;
	cleanup_fd int owner = -1;
	struct stat a, b;

	if (net < 0 || (!(plan->new_flags & CLONE_NEWUSER) && user < 0))
		return 0;
	owner = ioctl(net, NS_GET_USERNS);
	if (owner < 0)
		return ward_fail_errno(err, "network namespace: its owning user namespace");
	if (user >= 0 && fstat(owner, &a) == 0 && fstat(user, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		return 0; /* the pod's own netns, made in its user namespace */
	plan->net_foreign = true;
	for (size_t i = 0; spec->linux.sysctl_keys && spec->linux.sysctl_keys[i]; i++)
		if (!strcmp(spec->linux.sysctl_keys[i], "net.ipv4.ip_unprivileged_port_start") ||
		    !strcmp(spec->linux.sysctl_keys[i], "net/ipv4/ip_unprivileged_port_start"))
			keyed = true;
	/* Only a pod network the host made (owned by the host's user namespace, and not the
	 * host's own netns): never one another pod's user namespace owns. */
	plan->net_port_start = (plan->new_flags & CLONE_NEWUSER) && !keyed &&
			       ward_ns_fd_is_host(owner, "user") == 1 &&
			       ward_ns_fd_is_host(net, "net") == 0;
	return 0;
}

/* Which joined namespaces the container's user namespace does not own: with a new one,
 * all (it owns nothing yet); with a joined one, those another user namespace owns. */
static void foreign_owners(struct ward_ns_plan *plan)
{
	int user = joined_fd(plan, CLONE_NEWUSER);
	struct stat a, b;

	if (!(plan->new_flags & CLONE_NEWUSER) && user < 0)
		return; /* the host's user namespace: the runtime's root is privileged anywhere */
	for (int i = 0; i < plan->n_join; i++) {
		cleanup_fd int owner = -1;
		if (plan->join_type[i] == CLONE_NEWUSER)
			continue;
		if (user >= 0 && (owner = ioctl(plan->join_fd[i], NS_GET_USERNS)) >= 0 &&
		    fstat(owner, &a) == 0 && fstat(user, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			continue;
		plan->foreign |= plan->join_type[i];
	}
}

void ward_ns_hint(const struct ward_ns_plan *plan, struct ward_err *err)
{
	char which[256] = "";
	size_t n = 0, len = strlen(err->msg);

	if (err->errnum != EPERM || !plan->foreign)
		return;
	for (int i = 0; i < plan->n_join && n < sizeof(which); i++)
		if (plan->foreign & plan->join_type[i])
			n += (size_t)snprintf(which + n, sizeof(which) - n, "%s%s namespace %s",
					      n ? ", " : "", ward_ns_type_name(plan->join_type[i]),
					      plan->join_path[i]);
	snprintf(err->msg + len, sizeof(err->msg) - len,
		 " (the %s joined by path belong%s to a user namespace that is not the "
		 "container's, where its root has no privilege: join the user namespace that "
		 "owns %s (linux.namespaces user with its path), or do not join %s)",
		 which, strchr(which, ',') ? "" : "s", strchr(which, ',') ? "them" : "it",
		 strchr(which, ',') ? "them" : "it");
}

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
		plan->join_path[plan->n_join] = ns->path;
		plan->join_fd[plan->n_join++] = fd;
	}
	foreign_owners(plan);
	return net_ownership(spec, plan, err);
}

void ward_ns_plan_close(struct ward_ns_plan *plan)
{
	for (int i = 0; i < plan->n_join; i++)
		if (plan->join_fd[i] >= 0)
			close(plan->join_fd[i]);
	plan->n_join = 0;
}

/* The process's namespace of that kind is the one behind st: compared by stat, or by the
 * link's "net:[inode]" where pid 1's namespace files cannot be stat'ed (a non-dumpable
 * pid 1, as in some sandboxes). */
static bool ns_same(const struct stat *st, const char *pid, const char *proc)
{
	char p[64], link[64], want[64];
	struct stat b;
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%s/ns/%s", pid, proc);
	if (stat(p, &b) == 0)
		return st->st_dev == b.st_dev && st->st_ino == b.st_ino;
	n = readlink(p, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	snprintf(want, sizeof(want), "%s:[%llu]", proc, (unsigned long long)st->st_ino);
	return !strcmp(link, want);
}

int ward_ns_fd_is_host(int fd, const char *proc)
{
	struct stat a;

	if (fstat(fd, &a) < 0)
		return -1;
	return ns_same(&a, "1", proc) || ns_same(&a, "self", proc);
}

/* The namespace a sysctl belongs to (runc's rules), 0 if it is not namespaced. */
static int sysctl_ns(const char *key)
{
	static const char *const ipc[] = {
	    "kernel.msgmax", "kernel.msgmnb",	       "kernel.msgmni",
	    "kernel.sem",    "kernel.shmall",	       "kernel.shmmax",
	    "kernel.shmmni", "kernel.shm_rmid_forced", NULL};
	cleanup_free char *k = xstrdup(key);

	if (strchr(k, '/')) /* "net/ipv4/ip_forward": the same names, '/' between */
		for (char *q = k; *q; q++)
			if (*q == '/')
				*q = '.';
	for (size_t i = 0; ipc[i]; i++)
		if (!strcmp(k, ipc[i]))
			return CLONE_NEWIPC;
	if (!strncmp(k, "fs.mqueue.", 10))
		return CLONE_NEWIPC;
	if (!strncmp(k, "net.", 4))
		return CLONE_NEWNET;
	if (!strcmp(k, "kernel.hostname") || !strcmp(k, "kernel.domainname"))
		return CLONE_NEWUTS;
	return 0;
}

int ward_ns_check_sysctls(const struct ward_spec *spec, const struct ward_ns_plan *plan,
			  struct ward_err *err)
{
	for (size_t i = 0; spec->linux.sysctl_keys && spec->linux.sysctl_keys[i]; i++) {
		const char *key = spec->linux.sysctl_keys[i];
		int type = sysctl_ns(key);
		const struct ward_namespace *ns = type ? ward_spec_ns(spec, type) : NULL;

		if (!type)
			return ward_fail(err, 0,
					 "config.json: linux.sysctl: \"%s\" is not a namespaced "
					 "sysctl: it would be set on the host",
					 key);
		if (!ns)
			return ward_fail(
			    err, 0,
			    "config.json: linux.sysctl: \"%s\" needs the container's "
			    "own %s namespace, and linux.namespaces has none: it would "
			    "be set on the host",
			    key, ward_ns_type_name(type));
		if (!ns->path)
			continue;
		for (int j = 0; j < plan->n_join; j++)
			if (plan->join_type[j] == type &&
			    ward_ns_fd_is_host(plan->join_fd[j], ward_ns_proc_name(type)) != 0)
				return ward_fail(err, 0,
						 "config.json: linux.sysctl: \"%s\" needs the "
						 "container's own %s namespace, and it joins the "
						 "host's (%s): it would be set on the host",
						 key, ward_ns_type_name(type), ns->path);
	}
	return 0;
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
			if (setns(plan->join_fd[i], type) < 0) {
				ward_fail_errno(err, "join %s namespace %s",
						ward_ns_type_name(type), plan->join_path[i]);
				ward_ns_hint(plan, err);
				return -1;
			}
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

int ward_ns_uts_names(int fd, struct utsname *out, struct ward_err *err)
{
	cleanup_fd int rd = -1;
	cleanup_fd int wr = -1;
	int p[2], status, child_errno = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return ward_fail_errno(err, "pipe");
	rd = p[0];
	wr = p[1];
	pid = fork();
	if (pid < 0)
		return ward_fail_errno(err, "fork");
	if (pid == 0) {
		/* The names on success, else the errno alone (a shorter message). */
		struct utsname u;
		int e;
		if (setns(fd, CLONE_NEWUTS) == 0 && uname(&u) == 0)
			_exit(write_all(wr, &u, sizeof(u)) == 0 ? 0 : 1);
		e = errno;
		_exit(write_all(wr, &e, sizeof(e)) == 0 ? 1 : 2);
	}
	close(wr);
	wr = -1;
	n = read_exact(rd, out, sizeof(*out));
	if (n == (ssize_t)sizeof(child_errno))
		memcpy(&child_errno, out, sizeof(child_errno));
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(*out) && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		out->nodename[sizeof(out->nodename) - 1] = '\0';
		out->domainname[sizeof(out->domainname) - 1] = '\0';
		return 0;
	}
	return ward_fail(err, child_errno, "read its names (setns, uname): %s",
			 child_errno ? strerror(child_errno) : "the child failed");
}
