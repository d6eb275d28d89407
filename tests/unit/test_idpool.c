/* Unit tests: the persistent ID allocator (idpool.json under flock). Every test works in its
 * own temporary lib_dir; the concurrency test forks 8 processes that allocate at once. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "idpool.h"
#include "tap.h"
#include "util.h"

#define SL	 65536u
#define BASE	 524288u
#define SLICE(k) (BASE + (k)*SL)

static char top[] = "/tmp/ward-idpool-XXXXXX";

/* A fresh lib_dir path (not created) under the test's directory. */
static char *new_lib(const char *name)
{
	return xasprintf("%s/%s/lib", top, name);
}

static struct ward_idpool pool(const char *lib, uint32_t slices)
{
	return (struct ward_idpool){.lib_dir = lib, .base = BASE, .size = slices * SL};
}

static char *file_text(const char *lib)
{
	struct ward_err err = {0};
	cleanup_free char *path = xasprintf("%s/idpool.json", lib);
	return read_file_at(AT_FDCWD, path, NULL, &err);
}

static void put_file(const char *lib, const char *text)
{
	struct ward_err err = {0};
	cleanup_free char *path = xasprintf("%s/idpool.json", lib);
	cleanup_free char *cmd = xasprintf("mkdir -p '%s'", lib);
	if (system(cmd) != 0 ||
	    write_file_at(AT_FDCWD, path, O_CREAT | O_TRUNC, 0600, text, strlen(text), &err) < 0)
		printf("# cannot write %s: %s\n", path, err.msg);
}

/* Number of allocations in the dump, -1 if it does not parse. */
static int n_allocs(const struct ward_idpool *p)
{
	struct ward_err err = {0};
	cleanup_free char *d = ward_idpool_dump(p, &err);
	json_t *j = d ? json_loads(d, 0, NULL) : NULL;
	int n = j ? (int)json_array_size(json_object_get(j, "allocations")) : -1;
	json_decref(j);
	return n;
}

/* The users of owner as "u1,u2" (from the dump), malloc'd. */
static char *users_of(const struct ward_idpool *p, const char *owner)
{
	struct ward_err err = {0};
	cleanup_free char *d = ward_idpool_dump(p, &err);
	json_t *j = d ? json_loads(d, 0, NULL) : NULL, *a, *u;
	size_t i, k;
	char *out = xstrdup("");

	json_array_foreach(json_object_get(j, "allocations"), i, a)
	{
		if (strcmp(json_string_value(json_object_get(a, "owner")), owner))
			continue;
		json_array_foreach(json_object_get(a, "users"), k, u)
		{
			char *n = xasprintf("%s%s%s", out, *out ? "," : "", json_string_value(u));
			free(out);
			out = n;
		}
	}
	json_decref(j);
	return out;
}

static bool acquire_at(const struct ward_idpool *p, const char *owner, const char *user,
		       uint32_t slices, uint32_t want_start, uint32_t want_size)
{
	struct ward_err err = {0};
	struct ward_idrange r = {0};
	if (ward_idpool_acquire(p, owner, user, slices, &r, &err) < 0) {
		printf("#   acquire %s: %s\n", owner, err.msg);
		return false;
	}
	if (r.start != want_start || r.size != want_size)
		printf("#   acquire %s: got [%u +%u), want [%u +%u)\n", owner, r.start, r.size,
		       want_start, want_size);
	return r.start == want_start && r.size == want_size;
}

