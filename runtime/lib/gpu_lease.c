/* The GPU lease ledger (see gpu_lease.h). Every operation: open <lib_dir>/gpu (a real
 * directory owned by root or us, not writable by others; host-wide, like the ID pool in
 * <lib_dir>, so every state root of the host shares it), take an flock on ledger.lock,
 * read ledger.json strictly (a file that does not parse or does not make sense is an error
 * naming it, never silently reset: a reset ledger would hand a dirty GPU to the next
 * tenant), change it in memory, rewrite it atomically (temp file, fsync, rename, fsync of
 * the directory).
 *
 * ledger.json:
 *   {"version": 1,
 *    "gpus": [{"uuid": "GPU-...", "state": "leased", "tenant": "a",
 *              "holders": [{"root": "/run/ward", "container": "c1", "pod": "ns/name",
 *                           "since": 1700000000}],
 *              "changed": 1700000000,
 *              "lease_seconds": 0, "wipes": 0, "wipe_failures": 0, "wipe_bytes": 0,
 *              "wipe_seconds": 0.0,
 *              "wiper": {"pid": 123, "start": 456789},          (wiping only)
 *              "reason": "...",                                (quarantined only)
 *              "last_wipe": {"ok": true, "bytes": 1, "total": 1, "seconds": 0.5,
 *                            "reason": "..."}}]}               (once wiped)
 *
 * A holder is a container of one state root: (root, container). A wiper is identified by pid
 * and process start time (proc_start_time), so a recycled pid is not mistaken for a live
 * wiper. */
#include "gpu_lease.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "state.h"
#include "util.h"

#define GPU_DIR	       "gpu" /* under lib_dir */
#define LEDGER_FILE    "ledger.json"
#define LEDGER_TMP     "ledger.json.tmp"
#define LEDGER_LOCK    "ledger.lock"
#define LEDGER_VERSION 1
/* A holder without state.json is kept this long after it leased: its create may still be
 * on its way to writing state.json (or to creating its state directory). */
#define HOLDER_GRACE 120

/* An error whose message needs no strerror(), errnum still set for callers. */
#define fail_as(err, code, ...)                                                                    \
	({                                                                                         \
		ward_fail((err), 0, __VA_ARGS__);                                                  \
		(err)->errnum = (code);                                                            \
		-1;                                                                                \
	})

static const char *const state_names[] = {
    [WARD_GPU_FREE] = "free",
    [WARD_GPU_LEASED] = "leased",
    [WARD_GPU_DIRTY] = "dirty",
    [WARD_GPU_WIPING] = "wiping",
    [WARD_GPU_QUARANTINED] = "quarantined",
};

const char *ward_gpu_state_name(enum ward_gpu_state s)
{
	if ((unsigned)s >= ARRAY_SIZE(state_names))
		return "unknown";
	return state_names[s];
}

static int state_from_name(const char *s, enum ward_gpu_state *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(state_names); i++) {
		if (!strcmp(s, state_names[i])) {
			*out = (enum ward_gpu_state)i;
			return 0;
		}
	}
	return -1;
}

/* An entry plus what only the ledger file needs: the wiper's start time. */
struct gent {
	struct ward_gpu_entry e;
	uint64_t wiper_start;
};

/* The open, locked ledger. */
struct ledger {
	const char *root;	  /* lib_dir */
	int libfd, dirfd, lockfd; /* dirfd -1: no gpu directory (read only, nothing yet) */
	struct gent *v;
	size_t n;
};

static void entry_free(struct ward_gpu_entry *e)
{
	free(e->uuid);
	free(e->tenant);
	for (size_t i = 0; i < e->n_holders; i++) {
		free(e->holders[i].root);
		free(e->holders[i].container);
		free(e->holders[i].pod);
	}
	free(e->holders);
	free(e->reason);
	free(e->last_wipe.reason);
	memset(e, 0, sizeof(*e));
}

static void ledger_close(struct ledger *L)
{
	for (size_t i = 0; i < L->n; i++)
		entry_free(&L->v[i].e);
	free(L->v);
	L->v = NULL;
	L->n = 0;
	close_fdp(&L->lockfd); /* unlocks */
	close_fdp(&L->dirfd);
	close_fdp(&L->libfd);
}

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

/* ---- validation ---- */

static bool uuid_valid(const char *u)
{
	size_t n = u ? strlen(u) : 0;
	if (n == 0 || n > 128)
		return false;
	for (const char *p = u; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.' || c == ':' || c == '/'))
			return false;
	}
	return true;
}

/* Tenant names and reasons end up in messages and JSON: no control characters. */
static bool text_valid(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > max)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

/* ---- the directory and the lock ---- */

/* Open <lib_dir>/gpu (creating both if create) and lock ledger.lock with op. With create
 * false, a missing lib_dir or gpu directory leaves L->dirfd = -1 (an empty ledger). */
