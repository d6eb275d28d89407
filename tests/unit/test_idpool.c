/* Unit tests: the persistent ID allocator (idpool.d/, one file per allocation, under flock;
 * idpool.json, the format before, migrated once). Every test works in its own temporary
 * lib_dir; the concurrency test forks 8 processes that allocate at once. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <dirent.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
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

/* A file of lib (a path under it) with text, its directories made as needed. */
static void put_at(const char *lib, const char *rel, const char *text)
{
	struct ward_err err = {0};
	cleanup_free char *path = xasprintf("%s/%s", lib, rel);
	cleanup_free char *dir = xstrdup(path);

	*strrchr(dir, '/') = '\0';
	if (ward_mkdir_p(dir, 0700, &err) < 0 ||
	    write_file_at(AT_FDCWD, path, O_CREAT | O_TRUNC, 0600, text, strlen(text), &err) < 0)
		printf("# cannot write %s: %s\n", path, err.msg);
}

static char *text_at(const char *lib, const char *rel)
{
	struct ward_err err = {0};
	cleanup_free char *path = xasprintf("%s/%s", lib, rel);
	return read_file_at(AT_FDCWD, path, NULL, &err);
}

static bool exists_at(const char *lib, const char *rel)
{
	struct stat st;
	cleanup_free char *path = xasprintf("%s/%s", lib, rel);
	return lstat(path, &st) == 0;
}

static ino_t ino_at(const char *lib, const char *rel)
{
	struct stat st;
	cleanup_free char *path = xasprintf("%s/%s", lib, rel);
	return lstat(path, &st) == 0 ? st.st_ino : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* names[0..n) sorted and joined as "a,b,c" (freed), malloc'd. */
static char *join_sorted(char **names, size_t n)
{
	char *out = xstrdup("");

	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *o = xasprintf("%s%s%s", out, i ? "," : "", names[i]);
		free(out);
		free(names[i]);
		out = o;
	}
	return out;
}

/* The names in lib/dir as "a,b,c", sorted, malloc'd (NULL: no dir). */
static char *names_in(const char *lib, const char *dir)
{
	cleanup_free char *path = xasprintf("%s/%s", lib, dir);
	DIR *d = opendir(path);
	struct dirent *de;
	char *names[128];
	size_t n = 0;

	if (!d)
		return NULL;
	while ((de = readdir(d)) && n < ARRAY_SIZE(names))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			names[n++] = xstrdup(de->d_name);
	closedir(d);
	return join_sorted(names, n);
}

static char *pool_names(const char *lib)
{
	return names_in(lib, "idpool2.d");
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

	cleanup_free char *dir = xasprintf("%s/idpool2.d", lib);
	CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700,
	      "idpool2.d is a directory, 0700");
	cleanup_free char *one = xasprintf("%s/idpool2.d/0", lib);
	CHECK(stat(one, &st) == 0 && (st.st_mode & 0077) == 0,
	      "an allocation's file is not world-readable");
	cleanup_free char *names = pool_names(lib);
	CHECK(names && !strcmp(names, "0,1,2,3,map"),
	      "idpool2.d: one file per record and the map; no temp file left behind");
	free(text);
	text = text_at(lib, "idpool.json");
	CHECK(text && !strcmp(text, "{\"version\": 2, \"allocations\": \"idpool2.d\"}\n"),
	      "idpool.json is the marker an older ward refuses (version 2)");
}

/* The map's text for records "START SIZE TKEY" (the header is the test's own boot). */
static char *map_of(const char *lib)
{
	return text_at(lib, "idpool2.d/map");
}

/* The map with bytes written over it at off. */
static void map_edit(const char *lib, size_t off, const char *bytes)
{
	cleanup_free char *t = map_of(lib);
	if (t && off + strlen(bytes) <= strlen(t)) {
		memcpy(t + off, bytes, strlen(bytes));
		put_at(lib, "idpool2.d/map", t);
	}
}

static bool map_has(const char *lib, const char *text)
{
	cleanup_free char *t = map_of(lib);
	return t && strstr(t, text);
}

/* The on-disk format: one file per record, the users' log appended, a freed pod's file
 * emptied and kept, the map. */
