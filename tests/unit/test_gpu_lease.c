/* Unit tests: the GPU lease ledger (<lib_dir>/gpu/ledger.json under flock). Every test
 * works in its own state root under a mkdtemp directory; the concurrency tests fork 8
 * processes that lease one GPU at once. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_lease.h"
#include "tap.h"
#include "util.h"

static char top[] = "/tmp/ward-gpu-lease-XXXXXX";

/* A fresh state root <top>/<name> (created 0711 like ward's). */
static char *new_root(const char *name)
{
	char *p = xasprintf("%s/%s", top, name);
	if (mkdir(p, 0711) < 0)
		printf("# mkdir %s: %s\n", p, strerror(errno));
	return p;
}

static char *ledger_path(const char *root)
{
	return xasprintf("%s/gpu/ledger.json", root);
}

static char *file_text(const char *path)
{
	struct ward_err err = {0};
	return read_file_at(AT_FDCWD, path, NULL, &err);
}

static void put_file(const char *path, const char *text)
{
	struct ward_err err = {0};
	if (write_file_at(AT_FDCWD, path, O_CREAT | O_TRUNC, 0600, text, strlen(text), &err) < 0)
		printf("# cannot write %s: %s\n", path, err.msg);
}

/* A container's state directory, with state.json when with_state. */
static void mk_container(const char *root, const char *id, bool with_state)
{
	cleanup_free char *dir = xasprintf("%s/%s", root, id);
	cleanup_free char *st = xasprintf("%s/state.json", dir);
	if (mkdir(dir, 0711) < 0 && errno != EEXIST)
		printf("# mkdir %s: %s\n", dir, strerror(errno));
	if (with_state)
		put_file(st, "{}");
	else
		unlink(st);
}

/* Move every holder's "since" secs into the past (past the grace period). */
static void age_holders(const char *root, int64_t secs)
{
	cleanup_free char *path = ledger_path(root);
	cleanup_free char *text = file_text(path);
	cleanup_free char *out = NULL;
	json_t *j = text ? json_loads(text, 0, NULL) : NULL, *g, *h;
	size_t i, k;

	json_array_foreach(json_object_get(j, "gpus"), i, g)
	{
		json_array_foreach(json_object_get(g, "holders"), k, h)
		{
			json_int_t s = json_integer_value(json_object_get(h, "since"));
			json_object_set_new(h, "since", json_integer(s > secs ? s - secs : 0));
		}
	}
	out = j ? json_dumps(j, 0) : NULL;
	json_decref(j);
	if (out)
		put_file(path, out);
	else
		printf("# cannot age holders in %s\n", path);
}

/* A copy of the GPU's entry (state FREE with uuid NULL when absent or unreadable). */
struct snap {
	struct ward_gpu_ledger l;
	const struct ward_gpu_entry *e;
	bool ok;
};

static void snap_free(struct snap *s)
{
	ward_gpu_ledger_clear(&s->l);
}
#define cleanup_snap __attribute__((cleanup(snap_free)))

static struct snap get(const char *root, const char *uuid)
{
	struct ward_err err = {0};
	struct snap s = {0};
	s.ok = ward_gpu_ledger_read(root, &s.l, &err) == 0;
	if (!s.ok)
		printf("# ledger read: %s\n", err.msg);
	s.e = ward_gpu_ledger_find(&s.l, uuid);
	return s;
}

static enum ward_gpu_state state_of(const char *root, const char *uuid)
{
	cleanup_snap struct snap s = get(root, uuid);
	return s.e ? s.e->state : WARD_GPU_FREE;
}

static int lease1(const char *root, const char *tenant, const char *c, const char *uuid,
		  struct ward_err *err)
{
	char *u[] = {(char *)uuid};
	return ward_gpu_lease(root, root, tenant, c, NULL, u, 1, err);
}