static int ledger_open(const char *root, bool create, int op, struct ledger *L,
		       struct ward_err *err)
{
	struct stat st;

	*L = (struct ledger){.root = root, .libfd = -1, .dirfd = -1, .lockfd = -1};
	if (!root || root[0] != '/')
		return fail_as(err, EINVAL, "GPU ledger: lib_dir \"%s\" is not an absolute path",
			       root ? root : "");
	/* mkdir -p lib_dir (parents 0755, lib_dir itself 0700), as the ID pool does. */
	if (create && ward_mkdir_p(root, 0700, err) < 0)
		return ward_wrap(err, "GPU ledger");
	L->libfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (L->libfd < 0)
		return !create && errno == ENOENT
			   ? 0
			   : ward_fail_errno(err, "GPU ledger: open %s", root);
	if (create && mkdirat(L->libfd, GPU_DIR, 0700) < 0 && errno != EEXIST)
		return ward_fail_errno(err, "GPU ledger: create %s/%s", root, GPU_DIR);
	L->dirfd = openat(L->libfd, GPU_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (L->dirfd < 0) {
		if (!create && errno == ENOENT)
			return 0;
		if (errno == ELOOP || errno == ENOTDIR)
			return fail_as(err, errno,
				       "GPU ledger: %s/%s is not a directory (a symlink?)", root,
				       GPU_DIR);
		return ward_fail_errno(err, "GPU ledger: open %s/%s", root, GPU_DIR);
	}
	if (fstat(L->dirfd, &st) < 0)
		return ward_fail_errno(err, "GPU ledger: stat %s/%s", root, GPU_DIR);
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022))
		return fail_as(err, EPERM,
			       "GPU ledger: %s/%s is owned by uid %u with mode %04o: expected root "
			       "(or uid %u), not writable by group or others",
			       root, GPU_DIR, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			       (unsigned)geteuid());
	L->lockfd = openat(L->dirfd, LEDGER_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (L->lockfd < 0)
		return ward_fail_errno(err, "GPU ledger: open %s/%s/%s", root, GPU_DIR,
				       LEDGER_LOCK);
	while (flock(L->lockfd, op) < 0) {
		if (errno != EINTR)
			return ward_fail_errno(err, "GPU ledger: lock %s/%s/%s", root, GPU_DIR,
					       LEDGER_LOCK);
	}
	return 0;
}

/* ---- ledger.json ---- */

static int corrupt(struct ward_err *err, const struct ledger *L, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int corrupt(struct ward_err *err, const struct ledger *L, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return fail_as(err, EINVAL,
		       "GPU ledger %s/%s/%s is corrupt: %s (fix it by hand: resetting it could "
		       "hand a dirty GPU to another tenant)",
		       L->root, GPU_DIR, LEDGER_FILE, what);
}

/* The first key of o not in allowed (NULL-terminated), or NULL. */
static const char *unknown_key(json_t *o, const char *const *allowed)
{
	const char *key;
	json_t *val;

	json_object_foreach(o, key, val)
	{
		size_t i;
		for (i = 0; allowed[i]; i++)
			if (!strcmp(key, allowed[i]))
				break;
		if (!allowed[i])
			return key;
	}
	return NULL;
}

static int get_u64(json_t *o, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_i64(json_t *o, const char *key, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (int64_t)json_integer_value(v);
	return 0;
}

static int get_double(json_t *o, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v) || json_number_value(v) < 0)
		return -1;
	*out = json_number_value(v);
	return 0;
}

/* An optional string: absent or null gives NULL. */
static int get_opt_str(json_t *o, const char *key, char **out)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || !text_valid(json_string_value(v), 4096))
		return -1;
	*out = xstrdup(json_string_value(v));
	return 0;
}

static int parse_holder(const struct ledger *L, json_t *o, size_t i, size_t k,
			struct ward_gpu_holder *h, struct ward_err *err)
{
	static const char *const keys[] = {"root", "container", "pod", "since", NULL};
	json_t *c = json_object_get(o, "container"), *r = json_object_get(o, "root");
	const char *uk;

	if (!json_is_object(o))
		return corrupt(err, L, "gpus[%zu].holders[%zu]: expected an object", i, k);
	if ((uk = unknown_key(o, keys)))
		return corrupt(err, L, "gpus[%zu].holders[%zu]: unknown key \"%.64s\"", i, k, uk);
	if (!json_is_string(c) || !ward_id_valid(json_string_value(c)))
		return corrupt(err, L, "gpus[%zu].holders[%zu].container: expected a container id",
			       i, k);
	if (!json_is_string(r) || json_string_value(r)[0] != '/' ||
	    !text_valid(json_string_value(r), 4096))
		return corrupt(err, L, "gpus[%zu].holders[%zu].root: expected a state root path", i,
			       k);
	if (get_i64(o, "since", &h->since) < 0)
		return corrupt(
		    err, L, "gpus[%zu].holders[%zu].since: expected a non-negative integer", i, k);
	if (get_opt_str(o, "pod", &h->pod) < 0)
		return corrupt(err, L, "gpus[%zu].holders[%zu].pod: expected a string", i, k);
	h->container = xstrdup(json_string_value(c));
	h->root = xstrdup(json_string_value(r));
	return 0;
}

