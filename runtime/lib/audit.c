/* The audit trail: <audit_dir>/<tenant>.log, one JSON line per event, O_APPEND, one write. */
#include "audit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "log.h"
#include "own.h"
#include "spec.h"
#include "state.h"
#include "tenant.h"
#include "util.h"

int ward_audit_dir_open(const char *dir, bool create, struct ward_err *err)
{
	cleanup_fd int fd = -1;
	struct stat st;

	if (!dir || dir[0] != '/')
		return ward_fail(err, 0, "audit directory \"%s\": not an absolute path",
				 dir ? dir : "");
	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return ward_fail_errno(err, "audit directory %s: create", dir);
	/* O_NOFOLLOW: a symbolic link as the last component fails (ELOOP/ENOTDIR). */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR) {
			struct stat l;
			if (lstat(dir, &l) == 0 && S_ISLNK(l.st_mode))
				return ward_fail(err, 0,
						 "audit directory %s: is a symbolic link (refused)",
						 dir);
		}
		return ward_fail_errno(err, "audit directory %s", dir);
	}
	if (fstat(fd, &st) < 0)
		return ward_fail_errno(err, "audit directory %s", dir);
	if (st.st_uid != 0)
		return ward_fail(err, 0, "audit directory %s: owned by uid %u, not root (refused)",
				 dir, (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return ward_fail(err, 0,
				 "audit directory %s: writable by group or others (mode %04o, "
				 "refused)",
				 dir, (unsigned)(st.st_mode & 07777));
	return steal_fd(fd);
}

static bool tenant_file_ok(const char *t)
{
	return *t && t[0] != '.' && !strchr(t, '/') && strlen(t) <= 200;
}

/* event as one line (time, event, tenant first), newline-terminated; NULL when it cannot be
 * encoded. malloc'd; *len its length. */
static char *audit_line(const char *tenant, json_t *event, size_t *len, struct ward_err *err)
{
	const char *k;
	char now[64];
	char *line;
	json_t *o, *v;

	if (!json_is_string(json_object_get(event, "event"))) {
		ward_fail(err, 0, "audit: event without a name");
		return NULL;
	}
	rfc3339_now(now, sizeof(now));
	o = json_pack("{s:s,s:O,s:s}", "time", now, "event", json_object_get(event, "event"),
		      "tenant", tenant ? tenant : WARD_AUDIT_UNKNOWN);
	if (!tenant)
		json_object_set_new(o, "tenant", json_null());
	json_object_foreach(event, k, v) if (strcmp(k, "time") && strcmp(k, "event") &&
					     strcmp(k, "tenant")) json_object_set(o, k, v);
	line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!line) {
		ward_fail(err, 0, "audit: cannot encode the event");
		return NULL;
	}
	*len = strlen(line);
	line[(*len)++] = '\n'; /* json_dumps leaves room: the NUL becomes the newline */
	return line;
}

/* events[0..n) appended to the tenant's log with one open and one write: the lines land
 * whole or the events are reported lost. */
static int audit_write_n(const char *dir, const char *tenant, json_t *const *events, size_t n,
			 struct ward_err *err)
{
	const char *name = tenant ? tenant : WARD_AUDIT_UNKNOWN;
	char file[256];
	cleanup_fd int dfd = -1;
	cleanup_fd int fd = -1;
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t len = 0;
	ssize_t w;

	if (!tenant_file_ok(name))
		return ward_fail(err, 0, "audit: tenant \"%s\": not usable as a file name", name);
	for (size_t i = 0; i < n; i++) {
		size_t l;
		cleanup_free char *line = audit_line(tenant, events[i], &l, err);
		if (!line)
			return -1;
		buf = xrealloc(buf, len + l);
		memcpy(buf + len, line, l);
		len += l;
	}
	snprintf(file, sizeof(file), "%s.log", name);
	dfd = ward_audit_dir_open(dir, true, err);
	if (dfd < 0)
		return -1;
	fd = openat(dfd, file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return ward_fail_errno(err, "audit log %s/%s", dir, file);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return ward_fail(err, 0, "audit log %s/%s: not a regular file", dir, file);
	do
		w = write(fd, buf, len);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return ward_fail_errno(err, "audit log %s/%s: write", dir, file);
	if ((size_t)w != len)
		return ward_fail(err, EIO, "audit log %s/%s: short write (%zd of %zu bytes)", dir,
				 file, w, len);
	return 0;
}

int ward_audit_write_dir(const char *dir, const char *tenant, json_t *event, struct ward_err *err)
{
	return audit_write_n(dir, tenant, &event, 1, err);
}

/* The configuration's audit directory, else the default one. */
static const char *audit_dir(const struct ward_config *cfg)
{
	return cfg->audit_dir ? cfg->audit_dir : WARD_AUDIT_DEFAULT_DIR;
}

int ward_audit_write(const struct ward_config *cfg, const char *tenant, json_t *event,
		     struct ward_err *err)
{
	return ward_audit_write_dir(audit_dir(cfg), tenant, event, err);
}

/* pod {namespace, name, uid} from the CRI annotations (containerd's, else the older ones). */
static void pod_fields(json_t *event, json_t *ann)
{
	static const char *const keys[][3] = {
	    {"namespace", WARD_ANN_CRI_NAMESPACE, WARD_ANN_POD_NAMESPACE},
	    {"name", WARD_ANN_CRI_POD, WARD_ANN_POD_NAME},
	    {"uid", WARD_ANN_CRI_POD_UID, WARD_ANN_POD_UID},
	};
	json_t *pod = json_object();

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		const char *v = ward_json_str_at(ann, keys[i][1]);
		if (!v)
			v = ward_json_str_at(ann, keys[i][2]);
		if (v)
			json_object_set_new(pod, keys[i][0], json_string(v));
	}
	if (json_object_size(pod))
		json_object_set_new(event, "pod", pod);
	else
		json_decref(pod);
}

