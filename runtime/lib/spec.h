/* config.json -> struct ward_spec. The parser checks JSON structure (types, required
 * fields, absolute paths) and reports the field path of any error; semantic checks of
 * names (capabilities, seccomp actions, mount options, ...) are done by the module that
 * owns them, before anything is created. */
#ifndef WARD_SPEC_H
#define WARD_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "own.h"
#include "resources.h"

/* gcc predefines `linux` as 1 in gnu* modes; it would eat struct ward_spec's member. */
#undef linux

#define WARD_OCI_VERSION "1.3.0"

/* The ward.dev/ annotations (WARD_ANN_TENANT, ...) are in own.h. */

/* Annotations containerd's CRI plugin sets. */
#define WARD_ANN_SANDBOX_ID    "io.kubernetes.cri.sandbox-id"
#define WARD_ANN_CRI_NAMESPACE "io.kubernetes.cri.sandbox-namespace"
#define WARD_ANN_CRI_POD       "io.kubernetes.cri.sandbox-name"
#define WARD_ANN_CRI_POD_UID   "io.kubernetes.cri.sandbox-uid"
#define WARD_ANN_CRI_CONTAINER "io.kubernetes.cri.container-name"
/* The older keys of the pod's identity (CRI-O; containerd before 1.5). */
#define WARD_ANN_POD_NAMESPACE "io.kubernetes.pod.namespace"
#define WARD_ANN_POD_NAME      "io.kubernetes.pod.name"
#define WARD_ANN_POD_UID       "io.kubernetes.pod.uid"
/* The sandbox (infra container) id CRI-O and podman (a member of a pod: podman run --pod)
 * set, when containerd's key is not there. */
#define WARD_ANN_CRIO_SANDBOX_ID "io.kubernetes.cri-o.SandboxID"

struct ward_idmap {
	uint32_t container_id, host_id, size;
};

struct ward_idmaps {
	struct ward_idmap *v;
	size_t n;
};

struct ward_mount {
	char *destination; /* absolute or (spec >= 1.2) relative to "/" */
	char *type;	   /* may be NULL (bind mounts) */
	char *source;	   /* may be NULL; relative sources are made absolute against the bundle */
	char **options;	   /* NULL-terminated, may be empty */
	struct ward_idmaps uid_mappings, gid_mappings;
	/* Not from the spec: a sysfs mount in a network namespace the container's user
	 * namespace does not own, so the kernel refuses it to the init: the runtime mounts
	 * that netns's sysfs read-only on the host side (ward_ns_plan's net_foreign). */
	bool host_sysfs;
};

struct ward_hook {
	char *path;  /* absolute */
	char **args; /* NULL-terminated or NULL */
	char **env;  /* NULL-terminated or NULL */
	int timeout; /* seconds, 0 = none */
};

enum ward_hook_kind {
	WARD_HOOK_PRESTART,
	WARD_HOOK_CREATE_RUNTIME,
	WARD_HOOK_CREATE_CONTAINER,
	WARD_HOOK_START_CONTAINER,
	WARD_HOOK_POSTSTART,
	WARD_HOOK_POSTSTOP,
	WARD_HOOK__COUNT
};
/* Their names in config.json ("prestart", "createRuntime", ...). */
extern const char *const ward_hook_names[WARD_HOOK__COUNT];

struct ward_hooks {
	struct ward_hook *v;
	size_t n;
};

struct ward_rlimit {
	char *type; /* "RLIMIT_NOFILE" */
	uint64_t hard, soft;
};

struct ward_user {
	uint32_t uid, gid;
	bool has_umask;
	uint32_t umask;
	uint32_t *additional_gids;
	size_t n_additional_gids;
};

struct ward_capabilities {
	/* NULL-terminated name lists ("CAP_CHOWN"); NULL when the set is absent. */
	char **bounding, **effective, **inheritable, **permitted, **ambient;
};

struct ward_scheduler {
	char *policy; /* "SCHED_OTHER" ... */
	int32_t nice, priority;
	char **flags; /* "SCHED_FLAG_RESET_ON_FORK" ... */
	uint64_t runtime, deadline, period;
};

struct ward_process {
	bool terminal;
	bool has_console_size;
	unsigned console_height, console_width;
	struct ward_user user;
	char **args; /* non-empty */
	char **env;  /* may be NULL */
	char *cwd;   /* absolute */
	bool has_capabilities;
	struct ward_capabilities capabilities;
	struct ward_rlimit *rlimits;
	size_t n_rlimits;
	bool no_new_privileges;
	char *apparmor_profile;
	char *selinux_label;
	bool has_oom_score_adj;
	int oom_score_adj;
	bool has_io_priority;
	char *io_priority_class; /* "IOPRIO_CLASS_RT" | "IOPRIO_CLASS_BE" | "IOPRIO_CLASS_IDLE" */
	int io_priority;
	bool has_scheduler;
	struct ward_scheduler scheduler;
};

