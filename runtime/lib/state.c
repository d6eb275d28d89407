#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "fault.h"
#include "json.h"
#include "spec.h"
#include "util.h"

int ward_state_root_open(const char *root, struct ward_err *err)
{
	int fd;
	if (mkdir(root, 0711) < 0 && errno != EEXIST)
		return ward_fail_errno(err, "create state root %s", root);
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ward_fail_errno(err, "open state root %s", root);
	return fd;
}

int ward_state_create(int rootfd, const char *id, struct ward_err *err)
{
	static unsigned seq;
	char tmp[64];
	cleanup_fd int fd = -1;

	/* Made under a name no id can have, locked, then renamed into place: <root>/<id> is
	 * never there unlocked while its create lives (`ward gc` takes an unlocked dir
	 * without state.json for a dead create). */
	snprintf(tmp, sizeof(tmp), "%s%d-%u", WARD_STATE_NEW_PREFIX, (int)getpid(), seq++);
	if (mkdirat(rootfd, tmp, 0711) < 0)
		return ward_fail_errno(err, "create state dir");
	fd = openat(rootfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		ward_fail_errno(err, "lock state dir");
		unlinkat(rootfd, tmp, AT_REMOVEDIR);
		return -1;
	}
	ward_fault_point("create.newdir");
	if (renameat2(rootfd, tmp, rootfd, id, RENAME_NOREPLACE) < 0) {
		int e = errno;
		unlinkat(rootfd, tmp, AT_REMOVEDIR);
		if (e == EEXIST)
			return ward_fail(err, 0, "container with given ID already exists");
		errno = e;
		return ward_fail_errno(err, "create state dir");
	}
	return steal_fd(fd);
}

int ward_state_open(int rootfd, const char *id, bool exclusive, struct ward_err *err)
{
	struct stat st;
	cleanup_fd int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
			return ward_fail(err, 0, "container \"%s\" does not exist", id);
		return ward_fail_errno(err, "open state of container \"%s\"", id);
	}
	if (flock(fd, exclusive ? LOCK_EX : LOCK_SH) < 0)
		return ward_fail_errno(err, "lock state of container \"%s\"", id);
	/* A concurrent delete may have removed the dir while we waited for the lock. */
	if (fstat(fd, &st) < 0 || st.st_nlink == 0)
		return ward_fail(err, 0, "container \"%s\" does not exist", id);
	return steal_fd(fd);
}

bool ward_state_abandoned(int rootfd, const char *name, bool *locked)
{
	cleanup_fd int fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	*locked = false;
	if (fd < 0)
		return false;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		*locked = errno == EWOULDBLOCK;
		return false;
	}
	return faccessat(fd, WARD_STATE_JSON, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

int ward_state_unlink(int dirfd, const char *id, struct ward_err *err)
{
	if (unlinkat(dirfd, WARD_STATE_JSON, 0) < 0 && errno != ENOENT)
		return ward_fail_errno(err, "remove state of container \"%s\"", id);
	return 0;
}

static int remove_tree_at(int parentfd, const char *name)
{
	cleanup_fd int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	d = fdopendir(fd);
	if (!d)
		return -1;
	fd = -1; /* owned by d */
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno == EISDIR)
			remove_tree_at(dirfd(d), de->d_name);
	}
	closedir(d);
	return unlinkat(parentfd, name, AT_REMOVEDIR);
}

int ward_state_remove(int rootfd, const char *id, struct ward_err *err)
{
	if (remove_tree_at(rootfd, id) < 0 && errno != ENOENT)
		return ward_fail_errno(err, "remove state of container \"%s\"", id);
	return 0;
}

static void set_str(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, json_string(v ? v : ""));
}

int ward_state_write(int dirfd, const struct ward_state *st, struct ward_err *err)
{
	if (ward_state_write_staged(dirfd, st, err) < 0)
		return -1;
	return ward_state_commit(dirfd, err);
}

int ward_state_commit(int dirfd, struct ward_err *err)
{
	if (renameat(dirfd, "state.json.tmp", dirfd, WARD_STATE_JSON) < 0)
		return ward_fail_errno(err, "rename state.json");
	return 0;
}

