/* `ward check`: what this host supports, probed for real (a child unshares a user
 * namespace, a clone of each relevant mount is idmapped, a device BPF program is loaded and
 * attached to a throwaway cgroup), then whether the configured policy can be enforced here.
 *
 * Two steps, so the verdict can be tested without the host:
 *   ward_host_probe:   the host's facts (never fails: a probe that fails is a fact);
 *   ward_host_verdict: facts + configuration -> what cannot be enforced (errors) and what
 *                      only works in part (warnings). Pure, no I/O.
 * ward_host_text / ward_host_json render both (the CLI prints them). */
#ifndef WARD_HOSTCHECK_H
#define WARD_HOSTCHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* One filesystem that matters, probed for idmapped mounts. */
struct ward_host_fs {
	char *path;	   /* the directory that matters ("/run/ward") */
	char *role;	   /* "state root", "ID pool", "containerd", "temporary files" */
	char *probed;	   /* the existing directory probed (path or its nearest ancestor) */
	char *fstype;	   /* "ext4", "tmpfs" (NULL if unknown) */
	char *mount_point; /* "/run" */
	bool idmap;
	char *detail; /* why not ("kernel 6.1 lacks tmpfs idmap (added in 6.3)") */
};

/* The seccomp actions and filter flags ward may ask for, as probed. */
enum { WARD_HOST_N_SECCOMP_ACTIONS = 3, WARD_HOST_N_SECCOMP_FLAGS = 6 };
extern const char *const ward_host_seccomp_action_names[WARD_HOST_N_SECCOMP_ACTIONS];
extern const char *const ward_host_seccomp_flag_names[WARD_HOST_N_SECCOMP_FLAGS];

/* The cgroup v2 controllers ward's limits use, in the order reported. */
enum { WARD_HOST_N_CONTROLLERS = 6 };
extern const char *const ward_host_controller_names[WARD_HOST_N_CONTROLLERS];

struct ward_host {
	char kernel[65]; /* uname release */
	bool root;	 /* probed as root (several probes need it) */

	bool userns;
	long max_user_namespaces; /* -1 if unreadable */
	char *userns_detail;

	struct ward_host_fs *fs;
	size_t n_fs;

	bool seccomp; /* filter mode available */
	char *seccomp_detail;
	bool seccomp_actions[WARD_HOST_N_SECCOMP_ACTIONS]; /* kernel has the action */
	bool seccomp_flags[WARD_HOST_N_SECCOMP_FLAGS];	   /* kernel accepts the flag */

	bool apparmor;		 /* ward_apparmor_enabled() */
	char *apparmor_detail;	 /* why not */
	char *apparmor_profiles; /* the loaded profiles list (when enabled and readable) */

	char *cgroup_root; /* NULL: no cgroup v2 hierarchy (cgroup_detail says why) */
	bool cgroup_hybrid;
	char *cgroup_detail;
	bool controllers[WARD_HOST_N_CONTROLLERS];
	char *controller_detail[WARD_HOST_N_CONTROLLERS]; /* why missing, or NULL */
	char *cgroup_available;				  /* cgroup.controllers as read */
	int cgroup_freeze, cgroup_kill;			  /* 1 yes, 0 no, -1 unknown */

	bool bpf_devices;
	char *bpf_detail;

	char *lib_dir;	   /* the ID pool's directory */
	bool pool_ok;	   /* the ID pool (idpool2.d) readable and valid, lib_dir writable */
	long pool_allocs;  /* allocations in the ID pool (-1 unknown) */
	char *pool_detail; /* why not; with pool_ok, the dump's notes; or NULL */

	/* The hooks ward registers (ward.json audit_hook, gpu.hook): executable or not. */
	char *audit_hook, *gpu_hook;
	bool audit_hook_ok, gpu_hook_ok;
	/* GPUs in the inventory (ward.json gpu roots); -1 with gpu_detail if unreadable. */
	long gpus;
	char *gpu_detail;
	char **gpu_uuids; /* their uuids (NULL-terminated) */
};

struct ward_host_paths {
	const char *state_root;		  /* the state directory ward uses */
	const char *lib_dir;		  /* the ID pool's directory */
	const struct ward_config *config; /* for the ID pool's parameters, may be NULL */
};

void ward_host_probe(const struct ward_host_paths *paths, struct ward_host *h);
void ward_host_free(struct ward_host *h);

struct ward_verdict {
	char **errors;	 /* each: something the policy asks for that this host cannot do */
	char **warnings; /* each: something that works only in part */
};

/* c may be NULL with config_error set (a configuration that does not load is an error). */
void ward_host_verdict(const struct ward_host *h, const struct ward_config *c,
		       const char *config_error, struct ward_verdict *v);
void ward_verdict_free(struct ward_verdict *v);

/* Renderings (malloc'd): one line per item with what a missing one disables, then the
 * warnings and errors, then a last line with the verdict. JSON: one object, the same facts
 * (see ward.8, `ward check --json`). config_desc: "/etc/ward" or "built-in". */
char *ward_host_text(const struct ward_host *h, const struct ward_verdict *v,
		     const char *config_desc);
char *ward_host_json(const struct ward_host *h, const struct ward_verdict *v,
		     const char *config_desc);

#endif