static void test_allocate_reuse_release(void)
{
	cleanup_free char *lib = new_lib("basic");
	struct ward_idpool p = pool(lib, 16);
	struct ward_err err = {0};
	struct stat st;
	cleanup_free char *text = NULL;

	CHECK(n_allocs(&p) == 0, "dump of a pool never written: no allocations");
	CHECK(stat(lib, &st) < 0 && errno == ENOENT, "dump does not create lib_dir");

	CHECK(acquire_at(&p, "pod:a/web", "c1", 1, SLICE(0), SL), "first pod gets the first slice");
	CHECK(stat(lib, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700,
	      "lib_dir is created 0700");
	CHECK(acquire_at(&p, "pod:a/db", "c2", 1, SLICE(1), SL), "second pod gets the next slice");
	CHECK(acquire_at(&p, "pod:a/web", "c3", 1, SLICE(0), SL),
	      "same owner again gets the same range");
	CHECK(acquire_at(&p, "pod:a/web", "c3", 1, SLICE(0), SL),
	      "same owner and user again: same range");
	text = users_of(&p, "pod:a/web");
	CHECK(!strcmp(text, "c1,c3"), "users of the shared range: c1 and c3, once");
	CHECK(n_allocs(&p) == 2, "two allocations");

	CHECK(ward_idpool_release(&p, "pod:a/web", "c1", &err) == 0, "release one user");
	CHECK(n_allocs(&p) == 2, "a pod range with a user left is kept");
	CHECK(acquire_at(&p, "pod:b/x", "c4", 1, SLICE(2), SL), "new pod: range after both");
	CHECK(ward_idpool_release(&p, "pod:a/web", "c3", &err) == 0, "release the last user");
	CHECK(n_allocs(&p) == 2, "the pod range without users is freed");
	CHECK(acquire_at(&p, "pod:b/y", "c5", 1, SLICE(0), SL), "first fit reuses the freed slice");

	CHECK(acquire_at(&p, "tenant:t", NULL, 1, SLICE(3), SL), "tenant range");
	CHECK(ward_idpool_release(&p, "tenant:t", NULL, &err) == 0, "release of a tenant owner");
	CHECK(acquire_at(&p, "tenant:t", "c6", 1, SLICE(3), SL),
	      "tenant range is kept after release, same range again");
	CHECK(ward_idpool_release(&p, "tenant:t", "c6", &err) == 0 && n_allocs(&p) == 4,
	      "tenant range kept after its last user goes");

	CHECK(ward_idpool_release(&p, "pod:none/x", "c9", &err) == 0, "release of unknown owner");
	CHECK(ward_idpool_release(&p, "pod:b/x", "c9", &err) == 0 && n_allocs(&p) == 4,
	      "release of an unknown user changes nothing");

	struct ward_idrange r;
	CHECK(ward_idpool_acquire(&p, "web", "c1", 1, &r, &err) < 0 && err.errnum == EINVAL,
	      "owner without pod:/tenant: prefix is refused");
	CHECK(ward_idpool_acquire(&p, "pod:", "c1", 1, &r, &err) < 0, "empty pod owner is refused");
	CHECK(ward_idpool_acquire(&p, "pod:a/z", "c1", 0, &r, &err) < 0, "0 slices is refused");

	cleanup_free char *path = xasprintf("%s/idpool.json", lib);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0077) == 0,
	      "idpool.json is not world-readable");
	cleanup_free char *tmp = xasprintf("%s/idpool.json.tmp", lib);
	CHECK(stat(tmp, &st) < 0 && errno == ENOENT, "no temp file left behind");
}

static void test_reserved(void)
{
	cleanup_free char *lib = new_lib("reserved");
	/* slice 0 reserved exactly, a few IDs in the middle of slice 2, slices 4-5 */
	const struct ward_idrange res[] = {
	    {SLICE(0), SL}, {SLICE(2) + 100, 10}, {SLICE(4), 2 * SL}};
	struct ward_idpool p = pool(lib, 8);
	struct ward_err err = {0};
	struct ward_idrange r;

	p.reserved = res;
	p.n_reserved = ARRAY_SIZE(res);
	CHECK(acquire_at(&p, "pod:a/1", "c1", 1, SLICE(1), SL), "reserved slice 0 skipped");
	CHECK(acquire_at(&p, "pod:a/2", "c2", 1, SLICE(3), SL),
	      "slice partly reserved (unaligned range) skipped");
	CHECK(acquire_at(&p, "pod:a/3", "c3", 1, SLICE(6), SL), "reserved slices 4-5 skipped");
	CHECK(acquire_at(&p, "pod:a/4", "c4", 1, SLICE(7), SL), "last slice of the pool");
	CHECK(ward_idpool_acquire(&p, "pod:a/5", "c5", 1, &r, &err) < 0 && err.errnum == ENOSPC,
	      "reserved slices are never handed out");
	CHECK_STR_CONTAINS(err.msg, "8 of 8 slices in use", "exhaustion counts reserved slices");
}

