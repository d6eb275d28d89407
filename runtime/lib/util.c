#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <signal.h>
#include <time.h>
#include <linux/sched.h>
#include <unistd.h>

#include "sys.h"

void close_fdp(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

void freep(void *p)
{
	free(*(void **)p);
}

void strv_freep(void *p)
{
	strv_free(*(char ***)p);
}

static void oom(void)
{
	static const char msg[] = "ward: out of memory\n";
	(void)!write(2, msg, sizeof(msg) - 1);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom();
	return q;
}

char *xstrdup(const char *s)
{
	char *p;
	if (!s)
		return NULL;
	p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *p;
	if (vasprintf(&p, fmt, ap) < 0)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	char *p;
	va_list ap;
	va_start(ap, fmt);
	p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

int ward_mkdir_p(const char *path, mode_t mode, struct ward_err *err)
{
	cleanup_free char *p = NULL;

	/* Mostly it exists already: one mkdir, not one per component. */
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return 0;
	p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return ward_fail_errno(err, "create %s", p);
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return ward_fail_errno(err, "create %s", p);
	return 0;
}

char *path_join(const char *dir, const char *rel)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1 && dir[0] == '/')
		n = 0;
	return xasprintf("%.*s/%s", (int)n, dir, rel);
}

size_t strv_len(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void free_each(void *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
}

void strv_free_each(char **const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		strv_free(v[i]);
}

char **strv_dup(char *const *v)
{
	size_t n = strv_len(v);
	char **r = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		r[i] = xstrdup(v[i]);
	return r;
}

char **strv_append(char **v, const char *s)
{
	size_t n = strv_len(v);
	v = xrealloc(v, (n + 2) * sizeof(char *));
	v[n] = xstrdup(s);
	v[n + 1] = NULL;
	return v;
}

char *read_all_fd(int fd, size_t *len, struct ward_err *err)
{
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		ssize_t r;
		if (n + 1 >= cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ward_fail_errno(err, "read");
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *read_file_at(int dirfd, const char *path, size_t *len, struct ward_err *err)
{
	cleanup_fd int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	char *r;
	if (fd < 0) {
		ward_fail_errno(err, "open %s", path);
		return NULL;
	}
	r = read_all_fd(fd, len, err);
	if (!r)
		ward_wrap(err, "%s", path);
	return r;
}

/* All of buf to fd, again after EINTR; on a socket through send(MSG_NOSIGNAL) when
 * nosignal (a peer gone is EPIPE, not SIGPIPE). */
static int put_all(int fd, const void *buf, size_t len, bool nosignal)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = nosignal ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
		if (w < 0 && nosignal && errno == ENOTSOCK)
			w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	return put_all(fd, buf, len, false);
}

int send_all(int fd, const void *buf, size_t len)
{
	return put_all(fd, buf, len, true);
}

ssize_t read_exact(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;
	while (got < len) {
		ssize_t r = read(fd, p + got, len - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int write_file_at(int dirfd, const char *path, int flags, mode_t mode, const void *data, size_t len,
		  struct ward_err *err)
{
	cleanup_fd int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | flags, mode);
	if (fd < 0)
		return ward_fail_errno(err, "open %s", path);
	if (write_all(fd, data, len) < 0)
		return ward_fail_errno(err, "write %s", path);
	return 0;
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	/* digits only: strtoull itself takes leading blanks and a sign (" -1" is ULLONG_MAX) */
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_i64(const char *s, int64_t *out)
{
	bool neg = s && *s == '-';
	uint64_t mag;
	if (!s || parse_u64(s + (neg || *s == '+'), &mag) < 0 || mag > (uint64_t)INT64_MAX + neg)
		return -1;
	*out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return 0;
}

void rfc3339_at(const struct timespec *ts, char *buf, size_t len)
{
	/* By hand, not strftime nor gmtime_r: glibc loads the time zone database
	 * (/etc/localtime) on the first call of either, for a UTC time. The civil date of a
	 * day count (days from 1970-01-01) in the proleptic Gregorian calendar, counted in
	 * 400-year eras from 0000-03-01. */
	int64_t days = ts->tv_sec / 86400, sod = ts->tv_sec % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;					     /* [0, 146096] */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);		     /* [0, 365] */
	int64_t mp = (5 * doy + 2) / 153;				     /* [0, 11] */
	int64_t d = doy - (153 * mp + 2) / 5 + 1;
	int64_t m = mp < 10 ? mp + 3 : mp - 9;
	int64_t y = yoe + era * 400 + (m <= 2);

	snprintf(buf, len, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%09ldZ", (long long)y,
		 (long long)m, (long long)d, (long long)(sod / 3600), (long long)(sod / 60 % 60),
		 (long long)(sod % 60), ts->tv_nsec);
}

void rfc3339_now(char *buf, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	rfc3339_at(&ts, buf, len);
}

uint64_t proc_start_time(pid_t pid)
{
	char path[64], buf[1024];
	cleanup_fd int fd = -1;
	ssize_t n;
	char *p;
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may contain spaces and parens: skip to the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* after ") " come fields 3..: state is field 3, starttime is field 22 */
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%llu", &start) != 1)
		return 0;
	return start;
}

int ward_pidfd_open(pid_t pid, unsigned flags)
{
	return sys_pidfd_open(pid, flags);
}

int ward_pidfd_send_signal(int pidfd, int sig)
{
	return sys_pidfd_send_signal(pidfd, sig);
}

void close_fds_except(int first, const int *keep, size_t n_keep)
{
	int sorted[16];
	size_t n = 0;
	int from = first;

	for (size_t i = 0; i < n_keep && n < ARRAY_SIZE(sorted); i++)
		if (keep[i] >= first)
			sorted[n++] = keep[i];
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			int t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		if (sorted[i] > from)
			sys_close_range((unsigned)from, (unsigned)sorted[i] - 1, 0);
		from = sorted[i] + 1;
	}
	sys_close_range((unsigned)from, ~0U, 0);
}

pid_t ward_clone_into_cgroup(int cgroup_fd, int ns_flags)
{
	struct clone_args args = {
	    .flags = (uint64_t)(unsigned)ns_flags | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
	    .exit_signal = SIGCHLD,
	    .cgroup = cgroup_fd >= 0 ? (uint64_t)cgroup_fd : 0,
	};
	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

pid_t ward_fork_into_cgroup(int cgroup_fd)
{
	if (cgroup_fd < 0)
		return fork();
	return ward_clone_into_cgroup(cgroup_fd, 0);
}

bool ward_id_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	if (n == 0 || n > 1024 || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return false;
	for (const char *p = id; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '+' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

bool ward_boot_id(char out[37])
{
	static char id[37]; /* the same for the life of the process */
	if (!id[0]) {
		cleanup_fd int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
		char buf[37] = "unknown";
		if (fd >= 0 && read_exact(fd, buf, 36) == 36)
			buf[36] = '\0';
		memcpy(id, buf, sizeof(id));
	}
	memcpy(out, id, sizeof(id));
	return strcmp(id, "unknown") != 0;
}
