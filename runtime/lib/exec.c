/* exec: run another process in a created or running container. The runtime forks a
 * joiner that enters the container's cgroup and namespaces (through the init's pidfd),
 * which forks the process itself (so it lands in the pid and time namespaces); the
 * process hardens itself like the init did and execs. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apparmor.h"
#include "audit.h"
#include "caps.h"
#include "cgroup.h"
#include "container.h"
#include "init.h"
#include "json.h"
#include "ns.h"
#include "log.h"
#include "policy.h"
#include "policy_fields.h"
#include "process.h"
#include "selfexe.h"
#include "state.h"
#include "sync.h"
#include "sys.h"
#include "terminal.h"
#include "util.h"

static const int ns_types[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET,
			       CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME};

/* Namespaces of pid that differ from ours: those are the ones to join. */
static int ns_to_join(pid_t pid)
{
	int flags = 0;
	for (size_t i = 0; i < ARRAY_SIZE(ns_types); i++) {
		char a[64], b[64];
		struct stat sa, sb;
		const char *name = ward_ns_proc_name(ns_types[i]);
		snprintf(a, sizeof(a), "/proc/%d/ns/%s", (int)pid, name);
		snprintf(b, sizeof(b), "/proc/self/ns/%s", name);
		if (stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
		    (sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev))
			flags |= ns_types[i];
	}
	return flags;
}

/* The root directory of the container's init (a chroot in the runtime's mount namespace),
 * opened while pidfd shows it is still that process. */
static int init_root(const struct ward_state *st, int pidfd, struct ward_err *err)
{
	char path[64];
	cleanup_fd int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)st->pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ward_fail_errno(err, "open the container's root (%s)", path);
	if (ward_pidfd_send_signal(pidfd, 0) < 0)
		return ward_fail(err, 0, "container not running");
	return steal_fd(fd);
}

static char **strv_concat(char *const *a, char *const *b)
{
	char **r = strv_dup(a);
	for (size_t i = 0; b && b[i]; i++)
		r = strv_append(r, b[i]);
	return r;
}

static int parse_user(const char *s, struct ward_user *u, struct ward_err *err)
{
	unsigned long uid, gid = 0;
	char *end;
	errno = 0;
	uid = strtoul(s, &end, 10);
	if (*end == ':')
		gid = strtoul(end + 1, &end, 10);
	if (errno || *end || end == s)
		return ward_fail(err, 0, "--user \"%s\": expected UID[:GID]", s);
	u->uid = (uint32_t)uid;
	u->gid = (uint32_t)gid;
	return 0;
}

/* The process to run: --process FILE, else the container's process with overrides. */
static struct ward_process *exec_process(const struct ward_spec *spec, const char *tenant,
					 bool policy_made, const struct ward_exec_opts *o,
					 struct ward_err *err)
{
	struct ward_process *p;
	const struct ward_process *base = spec->process;
	char **caps;