static void test_basics(void)
{
	cleanup_free char *root = new_root("basics");
	cleanup_free char *lp = ledger_path(root);
	cleanup_free char *gd = xasprintf("%s/gpu", root);
	char *uuids[] = {"GPU-1", "GPU-2"};
	struct ward_err err = {0};
	char **rel = NULL;
	struct stat st;

	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.ok && s.l.n == 0, "no ledger yet: read gives an empty ledger");
		CHECK(stat(gd, &st) < 0 && errno == ENOENT, "reading creates nothing");
	}
	CHECK(ward_gpu_lease(root, root, "a", "c1", "ns/web", uuids, 2, &err) == 0, "lease 2 GPUs");
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		const struct ward_gpu_entry *e2 = ward_gpu_ledger_find(&s.l, "GPU-2");
		CHECK(s.e && s.e->state == WARD_GPU_LEASED && !strcmp(s.e->tenant, "a"),
		      "GPU-1 leased by tenant a");
		CHECK(s.e && s.e->n_holders == 1 && !strcmp(s.e->holders[0].container, "c1") &&
			  s.e->holders[0].pod && !strcmp(s.e->holders[0].pod, "ns/web") &&
			  s.e->holders[0].since > 0,
		      "holder c1 with its pod and since");
		CHECK(e2 && e2->state == WARD_GPU_LEASED, "GPU-2 leased too");
		CHECK(!ward_gpu_ledger_find(&s.l, "GPU-3"), "other GPUs are not in the ledger");
	}
	CHECK(stat(gd, &st) == 0 && (st.st_mode & 07777) == 0700, "gpu dir is 0700");
	CHECK(stat(lp, &st) == 0 && (st.st_mode & 07777) == 0600, "ledger.json is 0600");
	CHECK(ward_gpu_lease(root, root, "a", "c1", "ns/web", uuids, 2, &err) == 0,
	      "leasing again to the same container is fine");
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->n_holders == 1, "... and a no-op (still one holder)");
	}
	CHECK(ward_gpu_unlease(root, root, "c1", true, &rel, &err) == 0, "unlease c1");
	CHECK(rel && strv_len(rel) == 2 && !strcmp(rel[0], "GPU-1") && !strcmp(rel[1], "GPU-2"),
	      "released lists both GPUs");
	strv_free(rel);
	rel = NULL;
	CHECK(state_of(root, "GPU-1") == WARD_GPU_DIRTY &&
		  state_of(root, "GPU-2") == WARD_GPU_DIRTY,
	      "last holder gone: both dirty");
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->tenant && !strcmp(s.e->tenant, "a") && s.e->n_holders == 0,
		      "dirty remembers tenant a, no holders");
	}
	CHECK(ward_gpu_unlease(root, root, "c1", true, &rel, &err) == 0 && rel && !rel[0],
	      "unlease of nothing: ok, released empty");
	strv_free(rel);
	CHECK(ward_gpu_unlease(root, root, "nobody", true, NULL, &err) == 0,
	      "unlease with released NULL is fine");
	CHECK(lease1(root, "a", "../c1", "GPU-9", &err) < 0 && err.errnum == EINVAL,
	      "an invalid container id is refused");
	CHECK(lease1(root, "a", "c1", "GPU \"9\"", &err) < 0 && err.errnum == EINVAL,
	      "an invalid uuid is refused");
	CHECK(lease1(root, "", "c1", "GPU-9", &err) < 0 && err.errnum == EINVAL,
	      "an empty tenant is refused");
	CHECK(lease1("relative/root", "a", "c1", "GPU-9", &err) < 0,
	      "a relative state root is refused");
}

static void test_all_or_nothing(void)
{
	cleanup_free char *root = new_root("all-or-nothing");
	char *uuids[] = {"GPU-1", "GPU-2", "GPU-3"};
	struct ward_err err = {0};

	CHECK(lease1(root, "b", "c2", "GPU-2", &err) == 0, "tenant b leases GPU-2");
	CHECK(ward_gpu_lease(root, root, "a", "c1", NULL, uuids, 3, &err) < 0,
	      "tenant a asks for GPU-1..3: refused");
	CHECK_STR_CONTAINS(err.msg, "GPU \"GPU-2\": leased by tenant \"b\" (container c2)",
			   "error names the GPU, the tenant and the container");
	CHECK(err.errnum == EBUSY, "errnum EBUSY");
	CHECK(state_of(root, "GPU-1") == WARD_GPU_FREE && state_of(root, "GPU-3") == WARD_GPU_FREE,
	      "GPU-1 and GPU-3 were not leased");
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.ok && s.l.n == 1, "the ledger still has only GPU-2");
	}
}

