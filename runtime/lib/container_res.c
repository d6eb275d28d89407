/* update and events: the container's state gives its cgroup, cgroup_res / bpfdev /
 * cgroup_stats do the work. */
#include "container_res.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bpfdev.h"
#include "cgroup_res.h"
#include "cgroup_stats.h"
#include "config.h"
#include "resources.h"
#include "spec.h"
#include "state.h"
#include "util.h"

/* Read the state under the lock; a stopped container (or one without a cgroup) is an
 * error, in runc's words. */
static int open_live(int rootfd, const char *id, bool exclusive, int *dirfd, struct ward_state *st,
		     struct ward_err *err)
{
	enum ward_status status;
	*dirfd = -1;
	if (!ward_id_valid(id))
		return ward_fail(err, 0, "invalid container ID format: \"%s\"", id);
	*dirfd = ward_state_open(rootfd, id, exclusive, err);
	if (*dirfd < 0)
		return -1;
	if (ward_state_read(*dirfd, st, err) < 0) {
		if (err->errnum == ENOENT)
			ward_fail(err, 0, "container \"%s\" does not exist", id);
		else
			ward_wrap(err, "container \"%s\"", id);
		goto fail;
	}
	status = ward_state_status(*dirfd, st);
	if (status == WARD_STOPPED) {
		ward_fail(err, 0, "container not running");
		goto fail_st;
	}
	if (!st->cgroup || !st->cgroup[0]) {
		ward_fail(err, 0, "cgroup not exist");
		goto fail_st;
	}
	return 0;
fail_st:
	ward_state_clear(st);
fail:
	close(*dirfd);
	*dirfd = -1;
	return -1;
}

/* runc update semantics: memory.swap is memory+swap; without memory.limit in the same
 * request it is taken against the limit in force (res->memory.limit is set to it). */
static void with_current_limit(const char *cgroup, struct ward_resources *res)
{
	struct ward_res_memory *m = &res->memory;
	cleanup_fd int dfd = -1;
	cleanup_free char *cur = NULL;
	struct ward_err e;
	uint64_t v;

	if (!m->swap.set || m->swap.v <= 0 || (m->limit.set && m->limit.v != 0))
		return;
	dfd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		cur = read_file_at(dfd, "memory.max", NULL, &e);
	if (!cur)
		return;
	cur[strcspn(cur, "\n")] = '\0';
	if (parse_u64(cur, &v) == 0 && v <= INT64_MAX)
		m->limit = (struct ward_res_i64){true, (int64_t)v};
}

/* The tenant of a container the tenant policy made (it has an ID range), else NULL. */
static const char *policy_made(const struct ward_state *st)
{
	const char *tenant = ward_state_tenant(st);
	bool ids = ward_state_policy_made(st);
	return ids ? (tenant ? tenant : "?") : NULL;
}

/* Append to v a value none of its n values is. */
static void add_unnamed(int64_t *v, size_t *n)
{
	int64_t x = 0;
	for (size_t i = 0; i < *n; i++)
		if (v[i] == x) {
			x++;
			i = (size_t)-1; /* start over */
		}
	v[(*n)++] = x;
}

/* Whether every device access rules allow (with the defaults), the policy's rules allow
 * too. The decision only changes at the majors and minors some rule names, so each type,
 * each named major and minor (and one that no rule names) and each access is tried. */
