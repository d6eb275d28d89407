/* ward create / ward run */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli.h"
#include "container.h"
#include "util.h"

/* systemd socket activation (sd_listen_fds), as runc's: fds 3..3+N-1 of the runtime, when
 * LISTEN_PID names this process, go to the container's process with LISTEN_FDS=N and
 * LISTEN_PID=1. Anything else (unset, another pid, not a count) passes nothing. */
static int listen_fds_from_env(void)
{
	const char *fds = getenv("LISTEN_FDS"), *pid = getenv("LISTEN_PID");
	uint64_t n, p;

	if (!fds || !pid || parse_u64(pid, &p) < 0 || p != (uint64_t)getpid() ||
	    parse_u64(fds, &n) < 0 || n > 1024)
		return 0;
	return (int)n;
}

static int parse(struct ward_cli *cli, int argc, char **argv, struct ward_create_opts *o,
		 bool *detach, bool *keep, const char *usage)
{
	const char *preserve = NULL;
	bool no_subreaper; /* runc's: ward's own processes never need one */
	/* the last two, ward run's own */
	const struct cli_opt opts[] = {
	    {"bundle", 'b', "DIR", "bundle directory (default: current directory)",
	     .arg = &o->bundle},
	    {"pid-file", 0, "FILE", "write the init's pid here", .arg = &o->pid_file},
	    {"console-socket", 0, "SOCK", "receive the pty master over this unix socket",
	     .arg = &o->console_socket},
	    {"no-pivot", 0, NULL, "use MS_MOVE + chroot instead of pivot_root",
	     .flag = &o->no_pivot},
	    {"no-new-keyring", 0, NULL, "keep the caller's session keyring",
	     .flag = &o->no_new_keyring},
	    {"preserve-fds", 0, "N", "pass N extra fds (3..N+2) to the container",
	     .arg = &preserve},
	    {"no-subreaper", 0, NULL, "accepted and ignored (runc compatibility)",
	     .flag = &no_subreaper},
	    {"detach", 'd', NULL, "do not wait for the container", .flag = detach},
	    {"keep", 0, NULL, "do not delete the container after it exits", .flag = keep},
	};
	int rc;

	memset(o, 0, sizeof(*o));
	o->systemd_cgroup = cli->systemd_cgroup;
	o->systemd_manager = cli->cgroup_manager && !strcmp(cli->cgroup_manager, "systemd");
	o->cgroup_disabled = cli->cgroup_manager && !strcmp(cli->cgroup_manager, "disabled");
	rc = cli_options(argc, argv, argv[0], opts, ARRAY_SIZE(opts) - (detach ? 0 : 2), usage);
	if (rc >= 0)
		exit(rc);
	if (preserve && !cli_preserve_fds(argv[0], preserve, &o->preserve_fds))
		return 1;
	o->listen_fds = listen_fds_from_env();
	o->id = cli_one_id(argv[0], argc, argv);
	return o->id ? 0 : 1;
}

int cmd_create(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_create_opts o;
	struct ward_created out;
	struct ward_err err = {0};
	int rootfd;

	if (parse(cli, argc, argv, &o, NULL, NULL, "usage: ward create [OPTIONS] ID\n"))
		return 1;
	rootfd = cli_root(cli);
	if (rootfd < 0)
		return 1;
	if (ward_container_create(rootfd, &o, &out, &err) < 0) {
		ward_wrap(&err, "cannot create container \"%s\"", cli_printable(o.id));
		return cli_fail(&err);
	}
	return 0;
}

int cmd_run(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_create_opts o;
	struct ward_created out;
	struct ward_err err = {0};
	bool detach = false, keep = false;
	int rootfd, status;

	if (parse(cli, argc, argv, &o, &detach, &keep, "usage: ward run [OPTIONS] ID\n"))
		return 1;
	rootfd = cli_root(cli);
	if (rootfd < 0)
		return 1;
	/* Foreground: the init is our child (cloned by us, or once stage 1 exits), so we can
	 * reap it. */
	if (!detach) {
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
		o.keep_console = o.console_socket == NULL;
	}
	o.keep_open = true; /* start goes on from the state create wrote */
	if (ward_container_create(rootfd, &o, &out, &err) < 0) {
		ward_wrap(&err, "cannot run container \"%s\"", cli_printable(o.id));
		return cli_fail(&err);
	}
	if (ward_container_start_created(&out, o.id, &err) < 0) {
		struct ward_err ignored;
		if (!keep)
			ward_container_delete(rootfd, o.id, true, &ignored);
		if (out.console_master >= 0)
			close(out.console_master);
		return cli_fail(&err);
	}
	if (detach)
		return 0;
	status = ward_wait_foreground(out.pid, out.console_master);
	if (out.console_master >= 0)
		close(out.console_master);
	if (!keep && ward_container_delete_status(rootfd, o.id, true, status, &err) < 0)
		cli_fail(&err);
	return status;
}