/* pod {namespace, name, uid} as create resolved the pod (state.json's "pod"). */
static void pod_fields_of(json_t *event, const struct ward_pod *p)
{
	json_t *pod = ward_pod_identity_json(p);

	if (json_object_size(pod))
		json_object_set_new(event, "pod", pod);
	else
		json_decref(pod);
}

/* The effective spec's facts: host_ids and gpus (ward's own record), apparmor, capabilities. */
static void spec_facts(json_t *event, json_t *spec)
{
	json_t *proc = json_object_get(spec, "process");
	json_t *caps = json_object_get(json_object_get(proc, "capabilities"), "bounding");
	const char *ids = ward_own_spec_str(spec, "ids", WARD_ANN_IDS),
		   *gpus = ward_own_spec_str(spec, "gpus", WARD_ANN_GPUS);
	const char *aa = json_string_value(json_object_get(proc, "apparmorProfile"));

	if (ids) {
		char owner[512];
		unsigned start, size;
		if (sscanf(ids, "%511s %u %u", owner, &start, &size) == 3)
			json_object_set_new(event, "host_ids",
					    json_pack("{s:s,s:I,s:I}", "owner", owner, "start",
						      (json_int_t)start, "size", (json_int_t)size));
	}
	json_object_set_new(event, "apparmor", aa && *aa ? json_string(aa) : json_null());
	json_object_set_new(event, "capabilities",
			    json_is_array(caps) ? json_deep_copy(caps) : json_array());
	if (gpus && *gpus) {
		cleanup_free char *copy = xstrdup(gpus);
		json_t *a = json_array();
		char *save = NULL;
		for (char *u = strtok_r(copy, ",", &save); u; u = strtok_r(NULL, ",", &save))
			json_array_append_new(a, json_string(u));
		json_object_set_new(event, "gpus", a);
	}
}

const char *ward_audit_spec_fields(json_t *event, json_t *spec)
{
	json_t *ann = json_object_get(spec, "annotations");

	pod_fields(event, ann);
	spec_facts(event, spec);
	return ward_json_str_at(ann, WARD_ANN_TENANT);
}

/* ward's own lines: the pod's identity from the pod (pod NULL: an older container's state,
 * from the spec's CRI annotations), then the spec's facts. */
static void container_fields(json_t *event, json_t *spec, const struct ward_pod *pod)
{
	if (pod)
		pod_fields_of(event, pod);
	else
		pod_fields(event, json_object_get(spec, "annotations"));
	spec_facts(event, spec);
}