static bool devices_within(const struct ward_bpfdev_rule *r, size_t n,
			   const struct ward_bpfdev_rule *pol, size_t n_pol)
{
	const struct ward_bpfdev_rule *lists[] = {r, pol, ward_bpfdev_defaults};
	const size_t lens[] = {n, n_pol, ward_bpfdev_n_defaults};
	size_t n_vals = 2 * (n + n_pol + ward_bpfdev_n_defaults) + 2, n_maj = 0, n_min = 0;
	cleanup_free int64_t *maj = xcalloc(n_vals, sizeof(*maj));
	cleanup_free int64_t *min = xcalloc(n_vals, sizeof(*min));

	for (size_t l = 0; l < ARRAY_SIZE(lists); l++)
		for (size_t i = 0; i < lens[l]; i++) {
			if (lists[l][i].major != WARD_BPFDEV_ANY)
				maj[n_maj++] = lists[l][i].major;
			if (lists[l][i].minor != WARD_BPFDEV_ANY)
				min[n_min++] = lists[l][i].minor;
		}
	add_unnamed(maj, &n_maj);
	add_unnamed(min, &n_min);
	for (const char *t = "cb"; *t; t++)
		for (size_t a = 0; a < n_maj; a++)
			for (size_t b = 0; b < n_min; b++)
				for (unsigned acc = 1; acc <= 4; acc <<= 1)
					if (ward_bpfdev_allows(r, n, *t, (uint32_t)maj[a],
							       (uint32_t)min[b], acc) &&
					    !ward_bpfdev_allows(pol, n_pol, *t, (uint32_t)maj[a],
								(uint32_t)min[b], acc))
						return false;
	return true;
}

/* The device rules of the container's effective spec (what its policy gave it), read typed
 * from the state dir's copy. */
static int policy_devices(int dirfd, const char *bundle, struct ward_bpfdev_rule **rules, size_t *n,
			  struct ward_err *err)
{
	size_t len;
	cleanup_free char *text = ward_spec_read_at(dirfd, WARD_CONFIG_JSON, &len, err);
	struct ward_spec *spec = text ? ward_spec_parse(text, len, bundle, err) : NULL;
	const struct ward_resources *r;

	if (!spec)
		return ward_wrap(err, "the container's effective spec");
	r = &spec->linux.resources;
	*n = r->n_devices;
	*rules = xcalloc(r->n_devices + 1, sizeof(**rules));
	if (r->n_devices)
		memcpy(*rules, r->devices, r->n_devices * sizeof(**rules));
	ward_spec_free(spec);
	return 0;
}

int ward_container_update(int rootfd, const char *id, struct ward_resources *res,
			  struct ward_err *err)
{
	struct ward_state st = {0};
	cleanup_fd int dirfd = -1;
	cleanup_fd int cgfd = -1;
	const struct ward_bpfdev_rule *rules;
	cleanup_free struct ward_bpfdev_rule *pol = NULL;
	const struct ward_config *cfg;
	size_t n_rules, n_pol = 0;
	bool devices;
	int rc = -1;

	if (open_live(rootfd, id, true, &dirfd, &st, err) < 0)
		return -1;
	/* res was parsed (ward_resources_parse_update) or filled from flags by the caller;
	 * with the limit in force filled in, its ranges are checked: a bad value, the device
	 * list too, is refused before anything is written. */
	with_current_limit(st.cgroup, res);
	if (ward_resources_check(res, err) < 0)
		goto out;
	rules = res->devices;
	n_rules = res->n_devices;
	devices = res->has_devices;
	/* A tenant's container keeps within its policy's device rules: containerd resends
	 * them (deny-all and the defaults) with every UpdateContainerResources; the same or
	 * narrower rules are applied, wider ones refused. */
	if (devices && policy_made(&st)) {
		if (policy_devices(dirfd, st.bundle, &pol, &n_pol, err) < 0)
			goto out;
		if (!devices_within(rules, n_rules, pol, n_pol)) {
			ward_fail(err, 0,
				  "tenant \"%s\": devices: linux.resources.devices allows a device "
				  "the container's policy does not; update can keep or narrow its "
				  "device rules, never widen them",
				  policy_made(&st));
			goto out;
		}
	}
	/* ward.json's missing_controllers rule, the configuration's (never a mechanism's) */
	if (!(cfg = ward_config_get(err)) ||
	    ward_cgroup_res_apply(st.cgroup, res, true, cfg->missing_controllers_warn, err) < 0)
		goto out;
	if (devices) {
		cgfd = open(st.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd < 0) {
			ward_fail_errno(err, "open cgroup %s", st.cgroup);
			goto out;
		}
		if (ward_bpfdev_apply(cgfd, rules, n_rules, err) < 0) {
			ward_wrap(err, "linux.resources.devices");
			goto out;
		}
	}
	rc = 0;
out:
	ward_state_clear(&st);
	return rc;
}