static void test_sharing(void)
{
	cleanup_free char *root = new_root("sharing");
	struct ward_err err = {0};
	char **rel = NULL;

	CHECK(lease1(root, "a", "c1", "GPU-1", &err) == 0, "a/c1 leases GPU-1");
	CHECK(lease1(root, "a", "c2", "GPU-1", &err) == 0, "a/c2 shares GPU-1 (same tenant)");
	CHECK(lease1(root, "b", "c3", "GPU-1", &err) < 0, "b/c3 is refused");
	CHECK_STR_CONTAINS(err.msg, "GPU \"GPU-1\": leased by tenant \"a\" (containers c1, c2)",
			   "error lists the holders");
	age_holders(root, 100);
	CHECK(ward_gpu_unlease(root, root, "c1", true, &rel, &err) == 0 && rel && !rel[0],
	      "c1 leaves: not the last holder, nothing released");
	strv_free(rel);
	rel = NULL;
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->state == WARD_GPU_LEASED && s.e->n_holders == 1 &&
			  !strcmp(s.e->holders[0].container, "c2"),
		      "still leased by c2");
		CHECK(s.e && s.e->lease_seconds >= 100 && s.e->lease_seconds < 200,
		      "c1's 100 s lease counted");
	}
	CHECK(ward_gpu_unlease(root, root, "c2", true, &rel, &err) == 0 && rel && rel[0] &&
		  !strcmp(rel[0], "GPU-1") && !rel[1],
	      "c2 leaves: GPU-1 released");
	strv_free(rel);
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->state == WARD_GPU_DIRTY, "last holder gone: dirty");
		CHECK(s.e && s.e->lease_seconds >= 200, "both leases counted");
	}
	CHECK(lease1(root, "b", "c3", "GPU-1", &err) < 0, "dirty: refused to tenant b");
	CHECK_STR_CONTAINS(err.msg, "GPU \"GPU-1\": dirty: not wiped since tenant \"a\" used it",
			   "error says dirty and names the last tenant");
	CHECK(lease1(root, "a", "c4", "GPU-1", &err) < 0, "dirty: refused to tenant a too");

	/* dirty = false: a create that failed before running anything. */
	CHECK(lease1(root, "a", "c5", "GPU-2", &err) == 0, "a/c5 leases GPU-2");
	CHECK(ward_gpu_unlease(root, root, "c5", false, &rel, &err) == 0 && rel && rel[0] &&
		  !strcmp(rel[0], "GPU-2"),
	      "unlease with dirty=false");
	strv_free(rel);
	CHECK(state_of(root, "GPU-2") == WARD_GPU_FREE, "dirty=false: GPU-2 is free");
	CHECK(lease1(root, "b", "c6", "GPU-2", &err) == 0, "and tenant b can lease it");
}