static void test_files(void)
{
	cleanup_free char *lib = new_lib("files");
	struct ward_idpool p = pool(lib, 16);
	struct ward_err err = {0};
	char *t;

	CHECK(acquire_at(&p, "pod:a/web", "c1", 1, SLICE(0), SL), "files: first pod");
	t = text_at(lib, "idpool2.d/0");
	CHECK(t && !strcmp(t, "{\"owner\":\"pod:a/web\",\"start\":524288,\"size\":65536,"
			      "\"users\":[\"c1\"]}\n"),
	      "files: idpool2.d/0 holds owner, range and users");
	free(t);
	t = map_of(lib);
	CHECK(t && strlen(t) == 96 && !strncmp(t, "ward-idpool-map 1 boot=", 23) && t[63] == '\n' &&
		  !strncmp(t + 64, "0000524288 0000065536 p", 23) && t[95] == '\n',
	      "files: the map has a 64-byte header and the record (start, size, key)");
	free(t);
	ino_t ino = ino_at(lib, "idpool2.d/0");
	CHECK(acquire_at(&p, "pod:a/web", "c2", 1, SLICE(0), SL), "files: second user");
	t = text_at(lib, "idpool2.d/0");
	CHECK(t && strstr(t, "]}\n{\"add\":\"c2\"}\n"), "files: the new user is a line appended");
	free(t);
	CHECK(ino_at(lib, "idpool2.d/0") == ino && !exists_at(lib, "idpool2.d/.0.tmp"),
	      "files: a container joining a pod creates no file and renames none");
	CHECK(acquire_at(&p, "tenant:t", NULL, 2, SLICE(1), 2 * SL), "files: tenant range");
	t = text_at(lib, "idpool2.d/1");
	CHECK(t && !strcmp(t, "{\"owner\":\"tenant:t\",\"start\":589824,\"size\":131072,"
			      "\"users\":[]}\n"),
	      "files: the tenant's file");
	free(t);
	CHECK(ward_idpool_release(&p, "pod:a/web", "c1", &err) == 0, "files: release c1");
	t = text_at(lib, "idpool2.d/0");
	CHECK(t && strstr(t, "{\"add\":\"c2\"}\n{\"remove\":\"c1\"}\n") &&
		  ino_at(lib, "idpool2.d/0") == ino,
	      "files: a user gone is a line appended to the same file");
	free(t);
	cleanup_free char *u = users_of(&p, "pod:a/web");
	CHECK(!strcmp(u, "c2"), "files: the log read back: c2 is the user left");
	struct stat st1;
	cleanup_free char *path0 = xasprintf("%s/idpool2.d/0", lib);
	CHECK(ward_idpool_release(&p, "pod:a/web", "c2", &err) == 0 && stat(path0, &st1) == 0 &&
		  st1.st_size == 0,
	      "files: the last user's release empties the file, kept for the next allocation");
	t = map_of(lib);
	CHECK(t && !strncmp(t + 64, "0000000000 0000000000 -00000000\n", 32),
	      "files: and frees its record in the map");
	free(t);
	CHECK(n_allocs(&p) == 1, "files: an empty file is no allocation");
	CHECK(acquire_at(&p, "pod:c/z", "c9", 1, SLICE(0), SL) && stat(path0, &st1) == 0 &&
		  st1.st_ino == ino && st1.st_size > 0,
	      "files: the next allocation takes the free record: the same file, no inode");
	CHECK(ward_idpool_release(&p, "pod:c/z", "c9", &err) == 0, "files: and freed again");
	CHECK(ward_idpool_release(&p, "tenant:t", NULL, &err) == 0 && exists_at(lib, "idpool2.d/1"),
	      "files: a tenant's file stays");

	/* A line whose writer was stopped half-way (no newline) was never committed. */
	CHECK(acquire_at(&p, "pod:b/x", "c3", 1, SLICE(0), SL), "files: pod b/x");
	t = text_at(lib, "idpool2.d/0");
	cleanup_free char *torn = xasprintf("%s{\"add\":\"c", t);
	free(t);
	put_at(lib, "idpool2.d/0", torn);
	u = (free(u), users_of(&p, "pod:b/x"));
	CHECK(!strcmp(u, "c3"), "files: a torn last line is not read");
	CHECK(acquire_at(&p, "pod:b/x", "c4", 1, SLICE(0), SL), "files: a user added after it");
	t = text_at(lib, "idpool2.d/0");
	CHECK(t && strstr(t, "]}\n{\"add\":\"c4\"}\n") && !strstr(t, "{\"add\":\"c{"),
	      "files: the torn line is written over");
	free(t);
	/* A leftover temp file of a rewrite is never read. */
	put_at(lib, "idpool2.d/.0.tmp", "{garbage");
	CHECK(n_allocs(&p) == 2, "files: a leftover temp file is ignored");

	/* The log is written again as one line once it has grown past 4 KiB. */
	bool all = true;
	for (int i = 0; i < 60; i++) {
		char user[64];
		snprintf(user, sizeof(user), "container-%02d-0123456789abcdef0123456789", i);
		all = all && acquire_at(&p, "pod:b/x", user, 1, SLICE(0), SL) &&
		      ward_idpool_release(&p, "pod:b/x", user, &err) == 0;
	}
	struct stat st2;
	CHECK(all && stat(path0, &st2) == 0 && st2.st_size < 4096,
	      "files: a long log is compacted (the file stays under 4 KiB)");
	u = (free(u), users_of(&p, "pod:b/x"));
	CHECK(!strcmp(u, "c3,c4"), "files: the users survive the compaction");

	/* At most 32 free records are kept: 40 pods freed leave 32 files (+ the map). */
	cleanup_free char *lib2 = new_lib("files-keep");
	struct ward_idpool p2 = pool(lib2, 64);
	all = true;
	for (int i = 0; i < 40; i++) {
		char owner[32];
		snprintf(owner, sizeof(owner), "pod:k/%d", i);
		all = all && acquire_at(&p2, owner, "c", 1, SLICE(i), SL);
	}
	for (int i = 0; i < 40; i++) {
		char owner[32];
		snprintf(owner, sizeof(owner), "pod:k/%d", i);
		all = all && ward_idpool_release(&p2, owner, "c", &err) == 0;
	}
	cleanup_free char *kept = pool_names(lib2);
	char *names[33];
	for (int i = 0; i < 32; i++)
		names[i] = xasprintf("%d", i);
	names[32] = xstrdup("map");
	cleanup_free char *want = join_sorted(names, 33);
	t = map_of(lib2);
	CHECK(all && n_allocs(&p2) == 0 && kept && !strcmp(kept, want) && t &&
		  strlen(t) == 64 + 32 * 32,
	      "files: 40 pods freed: 32 free records and files kept, the rest removed");
	free(t);
}

static const char old_json[] =
    "{\"version\": 1, \"allocations\": [{\"owner\": \"pod:a/web\", \"start\": 589824, "
    "\"size\": 65536, \"users\": [\"c1\", \"c2\"]}, {\"owner\": \"tenant:t\", "
    "\"start\": 655360, \"size\": 131072, \"users\": []}]}\n";