static void test_exhaustion(void)
{
	cleanup_free char *lib = new_lib("full");
	struct ward_idpool p = pool(lib, 3);
	struct ward_err err = {0};
	struct ward_idrange r;

	CHECK(acquire_at(&p, "pod:a/1", "c1", 1, SLICE(0), SL) &&
		  acquire_at(&p, "pod:a/2", "c2", 1, SLICE(1), SL) &&
		  acquire_at(&p, "pod:a/3", "c3", 1, SLICE(2), SL),
	      "three slices of a three-slice pool");
	CHECK(ward_idpool_acquire(&p, "pod:a/4", "c4", 1, &r, &err) < 0, "fourth pod is refused");
	CHECK(err.errnum == ENOSPC, "exhaustion is ENOSPC");
	CHECK_STR_CONTAINS(err.msg, "exhausted", "error says exhausted");
	CHECK_STR_CONTAINS(err.msg, "3 of 3 slices in use",
			   "error says how many slices are in use");
	CHECK_STR_CONTAINS(err.msg, "pod:a/4", "error names the owner");
	CHECK(n_allocs(&p) == 3, "a refused acquire writes nothing");
	CHECK(acquire_at(&p, "pod:a/2", "c5", 1, SLICE(1), SL),
	      "an existing owner still gets its range when the pool is full");
	CHECK(ward_idpool_release(&p, "pod:a/2", "c2", &err) == 0 &&
		  ward_idpool_release(&p, "pod:a/2", "c5", &err) == 0,
	      "release both users");
	CHECK(acquire_at(&p, "pod:a/4", "c4", 1, SLICE(1), SL), "the freed slice is handed out");
}

static void test_slices(void)
{
	cleanup_free char *lib = new_lib("slices");
	struct ward_idpool p = pool(lib, 8);
	struct ward_err err = {0};
	struct ward_idrange r;

	CHECK(acquire_at(&p, "tenant:big", NULL, 2, SLICE(0), 2 * SL), "2 slices: 131072 IDs");
	CHECK(acquire_at(&p, "pod:a/1", "c1", 1, SLICE(2), SL), "next range after both slices");
	CHECK(acquire_at(&p, "pod:a/2", "c2", 1, SLICE(3), SL), "and the next");
	CHECK(ward_idpool_release(&p, "pod:a/1", "c1", &err) == 0, "free slice 2 (a 1-slice hole)");
	CHECK(acquire_at(&p, "pod:a/3", "c3", 3, SLICE(4), 3 * SL),
	      "3 slices do not fit the 1-slice hole: placed after");
	CHECK(acquire_at(&p, "pod:a/4", "c4", 1, SLICE(2), SL), "1 slice fills the hole");
	CHECK(ward_idpool_acquire(&p, "pod:a/5", "c5", 2, &r, &err) < 0 && err.errnum == ENOSPC,
	      "2 slices do not fit the last free slice");
	CHECK_STR_CONTAINS(err.msg, "7 of 8 slices in use", "count of slices in use");
	CHECK(ward_idpool_acquire(&p, "pod:a/6", "c6", 9, &r, &err) < 0 && err.errnum == EINVAL,
	      "more slices than the pool has is refused");
}

static void test_id_zero_and_top(void)
{
	cleanup_free char *lib0 = new_lib("zero");
	cleanup_free char *libtop = new_lib("top");
	struct ward_idpool p0 = {.lib_dir = lib0, .base = 0, .size = 4 * SL};
	struct ward_idpool pt = {
	    .lib_dir = libtop, .base = 0xffffffffu - 2 * SL + 1, .size = 2 * SL};
	struct ward_idpool bad = {.lib_dir = libtop, .base = 0xffff0000u, .size = 2 * SL};
	struct ward_idpool rel = {.lib_dir = "relative/dir", .base = BASE, .size = SL};
	struct ward_err err = {0};
	struct ward_idrange r;

	CHECK(acquire_at(&p0, "pod:a/1", "c1", 1, SL, SL),
	      "pool at 0: host ID 0 is never handed out");
	CHECK(acquire_at(&pt, "pod:a/1", "c1", 1, 0xffffffffu - 2 * SL + 1, SL),
	      "pool at the top: first slice");
	CHECK(ward_idpool_acquire(&pt, "pod:a/2", "c2", 1, &r, &err) < 0 && err.errnum == ENOSPC,
	      "the slice holding 4294967295 is never handed out");
	CHECK(ward_idpool_acquire(&bad, "pod:a/2", "c2", 1, &r, &err) < 0 && err.errnum == EINVAL,
	      "a pool past 2^32 is refused");
	CHECK(ward_idpool_acquire(&rel, "pod:a/2", "c2", 1, &r, &err) < 0 && err.errnum == EINVAL,
	      "a relative lib_dir is refused");
}