static void test_wipe(void)
{
	cleanup_free char *root = new_root("wipe");
	struct ward_err err = {0};
	struct ward_gpu_wipe_result ok = {.ok = true, .bytes = 1000, .total = 2000, .seconds = 1.5};
	struct ward_gpu_wipe_result bad = {
	    .ok = false, .bytes = 10, .total = 2000, .seconds = 0.5, .reason = "busy: 1 MiB held"};

	CHECK(ward_gpu_wipe_begin(root, "GPU-1", getpid(), &err) < 0,
	      "wipe_begin of a free GPU is refused");
	CHECK(lease1(root, "a", "c1", "GPU-1", &err) == 0, "lease");
	CHECK(ward_gpu_wipe_begin(root, "GPU-1", getpid(), &err) < 0,
	      "wipe_begin of a leased GPU is refused");
	CHECK_STR_CONTAINS(err.msg, "leased by tenant \"a\"", "... saying leased by whom");
	CHECK(ward_gpu_unlease(root, root, "c1", true, NULL, &err) == 0, "unlease: dirty");
	CHECK(ward_gpu_wipe_end(root, "GPU-1", &ok, &err) < 0,
	      "wipe_end without wipe_begin is refused");
	CHECK(ward_gpu_wipe_begin(root, "GPU-1", getpid(), &err) == 0, "wipe_begin");
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->state == WARD_GPU_WIPING && s.e->wiper == getpid(),
		      "wiping, by us");
	}
	CHECK(lease1(root, "a", "c2", "GPU-1", &err) < 0, "lease while wiping: refused");
	CHECK_STR_CONTAINS(err.msg, "GPU \"GPU-1\": being wiped", "... being wiped");
	CHECK(ward_gpu_wipe_begin(root, "GPU-1", getpid(), &err) < 0,
	      "a second wipe_begin is refused");
	CHECK(ward_gpu_release(root, "GPU-1", &err) < 0,
	      "release while a live wiper runs: refused");
	CHECK(ward_gpu_wipe_end(root, "GPU-1", &ok, &err) == 0, "wipe_end ok");
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->state == WARD_GPU_FREE && s.e->wiper == 0, "ok wipe: free");
		CHECK(s.e && s.e->wipes == 1 && s.e->wipe_failures == 0 &&
			  s.e->wipe_bytes == 1000 && s.e->wipe_seconds > 1.49 &&
			  s.e->wipe_seconds < 1.51,
		      "counters: 1 wipe, 1000 bytes, 1.5 s");
		CHECK(s.e && s.e->last_wipe.ok && s.e->last_wipe.total == 2000 &&
			  s.e->last_wipe.bytes == 1000 && !s.e->last_wipe.reason,
		      "last_wipe recorded");
	}
	CHECK(lease1(root, "b", "c3", "GPU-1", &err) == 0, "after the wipe tenant b can lease it");
	CHECK(ward_gpu_unlease(root, root, "c3", true, NULL, &err) == 0 &&
		  ward_gpu_wipe_begin(root, "GPU-1", getpid(), &err) == 0,
	      "unlease, wipe again");
	CHECK(ward_gpu_wipe_end(root, "GPU-1", &bad, &err) == 0, "wipe_end with a failure");
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->state == WARD_GPU_QUARANTINED && s.e->reason &&
			  !strcmp(s.e->reason, "busy: 1 MiB held"),
		      "failed wipe: quarantined with the reason");
		CHECK(s.e && s.e->wipes == 2 && s.e->wipe_failures == 1 &&
			  s.e->wipe_bytes == 1010 && s.e->wipe_seconds > 1.99 &&
			  s.e->wipe_seconds < 2.01,
		      "counters: 2 wipes, 1 failure, 1010 bytes, 2 s");
		CHECK(s.e && !s.e->last_wipe.ok && s.e->last_wipe.reason &&
			  !strcmp(s.e->last_wipe.reason, "busy: 1 MiB held"),
		      "last_wipe: the failure");
		CHECK(s.e && s.e->tenant && !strcmp(s.e->tenant, "b"),
		      "quarantined remembers the last tenant");
	}
	CHECK(lease1(root, "b", "c4", "GPU-1", &err) < 0, "quarantined: refused");
	CHECK_STR_CONTAINS(err.msg, "GPU \"GPU-1\": quarantined: busy: 1 MiB held",
			   "... with the reason");
	/* ward gpu release: an admin's new wipe of a quarantined GPU; it fails again here */
	CHECK(ward_gpu_wipe_begin(root, "GPU-1", getpid(), &err) == 0,
	      "wipe_begin of a quarantined GPU (an admin's new wipe)");
	CHECK(state_of(root, "GPU-1") == WARD_GPU_WIPING, "wiping");
	CHECK(ward_gpu_wipe_end(root, "GPU-1", &bad, &err) == 0 &&
		  state_of(root, "GPU-1") == WARD_GPU_QUARANTINED,
	      "a failed new wipe: quarantined again");
	CHECK(ward_gpu_release(root, "GPU-1", &err) == 0, "release from quarantine");
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->state == WARD_GPU_FREE && !s.e->reason, "free, reason gone");
		CHECK(s.e && s.e->wipes == 3 && s.e->wipe_failures == 2, "counters survive");
	}
	CHECK(lease1(root, "a", "c5", "GPU-1", &err) == 0, "and it can be leased again");
}