static int parse_last_wipe(const struct ledger *L, json_t *o, size_t i,
			   struct ward_gpu_wipe_result *w, struct ward_err *err)
{
	static const char *const keys[] = {"ok", "bytes", "total", "seconds", "reason", NULL};
	json_t *ok = json_object_get(o, "ok");
	const char *uk;

	if (!json_is_object(o))
		return corrupt(err, L, "gpus[%zu].last_wipe: expected an object", i);
	if ((uk = unknown_key(o, keys)))
		return corrupt(err, L, "gpus[%zu].last_wipe: unknown key \"%.64s\"", i, uk);
	if (!json_is_boolean(ok) || get_u64(o, "bytes", &w->bytes) < 0 ||
	    get_u64(o, "total", &w->total) < 0 || get_double(o, "seconds", &w->seconds) < 0)
		return corrupt(err, L,
			       "gpus[%zu].last_wipe: expected ok (boolean), bytes, total "
			       "(integers), seconds (number)",
			       i);
	w->ok = json_is_true(ok);
	if (get_opt_str(o, "reason", &w->reason) < 0)
		return corrupt(err, L, "gpus[%zu].last_wipe.reason: expected a string", i);
	return 0;
}

static bool same_holder(const struct ward_gpu_holder *h, const char *root, const char *container)
{
	return !strcmp(h->container, container) && !strcmp(h->root, root);
}

/* Parse gpus[i] into g (which the caller frees, also on failure). */
static int parse_entry(const struct ledger *L, json_t *o, size_t i, struct gent *g,
		       struct ward_err *err)
{
	static const char *const keys[] = {
	    "uuid",	     "state",  "tenant",	"holders",    "changed",
	    "lease_seconds", "wipes",  "wipe_failures", "wipe_bytes", "wipe_seconds",
	    "wiper",	     "reason", "last_wipe",	NULL};
	struct ward_gpu_entry *e = &g->e;
	json_t *uuid = json_object_get(o, "uuid"), *state = json_object_get(o, "state");
	json_t *holders = json_object_get(o, "holders"), *wiper = json_object_get(o, "wiper");
	json_t *lw = json_object_get(o, "last_wipe"), *h;
	const char *uk;
	size_t k;

	if (!json_is_object(o))
		return corrupt(err, L, "gpus[%zu]: expected an object", i);
	if ((uk = unknown_key(o, keys)))
		return corrupt(err, L, "gpus[%zu]: unknown key \"%.64s\"", i, uk);
	if (!json_is_string(uuid) || !uuid_valid(json_string_value(uuid)))
		return corrupt(err, L, "gpus[%zu].uuid: expected a GPU uuid", i);
	e->uuid = xstrdup(json_string_value(uuid));
	if (!json_is_string(state) || state_from_name(json_string_value(state), &e->state) < 0)
		return corrupt(err, L,
			       "gpus[%zu] (%s).state: expected free, leased, dirty, wiping or "
			       "quarantined",
			       i, e->uuid);
	if (get_opt_str(o, "tenant", &e->tenant) < 0)
		return corrupt(err, L, "gpus[%zu] (%s).tenant: expected a string", i, e->uuid);
	if (!json_is_array(holders))
		return corrupt(err, L, "gpus[%zu] (%s).holders: expected an array", i, e->uuid);
	e->holders = xcalloc(json_array_size(holders) + 1, sizeof(*e->holders));
	json_array_foreach(holders, k, h)
	{
		if (parse_holder(L, h, i, k, &e->holders[k], err) < 0)
			return -1;
		e->n_holders = k + 1;
		for (size_t j = 0; j < k; j++)
			if (same_holder(&e->holders[j], e->holders[k].root,
					e->holders[k].container))
				return corrupt(
				    err, L, "gpus[%zu] (%s): container \"%s\" of %s holds it twice",
				    i, e->uuid, e->holders[k].container, e->holders[k].root);
	}
	if (get_i64(o, "changed", &e->changed) < 0 ||
	    get_u64(o, "lease_seconds", &e->lease_seconds) < 0 ||
	    get_u64(o, "wipes", &e->wipes) < 0 ||
	    get_u64(o, "wipe_failures", &e->wipe_failures) < 0 ||
	    get_u64(o, "wipe_bytes", &e->wipe_bytes) < 0 ||
	    get_double(o, "wipe_seconds", &e->wipe_seconds) < 0)
		return corrupt(err, L,
			       "gpus[%zu] (%s): changed, lease_seconds, wipes, wipe_failures, "
			       "wipe_bytes, wipe_seconds: expected non-negative numbers",
			       i, e->uuid);
	if (lw && parse_last_wipe(L, lw, i, &e->last_wipe, err) < 0)
		return -1;
	if (get_opt_str(o, "reason", &e->reason) < 0)
		return corrupt(err, L, "gpus[%zu] (%s).reason: expected a string", i, e->uuid);