int ward_state_write_staged(int dirfd, const struct ward_state *st, struct ward_err *err)
{
	json_t *o = json_object();
	json_t *ann = json_object();
	char *text;
	int r;

	set_str(o, "id", st->id);
	set_str(o, "ociVersion", st->oci_version);
	json_object_set_new(o, "pid", json_integer(st->pid));
	json_object_set_new(o, "pidStart", json_integer((json_int_t)st->pid_start));
	set_str(o, "bundle", st->bundle);
	set_str(o, "rootfs", st->rootfs);
	set_str(o, "created", st->created);
	set_str(o, "owner", st->owner);
	set_str(o, "cgroup", st->cgroup);
	json_object_set_new(o, "hooks", json_integer(st->hooks));
	set_str(o, "tenant", st->tenant);
	if (st->apparmor_asked)
		set_str(o, "apparmorAsked", st->apparmor_asked);
	if (st->audit)
		json_object_set_new(o, "audit", json_loads(st->audit, 0, NULL));
	if (st->pod.id)
		json_object_set_new(o, "pod", ward_pod_to_json(&st->pod));
	json_object_set_new(o, WARD_OWN_KEY, ward_own_to_json(&st->own));
	for (size_t i = 0; st->annotation_keys && st->annotation_keys[i]; i++)
		json_object_set_new(ann, st->annotation_keys[i],
				    json_string(st->annotation_values[i]));
	json_object_set_new(o, "annotations", ann);
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	/* Write-then-rename (ward_state_commit) so readers never see a torn file. */
	r = write_file_at(dirfd, "state.json.tmp", O_CREAT | O_TRUNC, 0600, text, strlen(text),
			  err);
	free(text);
	return r;
}

int ward_state_read(int dirfd, struct ward_state *st, struct ward_err *err)
{
	cleanup_free char *text = read_file_at(dirfd, WARD_STATE_JSON, NULL, err);

	memset(st, 0, sizeof(*st));
	if (!text)
		return -1;
	return ward_state_parse(text, st, err);
}

int ward_state_parse(const char *text, struct ward_state *st, struct ward_err *err)
{
	json_error_t jerr;
	json_t *o, *ann, *pod_seccomp;
	const char *k;
	json_t *v;
	size_t n, i = 0;

	memset(st, 0, sizeof(*st));
	o = json_loads(text, 0, &jerr);
	if (!o || !json_is_object(o)) {
		json_decref(o);
		return ward_fail(err, 0, "state.json: corrupt: %s", jerr.text);
	}
	st->id = ward_json_str_or(o, "id", "");
	st->oci_version = ward_json_str_or(o, "ociVersion", "");
	st->pid = (pid_t)json_integer_value(json_object_get(o, "pid"));
	st->pid_start = (uint64_t)json_integer_value(json_object_get(o, "pidStart"));
	st->bundle = ward_json_str_or(o, "bundle", "");
	st->rootfs = ward_json_str_or(o, "rootfs", "");
	st->created = ward_json_str_or(o, "created", "");
	st->owner = ward_json_str_or(o, "owner", "");
	st->cgroup = ward_json_str_or(o, "cgroup", "");
	st->hooks = (unsigned)json_integer_value(json_object_get(o, "hooks"));
	st->tenant = ward_json_str_or(o, "tenant", "");
	st->apparmor_asked = ward_json_str_or(o, "apparmorAsked", NULL);
	if (json_is_object(json_object_get(o, "audit")))
		st->audit = json_dumps(json_object_get(o, "audit"), JSON_COMPACT);
	ward_pod_from_json(json_object_get(o, "pod"), &st->pod);
	if (ward_own_from_json(json_object_get(o, WARD_OWN_KEY), &st->own, &pod_seccomp, err) < 0) {
		json_decref(o);
		ward_state_clear(st);
		return ward_wrap(err, "state.json");
	}
	ann = json_object_get(o, "annotations");
	n = json_is_object(ann) ? json_object_size(ann) : 0;
	st->annotation_keys = xcalloc(n + 1, sizeof(char *));
	st->annotation_values = xcalloc(n + 1, sizeof(char *));
	if (n) {
		json_object_foreach(ann, k, v)
		{
			st->annotation_keys[i] = xstrdup(k);
			st->annotation_values[i] =
			    xstrdup(json_is_string(v) ? json_string_value(v) : "");
			i++;
		}
	}
	if (!st->own.present) /* an older ward's: its record is in the annotations */
		ward_own_from_annotations(&st->own, st->annotation_keys, st->annotation_values);
	json_decref(o);
	return 0;
}

