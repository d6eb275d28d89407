#include "init.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/keyctl.h>

#include "apparmor.h"
#include "caps.h"
#include "dev.h"
#include "hooks.h"
#include "log.h"
#include "mount.h"
#include "path.h"
#include "process.h"
#include "rootfs.h"
#include "seccomp.h"
#include "sync.h"
#include "sys.h"
#include "terminal.h"
#include "util.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static bool has_new(const struct ward_ns_plan *plan, int type)
{
	return plan->new_flags & type;
}

static bool joins(const struct ward_ns_plan *plan, int type)
{
	for (int i = 0; i < plan->n_join; i++)
		if (plan->join_type[i] == type)
			return true;
	return false;
}

__attribute__((noreturn)) static void die(int sync, struct ward_err *err)
{
	ward_sync_send_err(sync, err);
	_exit(1);
}

/* ---- stage 2: the container init ---- */

/* The state JSON for the spec's hooks of kind; NULL when it has none (nothing to write). */
static char *hook_state(const struct ward_init_args *a, enum ward_hook_kind kind, pid_t pid,
			enum ward_status st)
{
	struct ward_state s = *a->state;
	if (a->spec->hooks[kind].n == 0)
		return NULL;
	s.pid = pid;
	return ward_state_json(&s, st, false);
}

static int set_names(const struct ward_spec *spec, struct ward_err *err)
{
	if (spec->hostname && sethostname(spec->hostname, strlen(spec->hostname)) < 0)
		return ward_fail_errno(err, "set hostname \"%s\"", spec->hostname);
	if (spec->domainname && setdomainname(spec->domainname, strlen(spec->domainname)) < 0)
		return ward_fail_errno(err, "set domainname \"%s\"", spec->domainname);
	return 0;
}

static int new_session_keyring(struct ward_err *err)
{
	/* A fresh session keyring so the container cannot see the caller's keys. */
	if (sys_keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0) < 0 && errno != ENOSYS && errno != EPERM)
		return ward_fail_errno(err, "join new session keyring");
	return 0;
}

static int setup_console(const struct ward_process *p, int sync, struct ward_err *err)
{
	cleanup_fd int master = -1;
	cleanup_fd int slave = -1;
	if (ward_pty_open(&master, &slave, err) < 0 || ward_pty_chown(slave, p->user.uid, err) < 0)
		return -1;
	if (p->has_console_size &&
	    ward_pty_set_size(master, p->console_height, p->console_width, err) < 0)
		return -1;
	if (ward_dev_console(slave, err) < 0)
		return -1;
	if (ward_sync_send_fd(sync, WARD_SYNC_CONSOLE, master, err) < 0)
		return -1;
	return ward_pty_make_stdio(slave, err);
}

/* After `start` released us: report a failure to it through the exec fifo (it reads what
 * is left there once we are gone) and exit. */
__attribute__((noreturn)) static void fail_start(int fifo, const struct ward_err *err, int code)
{
	dprintf(fifo, "E%s", err->msg);
	_exit(code);
}

/* The mounts the runtime made for us on the host side, in spec order. */
static int *receive_premounted(const struct ward_init_args *a, struct ward_err *err)
{
	int *fds = xcalloc(a->spec->n_mounts + 1, sizeof(int));
	struct ward_sync m;

	fds[a->spec->n_mounts] = -1;
	/* The root, always: the runtime mounts it from the fd it opened (idmapped or not). */
	if (ward_sync_expect(a->sync_fd, WARD_SYNC_MOUNTFD, &m, &fds[a->spec->n_mounts], err) < 0) {
		free(fds);
		return NULL;
	}
	for (size_t i = 0; i < a->spec->n_mounts; i++) {
		fds[i] = -1;
		if (ward_mount_needs_host(&a->spec->mounts[i]) &&
		    ward_sync_expect(a->sync_fd, WARD_SYNC_MOUNTFD, &m, &fds[i], err) < 0) {
			free(fds);
			return NULL;
		}
	}
	return fds;
}