	/* The state and the rest must agree. */
	if ((e->state == WARD_GPU_LEASED) != (e->n_holders > 0))
		return corrupt(err, L, "gpus[%zu] (%s): %s with %zu holders", i, e->uuid,
			       ward_gpu_state_name(e->state), e->n_holders);
	if (e->state == WARD_GPU_LEASED && !e->tenant)
		return corrupt(err, L, "gpus[%zu] (%s): leased without a tenant", i, e->uuid);
	if ((e->state == WARD_GPU_QUARANTINED) != (e->reason != NULL))
		return corrupt(err, L, "gpus[%zu] (%s): a reason belongs to quarantined only", i,
			       e->uuid);
	if ((e->state == WARD_GPU_WIPING) != (wiper != NULL))
		return corrupt(err, L, "gpus[%zu] (%s): a wiper belongs to wiping only", i,
			       e->uuid);
	if (wiper) {
		static const char *const wkeys[] = {"pid", "start", NULL};
		uint64_t pid;
		if (!json_is_object(wiper) || unknown_key(wiper, wkeys) ||
		    get_u64(wiper, "pid", &pid) < 0 || pid == 0 || pid > INT32_MAX ||
		    get_u64(wiper, "start", &g->wiper_start) < 0)
			return corrupt(err, L,
				       "gpus[%zu] (%s).wiper: expected {\"pid\": N > 0, \"start\": "
				       "N}",
				       i, e->uuid);
		e->wiper = (pid_t)pid;
	}
	return 0;
}

/* Read ledger.json (missing = empty). */
static int ledger_load(struct ledger *L, struct ward_err *err)
{
	cleanup_fd int fd = -1;
	cleanup_free char *text = NULL;
	char why[160];
	json_t *root, *gpus, *o;
	size_t len, i;
	int rc = -1;

	if (L->dirfd < 0)
		return 0;
	fd = openat(L->dirfd, LEDGER_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return ward_fail_errno(err, "GPU ledger: open %s/%s/%s", L->root, GPU_DIR,
				       LEDGER_FILE);
	}
	text = read_all_fd(fd, &len, err);
	if (!text)
		return ward_wrap(err, "GPU ledger: %s/%s/%s", L->root, GPU_DIR, LEDGER_FILE);
	root = ward_json_list_file(text, len, LEDGER_VERSION, "gpus", &gpus, why, sizeof(why));
	if (!root)
		return corrupt(err, L, "%s", why);
	L->v = xcalloc(json_array_size(gpus) + 1, sizeof(*L->v));
	json_array_foreach(gpus, i, o)
	{
		L->n = i + 1;
		if (parse_entry(L, o, i, &L->v[i], err) < 0)
			goto out;
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(L->v[j].e.uuid, L->v[i].e.uuid)) {
				corrupt(err, L, "gpus[%zu] and [%zu] are both %s", j, i,
					L->v[i].e.uuid);
				goto out;
			}
		}
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

static json_t *entry_json(const struct gent *g)
{
	const struct ward_gpu_entry *e = &g->e;
	json_t *o = json_object(), *holders = json_array();

	json_object_set_new(o, "uuid", json_string(e->uuid));
	json_object_set_new(o, "state", json_string(ward_gpu_state_name(e->state)));
	if (e->tenant)
		json_object_set_new(o, "tenant", json_string(e->tenant));
	for (size_t i = 0; i < e->n_holders; i++) {
		const struct ward_gpu_holder *h = &e->holders[i];
		json_t *ho = json_pack("{s:s,s:s,s:I}", "root", h->root, "container", h->container,
				       "since", (json_int_t)h->since);
		if (h->pod)
			json_object_set_new(ho, "pod", json_string(h->pod));
		json_array_append_new(holders, ho);
	}
	json_object_set_new(o, "holders", holders);
	json_object_set_new(o, "changed", json_integer((json_int_t)e->changed));
	json_object_set_new(o, "lease_seconds", json_integer((json_int_t)e->lease_seconds));
	json_object_set_new(o, "wipes", json_integer((json_int_t)e->wipes));
	json_object_set_new(o, "wipe_failures", json_integer((json_int_t)e->wipe_failures));
	json_object_set_new(o, "wipe_bytes", json_integer((json_int_t)e->wipe_bytes));
	json_object_set_new(o, "wipe_seconds", json_real(e->wipe_seconds));
	if (e->state == WARD_GPU_WIPING)
		json_object_set_new(o, "wiper",
				    json_pack("{s:I,s:I}", "pid", (json_int_t)e->wiper, "start",
					      (json_int_t)g->wiper_start));
	if (e->state == WARD_GPU_QUARANTINED)
		json_object_set_new(o, "reason", json_string(e->reason));
	if (e->last_wipe.total || e->last_wipe.bytes || e->wipes) {
		const struct ward_gpu_wipe_result *w = &e->last_wipe;
		json_t *lw =
		    json_pack("{s:b,s:I,s:I,s:f}", "ok", w->ok, "bytes", (json_int_t)w->bytes,
			      "total", (json_int_t)w->total, "seconds", w->seconds);
		if (w->reason)
			json_object_set_new(lw, "reason", json_string(w->reason));
		json_object_set_new(o, "last_wipe", lw);
	}
	return o;
}