const char *ward_state_tenant(const struct ward_state *st)
{
	if (st->tenant && st->tenant[0])
		return st->tenant;
	for (size_t i = 0; st->annotation_keys && st->annotation_keys[i]; i++)
		if (!strcmp(st->annotation_keys[i], WARD_ANN_TENANT))
			return st->annotation_values[i];
	return NULL;
}

const char *ward_state_pod(const struct ward_state *st)
{
	if (st->pod.id)
		return st->pod.id;
	for (size_t i = 0; st->annotation_keys && st->annotation_keys[i]; i++)
		if (!strcmp(st->annotation_keys[i], WARD_ANN_SANDBOX_ID) &&
		    st->annotation_values[i][0])
			return st->annotation_values[i];
	return st->id ? st->id : "";
}

bool ward_state_policy_made(const struct ward_state *st)
{
	if (st->pod.id)
		return st->pod.ids.size > 0;
	return st->own.ids != NULL;
}

void ward_state_clear(struct ward_state *st)
{
	free_all(st->id, st->oci_version, st->bundle, st->rootfs, st->created, st->owner,
		 st->cgroup, st->tenant, st->apparmor_asked, st->audit);
	ward_pod_clear(&st->pod);
	ward_own_clear(&st->own);
	strv_free_all(st->annotation_keys, st->annotation_values);
	memset(st, 0, sizeof(*st));
}

/* Without pidfds (kernel < 5.3, valgrind): same start time and not a zombie. */
static bool alive_by_proc(const struct ward_state *st)
{
	char path[64], buf[512];
	cleanup_fd int fd = -1;
	ssize_t n;
	char *p;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)st->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return false;
	return !st->pid_start || proc_start_time(st->pid) == st->pid_start;
}

bool ward_state_alive(const struct ward_state *st)
{
	int fd = ward_state_pidfd(st);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return errno == ENOSYS && alive_by_proc(st);
}

int ward_state_pidfd(const struct ward_state *st)
{
	struct pollfd p;
	int fd;
	if (st->pid <= 0) {
		errno = ESRCH;
		return -1;
	}
	fd = ward_pidfd_open(st->pid, 0);
	if (fd < 0)
		return -1;
	/* Same process? A recycled pid has another start time. */
	if (st->pid_start && proc_start_time(st->pid) != st->pid_start) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	/* A pidfd polls readable once the process has exited (also as a zombie). */
	p.fd = fd;
	p.events = POLLIN;
	if (poll(&p, 1, 0) > 0) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
}