/* The same pool in the format of idpool.d. */
static void put_old_dir(const char *lib)
{
	put_at(lib, "idpool.d/589824",
	       "{\"owner\":\"pod:a/web\",\"size\":65536,\"users\":[\"c1\",\"c2\"]}\n");
	put_at(lib, "idpool.d/655360", "{\"owner\":\"tenant:t\",\"size\":131072,\"users\":[]}\n");
	put_at(lib, "idpool.d/720896", ""); /* a free slot */
}

/* After a migration: the two old allocations kept, a new pod first fit around them. */
static void check_migrated(const char *lib, const char *what)
{
	struct ward_idpool p = pool(lib, 16);
	char label[160];
	cleanup_free char *users = NULL;
	cleanup_free char *names = pool_names(lib);
	cleanup_free char *marker = text_at(lib, "idpool.json");

	snprintf(label, sizeof(label), "migrate (%s): idpool2.d, the marker, nothing else", what);
	CHECK(names && (!strcmp(names, "0,1,map") || !strcmp(names, "0,1,2,map")) && marker &&
		  strstr(marker, "\"version\": 2") && !exists_at(lib, "idpool.d") &&
		  !exists_at(lib, "idpool.d.old") && !exists_at(lib, "idpool2.d.new"),
	      label);
	users = users_of(&p, "pod:a/web");
	snprintf(label, sizeof(label), "migrate (%s): the users came along", what);
	CHECK(!strcmp(users, "c1,c2"), label);
	snprintf(label, sizeof(label), "migrate (%s): owners keep their ranges", what);
	CHECK(acquire_at(&p, "pod:a/web", "c9", 1, SLICE(1), SL) &&
		  acquire_at(&p, "tenant:t", NULL, 1, SLICE(2), 2 * SL),
	      label);
	snprintf(label, sizeof(label), "migrate (%s): new pods fit around them", what);
	CHECK(n_allocs(&p) == 2 && acquire_at(&p, "pod:c/y", "c4", 1, SLICE(0), SL) &&
		  acquire_at(&p, "pod:d/z", "c5", 1, SLICE(4), SL),
	      label);
}

/* lib's pool before and after the first change (a release of nobody): a dump reads it
 * as it is, the change migrates it. */
static void migrated_by_change(const char *lib, const char *what)
{
	struct ward_idpool p = pool(lib, 16);
	struct ward_err err = {0};
	char label[160];

	snprintf(label, sizeof(label), "migrate (%s): a dump reads the two allocations", what);
	CHECK(n_allocs(&p) == 2, label);
	snprintf(label, sizeof(label), "migrate (%s): the first change migrates", what);
	CHECK(ward_idpool_release(&p, "pod:none/x", "c1", &err) == 0, label);
	check_migrated(lib, what);
}

/* A migration cut short after its marker: idpool2.d.new complete, the marker written. */
static void put_marked_new_dir(const char *lib)
{
	put_at(lib, "idpool2.d.new/0",
	       "{\"owner\":\"pod:a/"
	       "web\",\"start\":589824,\"size\":65536,\"users\":[\"c1\",\"c2\"]}\n");
	put_at(lib, "idpool2.d.new/1",
	       "{\"owner\":\"tenant:t\",\"start\":655360,\"size\":131072,\"users\":[]}\n");
	put_at(lib, "idpool.json", "{\"version\": 2, \"allocations\": \"idpool2.d\"}\n");
}

/* The older formats (a host upgraded with running containers): read as they are by a dump,
 * migrated by the first change, durably, and a migration cut short at each step is redone
 * or finished. */