/* Atomic, durable rewrite: temp file, fsync, rename over ledger.json, fsync the directory.
 * A lost update could forget that a GPU is dirty or quarantined: always durable. */
static int ledger_save(const struct ledger *L, struct ward_err *err)
{
	json_t *gpus = json_array(), *j;
	cleanup_free char *text = NULL;
	cleanup_fd int fd = -1;

	for (size_t i = 0; i < L->n; i++)
		json_array_append_new(gpus, entry_json(&L->v[i]));
	j = json_pack("{s:i,s:o}", "version", LEDGER_VERSION, "gpus", gpus);
	text = json_dumps(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!text)
		return ward_fail(err, ENOMEM, "GPU ledger: encode %s", LEDGER_FILE);
	fd = openat(L->dirfd, LEDGER_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return ward_fail_errno(err, "GPU ledger: create %s/%s/%s", L->root, GPU_DIR,
				       LEDGER_TMP);
	if (write_all(fd, text, strlen(text)) < 0 || write_all(fd, "\n", 1) < 0)
		return ward_fail_errno(err, "GPU ledger: write %s/%s/%s", L->root, GPU_DIR,
				       LEDGER_TMP);
	if (fsync(fd) < 0)
		return ward_fail_errno(err, "GPU ledger: fsync %s/%s/%s", L->root, GPU_DIR,
				       LEDGER_TMP);
	if (renameat(L->dirfd, LEDGER_TMP, L->dirfd, LEDGER_FILE) < 0)
		return ward_fail_errno(err, "GPU ledger: rename %s/%s/%s to %s", L->root, GPU_DIR,
				       LEDGER_TMP, LEDGER_FILE);
	if (fsync(L->dirfd) < 0)
		return ward_fail_errno(err, "GPU ledger: fsync %s/%s", L->root, GPU_DIR);
	return 0;
}

/* ---- state changes ---- */

static struct gent *find(struct ledger *L, const char *uuid)
{
	for (size_t i = 0; i < L->n; i++)
		if (!strcmp(L->v[i].e.uuid, uuid))
			return &L->v[i];
	return NULL;
}

static struct gent *find_or_add(struct ledger *L, const char *uuid)
{
	struct gent *g = find(L, uuid);
	if (g)
		return g;
	L->v = xrealloc(L->v, (L->n + 1) * sizeof(*L->v));
	g = &L->v[L->n++];
	memset(g, 0, sizeof(*g));
	g->e.uuid = xstrdup(uuid);
	g->e.state = WARD_GPU_FREE;
	return g;
}

static void set_state(struct gent *g, enum ward_gpu_state s, int64_t now)
{
	g->e.state = s;
	g->e.changed = now;
	if (s != WARD_GPU_WIPING) {
		g->e.wiper = 0;
		g->wiper_start = 0;
	}
	if (s != WARD_GPU_QUARANTINED) {
		free(g->e.reason);
		g->e.reason = NULL;
	}
}

static bool wiper_alive(const struct gent *g)
{
	if (g->e.wiper <= 0)
		return false;
	if (g->wiper_start)
		return proc_start_time(g->e.wiper) == g->wiper_start;
	return kill(g->e.wiper, 0) == 0 || errno == EPERM;
}

/* Wiping with a dead wiper is dirty again. Returns whether anything changed. */
static bool reap_dead_wipers(struct ledger *L, int64_t now)
{
	bool changed = false;
	for (size_t i = 0; i < L->n; i++) {
		if (L->v[i].e.state == WARD_GPU_WIPING && !wiper_alive(&L->v[i])) {
			set_state(&L->v[i], WARD_GPU_DIRTY, now);
			changed = true;
		}
	}
	return changed;
}

/* Remove holders[i]; the lease time counts. The last holder leaves the GPU dirty (or free
 * when !dirty). Returns whether the GPU lost its last holder. */
static bool drop_holder(struct gent *g, size_t i, bool dirty, int64_t now)
{
	struct ward_gpu_entry *e = &g->e;
	struct ward_gpu_holder *h = &e->holders[i];

	if (now > h->since)
		e->lease_seconds += (uint64_t)(now - h->since);
	free(h->root);
	free(h->container);
	free(h->pod);
	memmove(h, h + 1, (e->n_holders - i - 1) * sizeof(*h));
	if (--e->n_holders > 0)
		return false;
	set_state(g, dirty ? WARD_GPU_DIRTY : WARD_GPU_FREE, now);
	return true;
}

/* Does the holder's container still exist? Its state directory (in its own state root)
 * has state.json, or a create is still under way: the directory is locked
 * (ward_state_create holds LOCK_EX until the container is created), or the lease is younger
 * than HOLDER_GRACE. When in doubt (an unexpected error), the holder stays: dropping it
 * could let another tenant at a GPU in use. */
static bool holder_alive(const struct ward_gpu_holder *h, int64_t now)
{
	cleanup_fd int rootfd = -1;
	cleanup_fd int fd = -1;
	struct stat st;

	if (now - h->since < HOLDER_GRACE)
		return true;
	rootfd = open(h->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return !(errno == ENOENT || errno == ENOTDIR);
	fd = openat(rootfd, h->container, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return !(errno == ENOENT || errno == ENOTDIR || errno == ELOOP);
	if (fstatat(fd, WARD_STATE_JSON, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return true;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		return true; /* EWOULDBLOCK: a create (or delete) in progress */
	return false;	     /* the lock goes with the fd */
}

/* Drop every holder whose container is gone. Returns whether anything changed. */
static bool drop_stale_holders(struct ledger *L, int64_t now)
{
	bool changed = false;
	for (size_t i = 0; i < L->n; i++) {
		struct gent *g = &L->v[i];
		for (size_t k = 0; k < g->e.n_holders;) {
			if (holder_alive(&g->e.holders[k], now)) {
				k++;
				continue;
			}
			drop_holder(g, k, true, now);
			changed = true;
		}
	}
	return changed;
}

/* `GPU "X": leased by tenant "a" (container c1)`, `... (containers c1, c2 and 3 more)`. */
static int refuse(const struct gent *g, struct ward_err *err)
{
	const struct ward_gpu_entry *e = &g->e;
	char who[512] = "";
	size_t off = 0;

	switch (e->state) {
	case WARD_GPU_LEASED:
		for (size_t i = 0; i < e->n_holders && i < 3; i++)
			off +=
			    (size_t)snprintf(who + off, off < sizeof(who) ? sizeof(who) - off : 0,
					     "%s%.100s", i ? ", " : "", e->holders[i].container);
		if (e->n_holders > 3 && off < sizeof(who))
			snprintf(who + off, sizeof(who) - off, " and %zu more", e->n_holders - 3);
		return fail_as(err, EBUSY, "GPU \"%s\": leased by tenant \"%s\" (container%s %s)",
			       e->uuid, e->tenant, e->n_holders > 1 ? "s" : "", who);
	case WARD_GPU_DIRTY:
		return fail_as(err, EBUSY,
			       "GPU \"%s\": dirty: not wiped since tenant \"%s\" used it", e->uuid,
			       e->tenant ? e->tenant : "?");
	case WARD_GPU_WIPING:
		return fail_as(err, EBUSY, "GPU \"%s\": being wiped", e->uuid);
	case WARD_GPU_QUARANTINED:
		return fail_as(err, EBUSY, "GPU \"%s\": quarantined: %s", e->uuid, e->reason);
	case WARD_GPU_FREE:
		break;
	}
	return fail_as(err, EINVAL, "GPU \"%s\": is free", e->uuid);
}

/* ---- API ---- */

int ward_gpu_lease(const char *lib_dir, const char *state_root, const char *tenant,
		   const char *container, const char *pod, char *const *uuids, size_t n,
		   struct ward_err *err)
{
	struct ledger L;
	bool changed;
	int64_t now = now_s();
	int rc = -1;

	if (!text_valid(tenant, 256))
		return fail_as(err, EINVAL, "GPU lease: invalid tenant name");
	if (!ward_id_valid(container))
		return fail_as(err, EINVAL, "GPU lease: invalid container id \"%.100s\"",
			       container ? container : "");
	if (!state_root || state_root[0] != '/' || !text_valid(state_root, 4096))
		return fail_as(err, EINVAL,
			       "GPU lease: state root \"%.200s\" is not an absolute path",
			       state_root ? state_root : "");
	if (pod && !text_valid(pod, 1024))
		return fail_as(err, EINVAL, "GPU lease: container %s: invalid pod name", container);
	for (size_t i = 0; i < n; i++)
		if (!uuid_valid(uuids[i]))
			return fail_as(err, EINVAL, "GPU lease: invalid GPU uuid \"%.140s\"",
				       uuids[i] ? uuids[i] : "");
	if (ledger_open(lib_dir, true, LOCK_EX, &L, err) < 0)
		goto out;
	if (ledger_load(&L, err) < 0)
		goto out;
	changed = reap_dead_wipers(&L, now);
	changed |= drop_stale_holders(&L, now);

	/* All or nothing: check every GPU before changing any. */
	for (size_t i = 0; i < n; i++) {
		struct gent *g = find(&L, uuids[i]);
		if (!g || g->e.state == WARD_GPU_FREE)
			continue;
		if (g->e.state == WARD_GPU_LEASED && !strcmp(g->e.tenant, tenant))
			continue;
		refuse(g, err);
		/* Stale holders found on the way are gone either way: record that. */
		if (changed) {
			struct ward_err e2 = {0};
			(void)ledger_save(&L, &e2);
		}
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct gent *g = find_or_add(&L, uuids[i]);
		struct ward_gpu_entry *e = &g->e;
		bool held = false;

		for (size_t k = 0; k < e->n_holders && !held; k++)
			held = same_holder(&e->holders[k], state_root, container);
		if (held)
			continue;
		if (e->state != WARD_GPU_LEASED) {
			set_state(g, WARD_GPU_LEASED, now);
			free(e->tenant);
			e->tenant = xstrdup(tenant);
		}
		e->holders = xrealloc(e->holders, (e->n_holders + 1) * sizeof(*e->holders));
		e->holders[e->n_holders++] =
		    (struct ward_gpu_holder){.root = xstrdup(state_root),
					     .container = xstrdup(container),
					     .pod = pod ? xstrdup(pod) : NULL,
					     .since = now};
		changed = true;
	}
	rc = changed ? ledger_save(&L, err) : 0;
out:
	ledger_close(&L);
	return rc;
}

int ward_gpu_unlease(const char *lib_dir, const char *state_root, const char *container, bool dirty,
		     char ***released, struct ward_err *err)
{
	struct ledger L;
	char **out = xcalloc(1, sizeof(char *));
	bool changed = false;
	int64_t now = now_s();
	int rc = -1;

	if (released)
		*released = NULL;
	if (!ward_id_valid(container)) {
		strv_free(out);
		return fail_as(err, EINVAL, "GPU unlease: invalid container id \"%.100s\"",
			       container ? container : "");
	}
	if (!state_root) {
		strv_free(out);
		return fail_as(err, EINVAL, "GPU unlease: no state root");
	}
	if (ledger_open(lib_dir, true, LOCK_EX, &L, err) < 0 || ledger_load(&L, err) < 0)
		goto out;
	for (size_t i = 0; i < L.n; i++) {
		struct gent *g = &L.v[i];
		for (size_t k = 0; k < g->e.n_holders; k++) {
			if (!same_holder(&g->e.holders[k], state_root, container))
				continue;
			if (drop_holder(g, k, dirty, now))
				out = strv_append(out, g->e.uuid);
			changed = true;
			break;
		}
	}
	rc = changed ? ledger_save(&L, err) : 0;
out:
	ledger_close(&L);
	if (rc == 0 && released)
		*released = steal_ptr(out);
	strv_free(out);
	return rc;
}

/* One change to one GPU's entry: open the ledger (creating it), lock it exclusively, load
 * it, reap the wipers that died (reap), then change(); the ledger is saved when change()
 * returns 1 (0: nothing to save, -1: refused with err set). */
typedef int (*ledger_change_fn)(struct ledger *L, int64_t now, const void *arg,
				struct ward_err *err);

static int ledger_change(const char *lib_dir, bool reap, ledger_change_fn change, const void *arg,
			 struct ward_err *err)
{
	struct ledger L;
	int64_t now = now_s();
	int rc = -1;

	if (ledger_open(lib_dir, true, LOCK_EX, &L, err) == 0 && ledger_load(&L, err) == 0) {
		if (reap)
			reap_dead_wipers(&L, now);
		rc = change(&L, now, arg, err);
		if (rc > 0)
			rc = ledger_save(&L, err);
	}
	ledger_close(&L);
	return rc;
}

struct wipe_begin {
	const char *uuid;
	pid_t pid;
	uint64_t start;
};

static int wipe_begin(struct ledger *L, int64_t now, const void *arg, struct ward_err *err)
{
	const struct wipe_begin *w = arg;
	struct gent *g = find(L, w->uuid);

	if (!g || (g->e.state != WARD_GPU_DIRTY && g->e.state != WARD_GPU_QUARANTINED)) {
		if (!g || g->e.state == WARD_GPU_FREE)
			return fail_as(err, EINVAL, "GPU \"%s\": wipe: not dirty (free)", w->uuid);
		refuse(g, err);
		return ward_wrap(err, "cannot wipe");
	}
	set_state(g, WARD_GPU_WIPING, now);
	g->e.wiper = w->pid;
	g->wiper_start = w->start;
	return 1;
}

int ward_gpu_wipe_begin(const char *lib_dir, const char *uuid, pid_t pid, struct ward_err *err)
{
	struct wipe_begin w = {uuid, pid, 0};

	if (!uuid_valid(uuid))
		return fail_as(err, EINVAL, "GPU wipe: invalid GPU uuid \"%.140s\"",
			       uuid ? uuid : "");
	if (pid <= 0 || (w.start = proc_start_time(pid)) == 0)
		return fail_as(err, ESRCH, "GPU \"%s\": wipe: no process %d", uuid, (int)pid);
	return ledger_change(lib_dir, true, wipe_begin, &w, err);
}

struct wipe_end {
	const char *uuid;
	const struct ward_gpu_wipe_result *r;
};

static int wipe_end(struct ledger *L, int64_t now, const void *arg, struct ward_err *err)
{
	const struct wipe_end *w = arg;
	const struct ward_gpu_wipe_result *r = w->r;
	struct gent *g = find(L, w->uuid);

	if (!g || g->e.state != WARD_GPU_WIPING)
		return fail_as(err, EINVAL, "GPU \"%s\": wipe end: not being wiped (%s)", w->uuid,
			       ward_gpu_state_name(g ? g->e.state : WARD_GPU_FREE));
	g->e.wipes++;
	g->e.wipe_bytes += r->bytes;
	g->e.wipe_seconds += r->seconds > 0 ? r->seconds : 0;
	free(g->e.last_wipe.reason);
	g->e.last_wipe = *r;
	g->e.last_wipe.seconds = r->seconds > 0 ? r->seconds : 0;
	g->e.last_wipe.reason = NULL;
	if (r->ok) {
		set_state(g, WARD_GPU_FREE, now);
	} else {
		const char *why = text_valid(r->reason, 4096) ? r->reason : "wipe failed";
		g->e.wipe_failures++;
		g->e.last_wipe.reason = xstrdup(why);
		set_state(g, WARD_GPU_QUARANTINED, now);
		g->e.reason = xstrdup(why);
	}
	return 1;
}

int ward_gpu_wipe_end(const char *lib_dir, const char *uuid, const struct ward_gpu_wipe_result *r,
		      struct ward_err *err)
{
	struct wipe_end w = {uuid, r};

	if (!uuid_valid(uuid))
		return fail_as(err, EINVAL, "GPU wipe: invalid GPU uuid \"%.140s\"",
			       uuid ? uuid : "");
	/* No reaping here: the wiper may be a child that has exited by now. */
	return ledger_change(lib_dir, false, wipe_end, &w, err);
}

static int release(struct ledger *L, int64_t now, const void *arg, struct ward_err *err)
{
	struct gent *g = find(L, arg);

	if (!g || g->e.state == WARD_GPU_FREE)
		return 0; /* nothing to do */
	if (g->e.state == WARD_GPU_LEASED || g->e.state == WARD_GPU_WIPING) {
		refuse(g, err);
		return ward_wrap(err, "release");
	}
	set_state(g, WARD_GPU_FREE, now);
	return 1;
}

int ward_gpu_release(const char *lib_dir, const char *uuid, struct ward_err *err)
{
	if (!uuid_valid(uuid))
		return fail_as(err, EINVAL, "GPU release: invalid GPU uuid \"%.140s\"",
			       uuid ? uuid : "");
	return ledger_change(lib_dir, true, release, uuid, err);
}

int ward_gpu_ledger_read(const char *lib_dir, struct ward_gpu_ledger *out, struct ward_err *err)
{
	struct ledger L;
	int rc = -1;

	out->e = NULL;
	out->n = 0;
	if (ledger_open(lib_dir, false, LOCK_SH, &L, err) < 0 || ledger_load(&L, err) < 0)
		goto out;
	reap_dead_wipers(&L, now_s()); /* in the snapshot only */
	out->e = xcalloc(L.n + 1, sizeof(*out->e));
	for (size_t i = 0; i < L.n; i++)
		out->e[i] = L.v[i].e; /* moved */
	out->n = L.n;
	L.n = 0;
	rc = 0;
out:
	ledger_close(&L);
	return rc;
}

void ward_gpu_ledger_clear(struct ward_gpu_ledger *l)
{
	for (size_t i = 0; i < l->n; i++)
		entry_free(&l->e[i]);
	free(l->e);
	l->e = NULL;
	l->n = 0;
}

const struct ward_gpu_entry *ward_gpu_ledger_find(const struct ward_gpu_ledger *l, const char *uuid)
{
	for (size_t i = 0; uuid && i < l->n; i++)
		if (!strcmp(l->e[i].uuid, uuid))
			return &l->e[i];
	return NULL;
}