enum ward_status ward_state_status(int dirfd, const struct ward_state *st)
{
	if (!ward_state_alive(st))
		return WARD_STOPPED;
	if (faccessat(dirfd, WARD_EXEC_FIFO, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return WARD_CREATED;
	if (st->cgroup && *st->cgroup && ward_cgroup_is_frozen(st->cgroup))
		return WARD_PAUSED;
	return WARD_RUNNING;
}

const char *ward_status_name(enum ward_status s)
{
	static const char *const names[] = {[WARD_CREATING] = "creating",
					    [WARD_CREATED] = "created",
					    [WARD_RUNNING] = "running",
					    [WARD_PAUSED] = "paused",
					    [WARD_STOPPED] = "stopped"};
	return (size_t)s < ARRAY_SIZE(names) ? names[s] : "stopped";
}

char *ward_state_json(const struct ward_state *st, enum ward_status status, bool pretty)
{
	json_t *o = json_object();
	char *text, *r;

	set_str(o, "ociVersion", st->oci_version);
	set_str(o, "id", st->id);
	json_object_set_new(o, "pid", json_integer(status == WARD_STOPPED ? 0 : st->pid));
	set_str(o, "status", ward_status_name(status));
	set_str(o, "bundle", st->bundle);
	set_str(o, "rootfs", st->rootfs);
	set_str(o, "created", st->created);
	if (st->tenant && st->tenant[0]) /* ward's own field, not an annotation */
		set_str(o, "tenant", st->tenant);
	{
		json_t *own = ward_own_to_json(&st->own);
		if (st->has_exit_status)
			json_object_set_new(own, "exitStatus", json_integer(st->exit_status));
		if (json_object_size(own))
			json_object_set_new(o, WARD_OWN_KEY, own);
		else
			json_decref(own);
	}
	if (st->annotation_keys && st->annotation_keys[0]) {
		json_t *ann = json_object();
		for (size_t i = 0; st->annotation_keys[i]; i++)
			json_object_set_new(ann, st->annotation_keys[i],
					    json_string(st->annotation_values[i]));
		json_object_set_new(o, "annotations", ann);
	}
	set_str(o, "owner", st->owner);
	text = json_dumps(o, pretty ? (JSON_INDENT(2) | JSON_PRESERVE_ORDER)
				    : (JSON_COMPACT | JSON_PRESERVE_ORDER));
	json_decref(o);
	r = xasprintf("%s%s", text, pretty ? "\n" : "");
	free(text);
	return r;
}

/* a is b or below it, component-wise */
static bool cgroup_within(const char *a, const char *b)
{
	size_t n = strlen(b);
	while (n > 1 && b[n - 1] == '/')
		n--;
	return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/');
}

int ward_state_each(int rootfd, const char *skip, ward_state_each_fn fn, void *arg)
{
	DIR *d = fdopendir(openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	struct dirent *e;
	int rc = 0;

	if (!d)
		return 0;
	while (rc == 0 && (e = readdir(d))) {
		cleanup_fd int dfd = -1;

		if (e->d_name[0] == '.' || (skip && !strcmp(e->d_name, skip)) ||
		    !ward_id_valid(e->d_name))
			continue;
		dfd = openat(rootfd, e->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0)
			rc = fn(dfd, e->d_name, arg);
	}
	closedir(d);
	return rc;
}

struct cgroup_check {
	const char *cgroup;    /* check_cgroup: the new container's */
	const char *pod, *dir; /* check_pod_cgroup: the pod and its kubelet cgroup dir */
	struct ward_err *err;
};

static int check_cgroup_one(int dfd, const char *id, void *arg)
{
	struct cgroup_check *c = arg;
	struct ward_state st = {0};
	struct ward_err ignored;
	int rc = 0;

	(void)id;
	if (ward_state_read(dfd, &st, &ignored) < 0)
		return 0;
	if (st.cgroup && st.cgroup[0] &&
	    (cgroup_within(c->cgroup, st.cgroup) || cgroup_within(st.cgroup, c->cgroup)))
		rc = ward_fail(c->err, 0,
			       "cgroup %s: container \"%s\" has the cgroup %s: one container's "
			       "cgroup is never inside another's",
			       c->cgroup, st.id, st.cgroup);
	ward_state_clear(&st);
	return rc;
}

int ward_state_check_cgroup(int rootfd, const char *id, const char *cgroup, struct ward_err *err)
{
	struct cgroup_check c = {.cgroup = cgroup, .err = err};
	return ward_state_each(rootfd, id, check_cgroup_one, &c);
}

static int check_pod_cgroup_one(int dfd, const char *id, void *arg)
{
	struct cgroup_check *c = arg;
	struct ward_state st = {0};
	struct ward_err ignored;
	const char *other = NULL;
	int rc = 0;

	(void)id;
	if (ward_state_read(dfd, &st, &ignored) < 0)
		return 0;
	other = ward_state_pod(&st);
	if (st.cgroup && st.cgroup[0] && cgroup_within(st.cgroup, c->dir) && strcmp(other, c->pod))
		rc =
		    ward_fail(c->err, 0,
			      "kubelet's pod cgroup %s holds container \"%s\" of another pod (%s): "
			      "a pod's kubelet cgroup is its own",
			      c->dir, st.id, other);
	ward_state_clear(&st);
	return rc;
}

int ward_state_check_pod_cgroup(int rootfd, const char *id, const char *pod, const char *dir,
				struct ward_err *err)
{
	struct cgroup_check c = {.pod = pod, .dir = dir, .err = err};
	return ward_state_each(rootfd, id, check_pod_cgroup_one, &c);
}
