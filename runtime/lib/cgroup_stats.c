/* cgroup v2 files -> runc-shaped stats. jansson keeps integers signed, and memory limits
 * of "max" are UINT64_MAX in runc's output, so the JSON is written by hand here. */
#include "cgroup_stats.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* ---- a tiny JSON writer ------------------------------------------------------------- */

struct jw {
	char *buf;
	size_t len, cap;
	bool first; /* no comma before the next member */
};

static void jw_raw(struct jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void jw_raw(struct jw *w, const char *fmt, ...)
{
	va_list ap;
	int n;
	for (;;) {
		size_t room = w->cap - w->len;
		va_start(ap, fmt);
		n = vsnprintf(w->buf ? w->buf + w->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			abort();
		if ((size_t)n < room)
			break;
		w->cap = (w->cap + (size_t)n + 1) * 2;
		w->buf = xrealloc(w->buf, w->cap);
	}
	w->len += (size_t)n;
}

/* Keys are cgroup file keys ([a-z0-9_]) or page sizes: printable, but escape anyway. */
static void jw_key(struct jw *w, const char *key)
{
	jw_raw(w, "%s\"", w->first ? "" : ",");
	for (const char *c = key; *c; c++) {
		if (*c == '"' || *c == '\\')
			jw_raw(w, "\\%c", *c);
		else if ((unsigned char)*c < 0x20)
			jw_raw(w, "\\u%04x", (unsigned char)*c);
		else
			jw_raw(w, "%c", *c);
	}
	jw_raw(w, "\":");
	w->first = false;
}

static void jw_open(struct jw *w, const char *key, char bracket)
{
	if (key)
		jw_key(w, key);
	else if (!w->first)
		jw_raw(w, ",");
	jw_raw(w, "%c", bracket);
	w->first = true;
}

static void jw_close(struct jw *w, char bracket)
{
	jw_raw(w, "%c", bracket);
	w->first = false;
}

static void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	jw_key(w, key);
	jw_raw(w, "%" PRIu64, v);
}

/* ---- reading cgroup files ----------------------------------------------------------- */

static char *read_at(int dfd, const char *file)
{
	struct ward_err ignored;
	return read_file_at(dfd, file, NULL, &ignored);
}

/* A single-value file: a number, or "max" (*is_max). false if missing or malformed. */
static bool read_u64(int dfd, const char *file, uint64_t *v, bool *is_max)
{
	cleanup_free char *t = read_at(dfd, file);
	if (!t)
		return false;
	t[strcspn(t, "\n")] = '\0';
	if (is_max)
		*is_max = !strcmp(t, "max");
	if (!strcmp(t, "max")) {
		*v = UINT64_MAX;
		return true;
	}
	return parse_u64(t, v) == 0;
}

/* "key value" lines (cpu.stat, memory.stat, memory.events). */
static bool keyed(const char *text, const char *key, uint64_t *v)
{
	size_t n = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, key, n) && p[n] == ' ') {
			char *end;
			*v = strtoull(p + n + 1, &end, 10);
			return end != p + n + 1;
		}
	}
	return false;
}

static bool read_keyed(int dfd, const char *file, const char *key, uint64_t *v)
{
	cleanup_free char *t = read_at(dfd, file);
	return t && keyed(t, key, v);
}

/* ---- the controllers ---------------------------------------------------------------- */