struct ward_namespace {
	int type;   /* CLONE_NEWNS, CLONE_NEWPID, ... CLONE_NEWTIME */
	char *path; /* NULL = create a new one */
};

struct ward_device {
	char type;  /* 'c', 'b', 'u', 'p' */
	char *path; /* absolute, inside the container */
	int64_t major, minor;
	bool has_file_mode;
	uint32_t file_mode;
	bool has_uid, has_gid;
	uint32_t uid, gid;
};

struct ward_seccomp_arg {
	unsigned index;
	uint64_t value, value_two;
	char *op; /* "SCMP_CMP_EQ" ... */
};

struct ward_seccomp_rule {
	char **names;
	char *action; /* "SCMP_ACT_ERRNO" ... */
	bool has_errno_ret;
	uint32_t errno_ret;
	struct ward_seccomp_arg *args;
	size_t n_args;
};

struct ward_seccomp {
	char *default_action;
	bool has_default_errno_ret;
	uint32_t default_errno_ret;
	char **architectures; /* "SCMP_ARCH_X86_64" ... */
	char **flags;	      /* "SECCOMP_FILTER_FLAG_LOG" ... */
	char *listener_path;
	char *listener_metadata;
	struct ward_seccomp_rule *syscalls;
	size_t n_syscalls;
};

struct ward_time_offset {
	bool set;
	int64_t secs;
	uint32_t nanosecs;
};

struct ward_personality {
	char *domain; /* "LINUX" | "LINUX32" */
	char **flags;
};

struct ward_linux {
	/* Not from the spec: the runtime writes the net.* sysctls from the host's side, in a
	 * network namespace the container's user namespace does not own (ns.h net_foreign). */
	bool host_net_sysctls;
	struct ward_namespace *namespaces;
	size_t n_namespaces;
	struct ward_idmaps uid_mappings, gid_mappings;
	struct ward_time_offset time_monotonic, time_boottime;
	struct ward_device *devices;
	size_t n_devices;
	char *cgroups_path;
	/* linux.resources, typed (resources.h): parsed, and its values checked, with the spec,
	 * so a bad value fails the parse ("config.json: linux.resources.memory.limit: ..."). */
	bool has_resources;
	struct ward_resources resources;
	char **sysctl_keys, **sysctl_values; /* parallel NULL-terminated vectors */
	struct ward_seccomp *seccomp;	     /* NULL = no seccomp */
	/* The pod's own filter when the tenant's is linux.seccomp: both are loaded, so the
	 * kernel enforces their intersection (ward's own "ward.podSeccomp", own.h; an older
	 * ward's annotation WARD_ANN_POD_SECCOMP). */
	struct ward_seccomp *seccomp_pod;
	char *rootfs_propagation; /* shared|slave|private|unbindable (r-variants too) */
	char **masked_paths;
	char **readonly_paths;
	char *mount_label;
	struct ward_personality *personality; /* NULL if absent */
};

struct ward_spec {
	char *oci_version;
	char *root_path; /* absolute (made so against the bundle) */
	bool root_readonly;
	struct ward_mount *mounts;
	size_t n_mounts;
	struct ward_process *process; /* required for create/run */
	char *hostname;
	char *domainname;
	struct ward_hooks hooks[WARD_HOOK__COUNT];
	char **annotation_keys, **annotation_values; /* parallel NULL-terminated vectors */
	struct ward_linux linux;
	/* ward's own record (own.h), the effective spec's "ward" object: not an annotation.
	 * An older ward's effective spec (no "ward" object): read from its annotations. */
	struct ward_own own;
};

/* Size caps on a pod's config.json, checked wherever one is read (create, policy explain,
 * the shim, the audit of a refusal), for every tenant, before anything else: a spec is
 * read whole into memory and its annotations are copied into state.json, which `ward list`
 * reads for every container. Kubernetes itself allows 256 KiB of annotations per object. */
#define WARD_SPEC_MAX_BYTES ((size_t)4 << 20)	/* config.json */
#define WARD_ANN_VALUE_MAX  ((size_t)64 << 10)	/* one annotation value */
#define WARD_ANN_TOTAL_MAX  ((size_t)256 << 10) /* all annotation keys and values together */

/* Read the spec file name (config.json) in dirfd, a regular file, refused without reading
 * it when it has more than WARD_SPEC_MAX_BYTES: "config.json: 5242880 bytes, over the 4 MiB
 * cap of a spec". malloc'd, NUL-terminated; *len (may be NULL) its length. */
