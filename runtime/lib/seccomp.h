/* linux.seccomp -> classic BPF, compiled in the runtime while the container init makes its
 * mounts (cached on disk), handed to the init in a memfd, installed by the init with
 * seccomp(2) as its last step before exec. */
#ifndef WARD_SECCOMP_H
#define WARD_SECCOMP_H

#include <stddef.h>

#include "err.h"
#include "spec.h"

/* Where compiled filters are cached (root-owned, 0700). */
#define WARD_SECCOMP_CACHE_DIR "/run/ward/seccomp-cache"

/* Check actions, architectures, operators, flags and arg indexes; errors name the field
 * ("linux.seccomp.syscalls[2].action: unknown action \"X\""). Unknown syscall names are
 * not errors (skipped with a debug log when compiling), as in runc. */
int ward_seccomp_validate(const struct ward_seccomp *s, struct ward_err *err);
/* The same with another field prefix ("annotations.ward.dev/pod-seccomp"). */
int ward_seccomp_validate_at(const struct ward_seccomp *s, const char *field, struct ward_err *err);

struct sock_filter;

/* A compiled filter: what seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog) takes. */
struct ward_seccomp_prog {
	struct sock_filter *insns; /* malloc'd */
	unsigned short len;
	unsigned int flags; /* SECCOMP_FILTER_FLAG_* from linux.seccomp.flags */
	const char *what;   /* "pod filter" / "filter", for errors */
};

/* A container's filters in load order: the pod's own (linux.seccomp_pod), then the
 * tenant's (linux.seccomp). The kernel runs both and the strictest answer wins; when both
 * return ERRNO, the errno of the one loaded last (the tenant's) is the one seen. */
struct ward_seccomp_filters {
	struct ward_seccomp_prog prog[2];
	size_t n; /* 0: no seccomp */
};

/* Validate and compile one filter: from the cache when an entry's key matches exactly,
 * else with libseccomp (then the entry is (re)written). Cache problems are never errors. */
int ward_seccomp_compile(const struct ward_seccomp *s, struct ward_seccomp_prog *out,
			 struct ward_err *err);
void ward_seccomp_prog_free(struct ward_seccomp_prog *p);
/* libseccomp's program for s (with the ENOSYS prefix), uncached and not re-encoded as a
 * search (seccomp_tree.h): what ward_seccomp_compile's answers must equal (tests). */
int ward_seccomp_compile_flat(const struct ward_seccomp *s, struct ward_seccomp_prog *out,
			      struct ward_err *err);
/* Load a compiled filter into the calling thread. */
int ward_seccomp_install(const struct ward_seccomp_prog *p, struct ward_err *err);

/* Compile both filters of a spec (runtime side). */
int ward_seccomp_prepare(const struct ward_linux *l, struct ward_seccomp_filters *f,
			 struct ward_err *err);
/* Install them in order (container side, last step before exec); NULL or n == 0: none. */
int ward_seccomp_filters_install(const struct ward_seccomp_filters *f, struct ward_err *err);
void ward_seccomp_filters_free(struct ward_seccomp_filters *f);
/* The filters in a new memfd (O_CLOEXEC), for the init: the runtime compiles them while the
 * init makes its mounts and hands them over; -1 on error. */
int ward_seccomp_filters_to_fd(const struct ward_seccomp_filters *f, struct ward_err *err);
/* Read them back (the whole file, whatever its offset); malformed content is an error. */
int ward_seccomp_filters_from_fd(int fd, struct ward_seccomp_filters *f, struct ward_err *err);

/* Compile (no cache) and install in one go. */
int ward_seccomp_load(const struct ward_seccomp *s, struct ward_err *err);

/* The cache directory (default WARD_SECCOMP_CACHE_DIR); NULL turns the cache off. The
 * string must outlive its use. */
void ward_seccomp_cache_set_dir(const char *dir);
/* What the cache did in this process (tests and benchmarks read it). */
struct ward_seccomp_cache_stats {
	unsigned hits;	   /* entries used */
	unsigned misses;   /* compiled with libseccomp */
	unsigned stored;   /* entries written */
	unsigned rejected; /* entries found but unusable (corrupt, other key, unsafe owner) */
};
extern struct ward_seccomp_cache_stats ward_seccomp_cache_stats;

/* NULL-terminated name tables, for `features`. */
extern const char *const ward_seccomp_action_names[];
extern const char *const ward_seccomp_op_names[];
extern const char *const ward_seccomp_arch_names[];
extern const char *const ward_seccomp_known_flags[];
extern const char *const ward_seccomp_supported_flags[];

#endif