static int receive_filters(int sock, struct ward_seccomp_filters *f, struct ward_err *err)
{
	struct ward_sync m;
	cleanup_fd int fd = -1;

	if (ward_sync_expect(sock, WARD_SYNC_SECCOMP, &m, &fd, err) < 0)
		return -1;
	if (fd < 0)
		return ward_fail(err, EPROTO, "seccomp filters: no memfd");
	return ward_seccomp_filters_from_fd(fd, f, err);
}

__attribute__((noreturn)) static void stage2(const struct ward_init_args *a)
{
	const struct ward_spec *spec = a->spec;
	const struct ward_process *proc = spec->process;
	struct ward_err err = {0};
	struct ward_sync m;
	cleanup_fd int userns_fd = -1;
	cleanup_fd int rootfd = -1;
	cleanup_free char *exe = NULL;
	cleanup_free char *st_json = NULL;
	cleanup_free int *premounted = NULL;
	cleanup_strv char **env = NULL;
	struct ward_seccomp_filters filters = {0};
	bool in_userns = has_new(a->plan, CLONE_NEWUSER) || joins(a->plan, CLONE_NEWUSER);
	pid_t host_pid;
	char byte;

	/* 1. The runtime puts us in our cgroup and tells us our pid as the host sees it. */
	if (ward_sync_expect(a->sync_fd, WARD_SYNC_GO, &m, NULL, &err) < 0)
		_exit(1);
	host_pid = m.value;

	/* 2. Namespaces that must come after the cgroup join; names; lo. */
	if (has_new(a->plan, CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP) < 0)
		die(a->sync_fd, (ward_fail_errno(&err, "unshare cgroup namespace"), &err));
	if (!proc->terminal && setsid() < 0)
		die(a->sync_fd, (ward_fail_errno(&err, "setsid"), &err));
	if (!a->no_new_keyring && new_session_keyring(&err) < 0)
		die(a->sync_fd, &err);
	if (set_names(spec, &err) < 0)
		die(a->sync_fd, (ward_ns_hint(a->plan, &err), &err));
	if (has_new(a->plan, CLONE_NEWNET) && ward_net_lo_up(&err) < 0)
		die(a->sync_fd, &err);

	/* 3. Root filesystem and mounts, still seeing the host's paths. */
	if (in_userns) {
		userns_fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
		if (userns_fd < 0)
			die(a->sync_fd, (ward_fail_errno(&err, "open own user namespace"), &err));
	}
	premounted = receive_premounted(a, &err);
	if (!premounted)
		die(a->sync_fd, &err);
	rootfd = (ward_spec_ns(spec, CLONE_NEWNS) ? ward_rootfs_prepare : ward_rootfs_prepare_host)(
	    spec, userns_fd, in_userns, premounted, &err);
	if (rootfd >= 0) {
		/* As runc: a missing cwd is created (inside the root, before it may go ro). */
		struct ward_err ignored;
		int cwd = ward_path_mkdir_p(rootfd, proc->cwd, WARD_PATH_DIR, &ignored);
		if (cwd >= 0)
			close(cwd);
	}
	for (size_t i = 0; i <= spec->n_mounts; i++)
		if (premounted[i] >= 0)
			close(premounted[i]);
	if (rootfd < 0)
		die(a->sync_fd, (ward_ns_hint(a->plan, &err), &err));
	/* The filters, compiled by the runtime while we made the mounts (installed at 6.) */
	if (receive_filters(a->sync_fd, &filters, &err) < 0)
		die(a->sync_fd, &err);

	/* 4. Hooks: prestart/createRuntime in the runtime's namespaces (run by the runtime),
	 * createContainer here, in ours, before pivot_root. */
	if (ward_init_hook_pause(spec) &&
	    (ward_sync_send(a->sync_fd, WARD_SYNC_HOOKS, 0, &err) < 0 ||
	     ward_sync_expect(a->sync_fd, WARD_SYNC_HOOKS_DONE, &m, NULL, &err) < 0))
		_exit(1);
	/* as prestart's: see container.c */
	st_json = hook_state(a, WARD_HOOK_CREATE_CONTAINER, host_pid, WARD_CREATED);
	if (ward_hooks_run(&spec->hooks[WARD_HOOK_CREATE_CONTAINER], WARD_HOOK_CREATE_CONTAINER,
			   st_json, &err) < 0)
		die(a->sync_fd, &err);

	/* 5. Enter the rootfs for good. */
	if ((ward_spec_ns(spec, CLONE_NEWNS) ? ward_rootfs_pivot(rootfd, a->no_pivot, &err)
					     : ward_rootfs_chroot(rootfd, &err)) < 0)
		die(a->sync_fd, &err);
	close(rootfd);
	rootfd = -1;
	if (proc->terminal && setup_console(proc, a->sync_fd, &err) < 0)
		die(a->sync_fd, (ward_wrap(&err, "console"), &err));
	if (ward_rootfs_finalize(spec, &err) < 0)
		die(a->sync_fd, &err);
	if (ward_process_chdir(proc, &err) < 0)
		die(a->sync_fd, &err);
	exe = ward_process_find_exe(proc, &err);
	if (!exe)
		die(a->sync_fd, &err);
	env = ward_process_env(proc);

	/* 6. Drop to what the process may have. */
	if (ward_process_harden(proc, &filters, spec->linux.personality, &err) < 0)
		die(a->sync_fd, &err);

	/* 7. Created: wait for `start`. */
	if (ward_sync_send(a->sync_fd, WARD_SYNC_READY, 0, &err) < 0)
		_exit(1);
	close(a->sync_fd);
	while (read(a->fifo_fd, &byte, 1) < 0) {
		if (errno != EINTR)
			_exit(1);
	}

	/* 8. startContainer hooks, then the container's program. */
	free(st_json);
	st_json = hook_state(a, WARD_HOOK_START_CONTAINER, host_pid, WARD_CREATED);
	if (ward_hooks_run(&spec->hooks[WARD_HOOK_START_CONTAINER], WARD_HOOK_START_CONTAINER,
			   st_json, &err) < 0)
		fail_start(a->fifo_fd, &err, 1);
	/* 9. The AppArmor profile, which takes hold at this execve. */
	if (ward_apparmor_exec_label(proc->apparmor_profile, &err) < 0)
		fail_start(a->fifo_fd, &err, 1);
	execve(exe, proc->args, env);
	ward_fail_errno(&err, "exec \"%s\"", proc->args[0]);
	fail_start(a->fifo_fd, &err, 127);
}

