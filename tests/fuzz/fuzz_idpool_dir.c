/* libFuzzer target: the ID pool's directories, names and contents. The input is a list of
 * files separated by NUL bytes, each "NAME\nCONTENT": written into idpool2.d/ of a private
 * lib_dir with the marker idpool.json of a migrated pool (a NAME "old/N" goes into the older
 * idpool.d/ instead, which the first change migrates; "new/N" into idpool2.d.new/). Then a
 * dump, a new pod's acquire and release, an acquire of each owner the dump listed, and a
 * dump again. What the pool promises is checked: a new range lies in the pool, overlaps no
 * fixed range and no allocation the dump listed, never holds host ID 0 or 4294967295; an
 * owner the dump listed gets its own range back. */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_idpool.h"

#define MARKER "{\"version\": 2, \"allocations\": \"idpool2.d\"}\n"

static char dir[64];

/* Remove everything under path, then path (two levels at most). */
static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char sub[512];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (unlinkat(dirfd(d), e->d_name, 0) < 0)
			remove_tree(sub);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

static void remove_dir(void)
{
	remove_tree(dir);
}

/* One "NAME\nCONTENT" record written under the lib_dir; bad names are passed over. */
static void put(const char *rec, size_t n)
{
	const char *nl = memchr(rec, '\n', n), *end = rec + n;
	const char *sub = "idpool2.d";
	char name[300], path[512];
	size_t len;
	int fd;

	if (!nl)
		return;
	len = (size_t)(nl - rec);
	if (len > 5 && !memcmp(rec, "old/", 4)) {
		sub = "idpool.d";
		rec += 4;
		len -= 4;
	} else if (len > 5 && !memcmp(rec, "new/", 4)) {
		sub = "idpool2.d.new";
		rec += 4;
		len -= 4;
	}
	if (len == 0 || len >= 256 || memchr(rec, '/', len) || memchr(rec, '\0', len))
		return;
	memcpy(name, rec, len);
	name[len] = '\0';
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	if (write(fd, nl + 1, (size_t)(end - nl - 1)) < 0)
		abort();
	close(fd);
}

static json_t *dump(const struct ward_idpool *pool)
{
	struct ward_err err = {0};
	char *text = ward_idpool_dump(pool, &err);
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;

	if (!text)
		fuzz_debug("dump: %s", err.msg);
	else if (!j)
		broken("a dump that is not JSON");
	free(text);
	return j;
}

static void check_new_range(json_t *before, struct ward_idrange r)
{
	json_t *a;
	size_t i;

	check_in_pool(r);
	json_array_foreach(json_object_get(before, "allocations"), i, a)
	{
		json_int_t start = json_integer_value(json_object_get(a, "start"));
		json_int_t n = json_integer_value(json_object_get(a, "size"));
		if (overlap(r.start, r.size, (uint64_t)start, (uint64_t)n))
			broken("a new range overlaps an allocation");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ward_idpool pool = FUZZ_IDPOOL(dir);
	struct ward_err err = {0};
	struct ward_idrange r;
	char path[96];
	json_t *before, *a;
	size_t i;
	int fd;

	private_dir(dir, sizeof(dir), "ward-fuzz-idpool-dir", remove_dir);
	remove_tree(dir);
	if (mkdir(dir, 0700) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/idpool2.d", dir);
	mkdir(path, 0700);
	for (size_t off = 0; off < size;) {
		const uint8_t *end = memchr(data + off, '\0', size - off);
		size_t n = end ? (size_t)(end - data) - off : size - off;
		put((const char *)data + off, n);
		off += n + 1;
	}
	snprintf(path, sizeof(path), "%s/idpool.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, MARKER, strlen(MARKER)) < 0)
		abort();
	close(fd);
	/* Without idpool2.d (only "old/" names): the older idpool.d, migrated. */
	snprintf(path, sizeof(path), "%s/idpool2.d", dir);
	if (rmdir(path) == 0) {
		snprintf(path, sizeof(path), "%s/idpool.json", dir);
		unlink(path);
	}

	before = dump(&pool);
	if (ward_idpool_acquire(&pool, OWNER, "c1", 1, &r, &err) == 0) {
		bool listed = false;
		json_array_foreach(json_object_get(before, "allocations"), i, a) listed =
		    listed || !strcmp(json_string_value(json_object_get(a, "owner")), OWNER);
		if (!listed)
			check_new_range(before, r);
		if (ward_idpool_release(&pool, OWNER, "c1", &err) < 0)
			fuzz_debug("release: %s", err.msg);
	} else {
		fuzz_debug("acquire: %s", err.msg);
	}
	json_array_foreach(json_object_get(before, "allocations"), i, a)
	{
		const char *owner = json_string_value(json_object_get(a, "owner"));
		json_int_t start = json_integer_value(json_object_get(a, "start"));
		if (!strcmp(owner, OWNER))
			continue;
		if (ward_idpool_acquire(&pool, owner, "c2", 1, &r, &err) == 0) {
			if (r.start != (uint64_t)start)
				broken("an owner the dump listed got another range");
			ward_idpool_release(&pool, owner, "c2", &err);
		}
	}
	json_decref(before);
	json_decref(dump(&pool));
	return 0;
}
