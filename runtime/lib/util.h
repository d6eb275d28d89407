/* Small helpers used everywhere: cleanup attributes, allocation, fd I/O. */
#ifndef WARD_UTIL_H
#define WARD_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

void close_fdp(int *fd);
void freep(void *p);	  /* takes a pointer to a pointer */
void strv_freep(void *p); /* takes char *** */

#define cleanup_fd   __attribute__((cleanup(close_fdp)))
#define cleanup_free __attribute__((cleanup(freep)))
#define cleanup_strv __attribute__((cleanup(strv_freep)))

/* Move ownership out of a cleanup variable. */
#define steal_ptr(p)                                                                               \
	({                                                                                         \
		__typeof__(p) _tmp = (p);                                                          \
		(p) = NULL;                                                                        \
		_tmp;                                                                              \
	})
#define steal_fd(fd)                                                                               \
	({                                                                                         \
		int _tmp = (fd);                                                                   \
		(fd) = -1;                                                                         \
		_tmp;                                                                              \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation failures abort: there is no sensible recovery in a runtime. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

size_t strv_len(char *const *v);
void strv_free(char **v);
/* free() / strv_free() each of the n pointers in v (NULL ones too: they are skipped). */
void free_each(void *const *v, size_t n);
void strv_free_each(char **const *v, size_t n);
/* free_all(a, b, ...): free() every argument; strv_free_all(...) likewise for vectors. The
 * members of a struct that owns many strings go in one call instead of one line each. */
#define free_all(...)                                                                              \
	free_each((void *const[]){__VA_ARGS__}, ARRAY_SIZE(((void *const[]){__VA_ARGS__})))
#define strv_free_all(...)                                                                         \
	strv_free_each((char **const[]){__VA_ARGS__}, ARRAY_SIZE(((char **const[]){__VA_ARGS__})))
char **strv_dup(char *const *v);
/* Append a copy of s to a NULL-terminated vector (reallocated). */
char **strv_append(char **v, const char *s);

/* dir + "/" + rel, with dir's trailing slashes dropped ("/" + "a" is "/a"). malloc'd. */
char *path_join(const char *dir, const char *rel);

/* mkdir -p: missing parents get 0755, the last component mode; existing ones are kept. */
int ward_mkdir_p(const char *path, mode_t mode, struct ward_err *err);

/* Read a whole fd / file (NUL-terminated). Returns NULL with err set. */
char *read_all_fd(int fd, size_t *len, struct ward_err *err);
char *read_file_at(int dirfd, const char *path, size_t *len, struct ward_err *err);
/* Write data to path (O_WRONLY|O_CLOEXEC, no O_CREAT unless flags say), full write. */
int write_file_at(int dirfd, const char *path, int flags, mode_t mode, const void *data, size_t len,
		  struct ward_err *err);
/* Write all bytes to fd, retrying on EINTR/short writes. Returns 0 or -1 (errno set). */
int write_all(int fd, const void *buf, size_t len);
/* write_all, on a socket without SIGPIPE: send(MSG_NOSIGNAL), write() on anything else. */
int send_all(int fd, const void *buf, size_t len);
/* Read exactly len bytes; returns bytes read (< len on EOF) or -1 (errno set). */
ssize_t read_exact(int fd, void *buf, size_t len);
/* This boot's id (/proc/sys/kernel/random/boot_id, 36 characters), read once per process;
 * false, and out "unknown", when it cannot be read. */
bool ward_boot_id(char out[37]);

/* Parse integers strictly (whole string, base 10: digits, for i64 after an optional sign;
 * no blanks). Return 0 or -1. */
int parse_u64(const char *s, uint64_t *out);
int parse_i64(const char *s, int64_t *out);

/* Current time as RFC3339 with nanoseconds, UTC ("2026-11-21T03:41:48.120533633Z"). */
void rfc3339_now(char *buf, size_t len);
/* The same for the time ts (gmtime_r's date, without its load of the time zone database). */
struct timespec;
void rfc3339_at(const struct timespec *ts, char *buf, size_t len);

/* Start time of a process (field 22 of /proc/PID/stat), 0 if unknown. */
uint64_t proc_start_time(pid_t pid);

/* Close every fd >= first except those in keep[] (any order). */
void close_fds_except(int first, const int *keep, size_t n_keep);

/* Syscall wrappers glibc 2.36 may lack. */
int ward_pidfd_open(pid_t pid, unsigned flags);
/* fork() that places the child in the cgroup behind cgroup_fd from its first instruction
 * (clone3 CLONE_INTO_CGROUP); cgroup_fd < 0 is a plain fork. */
pid_t ward_fork_into_cgroup(int cgroup_fd);
/* clone3 with CLONE_NEW* flags (the child is in those namespaces from its first
 * instruction), into cgroup_fd when it is >= 0; returns like fork(). */
pid_t ward_clone_into_cgroup(int cgroup_fd, int ns_flags);
int ward_pidfd_send_signal(int pidfd, int sig);

/* A container id: 1..1024 chars of [A-Za-z0-9_+.-], not "." or "..". */
bool ward_id_valid(const char *id);

#endif