/* ---- stage 1 ---- */

/* In the pod's network namespace, which the host's user namespace owns, and still the
 * host's root: let the pod's root bind ports below 1024, as Kubernetes does (its userns
 * root has no CAP_NET_BIND_SERVICE over this netns). /proc/sys/net is the netns we are
 * in now. */
static int unprivileged_ports(struct ward_err *err)
{
	static const char path[] = "/proc/sys/net/ipv4/ip_unprivileged_port_start";
	cleanup_fd int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	struct statfs sf;

	if (fd < 0 || fstatfs(fd, &sf) < 0)
		return ward_fail_errno(err, "network namespace: %s", path);
	if ((unsigned long)sf.f_type != (unsigned long)PROC_SUPER_MAGIC)
		return ward_fail(err, EINVAL, "network namespace: %s is not on procfs", path);
	if (write(fd, "0", 1) != 1)
		return ward_fail_errno(err, "network namespace: write 0 to %s", path);
	return 0;
}

/* The first thing either child does: nothing of the runtime may reach the container
 * (CVE-2024-21626): close every fd but stdio, the preserved ones, our two channels and the
 * namespaces to join; not dumpable: container processes cannot ptrace us or open our /proc
 * files. */
static void init_seal(const struct ward_init_args *a)
{
	const struct ward_ns_plan *plan = a->plan;
	int keep[3 + WARD_NS_MAX] = {a->sync_fd, a->fifo_fd, a->log_fd};

	for (int i = 0; i < plan->n_join; i++)
		keep[3 + i] = plan->join_fd[i];
	close_fds_except(3 + a->preserve_fds, keep, 3 + (size_t)plan->n_join);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* None of the runtime's supplementary groups (host gid 0, say) for the container:
	 * here as host root (stage 1), else once the new user namespace is ours. */
	(void)setgroups(0, NULL);
}