	if (o->process_file) {
		size_t len;
		cleanup_free char *text = read_file_at(AT_FDCWD, o->process_file, &len, err);
		if (!text)
			return NULL;
		/* a policy-made container: the field decisions of config.json's process */
		if (policy_made && ward_policy_check_process_fields(text, len, tenant, err) < 0)
			return NULL;
		return ward_process_parse(text, len, "process.json", err);
	}
	if (!o->args || !o->args[0]) {
		ward_fail(err, 0, "exec: no command given (ARGS or --process)");
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->args = strv_dup(o->args);
	p->env = strv_concat(base->env, o->env);
	p->cwd = xstrdup(o->cwd ? o->cwd : base->cwd);
	p->terminal = o->tty;
	p->no_new_privileges = base->no_new_privileges || o->no_new_privs;
	p->user = base->user;
	p->user.additional_gids = NULL;
	p->user.n_additional_gids = 0;
	if (o->user && parse_user(o->user, &p->user, err) < 0) {
		ward_process_free(p);
		return NULL;
	}
	for (size_t i = 0; o->additional_gids && o->additional_gids[i]; i++) {
		p->user.additional_gids =
		    xrealloc(p->user.additional_gids, (i + 1) * sizeof(uint32_t));
		p->user.additional_gids[i] = (uint32_t)strtoul(o->additional_gids[i], NULL, 10);
		p->user.n_additional_gids = i + 1;
	}
	if (!o->additional_gids && base->user.n_additional_gids) {
		p->user.n_additional_gids = base->user.n_additional_gids;
		p->user.additional_gids = xmalloc(p->user.n_additional_gids * sizeof(uint32_t));
		memcpy(p->user.additional_gids, base->user.additional_gids,
		       p->user.n_additional_gids * sizeof(uint32_t));
	}
	p->has_capabilities = base->has_capabilities || o->caps;
	caps = o->caps;
	p->capabilities.bounding = strv_concat(base->capabilities.bounding, caps);
	p->capabilities.effective = strv_concat(base->capabilities.effective, caps);
	p->capabilities.permitted = strv_concat(base->capabilities.permitted, caps);
	p->capabilities.inheritable = strv_concat(base->capabilities.inheritable, NULL);
	p->capabilities.ambient = strv_concat(base->capabilities.ambient, NULL);
	return p;
}

__attribute__((noreturn)) static void exec_child(const struct ward_spec *spec,
						 const struct ward_process *p,
						 const struct ward_seccomp_filters *sf, int sock)
{
	struct ward_err err = {0};
	cleanup_free char *exe = NULL;
	cleanup_strv char **env = NULL;

	if (p->terminal) {
		cleanup_fd int master = -1;
		cleanup_fd int slave = -1;
		/* The pty is made by our fsuid: in a user namespace we joined, the host's root,
		 * which it does not map (the overflow uid, and no chown). Be its root first (a
		 * no-op without one; fails harmlessly where uid 0 is not mapped). */
		if (setresgid(0, 0, 0) == 0)
			(void)!setresuid(0, 0, 0);
		if (ward_pty_open(&master, &slave, &err) < 0 ||
		    ward_pty_chown(slave, p->user.uid, &err) < 0 ||
		    (p->has_console_size &&
		     ward_pty_set_size(master, p->console_height, p->console_width, &err) < 0) ||
		    ward_sync_send_fd(sock, WARD_SYNC_CONSOLE, master, &err) < 0 ||
		    ward_pty_make_stdio(slave, &err) < 0)
			goto fail;
	}
	if (ward_process_chdir(p, &err) < 0)
		goto fail;
	exe = ward_process_find_exe(p, &err);
	if (!exe)
		goto fail;
	if (ward_process_harden(p, sf, spec->linux.personality, &err) < 0)
		goto fail;
	env = ward_process_env(p);
	if (ward_apparmor_exec_label(p->apparmor_profile, &err) < 0)
		goto fail;
	execve(exe, p->args, env);
	ward_fail_errno(&err, "exec \"%s\"", p->args[0]);
fail:
	ward_sync_send_err(sock, &err);
	_exit(255);
}

/* The joiner: cgroup, namespaces, then fork the process. */
__attribute__((noreturn)) static void exec_joiner(const struct ward_spec *spec,
						  const struct ward_process *p,
						  const struct ward_seccomp_filters *sf, int pidfd,
						  int ns_flags, int root, int sock,
						  int preserve_fds)
{
	struct ward_err err = {0};
	pid_t child;

	close_fds_except(3 + preserve_fds, (int[]){sock, pidfd, root}, 3);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	(void)setgroups(0, NULL);      /* none of the runtime's supplementary groups (init.c) */
	ward_rlimits_raise_hard(p, 0); /* in the container's user namespace it could not */
	if (ns_flags && setns(pidfd, ns_flags) < 0) {
		ward_fail_errno(&err, "join the container's namespaces");
		goto fail;
	}
	/* No mount namespace of its own: the container's root is its init's chroot. */
	if (root >= 0 && (fchdir(root) < 0 || chroot(".") < 0 || chdir("/") < 0)) {
		ward_fail_errno(&err, "chroot into the container's root");
		goto fail;
	}
	if (root >= 0)
		close(root);
	child = fork();
	if (child < 0) {
		ward_fail_errno(&err, "fork");
		goto fail;
	}
	if (child == 0)
		exec_child(spec, p, sf, sock);
	ward_sync_send(sock, WARD_SYNC_PID, child, &err);
	_exit(0);
fail:
	ward_sync_send_err(sock, &err);
	_exit(255);
}

/* A failed exec: what it started goes, at once (SIGKILL reaches frozen tasks too), so
 * nothing of it runs once a paused container is resumed. */
static void exec_abandon(pid_t joiner, pid_t pid)
{
	if (pid > 0)
		kill(pid, SIGKILL);
	kill(joiner, SIGKILL);
	waitpid(joiner, NULL, 0);
}

/* Wait for the joiner's next message or exit, or for the process's exec: the joiner is born
 * in the container's cgroup, so if that is frozen after the paused check, nothing would come;
 * exec then gives up instead of waiting for ever. --ignore-paused waits for the resume,
 * as runc's does. */
static int exec_wait(int fd, const char *cgroup, const struct ward_exec_opts *o, pid_t joiner,
		     pid_t pid, struct ward_err *err)
{
	if (ward_cgroup_wait_fd(fd, cgroup, o->ignore_paused, err) == 0)
		return 0;
	if (!err->errnum)
		ward_fail(err, 0,
			  "cgroup %s was frozen (the container was paused) while the process was "
			  "being started: exec gave up and killed it (exec --ignore-paused waits "
			  "for a resume)",
			  cgroup);
	exec_abandon(joiner, pid);
	return -1;
}

int ward_container_exec(int rootfd, const struct ward_exec_opts *o, int *status,
			struct ward_err *err)
{
	struct ward_state st = {0};
	struct ward_spec *spec = NULL;
	json_t *spec_json = NULL;
	struct ward_process *p = NULL;
	struct ward_seccomp_filters sf = {0};
	struct ward_capset caps;
	struct ward_sync m;
	cleanup_fd int dirfd = -1;
	cleanup_fd int pidfd = -1;
	cleanup_fd int root = -1;
	cleanup_fd int cgfd = -1;
	cleanup_fd int joinerfd = -1;
	int sp[2] = {-1, -1};
	int master = -1;
	int rc = -1;
	enum ward_status s;
	pid_t joiner, pid = -1;
	const struct ward_config *cfg;

