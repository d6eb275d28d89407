#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "util.h"

static bool is_cgroup2(const char *path)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

const char *ward_cgroup_v2_root(struct ward_err *err)
{
	static char root[4096];
	FILE *f;
	char *line = NULL;
	size_t cap = 0;

	if (root[0])
		return root;
	if (is_cgroup2("/sys/fs/cgroup")) {
		strcpy(root, "/sys/fs/cgroup");
		return root;
	}
	if (is_cgroup2("/sys/fs/cgroup/unified")) {
		strcpy(root, "/sys/fs/cgroup/unified");
		return root;
	}
	f = fopen("/proc/self/mountinfo", "re");
	if (f) {
		while (getline(&line, &cap, f) > 0) {
			char mnt[4096], fstype[64];
			char *sep = strstr(line, " - ");
			if (!sep || sscanf(sep, " - %63s", fstype) != 1 ||
			    strcmp(fstype, "cgroup2"))
				continue;
			if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
				snprintf(root, sizeof(root), "%s", mnt);
				break;
			}
		}
		free(line);
		fclose(f);
	}
	if (!root[0]) {
		ward_fail(err, 0, "no cgroup v2 hierarchy is mounted");
		return NULL;
	}
	return root;
}

/* A systemd unit name's characters (systemd's VALID_CHARS, without '\\' escapes). */
static bool unit_chars_ok(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_' || s[i] == '.' ||
		      s[i] == '@'))
			return false;
	return true;
}

char *ward_cgroup_systemd_path(const char *cgroups_path, struct ward_err *err)
{
	const char *c1 = strchr(cgroups_path, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	const char *slice = cgroups_path, *prefix, *name;
	size_t slen, base, plen;
	char *out, *p;

	if (!c1 || !c2 || strchr(c2 + 1, ':')) {
		ward_fail(err, 0, "expected systemd's slice:prefix:name form");
		return NULL;
	}
	prefix = c1 + 1;
	plen = (size_t)(c2 - prefix);
	name = c2 + 1;
	slen = (size_t)(c1 - slice);
	if (slen < 7 || slen > 255 || strncmp(slice + slen - 6, ".slice", 6) ||
	    !unit_chars_ok(slice, slen)) {
		ward_fail(
		    err, 0,
		    "slice \"%.*s\": expected a systemd slice name (NAME.slice, at most 255 bytes)",
		    (int)slen, slice);
		return NULL;
	}
	if (!plen || !*name || !unit_chars_ok(prefix, plen) || !unit_chars_ok(name, strlen(name))) {
		ward_fail(err, 0,
			  "prefix \"%.*s\" and name \"%s\": expected non-empty systemd unit name "
			  "parts (letters, digits, '-', '_', '.', '@')",
			  (int)plen, prefix, name);
		return NULL;
	}
	if (plen + strlen(name) + 7 > 255) {
		ward_fail(err, 0, "the scope name \"%.*s-%s.scope\" is longer than 255 bytes",
			  (int)plen, prefix, name);
		return NULL;
	}
	base = slen - 6; /* without ".slice" */
	if (base == 1 && slice[0] == '-')
		return xasprintf("%.*s-%s.scope", (int)plen, prefix, name); /* the root slice */
	/* Each '-' ends a parent: a-b-c.slice is a.slice/a-b.slice/a-b-c.slice. */
	out = p = xcalloc(1, (slen + 1) * (slen + 1) + plen + strlen(name) + 16);
	for (size_t i = 0; i <= base; i++) {
		if (i < base && slice[i] != '-')
			continue;
		if (i == 0 || i == base - 1 || (i < base && slice[i - 1] == '-') ||
		    (i == base && slice[base - 1] == '-')) {
			free(out);
			ward_fail(err, 0, "slice \"%.*s\": empty name between '-'", (int)slen,
				  slice);
			return NULL;
		}
		p += sprintf(p, "%.*s.slice/", (int)i, slice);
	}
	sprintf(p, "%.*s-%s.scope", (int)plen, prefix, name);
	return out;
}

char *ward_cgroup_path_for(const char *cgroups_path, const char *id, struct ward_err *err)
{
	const char *v2 = ward_cgroup_v2_root(err);
	if (!v2)
		return NULL;
	if (!cgroups_path || !*cgroups_path)
		return xasprintf("%s/ward/%s", v2, id);
	if (cgroups_path[0] != '/' && strchr(cgroups_path, ':')) {
		cleanup_free char *rel = ward_cgroup_systemd_path(cgroups_path, err);
		if (!rel) {
			ward_wrap(err, "linux.cgroupsPath: \"%s\"", cgroups_path);
			return NULL;
		}
		return xasprintf("%s/%s", v2, rel);
	}
	/* No component may climb out of the hierarchy. */
	for (const char *p = cgroups_path; *p;) {
		size_t len = strcspn(p, "/");
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			ward_fail(err, 0, "linux.cgroupsPath: \"%s\": must not contain \"..\"",
				  cgroups_path);
			return NULL;
		}
		p += len;
		while (*p == '/')
			p++;
	}
	if (cgroups_path[0] == '/')
		return xasprintf("%s%s", v2, cgroups_path);
	return xasprintf("%s/ward/%s", v2, cgroups_path);
}

