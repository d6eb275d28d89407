/* Container lifecycle orchestration: create, start, kill, delete, pause, resume, exec.
 * Calls the concern files; the CLI calls this. */
#ifndef WARD_CONTAINER_H
#define WARD_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "err.h"
#include "spec.h"
#include "state.h"

struct ward_create_opts {
	const char *id;
	const char *bundle; /* as given; made absolute */
	const char *pid_file;
	const char *console_socket;
	bool no_pivot;
	bool no_new_keyring;
	int preserve_fds;
	int listen_fds;	     /* systemd's LISTEN_FDS for this process: passed first, with the env */
	bool systemd_cgroup; /* runc's --systemd-cgroup: cgroupsPath is slice:prefix:name */
	bool systemd_manager; /* crun's --cgroup-manager systemd: refused */
	bool cgroup_disabled; /* crun's --cgroup-manager disabled: no cgroup (trusted tenants) */
	bool keep_console;    /* foreground run without console socket: hand the master back */
	bool keep_open;	      /* run: hand the state dir (locked) and its state to start */
};

struct ward_created {
	pid_t pid;
	int console_master;   /* -1 unless keep_console */
	int dirfd;	      /* -1 unless keep_open: the state dir, its lock held ... */
	struct ward_state st; /* ... and the state written to it */
};

int ward_container_create(int rootfd, const struct ward_create_opts *o, struct ward_created *out,
			  struct ward_err *err);
/* Release the init blocked on exec.fifo, wait until it has exec'd, run poststart hooks. */
int ward_container_start(int rootfd, const char *id, struct ward_err *err);
/* The same for the container just created with keep_open (run), without opening and
 * reading its state again; closes what create kept open, also on failure. */
int ward_container_start_created(struct ward_created *c, const char *id, struct ward_err *err);
int ward_container_kill(int rootfd, const char *id, int sig, bool all, struct ward_err *err);
int ward_container_delete(int rootfd, const char *id, bool force, struct ward_err *err);
/* The same, from the process that reaped the init: exit_status (>= 0; 128+N for a signal)
 * goes to the poststop hooks in the state's own "ward" object (exitStatus). */
int ward_container_delete_status(int rootfd, const char *id, bool force, int exit_status,
				 struct ward_err *err);
/* ward gc: `delete -f` every container whose create died (a state dir without state.json
 * that no live create holds locked), and with all every stopped one too. *removed: their
 * ids (NULL-terminated, malloc'd). Fails (after trying every one) if one could not be. */
int ward_container_gc(int rootfd, bool all, char ***removed, struct ward_err *err);
int ward_container_pause(int rootfd, const char *id, bool pause, struct ward_err *err);
/* runc-shaped state JSON of one container (malloc'd). */
char *ward_container_state_json(int rootfd, const char *id, struct ward_err *err);
/* Pids of the container's processes (from its cgroup, else the init alone). */
int ward_container_pids(int rootfd, const char *id, pid_t **pids, size_t *n, struct ward_err *err);

struct ward_exec_opts {
	const char *id;
	const char *process_file; /* --process: a complete process JSON; else built below */
	char **args;		  /* command and arguments */
	char **env;		  /* --env K=V, added to the container's env */
	const char *cwd;	  /* --cwd */
	const char *user;	  /* --user UID[:GID] */
	char **additional_gids;	  /* --additional-gids */
	char **caps;		  /* --cap, added to the container's sets */
	const char *apparmor; /* --apparmor: profile (else the process's, else the container's) */
	bool tty;
	bool no_new_privs;
	bool detach;
	const char *pid_file;
	const char *console_socket;
	int preserve_fds;
	bool ignore_paused; /* runc's --ignore-paused: exec in a paused container (waits for resume)
			     */
};

/* Run a process in a created or running container. Foreground: returns 0 and sets
 * *status to the process's exit status (128+sig when killed). Detached: returns once the
 * program was exec'd. */
int ward_container_exec(int rootfd, const struct ward_exec_opts *o, int *status,
			struct ward_err *err);

/* Foreground wait for a process we reap (we are its subreaper): forwards signals, proxies
 * the terminal if master >= 0. Returns the exit status (128+sig). */
int ward_wait_foreground(pid_t pid, int master);

#endif