static void stats_cpu(int dfd, struct jw *w)
{
	cleanup_free char *t = read_at(dfd, "cpu.stat");
	uint64_t v;
	if (!t)
		return;
	jw_open(w, "cpu", '{');
	jw_open(w, "usage", '{');
	if (keyed(t, "usage_usec", &v))
		jw_u64(w, "total", v * 1000);
	jw_u64(w, "kernel", keyed(t, "system_usec", &v) ? v * 1000 : 0);
	jw_u64(w, "user", keyed(t, "user_usec", &v) ? v * 1000 : 0);
	jw_close(w, '}');
	/* the throttling counters are only there with the cpu controller */
	if (keyed(t, "nr_periods", &v)) {
		jw_open(w, "throttling", '{');
		jw_u64(w, "periods", v);
		if (keyed(t, "nr_throttled", &v))
			jw_u64(w, "throttledPeriods", v);
		if (keyed(t, "throttled_usec", &v))
			jw_u64(w, "throttledTime", v * 1000);
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

static void stats_memory(int dfd, struct jw *w)
{
	uint64_t usage, limit = UINT64_MAX, v, swap, swap_limit = UINT64_MAX;
	cleanup_free char *stat = NULL;
	if (!read_u64(dfd, "memory.current", &usage, NULL))
		return;
	read_u64(dfd, "memory.max", &limit, NULL);
	stat = read_at(dfd, "memory.stat");
	jw_open(w, "memory", '{');
	if (stat && keyed(stat, "file", &v))
		jw_u64(w, "cache", v);
	jw_open(w, "usage", '{');
	jw_u64(w, "limit", limit);
	jw_u64(w, "usage", usage);
	if (read_u64(dfd, "memory.peak", &v, NULL))
		jw_u64(w, "max", v);
	jw_u64(w, "failcnt", read_keyed(dfd, "memory.events", "max", &v) ? v : 0);
	jw_close(w, '}');
	if (read_u64(dfd, "memory.swap.current", &swap, NULL)) {
		/* v1 reported memory+swap; runc keeps that for v2 */
		read_u64(dfd, "memory.swap.max", &swap_limit, NULL);
		jw_open(w, "swap", '{');
		jw_u64(w, "limit",
		       swap_limit == UINT64_MAX || limit == UINT64_MAX ? UINT64_MAX
								       : swap_limit + limit);
		jw_u64(w, "usage", swap + usage);
		jw_u64(w, "failcnt", read_keyed(dfd, "memory.swap.events", "max", &v) ? v : 0);
		jw_close(w, '}');
	}
	if (stat) {
		jw_open(w, "raw", '{');
		for (char *line = stat, *next; line && *line; line = next) {
			char *sp;
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			sp = strchr(line, ' ');
			if (!sp)
				continue;
			*sp = '\0';
			if (parse_u64(sp + 1, &v) == 0)
				jw_u64(w, line, v);
		}
		jw_close(w, '}');
	}
	jw_close(w, '}');
}

static void stats_pids(int dfd, struct jw *w)
{
	uint64_t current, limit;
	bool is_max = true;
	if (!read_u64(dfd, "pids.current", &current, NULL))
		return;
	jw_open(w, "pids", '{');
	jw_u64(w, "current", current);
	if (read_u64(dfd, "pids.max", &limit, &is_max) && !is_max)
		jw_u64(w, "limit", limit);
	jw_close(w, '}');
}

static void blkio_entries(struct jw *w, const char *text, const char *key, const char *rkey,
			  const char *wkey)
{
	jw_open(w, key, '[');
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned major, minor;
		char line[512];
		const char *const keys[2] = {rkey, wkey};
		const char *const ops[2] = {"Read", "Write"};
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if (sscanf(line, "%u:%u", &major, &minor) != 2)
			continue;
		for (int k = 0; k < 2; k++) {
			char want[32];
			const char *at;
			snprintf(want, sizeof(want), " %s=", keys[k]);
			at = strstr(line, want);
			if (!at)
				continue;
			jw_open(w, NULL, '{');
			jw_u64(w, "major", major);
			jw_u64(w, "minor", minor);
			jw_key(w, "op");
			jw_raw(w, "\"%s\"", ops[k]);
			jw_u64(w, "value", strtoull(at + strlen(want), NULL, 10));
			jw_close(w, '}');
		}
	}
	jw_close(w, ']');
}

static void stats_io(int dfd, struct jw *w)
{
	cleanup_free char *t = read_at(dfd, "io.stat");
	if (!t)
		return;
	jw_open(w, "blkio", '{');
	blkio_entries(w, t, "ioServiceBytesRecursive", "rbytes", "wbytes");
	blkio_entries(w, t, "ioServicedRecursive", "rios", "wios");
	jw_close(w, '}');
}

static void stats_hugetlb(int dfd, struct jw *w)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	bool any = false;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		/* hugetlb.<size>.current, not hugetlb.<size>.rsvd.current */
		char size[32], file[96];
		uint64_t v;
		const char *name = de->d_name, *dot;
		size_t len = strlen(name);
		if (strncmp(name, "hugetlb.", 8) || len < 16 || strcmp(name + len - 8, ".current"))
			continue;
		dot = strchr(name + 8, '.');
		if (!dot || dot != name + len - 8 || (size_t)(dot - name - 8) >= sizeof(size))
			continue;
		snprintf(size, sizeof(size), "%.*s", (int)(dot - name - 8), name + 8);
		if (!read_u64(dfd, name, &v, NULL))
			continue;
		if (!any)
			jw_open(w, "hugetlb", '{');
		any = true;
		jw_open(w, size, '{');
		jw_u64(w, "usage", v);
		snprintf(file, sizeof(file), "hugetlb.%s.events", size);
		jw_u64(w, "failcnt", read_keyed(dfd, file, "max", &v) ? v : 0);
		jw_close(w, '}');
	}
	if (any)
		jw_close(w, '}');
	closedir(d);
}

char *ward_cgroup_stats_json(const char *path, struct ward_err *err)
{
	cleanup_fd int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct jw w = {.first = true};
	if (dfd < 0) {
		ward_fail_errno(err, "open cgroup %s", path);
		return NULL;
	}
	jw_open(&w, NULL, '{');
	stats_cpu(dfd, &w);
	stats_memory(dfd, &w);
	stats_pids(dfd, &w);
	stats_io(dfd, &w);
	stats_hugetlb(dfd, &w);
	jw_close(&w, '}');
	return w.buf;
}

int ward_cgroup_oom_kills(const char *path, uint64_t *count)
{
	cleanup_fd int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*count = 0;
	if (dfd < 0 || !read_keyed(dfd, "memory.events", "oom_kill", count))
		return -1;
	return 0;
}

/* ---- single values, for ward metrics ------------------------------------------------ */

bool ward_cgroup_stat_value(int dfd, const char *file, const char *key, uint64_t *v)
{
	bool is_max = false;
	if (key)
		return read_keyed(dfd, file, key, v);
	return read_u64(dfd, file, v, &is_max) && !is_max;
}

bool ward_cgroup_u64(int dfd, const char *file, uint64_t *v, bool *is_max)
{
	return read_u64(dfd, file, v, is_max);
}

bool ward_cgroup_keyed(const char *text, const char *key, uint64_t *v)
{
	return keyed(text, key, v);
}

bool ward_cgroup_io_bytes(int dfd, uint64_t *rbytes, uint64_t *wbytes)
{
	cleanup_free char *t = read_at(dfd, "io.stat");
	*rbytes = *wbytes = 0;
	if (!t)
		return false;
	for (const char *p = t; *p; p = strchr(p, '\n'), p = p ? p + 1 : "") {
		char line[512];
		const char *at;
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if ((at = strstr(line, " rbytes=")))
			*rbytes += strtoull(at + 8, NULL, 10);
		if ((at = strstr(line, " wbytes=")))
			*wbytes += strtoull(at + 8, NULL, 10);
	}
	return true;
}