/* One stats event. Limits ward let pass unenforced (missing_controllers: warn) are listed
 * in data.unenforced, so a reader of the statistics knows what they do not show. */
static int emit_stats(const struct ward_state *st, ward_event_fn emit, void *arg,
		      struct ward_err *err)
{
	cleanup_free char *data = ward_cgroup_stats_json(st->cgroup, err);
	cleanup_free char *line = NULL;
	const char *unenforced = st->own.unenforced;

	if (!data)
		return -1;
	if (unenforced) {
		json_t *o = json_loads(data, 0, NULL), *a = json_array();
		cleanup_free char *list = xstrdup(unenforced);
		char *save = NULL;
		for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
			json_array_append_new(a, json_string(t + strspn(t, " ")));
		json_object_set_new(o, "unenforced", a);
		free(data);
		data = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(o);
	}
	line = xasprintf("{\"type\":\"stats\",\"id\":\"%s\",\"data\":%s}", st->id, data);
	return emit(line, arg) ? 1 : 0;
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int ward_container_events(int rootfd, const char *id, bool once, long interval_ms,
			  ward_event_fn emit, void *arg, struct ward_err *err)
{
	struct ward_state st = {0};
	int dirfd;
	cleanup_fd int pidfd = -1;
	cleanup_fd int ino = -1;
	cleanup_free char *events = NULL;
	cleanup_free char *oom_line = NULL;
	uint64_t ooms = 0, now_ooms;
	bool has_oom;
	long next;
	int rc = -1, r;

	if (open_live(rootfd, id, false, &dirfd, &st, err) < 0)
		return -1;
	/* Don't hold the container's lock while streaming: delete must not wait on us. */
	close(dirfd);
	if (once) {
		rc = emit_stats(&st, emit, arg, err) < 0 ? -1 : 0;
		goto out;
	}
	pidfd = ward_state_pidfd(&st);
	has_oom = ward_cgroup_oom_kills(st.cgroup, &ooms) == 0;
	if (has_oom) {
		events = xasprintf("%s/memory.events", st.cgroup);
		ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
		if (ino >= 0 && inotify_add_watch(ino, events, IN_MODIFY) < 0) {
			close(ino);
			ino = -1;
		}
	}
	oom_line = xasprintf("{\"type\":\"oom\",\"id\":\"%s\"}", id);
	next = now_ms();
	while (pidfd >= 0) {
		struct pollfd p[2] = {{.fd = pidfd, .events = POLLIN},
				      {.fd = ino, .events = POLLIN}};
		long wait;
		if (now_ms() >= next) {
			r = emit_stats(&st, emit, arg, err);
			if (r != 0) {
				rc = r < 0 ? -1 : 0;
				goto out;
			}
			next = now_ms() + interval_ms;
		}
		wait = next - now_ms();
		if (wait < 0)
			wait = 0;
		/* Without inotify, still look at memory.events once a second. */
		if (has_oom && ino < 0 && wait > 1000)
			wait = 1000;
		r = poll(p, ino >= 0 ? 2 : 1, (int)wait);
		if (r < 0 && errno != EINTR) {
			ward_fail_errno(err, "events: poll");
			goto out;
		}
		if (r > 0 && (p[1].revents & POLLIN)) {
			char buf[4096];
			while (read(ino, buf, sizeof(buf)) > 0)
				;
		}
		if (has_oom && ward_cgroup_oom_kills(st.cgroup, &now_ooms) == 0 &&
		    now_ooms > ooms) {
			ooms = now_ooms;
			if (emit(oom_line, arg)) {
				rc = 0;
				goto out;
			}
		}
		if (r > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			break; /* the init exited: the container stopped */
	}
	rc = 0;
out:
	ward_state_clear(&st);
	return rc;
}