static void test_corrupt(void)
{
	static const struct {
		const char *text, *want, *name;
	} cases[] = {
	    {"{\"version\": 1, \"allocations\": [", "line 1", "truncated JSON: the line"},
	    {"", "empty", "empty file"},
	    {"[]", "expected a JSON object", "not an object"},
	    {"{\"version\": 2, \"allocations\": []}", "version", "unknown version"},
	    {"{\"version\": 1}", "allocations: expected an array", "allocations missing"},
	    {"{\"version\": 1, \"allocations\": [], \"x\": 1}", "unknown key \"x\"", "unknown key"},
	    {"{\"version\": 1, \"allocations\": [{\"owner\": \"pod:a\", \"start\": 524288, "
	     "\"size\": "
	     "1000, \"users\": []}]}",
	     "allocations[0].size", "size not a multiple of 65536"},
	    {"{\"version\": 1, \"allocations\": [{\"owner\": \"x\", \"start\": 524288, \"size\": "
	     "65536}]}",
	     "allocations[0].owner", "bad owner"},
	    {"{\"version\": 1, \"allocations\": [{\"owner\": \"pod:a\", \"start\": \"1\", "
	     "\"size\": "
	     "65536}]}",
	     "allocations[0].start", "start not an integer"},
	    {"{\"version\": 1, \"allocations\": [{\"owner\": \"pod:a\", \"start\": 524288, "
	     "\"size\": "
	     "65536, \"users\": [1]}]}",
	     "allocations[0].users", "users not strings"},
	    {"{\"version\": 1, \"allocations\": [{\"owner\": \"pod:a\", \"start\": 524288, "
	     "\"size\": "
	     "131072}, {\"owner\": \"pod:b\", \"start\": 589824, \"size\": 65536}]}",
	     "\"pod:a\" and \"pod:b\" overlap", "overlapping allocations"},
	    {"{\"version\": 1, \"allocations\": [{\"owner\": \"pod:a\", \"start\": 524288, "
	     "\"size\": "
	     "65536}, {\"owner\": \"pod:a\", \"start\": 655360, \"size\": 65536}]}",
	     "same owner", "duplicate owner"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_free char *name = xasprintf("corrupt%zu", i);
		cleanup_free char *lib = new_lib(name);
		cleanup_free char *want_path = xasprintf("%s/idpool.json is corrupt", lib);
		cleanup_free char *after = NULL;
		struct ward_idpool p = pool(lib, 16);
		struct ward_err err = {0};
		struct ward_idrange r;
		char label[160];

		put_file(lib, cases[i].text);
		snprintf(label, sizeof(label), "corrupt (%s): acquire fails", cases[i].name);
		CHECK(ward_idpool_acquire(&p, "pod:a/new", "c1", 1, &r, &err) < 0, label);
		snprintf(label, sizeof(label), "corrupt (%s): error names the file", cases[i].name);
		CHECK_STR_CONTAINS(err.msg, want_path, label);
		snprintf(label, sizeof(label), "corrupt (%s): error says what is wrong",
			 cases[i].name);
		CHECK_STR_CONTAINS(err.msg, cases[i].want, label);
		after = file_text(lib);
		snprintf(label, sizeof(label), "corrupt (%s): file left as it was", cases[i].name);
		CHECK(after && !strcmp(after, cases[i].text), label);
	}

	/* release and dump refuse too */
	cleanup_free char *lib = new_lib("corrupt-other");
	struct ward_idpool p = pool(lib, 16);
	struct ward_err err = {0};
	put_file(lib, "garbage");
	CHECK(ward_idpool_release(&p, "pod:a/x", "c1", &err) < 0,
	      "release on a corrupt file fails");
	CHECK_STR_CONTAINS(err.msg, "is corrupt", "release: error says corrupt");
	err = (struct ward_err){0};
	CHECK(ward_idpool_dump(&p, &err) == NULL, "dump on a corrupt file fails");
	CHECK_STR_CONTAINS(err.msg, "is corrupt", "dump: error says corrupt");
}

static void test_unwritable(void)
{
	cleanup_free char *file = xasprintf("%s/a-file", top);
	cleanup_free char *under_file = xasprintf("%s/a-file/lib", top);
	cleanup_free char *ro = xasprintf("%s/ro", top);
	cleanup_free char *ro_lib = xasprintf("%s/ro/lib", top);
	struct ward_idpool p = pool(under_file, 4);
	struct ward_err err = {0};
	struct ward_idrange r;
	int fds[2], status;
	pid_t pid;

	write_file_at(AT_FDCWD, file, O_CREAT | O_TRUNC, 0600, "", 0, &err);
	CHECK(ward_idpool_acquire(&p, "pod:a/1", "c1", 1, &r, &err) < 0,
	      "lib_dir under a regular file: acquire fails");
	CHECK_STR_CONTAINS(err.msg, "lib_dir", "error says it is the lib_dir");
	CHECK_STR_CONTAINS(err.msg, "Not a directory", "error gives the cause");

	/* A read-only lib_dir (as root, permissions would not stop us: a read-only mount
	 * does), in a private mount namespace. */
	mkdir(ro, 0700);
	mkdir(ro_lib, 0700);
	if (pipe(fds) < 0)
		return;
	fflush(stdout); /* the child must not repeat our buffered TAP lines */
	pid = fork();
	if (pid == 0) {
		struct ward_idpool q = pool(ro_lib, 4);
		struct ward_err e = {0};
		close(fds[0]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("tmpfs", ro_lib, "tmpfs", MS_RDONLY, NULL) < 0)
			_exit(77);
		if (ward_idpool_acquire(&q, "pod:a/1", "c1", 1, &r, &e) == 0)
			_exit(1);
		(void)!write(fds[1], e.msg, strlen(e.msg));
		_exit(0);
	}
	close(fds[1]);
	char msg[1100] = "";
	(void)!read_exact(fds[0], msg, sizeof(msg) - 1);
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("ok %d - # SKIP read-only lib_dir (no mount namespace)\n", ++tap_n);
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "read-only lib_dir: acquire fails");
	CHECK_STR_CONTAINS(msg, ro_lib, "error names the lib_dir");
	CHECK_STR_CONTAINS(msg, "Read-only file system", "error gives the cause");
}