static void test_release_quarantine(void)
{
	cleanup_free char *root = new_root("release");
	struct ward_err err = {0};

	CHECK(lease1(root, "a", "c1", "GPU-1", &err) == 0, "lease");
	CHECK(ward_gpu_release(root, "GPU-1", &err) < 0, "release while leased: refused");
	CHECK_STR_CONTAINS(err.msg, "leased by tenant \"a\" (container c1)",
			   "... names the holder");
	CHECK(state_of(root, "GPU-1") == WARD_GPU_LEASED, "still leased");
	CHECK(ward_gpu_unlease(root, root, "c1", true, NULL, &err) == 0, "unlease: dirty");
	CHECK(ward_gpu_release(root, "GPU-1", &err) == 0 &&
		  state_of(root, "GPU-1") == WARD_GPU_FREE,
	      "release of a dirty GPU: free");
	CHECK(ward_gpu_release(root, "GPU-1", &err) == 0, "release of a free GPU: no-op");
}

static void test_stale_holder(void)
{
	cleanup_free char *root = new_root("stale");
	cleanup_free char *c1dir = xasprintf("%s/c1", root);
	struct ward_err err = {0};
	int lfd;

	CHECK(lease1(root, "a", "c1", "GPU-1", &err) == 0, "a/c1 leases (no state dir yet)");
	CHECK(lease1(root, "b", "c2", "GPU-1", &err) < 0 &&
		  state_of(root, "GPU-1") == WARD_GPU_LEASED,
	      "a fresh lease without state.json is kept (its create is under way)");
	mk_container(root, "c1", true);
	age_holders(root, 1000);
	CHECK(lease1(root, "b", "c2", "GPU-1", &err) < 0, "c1 has state.json: b refused");
	CHECK_STR_CONTAINS(err.msg, "leased by tenant \"a\"", "... as leased");
	mk_container(root, "c1", false);
	lfd = open(c1dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(lfd >= 0 && flock(lfd, LOCK_EX) == 0, "lock c1's state dir (a create under way)");
	CHECK(lease1(root, "b", "c2", "GPU-1", &err) < 0 &&
		  state_of(root, "GPU-1") == WARD_GPU_LEASED,
	      "no state.json but the dir is locked: c1 kept");
	if (lfd >= 0)
		close(lfd);
	CHECK(lease1(root, "b", "c2", "GPU-1", &err) < 0, "c1 gone: b is still refused");
	CHECK_STR_CONTAINS(err.msg, "GPU \"GPU-1\": dirty: not wiped since tenant \"a\" used it",
			   "... because c1 was dropped and GPU-1 is dirty");
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->state == WARD_GPU_DIRTY && s.e->n_holders == 0,
		      "the drop was written: dirty, no holders");
		CHECK(s.e && s.e->lease_seconds >= 1000, "the dropped lease's time counted");
	}

	/* No state dir at all, lease older than the grace period. */
	CHECK(lease1(root, "a", "c3", "GPU-2", &err) == 0, "a/c3 leases GPU-2");
	CHECK(lease1(root, "a", "c4", "GPU-2", &err) == 0, "a/c4 shares GPU-2");
	mk_container(root, "c4", true);
	age_holders(root, 1000);
	CHECK(lease1(root, "a", "c5", "GPU-2", &err) == 0,
	      "a/c5 leases GPU-2: c3 dropped, c4 alive");
	{
		cleanup_snap struct snap s = get(root, "GPU-2");
		CHECK(s.e && s.e->state == WARD_GPU_LEASED && s.e->n_holders == 2 &&
			  !strcmp(s.e->holders[0].container, "c4") &&
			  !strcmp(s.e->holders[1].container, "c5"),
		      "holders are c4 and c5");
	}
}