char *ward_audit_lifecycle_base(json_t *spec, const struct ward_pod *pod, const char *id,
				const char *bundle, const char *seccomp)
{
	json_t *base =
	    json_pack("{s:n,s:s,s:s}", "tenant", "container", id, "bundle", bundle ? bundle : "");
	char *text;

	container_fields(base, spec, pod);
	if (pod->tenant && *pod->tenant)
		json_object_set_new(base, "tenant", json_string(pod->tenant));
	json_object_set_new(base, "seccomp", json_string(seccomp ? seccomp : "pod"));
	text = json_dumps(base, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(base);
	return text;
}

/* The event of a lifecycle line from the container's base fields (b); NULL if event is. */
static json_t *lifecycle_event(json_t *b, const char *event, pid_t pid, int exit_status)
{
	json_t *ev;

	if (!event)
		return NULL;
	ev = json_pack("{s:s}", "event", event);
	json_object_update(ev, b);
	json_object_del(ev, "tenant");
	if (pid > 0)
		json_object_set_new(ev, "pid", json_integer(pid));
	if (!strcmp(event, "exit"))
		json_object_set_new(ev, "exit_status",
				    exit_status >= 0 ? json_integer(exit_status) : json_null());
	return ev;
}

int ward_audit_lifecycle2(const struct ward_config *cfg, const char *base, const char *event,
			  const char *event2, pid_t pid, int exit_status, struct ward_err *err)
{
	json_t *b = json_loads(base, 0, NULL);
	json_t *ev[2];
	int rc;

	if (!json_is_object(b)) {
		json_decref(b);
		return ward_fail(err, 0, "audit: the container's state has no usable audit fields");
	}
	ev[0] = lifecycle_event(b, event, pid, exit_status);
	ev[1] = lifecycle_event(b, event2, pid, exit_status);
	rc = audit_write_n(audit_dir(cfg), json_string_value(json_object_get(b, "tenant")), ev,
			   ev[1] ? 2 : 1, err);
	json_decref(ev[0]);
	json_decref(ev[1]);
	json_decref(b);
	return rc;
}

int ward_audit_lifecycle(const struct ward_config *cfg, const char *base, const char *event,
			 pid_t pid, int exit_status, struct ward_err *err)
{
	return ward_audit_lifecycle2(cfg, base, event, NULL, pid, exit_status, err);
}

int ward_audit_exec(const struct ward_config *cfg, json_t *spec, const struct ward_state *st,
		    const struct ward_process *p, struct ward_err *err)
{
	const char *id = st->id, *bundle = st->bundle;
	json_t *ev, *args;
	int rc;

	ev = json_pack("{s:s,s:s,s:s}", "event", "exec", "container", id, "bundle",
		       bundle ? bundle : "");
	container_fields(ev, spec, st->pod.id ? &st->pod : NULL);
	args = json_array();
	for (size_t i = 0; p->args && p->args[i]; i++)
		json_array_append_new(args, json_string(p->args[i]));
	json_object_set_new(ev, "args", args);
	json_object_set_new(
	    ev, "user",
	    json_pack("{s:I,s:I}", "uid", (json_int_t)p->user.uid, "gid", (json_int_t)p->user.gid));
	json_object_set_new(ev, "tty", json_boolean(p->terminal));
	/* The process's own bounding set (exec may narrow the container's). */
	args = json_array();
	for (size_t i = 0; p->capabilities.bounding && p->capabilities.bounding[i]; i++)
		json_array_append_new(args, json_string(p->capabilities.bounding[i]));
	json_object_set_new(ev, "capabilities", args);
	rc = ward_audit_write(cfg, ward_state_tenant(st), ev, err);
	json_decref(ev);
	return rc;
}

void ward_audit_refused(const struct ward_config *cfg, const char *bundle, const char *id,
			const char *message)
{
	cleanup_fd int dfd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *why = NULL;
	cleanup_free char *text = NULL;
	const struct ward_tenant *t = NULL;
	struct ward_err e = {0};
	size_t len = 0;
	json_t *pod = NULL;
	json_t *ev = json_pack("{s:s,s:s,s:s,s:s}", "event", "refused", "container", id, "bundle",
			       bundle, "error", message);

	/* The spec as create read it: within the caps, else only the refusal is written. */
	if (dfd >= 0 && (text = ward_spec_read_at(dfd, "config.json", &len, &e)))
		pod = ward_json_decode(text, len, &e);
	if (json_is_object(pod) &&
	    ward_spec_check_annotations(json_object_get(pod, "annotations"), &e) == 0) {
		pod_fields(ev, json_object_get(pod, "annotations"));
		t = ward_tenant_select(cfg, json_object_get(pod, "annotations"), &why, &e);
	}
	if (ward_audit_write(cfg, t ? t->name : NULL, ev, &e) < 0)
		ward_warn("container \"%s\": the refusal was not audited: %s", id, e.msg);
	json_decref(ev);
	json_decref(pod);
}

/* "2026-11-21T09:38:08[.frac](Z|+hh:mm|-hh:mm)" */
static int parse_rfc3339(const char *s, struct timespec *out)
{
	struct tm tm = {0};
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	long nsec = 0, off = 0;

	if (!p)
		return -1;
	if (*p == '.') {
		long scale = 100000000;
		if (!(p[1] >= '0' && p[1] <= '9'))
			return -1;
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			nsec += (*p - '0') * scale;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		unsigned hh, mm;
		int used = 0;
		if (sscanf(p + 1, "%2u:%2u%n", &hh, &mm, &used) != 2 || used != 5 || hh > 23 ||
		    mm > 59)
			return -1;
		off = (long)(hh * 3600 + mm * 60) * (*p == '+' ? 1 : -1);
		p += 6;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	out->tv_sec = timegm(&tm) - off;
	out->tv_nsec = nsec;
	return 0;
}

int ward_audit_parse_time(const char *s, const struct timespec *now, struct timespec *out,
			  struct ward_err *err)
{
	static const struct {
		char unit;
		uint64_t seconds;
	} units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
	size_t l = strlen(s);

	if (l >= 2 && l < 32) {
		char num[32];
		uint64_t v;
		memcpy(num, s, l - 1);
		num[l - 1] = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(units); i++)
			if (s[l - 1] == units[i].unit && parse_u64(num, &v) == 0 &&
			    v < (uint64_t)now->tv_sec / units[i].seconds) {
				out->tv_sec = now->tv_sec - (time_t)(v * units[i].seconds);
				out->tv_nsec = now->tv_nsec;
				return 0;
			}
	}
	if (parse_rfc3339(s, out) == 0)
		return 0;
	return ward_fail(err, 0,
			 "\"%s\": expected an RFC 3339 time (2026-11-21T09:38:08Z) or a "
			 "duration (90s, 10m, 2h, 1d)",
			 s);
}