int ward_cgroup_create(const char *path, struct ward_err *err)
{
	cleanup_free char *p = xstrdup(path);
	char *slash = strrchr(p, '/');

	if (slash && slash != p) { /* the parents */
		*slash = '\0';
		if (ward_mkdir_p(p, 0755, err) < 0)
			return ward_wrap(err, "cgroup %s", path);
		*slash = '/';
	}
	if (mkdir(p, 0755) < 0) {
		pid_t *pids = NULL;
		size_t n = 0;
		if (errno != EEXIST)
			return ward_fail_errno(err, "create cgroup %s", p);
		if (ward_cgroup_pids(p, &pids, &n, err) == 0 && n > 0) {
			free(pids);
			return ward_fail(err, 0, "cgroup %s already exists and has processes", p);
		}
		free(pids);
	}
	return 0;
}

static int cg_write(const char *dir, const char *file, const char *val, struct ward_err *err)
{
	cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ward_fail_errno(err, "open cgroup %s", dir);
	if (write_file_at(dfd, file, 0, 0, val, strlen(val), err) < 0)
		return ward_wrap(err, "cgroup %s", dir);
	return 0;
}

int ward_cgroup_open(const char *path, struct ward_err *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ward_fail_errno(err, "open cgroup %s", path);
	return fd;
}

int ward_cgroup_pids(const char *path, pid_t **pids, size_t *n, struct ward_err *err)
{
	cleanup_fd int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *text = NULL;
	size_t cap = 0;
	char *save = NULL;

	*pids = NULL;
	*n = 0;
	if (dfd < 0)
		return ward_fail_errno(err, "open cgroup %s", path);
	text = read_file_at(dfd, "cgroup.procs", NULL, err);
	if (!text)
		return -1;
	for (char *tok = strtok_r(text, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*pids = xrealloc(*pids, cap * sizeof(pid_t));
		}
		(*pids)[(*n)++] = (pid_t)atoi(tok);
	}
	return 0;
}