static void test_dead_wiper(void)
{
	cleanup_free char *root = new_root("dead-wiper");
	cleanup_free char *lp = ledger_path(root);
	struct ward_err err = {0};
	pid_t child;
	int status;

	CHECK(lease1(root, "a", "c1", "GPU-1", &err) == 0 &&
		  ward_gpu_unlease(root, root, "c1", true, NULL, &err) == 0,
	      "GPU-1 dirty");
	fflush(stdout);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK(ward_gpu_wipe_begin(root, "GPU-1", child, &err) == 0, "a child wipes GPU-1");
	CHECK(state_of(root, "GPU-1") == WARD_GPU_WIPING, "wiping while it lives");
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	{
		cleanup_snap struct snap s = get(root, "GPU-1");
		CHECK(s.e && s.e->state == WARD_GPU_DIRTY && s.e->wiper == 0,
		      "the wiper died: reads as dirty");
	}
	CHECK(lease1(root, "a", "c2", "GPU-1", &err) < 0, "a dead wiper's GPU is still refused");
	CHECK_STR_CONTAINS(err.msg, "dirty", "... as dirty");
	CHECK(ward_gpu_wipe_begin(root, "GPU-1", getpid(), &err) == 0,
	      "wipe_begin takes over from the dead wiper");
	CHECK(state_of(root, "GPU-1") == WARD_GPU_WIPING, "wiping by us");

	/* A recycled pid: our pid, another start time. */
	{
		cleanup_free char *text = file_text(lp);
		json_t *j = text ? json_loads(text, 0, NULL) : NULL;
		json_t *w = json_object_get(json_array_get(json_object_get(j, "gpus"), 0), "wiper");
		cleanup_free char *out = NULL;
		json_object_set_new(
		    w, "start", json_integer(json_integer_value(json_object_get(w, "start")) + 1));
		out = j ? json_dumps(j, 0) : NULL;
		if (out)
			put_file(lp, out);
		json_decref(j);
	}
	CHECK(state_of(root, "GPU-1") == WARD_GPU_DIRTY,
	      "a live pid with another start time is not the wiper: dirty");
	CHECK(ward_gpu_release(root, "GPU-1", &err) == 0, "release of a dead wiper's GPU");
	CHECK(lease1(root, "a", "c3", "GPU-2", &err) == 0 &&
		  ward_gpu_unlease(root, root, "c3", true, NULL, &err) == 0,
	      "GPU-2 dirty");
	CHECK(ward_gpu_wipe_begin(root, "GPU-2", child, &err) < 0 && err.errnum == ESRCH,
	      "wipe_begin with a pid that does not exist: refused");
}

static void test_corrupt(void)
{
	static const char *const cases[][2] = {
	    {"{not json", "not JSON"},
	    {"", "empty"},
	    {"[]", "not an object"},
	    {"{\"version\": 2, \"gpus\": []}", "wrong version"},
	    {"{\"version\": 1, \"gpus\": [], \"extra\": 1}", "unknown top-level key"},
	    {"{\"version\": 1, \"gpus\": [{\"uuid\": \"GPU-1\", \"state\": \"leased\", "
	     "\"tenant\": \"a\", \"holders\": [], \"changed\": 1, \"lease_seconds\": 0, "
	     "\"wipes\": 0, \"wipe_failures\": 0, \"wipe_bytes\": 0, \"wipe_seconds\": 0}]}",
	     "leased without holders"},
	    {"{\"version\": 1, \"gpus\": [{\"uuid\": \"GPU-1\", \"state\": \"shiny\", "
	     "\"holders\": [], \"changed\": 1, \"lease_seconds\": 0, \"wipes\": 0, "
	     "\"wipe_failures\": 0, \"wipe_bytes\": 0, \"wipe_seconds\": 0}]}",
	     "unknown state"},
	    {"{\"version\": 1, \"gpus\": [{\"uuid\": \"GPU-1\", \"state\": \"dirty\", "
	     "\"holders\": [], \"changed\": 1}]}",
	     "counters missing"},
	    {"{\"version\": 1, \"gpus\": [{\"uuid\": \"GPU-1\", \"state\": \"wiping\", "
	     "\"holders\": [], \"changed\": 1, \"lease_seconds\": 0, \"wipes\": 0, "
	     "\"wipe_failures\": 0, \"wipe_bytes\": 0, \"wipe_seconds\": 0}]}",
	     "wiping without a wiper"},
	    {"{\"version\": 1, \"gpus\": [{\"uuid\": \"GPU-1\", \"state\": \"leased\", "
	     "\"tenant\": \"a\", \"holders\": [{\"container\": \"../x\", \"since\": 1}], "
	     "\"changed\": 1, \"lease_seconds\": 0, \"wipes\": 0, \"wipe_failures\": 0, "
	     "\"wipe_bytes\": 0, \"wipe_seconds\": 0}]}",
	     "holder with a bad container id"},
	};
	cleanup_free char *root = new_root("corrupt");
	cleanup_free char *lp = ledger_path(root);
	struct ward_err err = {0};

	CHECK(lease1(root, "a", "c0", "GPU-0", &err) == 0, "create the ledger");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_free char *name = NULL;
		cleanup_free char *after = NULL;
		struct ward_gpu_ledger l = {0};
		char **rel = NULL;

		put_file(lp, cases[i][0]);
		name = xasprintf("%s: lease fails", cases[i][1]);
		CHECK(lease1(root, "b", "c1", "GPU-1", &err) < 0 && err.errnum == EINVAL, name);
		free(name);
		name = xasprintf("%s: the error names the file and says corrupt", cases[i][1]);
		CHECK(strstr(err.msg, lp) && strstr(err.msg, "corrupt"), name);
		if (!(strstr(err.msg, lp) && strstr(err.msg, "corrupt")))
			printf("#   got: %s\n", err.msg);
		free(name);
		name = xasprintf("%s: read, unlease, release, wipe_begin fail too", cases[i][1]);
		CHECK(ward_gpu_ledger_read(root, &l, &err) < 0 &&
			  ward_gpu_unlease(root, root, "c0", true, &rel, &err) < 0 && !rel &&
			  ward_gpu_release(root, "GPU-1", &err) < 0 &&
			  ward_gpu_wipe_begin(root, "GPU-1", getpid(), &err) < 0,
		      name);
		ward_gpu_ledger_clear(&l);
		after = file_text(lp);
		free(name);
		name = xasprintf("%s: the file is left as it was (never reset)", cases[i][1]);
		CHECK(after && !strcmp(after, cases[i][0]), name);
	}
}