/* In a new or joined user namespace, become its root so files we create are owned by it;
 * fails harmlessly when container id 0 is not mapped. */
static void become_userns_root(const struct ward_ns_plan *plan)
{
	if (!has_new(plan, CLONE_NEWUSER) && !joins(plan, CLONE_NEWUSER))
		return;
	if (setresgid(0, 0, 0) == 0 && setresuid(0, 0, 0) < 0)
		ward_debug("stage 1: container uid 0 is not mapped");
	(void)setgroups(0, NULL); /* fails where setgroups is denied: cleared before */
}

bool ward_init_hook_pause(const struct ward_spec *spec)
{
	return spec->hooks[WARD_HOOK_PRESTART].n || spec->hooks[WARD_HOOK_CREATE_RUNTIME].n ||
	       spec->hooks[WARD_HOOK_CREATE_CONTAINER].n;
}

bool ward_init_direct_ok(const struct ward_ns_plan *plan)
{
	return plan->n_join == 0 && !has_new(plan, CLONE_NEWTIME) && !plan->net_port_start;
}

__attribute__((noreturn)) void ward_init_direct(const struct ward_init_args *a)
{
	struct ward_err err = {0};
	struct ward_sync m;

	init_seal(a);
	if (has_new(a->plan, CLONE_NEWUSER) &&
	    ward_sync_expect(a->sync_fd, WARD_SYNC_USERNS_DONE, &m, NULL, &err) < 0)
		_exit(1);
	become_userns_root(a->plan);
	stage2(a);
}

__attribute__((noreturn)) void ward_init_stage1(const struct ward_init_args *a)
{
	const struct ward_ns_plan *plan = a->plan;
	struct ward_err err = {0};
	struct ward_sync m;
	int others = plan->new_flags & ~(CLONE_NEWUSER | CLONE_NEWCGROUP);
	pid_t child;

	init_seal(a);

	/* The namespaces given by path first, as the host's root (runc's order): one the
	 * host's user namespace owns (the netns CRI made for the pod) could no longer be
	 * joined from inside a new or joined user namespace. */
	if (ward_ns_join(plan, CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET, &err) < 0)
		die(a->sync_fd, &err);
	if (plan->net_port_start && unprivileged_ports(&err) < 0)
		die(a->sync_fd, &err);
	if (ward_rootfs_host_net_sysctls(a->spec, &err) < 0)
		die(a->sync_fd, &err);
	if (ward_ns_join(plan, ~(CLONE_NEWUSER | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET),
			 &err) < 0)
		die(a->sync_fd, &err);
	if (ward_ns_join(plan, CLONE_NEWUSER, &err) < 0)
		die(a->sync_fd, &err);
	if (has_new(plan, CLONE_NEWUSER)) {
		if (unshare(CLONE_NEWUSER) < 0)
			die(a->sync_fd, (ward_fail_errno(&err, "unshare user namespace"), &err));
		if (ward_sync_send(a->sync_fd, WARD_SYNC_USERNS, 0, &err) < 0 ||
		    ward_sync_expect(a->sync_fd, WARD_SYNC_USERNS_DONE, &m, NULL, &err) < 0)
			_exit(1);
	}
	become_userns_root(plan);
	for (int i = 0; i < plan->n_join; i++)
		close(plan->join_fd[i]);
	if (others && unshare(others) < 0)
		die(a->sync_fd, (ward_fail_errno(&err, "unshare namespaces"), &err));
	if (has_new(plan, CLONE_NEWTIME) && ward_timens_write_offsets(&a->spec->linux, &err) < 0)
		die(a->sync_fd, &err);

	child = fork();
	if (child < 0)
		die(a->sync_fd, (ward_fail_errno(&err, "fork container init"), &err));
	if (child == 0)
		stage2(a);
	if (ward_sync_send(a->sync_fd, WARD_SYNC_PID, child, &err) < 0)
		_exit(1);
	_exit(0);
}