	*status = 255;
	if (!ward_id_valid(o->id))
		return ward_fail(err, 0, "invalid container ID format: \"%s\"", o->id);
	dirfd = ward_state_open(rootfd, o->id, false, err);
	if (dirfd < 0)
		return -1;
	if (ward_state_read(dirfd, &st, err) < 0)
		return ward_wrap(err, "container \"%s\"", o->id);
	s = ward_state_status(dirfd, &st);
	if (s == WARD_STOPPED) {
		ward_fail(err, 0, "cannot exec in a stopped container");
		goto out;
	}
	if (s == WARD_PAUSED && !o->ignore_paused) {
		ward_fail(err, 0, "cannot exec in a paused container");
		goto out;
	}
	/* CVE-2019-5736: this container's user namespace keeps the binary from it, or we
	 * re-exec protected (selfexe.h), before anything is read (--process) or done that a
	 * restart would repeat. */
	if (ward_selfexe_guard_pid(st.pid, err) < 0)
		goto out;
	{
		size_t len;
		cleanup_free char *text = read_file_at(dirfd, WARD_CONFIG_JSON, &len, err);
		/* Read once: the typed spec and the audit line's fields come from it (u64s above
		 * INT64_MAX, as create writes them, kept for the unsigned fields). */
		if (text && !(spec_json = ward_json_decode(text, len, err)))
			ward_wrap(err, "container \"%s\": effective config.json", o->id);
		spec = spec_json ? ward_spec_from_json(spec_json, st.bundle, err) : NULL;
	}
	if (!spec)
		goto out;
	/* The pod (state.json) says whether the policy made the container. */
	p = exec_process(spec, ward_state_tenant(&st), ward_state_policy_made(&st), o, err);
	if (!p)
		goto out;
	/* As runc: --apparmor, else the process's own profile, else the container's. */
	if (o->apparmor || !p->apparmor_profile || !*p->apparmor_profile) {
		const char *aa = o->apparmor ? o->apparmor : spec->process->apparmor_profile;
		free(p->apparmor_profile);
		p->apparmor_profile = aa ? xstrdup(aa) : NULL;
	}
	/* The tenant's policy for exec processes (policy.c); exec applies what it decides. */
	{
		cleanup_strv char **notes = NULL;
		rc = ward_policy_exec(ward_state_tenant(&st), ward_state_policy_made(&st),
				      spec->process, st.apparmor_asked, p, &notes, err);
		for (size_t i = 0; notes && notes[i]; i++)
			ward_debug("%s", notes[i]);
		if (rc < 0)
			goto out;
		rc = -1;
	}
	if (ward_process_refuse_labels(p, "process", err) < 0 ||
	    ward_process_validate(p, spec->linux.personality, err) < 0 ||
	    ward_caps_from_spec(&p->capabilities, &caps, err) < 0)
		goto out;
	if (ward_apparmor_prepare(p->apparmor_profile, err) < 0) {
		ward_wrap(err, "process.apparmorProfile \"%s\"", p->apparmor_profile);
		goto out;
	}
	/* Compiled here, where the cache is reachable; the process inherits the program. */
	if (ward_seccomp_prepare(&spec->linux, &sf, err) < 0) {
		ward_wrap(err, "seccomp");
		goto out;
	}
	if (p->terminal && !o->console_socket && o->detach) {
		ward_fail(err, 0,
			  "cannot allocate a terminal for a detached exec without "
			  "--console-socket");
		goto out;
	}
	pidfd = ward_state_pidfd(&st);
	if (pidfd < 0) {
		ward_fail(err, 0, "container not running");
		goto out;
	}
	if (!ward_spec_ns(spec, CLONE_NEWNS) && (root = init_root(&st, pidfd, err)) < 0)
		goto out;
	/* Fails closed: an exec that cannot be audited does not run. */
	if (!(cfg = ward_config_get(err)) || ward_audit_exec(cfg, spec_json, &st, p, err) < 0) {
		ward_wrap(err, "exec in \"%s\" refused: audit", o->id);
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		ward_fail_errno(err, "socketpair");
		goto out;
	}
	if (!o->detach)
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	/* The joiner is born in the container's cgroup (clone3 CLONE_INTO_CGROUP). */
	if (st.cgroup[0]) {
		cgfd = ward_cgroup_open(st.cgroup, err);
		if (cgfd < 0)
			goto out;
	}
	/* --ignore-paused waits for a resume, which takes the container's lock: let go of it
	 * before the fork (a joiner born frozen would hold its copy). A delete meanwhile kills
	 * the joiner with the rest of the cgroup, or makes the fork fail. */
	if (o->ignore_paused) {
		close(dirfd);
		dirfd = -1;
	}
	joiner = ward_fork_into_cgroup(cgfd);
	if (joiner < 0) {
		ward_fail_errno(err, "fork");
		goto out;
	}
	if (joiner == 0) {
		close(sp[0]);
		exec_joiner(spec, p, &sf, pidfd, ns_to_join(st.pid), root, sp[1], o->preserve_fds);
	}
	close(sp[1]);
	sp[1] = -1;
	joinerfd = ward_pidfd_open(joiner, 0);
	if (joinerfd < 0) {
		ward_fail_errno(err, "pidfd_open");
		exec_abandon(joiner, -1);
		goto out;
	}
	/* The joiner reports the pid and, with a terminal, the process sends its console:
	 * two processes, so the two messages come in either order. */
	for (bool need_pid = true, need_console = p->terminal; need_pid || need_console;) {
		int fd = -1;
		if (exec_wait(sp[0], st.cgroup, o, joiner, pid, err) < 0)
			goto out;
		if (ward_sync_recv(sp[0], &m, &fd, err) < 0) {
			exec_abandon(joiner, pid);
			goto out;
		}
		if (m.type == WARD_SYNC_PID && need_pid) {
			pid = m.value;
			need_pid = false;
		} else if (m.type == WARD_SYNC_CONSOLE && need_console && fd >= 0) {
			need_console = false;
			if (!o->console_socket) {
				master = fd;
				continue;
			}
			int r = ward_console_send(o->console_socket, fd, err);
			close(fd);
			if (r < 0) {
				exec_abandon(joiner, pid);
				goto out;
			}
		} else {
			if (fd >= 0)
				close(fd);
			ward_fail(err, EPROTO, "exec: unexpected message %u", m.type);
			exec_abandon(joiner, pid);
			goto out;
		}
	}
	if (exec_wait(joinerfd, st.cgroup, o, joiner, pid, err) < 0)
		goto out;
	waitpid(joiner, NULL, 0);
	/* The channel closes on a successful exec; anything else is an error report. */
	if (ward_cgroup_wait_fd(sp[0], st.cgroup, o->ignore_paused, err) < 0) {
		if (!err->errnum)
			ward_fail(
			    err, 0,
			    "cgroup %s was frozen (the container was paused) before the "
			    "process's exec: exec gave up and killed it (exec --ignore-paused "
			    "waits for a resume)",
			    st.cgroup);
		if (pid > 0)
			kill(pid, SIGKILL);
		goto out;
	}
	if (ward_sync_recv(sp[0], &m, NULL, err) == 0 || err->errnum != EPIPE) {
		if (err->msg[0] == '\0')
			ward_fail(err, EPROTO, "exec: unexpected message");
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		goto out;
	}
	ward_err_clear(err);
	if (o->pid_file) {
		char buf[32];
		int n = snprintf(buf, sizeof(buf), "%d", (int)pid);
		if (write_file_at(AT_FDCWD, o->pid_file, O_CREAT | O_TRUNC, 0644, buf, (size_t)n,
				  err) < 0)
			goto out;
	}
	rc = 0;
	/* Launched: release the container's lock so delete/kill are not held up by us. */
	close(dirfd);
	dirfd = -1;
	if (!o->detach)
		*status = ward_wait_foreground(pid, master);
	else
		*status = 0;
out:
	close_fdp(&master);
	close_fdp(&sp[0]);
	close_fdp(&sp[1]);
	ward_seccomp_filters_free(&sf);
	ward_process_free(p);
	ward_spec_free(spec);
	json_decref(spec_json);
	ward_state_clear(&st);
	return rc;
}