static void test_dir_checks(void)
{
	cleanup_free char *root = new_root("dir-checks");
	cleanup_free char *elsewhere = xasprintf("%s/elsewhere", top);
	cleanup_free char *gd = xasprintf("%s/gpu", root);
	cleanup_free char *root2 = new_root("dir-mode");
	cleanup_free char *gd2 = xasprintf("%s/gpu", root2);
	cleanup_free char *root3 = new_root("dir-container");
	struct ward_err err = {0};

	if (mkdir(elsewhere, 0700) < 0 || symlink(elsewhere, gd) < 0)
		printf("# cannot make the symlink: %s\n", strerror(errno));
	CHECK(lease1(root, "a", "c1", "GPU-1", &err) < 0, "<lib_dir>/gpu a symlink: refused");
	CHECK_STR_CONTAINS(err.msg, gd, "... naming it");
	{
		cleanup_free char *lock = xasprintf("%s/ledger.lock", elsewhere);
		struct stat st;
		CHECK(stat(lock, &st) < 0, "nothing was created through the symlink");
	}
	if (mkdir(gd2, 0700) < 0 || chmod(gd2, 0777) < 0)
		printf("# cannot make %s: %s\n", gd2, strerror(errno));
	CHECK(lease1(root2, "a", "c1", "GPU-1", &err) < 0 && err.errnum == EPERM,
	      "<lib_dir>/gpu writable by others: refused");
	{
		cleanup_free char *lib = xasprintf("%s/lib/ward", root3);
		cleanup_free char *lp = ledger_path(lib);
		cleanup_free char *old_dir = xasprintf("%s/@gpu", root3);
		char *u[] = {"GPU-1"};
		struct stat st;
		CHECK(ward_gpu_lease(lib, root3, "a", "c1", NULL, u, 1, &err) == 0,
		      "lease with the ledger in a lib_dir that does not exist yet");
		CHECK(stat(lp, &st) == 0 && stat(lib, &st) == 0 && (st.st_mode & 07777) == 0700,
		      "the ledger is <lib_dir>/gpu/ledger.json, lib_dir created 0700");
		CHECK(stat(old_dir, &st) < 0, "nothing in the state root");
	}
}

/* Two state roots (two --root's, e.g. two tenants' shims), one host-wide ledger: a GPU held
 * by a container of one root is refused to the other, and a container of the same id in the
 * other root is a different holder. */