/* 8 processes x 25 distinct pod owners at the same time. */
static void test_concurrency(void)
{
	enum { PROCS = 8, EACH = 25 };
	cleanup_free char *lib = new_lib("concurrent");
	struct ward_idpool p = pool(lib, 1024);
	struct ward_idrange all[PROCS * EACH];
	int results[2], go[2];
	pid_t pids[PROCS];
	size_t got = 0;
	bool children_ok = true, disjoint = true, in_pool = true;

	if (pipe(results) < 0 || pipe(go) < 0)
		return;
	fflush(stdout); /* the children must not repeat our buffered TAP lines */
	for (int c = 0; c < PROCS; c++) {
		pids[c] = fork();
		if (pids[c] == 0) {
			char b;
			close(results[0]);
			close(go[1]);
			/* Wait until every process exists: they all start together. */
			(void)!read(go[0], &b, 1);
			for (int i = 0; i < EACH; i++) {
				char owner[64], user[64];
				struct ward_err e = {0};
				struct ward_idrange r;
				snprintf(owner, sizeof(owner), "pod:t/p%d-%d", c, i);
				snprintf(user, sizeof(user), "c%d-%d", c, i);
				if (ward_idpool_acquire(&p, owner, user, 1, &r, &e) < 0) {
					fprintf(stderr, "# %s: %s\n", owner, e.msg);
					_exit(1);
				}
				if (write_all(results[1], &r, sizeof(r)) < 0)
					_exit(1);
			}
			_exit(0);
		}
	}
	close(results[1]);
	close(go[0]);
	close(go[1]); /* go */
	while (got < ARRAY_SIZE(all) &&
	       read_exact(results[0], &all[got], sizeof(all[got])) == sizeof(all[got]))
		got++;
	close(results[0]);
	for (int c = 0; c < PROCS; c++) {
		int status;
		if (waitpid(pids[c], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			children_ok = false;
	}
	CHECK(children_ok, "8 processes x 25 acquires all succeed");
	CHECK(got == PROCS * EACH, "200 ranges handed out");
	for (size_t i = 0; i < got; i++) {
		if (all[i].size != SL || all[i].start < BASE ||
		    (uint64_t)all[i].start + all[i].size > (uint64_t)BASE + 1024 * SL)
			in_pool = false;
		for (size_t j = i + 1; j < got; j++)
			if (all[i].start < all[j].start + all[j].size &&
			    all[j].start < all[i].start + all[i].size)
				disjoint = false;
	}
	CHECK(in_pool, "every range is one slice inside the pool");
	CHECK(disjoint, "the 200 ranges are pairwise disjoint");
	CHECK(n_allocs(&p) == PROCS * EACH, "idpool.json lists exactly 200 allocations");
	/* The first fit packed them: slices 0..199. */
	uint32_t max = 0;
	for (size_t i = 0; i < got; i++)
		if (all[i].start > max)
			max = all[i].start;
	CHECK(max == SLICE(199), "first fit: the 200 ranges are slices 0..199");
}

int main(void)
{
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	test_allocate_reuse_release();
	test_reserved();
	test_exhaustion();
	test_slices();
	test_id_zero_and_top();
	test_corrupt();
	test_unwritable();
	test_concurrency();
	{
		cleanup_free char *cmd = xasprintf("rm -rf '%s'", top);
		(void)!system(cmd);
	}
	TAP_DONE();
}