char *ward_spec_read_at(int dirfd, const char *name, size_t *len, struct ward_err *err);
/* The bundle directory's config.json, read through bundle_fd (the bundle as the caller
 * opened it once; -1: the open failed, errno still its), malloc'd; errors name the bundle. */
char *ward_spec_read_bundle(int bundle_fd, const char *bundle, size_t *len, struct ward_err *err);

/* Refuse annotations over WARD_ANN_VALUE_MAX (one) or WARD_ANN_TOTAL_MAX (all, keys and
 * values as Kubernetes counts them). annotations: the spec's object (a json_t *, may be
 * NULL or not an object: the parser says what is wrong then). */
int ward_spec_check_annotations(const void *annotations, struct ward_err *err);

/* Parse config.json text. bundle (absolute) resolves relative root.path and mount sources.
 * Errors read "config.json: process.args: must be a non-empty array". */
struct ward_spec *ward_spec_parse(const char *json, size_t len, const char *bundle,
				  struct ward_err *err);
/* The same from the parsed object (a json_t * object, which is not changed): create hands
 * over the effective spec it built from the one read of config.json, no second parse. */
struct ward_spec *ward_spec_from_json(const void *root, const char *bundle, struct ward_err *err);
/* The pod's spec as the tenant policy takes it: the same decoders, without the cross-field
 * checks (ward_spec_check) that the policy's own changes can satisfy (a user namespace the
 * pod lists without maps gets the pod's range): the effective spec is checked after it.
 * root.path and bind sources stay as the pod wrote them (relative ones too): the policy
 * resolves them against the bundle and names them in its refusals as written. ward's own
 * record is not read (the policy writes it; WARD_ANN_* annotations stay the pod's, inert). */
struct ward_spec *ward_spec_pod_from_json(const void *root, const char *bundle,
					  struct ward_err *err);
/* The cross-field checks of a whole spec ("linux.uidMappings: required for a new user
 * namespace"); ward_spec_from_json runs them. */
int ward_spec_check(const struct ward_spec *s, struct ward_err *err);
/* A seccomp profile's JSON text (a tenant's profile) through the spec's linux.seccomp
 * decoder; errors start with what ("seccomp profile \"default\": ..."). */
struct ward_seccomp *ward_seccomp_parse(const char *text, const char *what, struct ward_err *err);
void ward_seccomp_free(struct ward_seccomp *sc);
/* Deep copies (spec_dup.c): the policy edits a copy of the pod's spec. */
struct ward_spec *ward_spec_dup(const struct ward_spec *s);
struct ward_process *ward_process_dup(const struct ward_process *p);
struct ward_seccomp *ward_seccomp_dup(const struct ward_seccomp *sc);
void ward_mount_copy(struct ward_mount *dst, const struct ward_mount *src);
void ward_hook_copy(struct ward_hook *dst, const struct ward_hook *src);
/* Parse a process JSON object (exec --process FILE). Errors read "process.json: args: ...". */
struct ward_process *ward_process_parse(const char *json, size_t len, const char *what,
					struct ward_err *err);
void ward_spec_free(struct ward_spec *s);

/* True if the mount is a bind mount (type "bind", or a "bind"/"rbind" option). */
bool ward_mount_is_bind(const struct ward_mount *m);
void ward_process_free(struct ward_process *p);

/* Namespace type name <-> CLONE_* flag. Return 0 / NULL if unknown. */
int ward_ns_type_from_name(const char *name);
const char *ward_ns_type_name(int flag);
/* "/proc/self/ns/<file>" file name for a CLONE_* flag ("mnt", "net", ...). */
const char *ward_ns_proc_name(int flag);

/* Look up a namespace entry; NULL if the spec does not list that type. */
const struct ward_namespace *ward_spec_ns(const struct ward_spec *s, int type);
/* Annotation lookup; NULL if absent. */
const char *ward_spec_annotation(const struct ward_spec *s, const char *key);
/* Set annotation key to value (added when absent; spec_dup.c). */
void ward_spec_set_annotation(struct ward_spec *s, const char *key, const char *value);

/* A default config.json like `runc spec` (rootless variant drops net ns, adds userns maps
 * for uid/gid), with linux.maskedPaths and readonlyPaths the NULL-terminated lists given
 * (`ward spec` gives the policy's: ward_policy_masked_paths, ward_policy_readonly_paths).
 * Returns a malloc'd string. */
char *ward_spec_default_json(bool rootless, const char *const *masked, const char *const *readonly);

/* Every config.json field the parser decodes, as a path ("process.user.uid",
 * "mounts[].options", "[]" for array elements, "*" for map keys), NULL-terminated. Kept
 * next to the decoders in spec.c; the tenant policy's table (policy_fields.c) must have a
 * decision for each (tests/unit/test_policy_fields.c checks it). */
extern const char *const ward_spec_fields[];

#endif