int ward_cgroup_signal_all(const char *path, int sig, struct ward_err *err)
{
	pid_t *pids = NULL;
	size_t n = 0;
	if (sig == SIGKILL) {
		struct ward_err e2;
		if (cg_write(path, "cgroup.kill", "1", &e2) == 0)
			return 0;
	}
	/* Frozen tasks don't act on signals other than SIGKILL; thaw stays the caller's call. */
	if (ward_cgroup_pids(path, &pids, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		kill(pids[i], sig);
	free(pids);
	return 0;
}

bool ward_cgroup_events(const char *path, bool *populated, bool *frozen)
{
	char file[4200];
	FILE *f;
	char k[64];
	int v;
	bool seen = false;

	*populated = *frozen = false;
	snprintf(file, sizeof(file), "%s/cgroup.events", path);
	f = fopen(file, "re");
	if (!f)
		return false;
	while (fscanf(f, "%63s %d", k, &v) == 2) {
		if (!strcmp(k, "populated")) {
			*populated = v == 1;
			seen = true;
		} else if (!strcmp(k, "frozen")) {
			*frozen = v == 1;
		}
	}
	fclose(f);
	return seen;
}

bool ward_cgroup_is_frozen(const char *path)
{
	bool populated, frozen;
	ward_cgroup_events(path, &populated, &frozen);
	return frozen;
}

int ward_cgroup_wait_fd(int fd, const char *path, bool frozen_ok, struct ward_err *err)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, 1000);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return ward_fail_errno(err, "poll");
		if (!frozen_ok && path && *path && ward_cgroup_is_frozen(path))
			return ward_fail(err, 0, "cgroup %s is frozen", path);
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int ward_cgroup_freeze(const char *path, bool freeze, struct ward_err *err)
{
	if (cg_write(path, "cgroup.freeze", freeze ? "1" : "0", err) < 0)
		return -1;
	for (int i = 0; i < 5000; i++) {
		if (ward_cgroup_is_frozen(path) == freeze)
			return 0;
		sleep_ms(1);
	}
	return ward_fail(err, ETIMEDOUT, "cgroup %s: %s", path,
			 freeze ? "did not freeze" : "did not thaw");
}

/* Remove the empty cgroups ward made above a container's, up to (not including)
 * <v2>/ward: pods' and tenants' directories go with their last container. A directory
 * still holding another container stays (rmdir: EBUSY). */
static void prune_parents(const char *path)
{
	struct ward_err ignored;
	const char *root = ward_cgroup_v2_root(&ignored);
	cleanup_free char *top = root ? xasprintf("%s/ward/", root) : NULL;
	cleanup_free char *dir = xstrdup(path);
	char *slash;

	if (!top || strncmp(dir, top, strlen(top)))
		return;
	while ((slash = strrchr(dir, '/')) && (size_t)(slash - dir) >= strlen(top)) {
		*slash = '\0';
		if (rmdir(dir) < 0)
			return;
	}
}

/* Cgroups the workload made inside its own (a systemd inside, a nested runtime) go
 * first, deepest first: rmdir of a cgroup with children is EBUSY forever. The processes
 * are already killed (cgroup.kill covers the subtree). */
static void remove_children(const char *path, int depth)
{
	DIR *d;
	struct dirent *e;

	if (depth > 64 || !(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		cleanup_free char *child = NULL;
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		child = xasprintf("%s/%s", path, e->d_name);
		remove_children(child, depth + 1);
		for (int i = 0; i < 500 && rmdir(child) < 0 && errno == EBUSY; i++)
			sleep_ms(1);
	}
	closedir(d);
}

/* "populated" of a cgroup.events fd, read from the start (a read re-arms the fd's POLLPRI):
 * 1 or 0, -1 when unreadable. */
static int events_populated(int fd)
{
	char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	const char *p;

	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "populated ", 10))
			return p[10] == '1';
	return -1;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int ward_cgroup_wait_empty(const char *path, long timeout_ms, unsigned *reads)
{
	cleanup_free char *file = xasprintf("%s/cgroup.events", path);
	cleanup_fd int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct timespec t0;

	if (fd < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int populated = events_populated(fd);
		long left;
		struct pollfd pfd = {.fd = fd, .events = POLLPRI};

		if (reads)
			(*reads)++;
		if (populated < 0)
			return -1;
		if (!populated)
			return 1;
		left = timeout_ms - ms_since(&t0);
		if (left <= 0)
			return 0;
		/* The kernel notifies a change of cgroup.events as POLLPRI (kernfs_notify). */
		if (poll(&pfd, 1, (int)(left > 60000 ? 60000 : left)) < 0 && errno != EINTR)
			return -1;
	}
}

/* The bound of ward_cgroup_destroy's wait: what is left was sent SIGKILL. */
#define DESTROY_WAIT_MS 2000

int ward_cgroup_destroy(const char *path, struct ward_err *err)
{
	struct timespec t0;
	bool empty_seen = false, children_done = false;

	if (!path || !*path)
		return 0;
	if (access(path, F_OK) < 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0;; i++) {
		long left;

		if (rmdir(path) == 0 || errno == ENOENT) {
			prune_parents(path);
			return 0;
		}
		if (errno != EBUSY)
			return ward_fail_errno(err, "remove cgroup %s", path);
		left = DESTROY_WAIT_MS - ms_since(&t0);
		if (left <= 0)
			break;
		/* Still populated: make sure what's left is dying, then wait for the kernel's
		 * "populated 0". Where cgroup.events cannot be watched, or the cgroup is empty
		 * but still busy (child cgroups, a css on its way out), poll in 1 ms steps. */
		if (i == 0) {
			struct ward_err ignored;
			ward_cgroup_freeze(path, false, &ignored);
			ward_cgroup_signal_all(path, SIGKILL, &ignored);
		}
		switch (ward_cgroup_wait_empty(path, left, NULL)) {
		case 0: /* the bound: one more rmdir, then the error */
			continue;
		case 1:
			if (!empty_seen) { /* rmdir right after the event */
				empty_seen = true;
				continue;
			}
			break;
		default:
			break;
		}
		if (!children_done || i % 50 == 0)
			remove_children(path, 0);
		children_done = true;
		sleep_ms(1);
	}
	return ward_fail(err, EBUSY, "remove cgroup %s", path);
}