/* ---- shared with exec ---- */

int ward_process_chdir(const struct ward_process *p, struct ward_err *err)
{
	char buf[4096];
	if (chdir(p->cwd) < 0)
		return ward_fail_errno(err, "process.cwd: chdir %s", p->cwd);
	/* A cwd reached through a leaked fd would read "(unreachable)/..." here. */
	if (!getcwd(buf, sizeof(buf)) || buf[0] != '/')
		return ward_fail(err, 0, "process.cwd: %s is outside the container", p->cwd);
	return 0;
}

char **ward_process_env(const struct ward_process *p)
{
	char **env = strv_dup(p->env);
	char line[1024];
	char *home = NULL;
	FILE *f;

	for (size_t i = 0; env[i]; i++)
		if (!strncmp(env[i], "HOME=", 5))
			return env;
	/* Read inside the container, after pivot: its passwd, not the host's. */
	f = fopen("/etc/passwd", "re");
	while (f && !home && fgets(line, sizeof(line), f)) {
		char *save = NULL;
		char *field[7] = {0};
		int n = 0;
		for (char *t = strtok_r(line, ":\n", &save); t && n < 7;
		     t = strtok_r(NULL, ":\n", &save))
			field[n++] = t;
		if (n >= 6 && (uint32_t)strtoul(field[2], NULL, 10) == p->user.uid)
			home = xstrdup(field[5]);
	}
	if (f)
		fclose(f);
	{
		char *kv = xasprintf("HOME=%s", home ? home : "/");
		env = strv_append(env, kv);
		free(kv);
	}
	free(home);
	return env;
}

char *ward_process_find_exe(const struct ward_process *p, struct ward_err *err)
{
	const char *name = p->args[0];
	const char *path = NULL;
	cleanup_free char *copy = NULL;
	char *save = NULL;

	if (strchr(name, '/')) {
		if (access(name, X_OK) < 0) {
			ward_fail_errno(err, "exec: \"%s\"", name);
			return NULL;
		}
		return xstrdup(name);
	}
	for (size_t i = 0; p->env && p->env[i]; i++)
		if (!strncmp(p->env[i], "PATH=", 5))
			path = p->env[i] + 5;
	copy = xstrdup(path ? path : DEFAULT_PATH);
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", *dir ? dir : ".", name);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
	}
	ward_fail(err, ENOENT, "exec: \"%s\": executable file not found in $PATH", name);
	return NULL;
}

int ward_process_harden(const struct ward_process *p, const struct ward_seccomp_filters *sf,
			const struct ward_personality *pers, struct ward_err *err)
{
	struct ward_capset caps = {0};

	if (ward_rlimits_apply(p, err) < 0 || ward_ioprio_apply(p, err) < 0 ||
	    ward_sched_apply(p, err) < 0)
		return -1;
	if (pers && ward_personality_apply(pers, err) < 0)
		return -1;
	if (ward_caps_from_spec(&p->capabilities, &caps, err) < 0)
		return -1;
	/* Without noNewPrivileges, loading a filter needs CAP_SYS_ADMIN, which the
	 * process may be about to lose: load it first, as runc does. */
	if (!p->no_new_privileges && ward_seccomp_filters_install(sf, err) < 0)
		return ward_wrap(err, "seccomp");
	if (ward_user_apply(p, err) < 0)
		return -1;
	if (ward_caps_apply(&caps, err) < 0)
		return ward_wrap(err, "capabilities");
	if (p->no_new_privileges && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ward_fail_errno(err, "set no_new_privs");
	if (p->no_new_privileges && ward_seccomp_filters_install(sf, err) < 0)
		return ward_wrap(err, "seccomp");
	return 0;
}