static void test_two_roots(void)
{
	cleanup_free char *lib = new_root("two-lib");
	cleanup_free char *r1 = new_root("two-r1");
	cleanup_free char *r2 = new_root("two-r2");
	struct ward_err err = {0};
	char *u[] = {"GPU-1"};
	char **rel = NULL;

	mk_container(r1, "c1", true);
	mk_container(r2, "c1", true);
	CHECK(ward_gpu_lease(lib, r1, "a", "c1", NULL, u, 1, &err) == 0, "root 1: a/c1 leases");
	CHECK(ward_gpu_lease(lib, r2, "b", "c1", NULL, u, 1, &err) < 0 && err.errnum == EBUSY,
	      "root 2: b/c1 is refused the same GPU");
	CHECK_STR_CONTAINS(err.msg, "leased by tenant \"a\"", "naming the holder's tenant");
	CHECK(ward_gpu_lease(lib, r2, "a", "c1", NULL, u, 1, &err) == 0,
	      "root 2: a/c1 (same tenant) shares it");
	{
		cleanup_snap struct snap s = get(lib, "GPU-1");
		CHECK(s.e && s.e->n_holders == 2 &&
			  strcmp(s.e->holders[0].root, s.e->holders[1].root),
		      "two holders, one per state root");
	}
	CHECK(ward_gpu_unlease(lib, r2, "c1", true, &rel, &err) == 0 && rel && !rel[0],
	      "root 2's c1 gives it up: root 1's c1 still holds it");
	strv_free(rel);
	CHECK(state_of(lib, "GPU-1") == WARD_GPU_LEASED, "still leased");
	CHECK(ward_gpu_unlease(lib, r1, "c1", true, &rel, &err) == 0 && rel && rel[0],
	      "root 1's c1 gives it up: dirty");
	strv_free(rel);
	CHECK(state_of(lib, "GPU-1") == WARD_GPU_DIRTY, "dirty");
}

/* PROCS processes lease uuid at once, process i as tenant tenants[i], container c<i>.
 * Returns how many succeeded. */
static int race(const char *root, const char *uuid, bool one_tenant)
{
	enum { PROCS = 8 };
	pid_t pids[PROCS];
	int go[2], wins = 0;

	if (pipe(go) < 0)
		return -1;
	fflush(stdout);
	for (int i = 0; i < PROCS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			struct ward_err e = {0};
			char tenant[32], c[32], b;
			close(go[1]);
			(void)!read(go[0], &b, 1);
			snprintf(tenant, sizeof(tenant), "t%d", one_tenant ? 0 : i);
			snprintf(c, sizeof(c), "%s-c%d", uuid, i);
			if (lease1(root, tenant, c, uuid, &e) == 0)
				_exit(0);
			if (e.errnum != EBUSY)
				fprintf(stderr, "# %s: %s\n", c, e.msg);
			_exit(e.errnum == EBUSY ? 1 : 2);
		}
	}
	close(go[0]);
	close(go[1]);
	for (int i = 0; i < PROCS; i++) {
		int status;
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) > 1)
			return -1;
		wins += WEXITSTATUS(status) == 0;
	}
	return wins;
}

static void test_concurrency(void)
{
	cleanup_free char *root = new_root("concurrent");

	CHECK(race(root, "GPU-C", false) == 1,
	      "8 tenants lease one GPU at once: exactly one wins, the rest EBUSY");
	{
		cleanup_snap struct snap s = get(root, "GPU-C");
		CHECK(s.e && s.e->state == WARD_GPU_LEASED && s.e->n_holders == 1,
		      "the ledger has one holder");
	}
	CHECK(race(root, "GPU-D", true) == 8,
	      "8 containers of one tenant lease one GPU at once: all succeed");
	{
		cleanup_snap struct snap s = get(root, "GPU-D");
		CHECK(s.e && s.e->state == WARD_GPU_LEASED && s.e->n_holders == 8,
		      "the ledger has 8 holders (no update lost)");
	}
}

int main(void)
{
	int rc;
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	test_basics();
	test_all_or_nothing();
	test_sharing();
	test_wipe();
	test_release_quarantine();
	test_stale_holder();
	test_dead_wiper();
	test_corrupt();
	test_dir_checks();
	test_two_roots();
	test_concurrency();
	{
		cleanup_free char *cmd = xasprintf("rm -rf '%s'", top);
		rc = system(cmd);
		(void)rc;
	}
	TAP_DONE();
}