static void test_migrate(void)
{
	struct ward_err err = {0};
	char *t;

	/* idpool.json (version 1) */
	cleanup_free char *lib = new_lib("migrate");
	struct ward_idpool p = pool(lib, 16);
	put_at(lib, "idpool.json", old_json);
	CHECK(n_allocs(&p) == 2 && !exists_at(lib, "idpool2.d"),
	      "migrate: a dump reads idpool.json and changes nothing");
	CHECK(acquire_at(&p, "pod:b/x", "c3", 1, SLICE(0), SL),
	      "migrate: a new pod gets the first free slice");
	t = text_at(lib, "idpool2.d/2");
	CHECK(t && strstr(t, "pod:b/x"), "migrate: in a record after the old allocations");
	free(t);
	CHECK(ward_idpool_release(&p, "pod:b/x", "c3", &err) == 0, "migrate: and freed");
	check_migrated(lib, "idpool.json");

	/* The other starting points, each migrated by its first change. */
	static const struct {
		const char *what;
		bool old_dir, marked; /* put_old_dir, put_marked_new_dir */
		const char *rel, *text;
	} cases[] = {
	    /* idpool.d, and an idpool.json left by the migration before it (stopped after
	     * its rename: idpool.d wins) */
	    {"idpool.d", true, false, "idpool.json", "{\"version\": 1, \"allocations\": []}\n"},
	    /* cut short while writing idpool2.d.new: redone from the old files */
	    {"idpool2.d.new left", true, false, "idpool2.d.new/0", "{half"},
	    /* cut short after the marker, before idpool.d was moved aside: finished from
	     * idpool2.d.new (complete once the marker is there; a dump reads it meanwhile) */
	    {"cut after the marker", true, true, NULL, NULL},
	    /* cut short while removing idpool.d (moved aside): finished */
	    {"cut while removing idpool.d", false, true, "idpool.d.old/655360",
	     "{\"owner\":\"tenant:t\",\"size\":131072}\n"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_free char *name = xasprintf("migrate-%zu", i);
		cleanup_free char *lib_i = new_lib(name);
		if (cases[i].old_dir)
			put_old_dir(lib_i);
		if (cases[i].marked)
			put_marked_new_dir(lib_i);
		if (cases[i].rel)
			put_at(lib_i, cases[i].rel, cases[i].text);
		migrated_by_change(lib_i, cases[i].what);
	}

	/* The marker without idpool2.d.new or idpool2.d: an error, never an empty pool. */
	cleanup_free char *lib6 = new_lib("migrate-lost");
	struct ward_idpool p6 = pool(lib6, 16);
	struct ward_idrange r;
	put_at(lib6, "idpool.json", "{\"version\": 2, \"allocations\": \"idpool2.d\"}\n");
	CHECK(ward_idpool_acquire(&p6, "pod:b/x", "c1", 1, &r, &err) < 0 && err.errnum == EINVAL &&
		  strstr(err.msg, "idpool.json is corrupt") && strstr(err.msg, "idpool2.d"),
	      "migrate: the marker without the pool's directory is an error naming it");

	/* A corrupt file of idpool.d: nothing migrated, nothing changed. */
	cleanup_free char *lib7 = new_lib("migrate-corrupt");
	struct ward_idpool p7 = pool(lib7, 16);
	put_old_dir(lib7);
	put_at(lib7, "idpool.d/786432", "{\"owner\":");
	CHECK(ward_idpool_acquire(&p7, "pod:b/x", "c1", 1, &r, &err) < 0 &&
		  strstr(err.msg, "idpool.d/786432 is corrupt"),
	      "migrate: a corrupt idpool.d file is an error naming it");
	t = names_in(lib7, ".");
	CHECK(t && !strcmp(t, "idpool.d,idpool.lock"),
	      "migrate: and nothing is written (no marker, no idpool2.d)");
	free(t);

	/* A fresh pool is created through the same steps: the marker first. */
	cleanup_free char *lib8 = new_lib("migrate-fresh");
	struct ward_idpool p8 = pool(lib8, 16);
	CHECK(acquire_at(&p8, "pod:b/x", "c1", 1, SLICE(0), SL), "migrate: a fresh pool");
	t = names_in(lib8, ".");
	CHECK(t && !strcmp(t, "idpool.json,idpool.lock,idpool2.d"),
	      "migrate: a fresh pool has the marker too (an older ward would see an empty pool)");
	free(t);
	/* The marker removed by hand: written again by the next acquire. */
	cleanup_free char *marker = xasprintf("%s/idpool.json", lib8);
	t = (unlink(marker), acquire_at(&p8, "pod:b/x", "c1", 1, SLICE(0), SL))
		? text_at(lib8, "idpool.json")
		: NULL;
	CHECK(t && !strcmp(t, "{\"version\": 2, \"allocations\": \"idpool2.d\"}\n"),
	      "migrate: the marker removed is written again by the next acquire");
	free(t);
}

/* The map: an owner found by its key (two owners with one key both found), a change reads
 * no other allocation's file, the map built again where it cannot be trusted. */
static void test_map(void)
{
	cleanup_free char *lib = new_lib("map");
	struct ward_idpool p = pool(lib, 16);
	struct ward_err err = {0};
	struct ward_idrange r;
	char *t;

	/* "pod:t/p13751" and "pod:t/p225000" have the same 32-bit FNV-1a key, d287eba0. */
	CHECK(acquire_at(&p, "pod:t/p13751", "c1", 1, SLICE(0), SL) &&
		  acquire_at(&p, "pod:t/p225000", "c2", 1, SLICE(1), SL),
	      "map: two owners with the same key get ranges of their own");
	t = map_of(lib);
	CHECK(t && strstr(t, "0000524288 0000065536 pd287eba0\n0000589824 0000065536 pd287eba0\n"),
	      "map: (the two records share the key)");
	free(t);
	CHECK(acquire_at(&p, "pod:t/p225000", "c3", 1, SLICE(1), SL) &&
		  acquire_at(&p, "pod:t/p13751", "c4", 1, SLICE(0), SL),
	      "map: each finds its own range through the shared key");
	CHECK(ward_idpool_release(&p, "pod:t/p13751", "c1", &err) == 0 &&
		  ward_idpool_release(&p, "pod:t/p13751", "c4", &err) == 0,
	      "map: the first freed");
	cleanup_free char *u = users_of(&p, "pod:t/p225000");
	CHECK(!strcmp(u, "c2,c3") && n_allocs(&p) == 1, "map: the other untouched");

	/* A change reads the owner's file only: garbage in another one goes unnoticed by
	 * acquire and release (the map keeps its range), a dump names it. */
	CHECK(acquire_at(&p, "pod:a/web", "c1", 1, SLICE(0), SL), "map: pod a/web in record 0");
	put_at(lib, "idpool2.d/1", "{garbage\n");
	CHECK(acquire_at(&p, "pod:b/x", "c1", 1, SLICE(2), SL) &&
		  acquire_at(&p, "pod:a/web", "c2", 1, SLICE(0), SL) &&
		  ward_idpool_release(&p, "pod:a/web", "c2", &err) == 0 &&
		  ward_idpool_release(&p, "pod:b/x", "c1", &err) == 0,
	      "map: acquire and release with another allocation's file corrupt");
	CHECK(ward_idpool_dump(&p, &err) == NULL &&
		  strstr(err.msg, "idpool2.d/1 is corrupt: line 1"),
	      "map: a dump reads every file and names the corrupt one");
	CHECK(ward_idpool_acquire(&p, "pod:t/p225000", "c9", 1, &r, &err) < 0 &&
		  strstr(err.msg, "idpool2.d/1 is corrupt"),
	      "map: the owner of the corrupt file gets the error naming it");
	t = text_at(lib, "idpool2.d/1");
	CHECK(t && !strcmp(t, "{garbage\n"), "map: the corrupt file is left as it is");
	free(t);
	put_at(
	    lib, "idpool2.d/1",
	    "{\"owner\":\"pod:t/p225000\",\"start\":589824,\"size\":65536,\"users\":[\"c2\"]}\n");
	put_at(lib, "idpool2.d/web", "{}");
	CHECK(ward_idpool_dump(&p, &err) == NULL && strstr(err.msg, "idpool2.d/web is corrupt") &&
		  exists_at(lib, "idpool2.d/web"),
	      "map: a name that is no record's is an error naming it, left as it is");
	cleanup_free char *web = xasprintf("%s/idpool2.d/web", lib);
	cleanup_free char *map = xasprintf("%s/idpool2.d/map", lib);
	unlink(web);

	/* The map of another boot (a crash: a pod's files are not fsync'd) is built again. */
	map_edit(lib, 23, "X");					     /* no boot id has an X */
	map_edit(lib, 64 + 32, "0000000000 0000000000 -00000000\n"); /* record 1 lost */
	CHECK(acquire_at(&p, "pod:c/y", "c1", 1, SLICE(2), SL),
	      "map: of another boot, built again: record 1's range is not handed out");
	CHECK(map_has(lib, "0000589824 0000065536 pd287eba0\n"), "map: record 1 is back");
	/* A record that does not parse (a digit gone): the map is built again. */
	map_edit(lib, 64 + 32 + 3, "x");
	CHECK(acquire_at(&p, "pod:t/p225000", "c1", 1, SLICE(1), SL),
	      "map: a record that does not parse: built again, the owner found");
	CHECK(map_has(lib, "0000589824 0000065536 pd287eba0\n"), "map: record 1 parses again");
	CHECK(ward_idpool_release(&p, "pod:t/p225000", "c1", &err) == 0, "map: c1 released");
	/* A map missing or cut short is built again. */
	put_at(lib, "idpool2.d/map", "ward-idpool-map 1 bo");
	CHECK(acquire_at(&p, "pod:d/z", "c1", 1, SLICE(3), SL), "map: cut short, built again");
	unlink(map);
	CHECK(acquire_at(&p, "pod:d/z", "c2", 1, SLICE(3), SL) && exists_at(lib, "idpool2.d/map"),
	      "map: missing, built again");
	/* A record that disagrees with its file: the file wins. */
	map_edit(lib, 64 + 32, "0000000000 0000000000 -00000000\n");
	CHECK(acquire_at(&p, "pod:e/v", "c1", 1, SLICE(4), SL),
	      "map: a record freed by hand while its file holds an allocation, the lowest free "
	      "record: the new allocation finds the file, the map is built again, the range kept");
	u = (free(u), users_of(&p, "pod:t/p225000"));
	CHECK(!strcmp(u, "c2"), "map: and the allocation too");

	/* A writer stopped between the record and the file: a record over an empty file; the
	 * range comes back when the pool is full (the map built again). */
	cleanup_free char *lib2 = new_lib("map-leak");
	struct ward_idpool p2 = pool(lib2, 2);
	CHECK(acquire_at(&p2, "pod:a/1", "c1", 1, SLICE(0), SL) &&
		  acquire_at(&p2, "pod:a/2", "c2", 1, SLICE(1), SL),
	      "map: a full two-slice pool");
	put_at(lib2, "idpool2.d/1", "");
	CHECK(acquire_at(&p2, "pod:a/3", "c3", 1, SLICE(1), SL),
	      "map: the slice of a record over an empty file is handed out when the pool is full");
	CHECK(ward_idpool_acquire(&p2, "pod:a/4", "c4", 1, &r, &err) < 0 && err.errnum == ENOSPC,
	      "map: and the pool is full again");
	CHECK_STR_CONTAINS(err.msg, "2 of 2 slices in use (2 allocations", "map: full, counted");
}

/* The map is trusted in its boot: a record freed by hand while its file holds an allocation,
 * under a lower free record whose file is empty, is not seen by a change. ward check (the
 * dump) compares the files with the map and names it before a new pod is given its IDs. */
static void test_map_disagrees(void)
{
	cleanup_free char *lib = new_lib("map-disagrees");
	const struct ward_idrange res[] = {{SLICE(0), SL}};
	struct ward_idpool p = pool(lib, 8);
	struct ward_err err = {0};
	cleanup_free char *d = NULL;

	CHECK(acquire_at(&p, "pod:a/1", "c1", 1, SLICE(0), SL) &&
		  acquire_at(&p, "pod:a/2", "c2", 1, SLICE(1), SL) &&
		  acquire_at(&p, "pod:a/3", "c3", 1, SLICE(2), SL) &&
		  ward_idpool_release(&p, "pod:a/1", "c1", &err) == 0,
	      "map disagrees: records 1 and 2 used, record 0 free and empty");
	d = ward_idpool_dump(&p, &err);
	CHECK(d && !strstr(d, "notes"), "map disagrees: a sound pool dumps without notes");
	map_edit(lib, 64 + 32, "0000000000 0000000000 -00000000\n");
	err = (struct ward_err){0};
	CHECK(ward_idpool_dump(&p, &err) == NULL && err.errnum == EINVAL &&
		  strstr(err.msg, "idpool2.d/map disagrees with idpool2.d/1") &&
		  strstr(err.msg, "\"pod:a/2\" [589824, 655360), record 1 says free") &&
		  strstr(err.msg, "remove the map"),
	      "map disagrees: the dump (ward check) names the file the map does not hold");
	map_edit(lib, 64 + 32, "0000589824 0000131072 p");
	err = (struct ward_err){0};
	CHECK(ward_idpool_dump(&p, &err) == NULL &&
		  strstr(err.msg, "record 1 says [589824, 720896) p"),
	      "map disagrees: a record of another range too");
	map_edit(lib, 64 + 32, "0000000000 0000000000 -00000000\n");
	/* The limit: slice 0 reserved, the first fit is record 1's slice, the lowest free
	 * record 0 is empty: the change reads no other file. */
	p.reserved = res;
	p.n_reserved = 1;
	CHECK(acquire_at(&p, "pod:b/1", "c1", 1, SLICE(1), SL),
	      "map disagrees: trusted in its boot, a lower free record empty: the range is "
	      "given again (what ward check names before)");
	/* Removed, the map is built again from the files: the overlap is an error. */
	cleanup_free char *map = xasprintf("%s/idpool2.d/map", lib);
	unlink(map);
	CHECK(ward_idpool_acquire(&p, "pod:b/2", "c1", 1, &(struct ward_idrange){0}, &err) < 0 &&
		  strstr(err.msg, "overlap"),
	      "map disagrees: the map built again refuses the overlap");
}

/* A file that does not read, when the map is built again (after a reboot): the others go on,
 * its range kept where its first line gives it; the owner gets the error naming it. */
static void test_rebuild_corrupt(void)
{
	cleanup_free char *lib = new_lib("rebuild-corrupt");
	struct ward_idpool p = pool(lib, 8);
	struct ward_idrange r;
	struct ward_err err = {0};
	char *t = NULL;

	CHECK(acquire_at(&p, "tenant:t", "c1", 1, SLICE(0), SL), "rebuild: a tenant");
	CHECK(acquire_at(&p, "pod:a/1", "c1", 1, SLICE(1), SL), "rebuild: a pod");
	t = text_at(lib, "idpool2.d/0");
	cleanup_free char *bad = xasprintf("%s{garbage\n", t);
	free(t);
	put_at(lib, "idpool2.d/0", bad);
	map_edit(lib, 23, "X"); /* another boot */
	CHECK(acquire_at(&p, "pod:b/1", "c1", 1, SLICE(2), SL),
	      "rebuild: a log line that does not parse: a new pod gets a range, not the file's");
	CHECK(map_has(lib, "0000524288 0000065536 t"), "rebuild: the file's record kept used");
	CHECK(ward_idpool_acquire(&p, "tenant:t", "c2", 1, &r, &err) < 0 &&
		  strstr(err.msg, "idpool2.d/0 is corrupt: line 2"),
	      "rebuild: its owner gets the error naming the file");
	t = text_at(lib, "idpool2.d/0");
	CHECK(t && !strcmp(t, bad), "rebuild: the file is left as it is");
	free(t);

	/* Longer than 1 MiB (an older writer's): the first line gives the range. */
	cleanup_free char *big = xstrdup(bad);
	big[strlen(big) - strlen("{garbage\n")] = '\0';
	size_t blen = strlen(big);
	big = xrealloc(big, blen + (1u << 20) + 64);
	for (size_t k = 0; blen < (1u << 20) + 16; k++)
		blen += (size_t)sprintf(big + blen, "{\"add\":\"u%zu\"}\n", k);
	put_at(lib, "idpool2.d/0", big);
	map_edit(lib, 23, "Y");
	CHECK(acquire_at(&p, "pod:b/2", "c1", 1, SLICE(3), SL),
	      "rebuild: a file longer than 1 MiB: a new pod gets a range, not the file's");
	CHECK(ward_idpool_acquire(&p, "tenant:t", "c2", 1, &r, &err) < 0 &&
		  strstr(err.msg, "longer than 1 MiB"),
	      "rebuild: its owner gets the error");

	/* A first line that does not give a range: the file may hold any, nothing handed out. */
	put_at(lib, "idpool2.d/0", "{\"owner\":\"tenant:t\",\"start\":5\n");
	map_edit(lib, 23, "Z");
	CHECK(ward_idpool_acquire(&p, "pod:b/3", "c1", 1, &r, &err) < 0 &&
		  strstr(err.msg, "idpool2.d/0 is corrupt"),
	      "rebuild: a first line that does not parse: no new range, the error names the file");
}

/* A first line cut short (its writer killed, or a crash) in the file of a free record. */
static void test_torn_free(void)
{
	cleanup_free char *lib = new_lib("torn-free");
	struct ward_idpool p = pool(lib, 8);
	struct ward_err err = {0};
	cleanup_free char *d = NULL;
	char *t;

	CHECK(acquire_at(&p, "pod:a/1", "c1", 1, SLICE(0), SL) &&
		  acquire_at(&p, "pod:a/2", "c2", 1, SLICE(1), SL) &&
		  ward_idpool_release(&p, "pod:a/1", "c1", &err) == 0,
	      "torn: record 0 free");
	put_at(lib, "idpool2.d/0", "{\"owner\":\"pod:x/y\",\"start\":52428");
	d = ward_idpool_dump(&p, &err);
	CHECK(d && strstr(d, "idpool2.d/0: a first line cut short under a free record"),
	      "torn: the dump (ward check) notes it");
	CHECK(acquire_at(&p, "pod:b/1", "c1", 1, SLICE(0), SL),
	      "torn: a first line cut short under a free record: a new pod still gets a range");
	t = text_at(lib, "idpool2.d/0");
	CHECK(t && !strncmp(t, "{\"owner\":\"pod:b/1\"", 18) && !strstr(t, "pod:x/y"),
	      "torn: the record's file emptied and written");
	free(t);
	CHECK(acquire_at(&p, "pod:b/2", "c1", 1, SLICE(2), SL) &&
		  acquire_at(&p, "pod:b/3", "c1", 1, SLICE(3), SL) && n_allocs(&p) == 4,
	      "torn: and the pods after it, no range twice");

	/* A record that says used over a first line cut short (a writer killed between the
	 * two): noted; the range comes back when the map is built again. */
	put_at(lib, "idpool2.d/3", "{\"owner\":");
	free(d);
	d = ward_idpool_dump(&p, &err);
	CHECK(d && strstr(d, "idpool2.d/3: record 3 says [720896, 786432) p") &&
		  strstr(d, "over a free file"),
	      "torn: a used record over a free file is noted");
	CHECK(acquire_at(&p, "pod:b/3", "c2", 1, SLICE(3), SL),
	      "torn: its owner, found gone, gets a new range: the map built again");
}

/* One allocation's users bounded by the file's 1 MiB: the log compacted before the file
 * would pass it, a user more refused with the file untouched, never a file the reader calls
 * corrupt. */
static void test_file_limit(void)
{
	cleanup_free char *lib = new_lib("limit");
	struct ward_idpool p = pool(lib, 8);
	struct ward_err err = {0};
	struct ward_idrange r;
	cleanup_free char *path = xasprintf("%s/idpool2.d/0", lib);
	char id[1001];
	struct stat st;
	size_t users = 0, max_size = 0;
	bool all = true;
	int rc = 0;

	CHECK(acquire_at(&p, "tenant:big", NULL, 1, SLICE(0), SL), "limit: a tenant's range");
	/* 980 users of 1000 characters: a first line of 0.98 MB. */
	memset(id, 'x', 1000);
	id[1000] = '\0';
	size_t cap = (1u << 20) + 4096, len = 0;
	cleanup_free char *text = xmalloc(cap);
	len += (size_t)sprintf(text,
			       "{\"owner\":\"tenant:big\",\"start\":%u,\"size\":%u,"
			       "\"users\":[",
			       SLICE(0), SL);
	for (int u = 0; u < 980; u++)
		len += (size_t)snprintf(text + len, cap - len, "%s\"%05d%.995s\"", u ? "," : "", u,
					id);
	len += (size_t)sprintf(text + len, "]}\n");
	put_at(lib, "idpool2.d/0", text);
	users = 980;
	for (int u = 980; u < 1200; u++) {
		char user[1001];
		/* 5 digits, for the compiler too (-O1: format-truncation) */
		snprintf(user, sizeof(user), "%05u%.995s", (unsigned)u % 100000u, id);
		rc = ward_idpool_acquire(&p, "tenant:big", user, 1, &r, &err);
		if (rc < 0)
			break;
		users++;
		if (stat(path, &st) < 0 || (size_t)st.st_size > (1u << 20))
			all = false;
		if ((size_t)st.st_size > max_size)
			max_size = (size_t)st.st_size;
	}
	CHECK(all && users > 1000 && max_size > (1u << 20) - 4096,
	      "limit: users added while they fit, the file never past 1 MiB");
	CHECK(rc < 0 && err.errnum == ENOSPC && strstr(err.msg, "holds no more") &&
		  strstr(err.msg, "tenant:big"),
	      "limit: the user more is refused, the error names the owner and the limit");
	cleanup_free char *before = text_at(lib, "idpool2.d/0");
	char more[1001];
	snprintf(more, sizeof(more), "more-%.995s", id);
	CHECK(ward_idpool_acquire(&p, "tenant:big", more, 1, &r, &err) < 0, "limit: refused again");
	cleanup_free char *after = text_at(lib, "idpool2.d/0");
	CHECK(before && after && !strcmp(before, after), "limit: the file untouched");
	cleanup_free char *u = users_of(&p, "tenant:big");
	size_t n = 0;
	for (char *c = u; *c; c++)
		n += *c == ',';
	CHECK(n + 1 == users, "limit: the dump reads every user");
	char first[1001];
	snprintf(first, sizeof(first), "%05d%.995s", 0, id);
	CHECK(ward_idpool_release(&p, "tenant:big", first, &err) == 0 &&
		  ward_idpool_acquire(&p, "tenant:big", more, 1, &r, &err) == 0,
	      "limit: a user gone makes room for one");
}

/* The write of a new allocation fails (a file size limit) and its file cannot be emptied
 * (ftruncate fails): the record stays used over what was written, never freed. */
static void test_add_fails(void)
{
	cleanup_free char *lib = new_lib("add-fails");
	struct ward_idpool p = pool(lib, 8);
	struct ward_err err = {0};
	char owner[512], verdict = 'n';
	int status, fds[2];
	pid_t pid;

	snprintf(owner, sizeof(owner), "pod:a/%0400d", 7);
	CHECK(acquire_at(&p, "pod:a/1", "c1", 1, SLICE(0), SL) &&
		  ward_idpool_release(&p, "pod:a/1", "c1", &err) == 0,
	      "add fails: record 0 free");
	/* The child's verdict through a pipe: under valgrind its exit status is valgrind's. */
	if (pipe(fds) < 0)
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = {200, 200};
		struct ward_idrange r;
		struct ward_err e = {0};
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
		char v = 'n';
		signal(SIGXFSZ, SIG_IGN);
		if (!ctx || setrlimit(RLIMIT_FSIZE, &rl) < 0 ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EIO), SCMP_SYS(ftruncate), 0) < 0 ||
		    seccomp_load(ctx) < 0)
			v = 's';
		else if (ward_idpool_acquire(&p, owner, "c1", 1, &r, &e) < 0 &&
			 strstr(e.msg, "idpool2.d/0"))
			v = 'y';
		(void)!write(fds[1], &v, 1);
		_exit(0);
	}
	close(fds[1]);
	if (read_exact(fds[0], &verdict, 1) != 1)
		verdict = 'n';
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (verdict == 's') {
		printf("ok %d - # SKIP add fails (no seccomp filter here)\n", ++tap_n);
		return;
	}
	CHECK(verdict == 'y', "add fails: the write fails, acquire fails naming the file");
	CHECK(map_has(lib, "ward-idpool-map") && !map_has(lib, "0000000000 0000000000 -") &&
		  map_has(lib, "0000524288 0000065536 p"),
	      "add fails: the file not emptied, its record stays used");
	CHECK(acquire_at(&p, "pod:b/1", "c1", 1, SLICE(1), SL),
	      "add fails: the next pod gets another range");
	CHECK(acquire_at(&p, owner, "c1", 1, SLICE(0), SL),
	      "add fails: the owner again: the map built again, the cut line emptied, its range");
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
	/* The same for idpool.d's files. */
	static const struct {
		const char *name, *text, *want, *label;
	} files[] = {
	    {"524288", "{\"owner\": \"pod:a\", \"size\": 65536", "line 1", "truncated JSON"},
	    {"524288", "{\"owner\": \"pod:a\", \"start\": 524288, \"size\": 65536}",
	     "unknown key \"start\"", "start in a file"},
	    {"524288", "{\"owner\": \"x\", \"size\": 65536}", ".owner", "bad owner"},
	    {"524288", "{\"owner\": \"pod:a\", \"size\": 1000}", ".size", "bad size"},
	    {"0", "{\"owner\": \"pod:a\", \"size\": 65536}", "host ID 0", "range with ID 0"},
	    {"0524288", "{\"owner\": \"pod:a\", \"size\": 65536}", "not an allocation's name",
	     "leading zero"},
	    {"web", "{}", "not an allocation's name", "not a number"},
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

		put_at(lib, "idpool.json", cases[i].text);
		snprintf(label, sizeof(label), "corrupt (%s): acquire fails", cases[i].name);
		CHECK(ward_idpool_acquire(&p, "pod:a/new", "c1", 1, &r, &err) < 0, label);
		snprintf(label, sizeof(label), "corrupt (%s): error names the file", cases[i].name);
		CHECK_STR_CONTAINS(err.msg, want_path, label);
		snprintf(label, sizeof(label), "corrupt (%s): error says what is wrong",
			 cases[i].name);
		CHECK_STR_CONTAINS(err.msg, cases[i].want, label);
		after = text_at(lib, "idpool.json");
		snprintf(label, sizeof(label), "corrupt (%s): file left as it was", cases[i].name);
		CHECK(after && !strcmp(after, cases[i].text), label);
	}

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		cleanup_free char *name = xasprintf("corrupt-file%zu", i);
		cleanup_free char *lib = new_lib(name);
		cleanup_free char *rel = xasprintf("idpool.d/%s", files[i].name);
		cleanup_free char *want_path =
		    xasprintf("%s/idpool.d/%s is corrupt", lib, files[i].name);
		cleanup_free char *after = NULL;
		struct ward_idpool p = pool(lib, 16);
		struct ward_err err = {0};
		struct ward_idrange r;
		char label[160];

		put_at(lib, rel, files[i].text);
		snprintf(label, sizeof(label), "corrupt idpool.d (%s): acquire fails",
			 files[i].label);
		CHECK(ward_idpool_acquire(&p, "pod:b/new", "c1", 1, &r, &err) < 0, label);
		snprintf(label, sizeof(label), "corrupt idpool.d (%s): error names the file",
			 files[i].label);
		CHECK_STR_CONTAINS(err.msg, want_path, label);
		snprintf(label, sizeof(label), "corrupt idpool.d (%s): error says what is wrong",
			 files[i].label);
		CHECK_STR_CONTAINS(err.msg, files[i].want, label);
		after = text_at(lib, rel);
		snprintf(label, sizeof(label), "corrupt idpool.d (%s): file left as it was",
			 files[i].label);
		CHECK(after && !strcmp(after, files[i].text), label);
	}
	{
		cleanup_free char *lib = new_lib("corrupt-dup");
		struct ward_idpool p = pool(lib, 16);
		struct ward_err err = {0};
		put_at(lib, "idpool.d/524288", "{\"owner\": \"pod:a\", \"size\": 131072}");
		put_at(lib, "idpool.d/589824", "{\"owner\": \"pod:b\", \"size\": 65536}");
		CHECK(ward_idpool_dump(&p, &err) == NULL, "corrupt idpool.d: overlap refused");
		CHECK_STR_CONTAINS(err.msg, "\"pod:a\" and \"pod:b\" overlap",
				   "corrupt idpool.d: the overlap named");
	}

	/* release and dump refuse too */
	cleanup_free char *lib = new_lib("corrupt-other");
	struct ward_idpool p = pool(lib, 16);
	struct ward_err err = {0};
	put_at(lib, "idpool.json", "garbage");
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
	CHECK(n_allocs(&p) == PROCS * EACH, "the pool lists exactly 200 allocations");
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
	test_files();
	test_migrate();
	test_map();
	test_map_disagrees();
	test_rebuild_corrupt();
	test_torn_free();
	test_file_limit();
	test_add_fails();
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
