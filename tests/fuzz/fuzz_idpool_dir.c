/* libFuzzer target: the ID pool's directories, names and contents. The input is a list of
 * files separated by NUL bytes, each "NAME\nCONTENT": written into idpool2.d/ of a private
 * lib_dir with the marker idpool.json of a migrated pool (a NAME "old/N" goes into the older
 * idpool.d/ instead, which the first change migrates; "new/N" into idpool2.d.new/). A map
 * whose header starts "ward-idpool-map 1 boot=" gets this boot's id written into it, so that
 * the pool trusts it (a fuzzed header never carries the real one). Then a dump, a new pod's
 * acquire and release, an acquire of each owner the dump listed, and a dump again. What the
 * pool promises is checked: a new range lies in the pool, overlaps no fixed range, never
 * holds host ID 0 or 4294967295; where the dump (ward check) found the pool sound, which
 * with a trusted map means every file's allocation has its record, the new range overlaps
 * no allocation it listed and an owner it listed gets its own range back. */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_idpool.h"

#define MARKER "{\"version\": 2, \"allocations\": \"idpool2.d\"}\n"

#define MAP_PREFIX "ward-idpool-map 1 boot="

static char dir[64];
static char boot[37]; /* this boot's id, "" where it cannot be read */

static void read_boot_id(void)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && read(fd, boot, 36) == 36)
		boot[36] = '\0';
	else
		boot[0] = '\0';
	if (fd >= 0)
		close(fd);
}

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
	/* The map's header with this boot's id: the map is trusted, its code fuzzed. */
	if (!strcmp(sub, "idpool2.d") && !strcmp(name, "map") && boot[0] &&
	    (size_t)(end - nl - 1) >= strlen(MAP_PREFIX) + 36 &&
	    !memcmp(nl + 1, MAP_PREFIX, strlen(MAP_PREFIX)) &&
	    pwrite(fd, boot, 36, (off_t)strlen(MAP_PREFIX)) != 36)
		abort();
	close(fd);
}

/* {"allocations": [...]}: the owner and range of the first line (a whole one) of each
 * record's file in idpool2.d, whatever the rest says; *untrusted: the map is missing or its
 * header is not this boot's, so that a change builds it again from every file. */
static json_t *first_lines(bool *untrusted)
{
	char path[128], head[65], text[8192];
	json_t *allocs = json_array();
	struct dirent *e;
	DIR *d;
	int fd;

	snprintf(head, sizeof(head), "%s%-40s\n", MAP_PREFIX, boot);
	snprintf(path, sizeof(path), "%s/idpool2.d/map", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	*untrusted = fd < 0 || read(fd, text, 64) != 64 || memcmp(text, head, 64) || !boot[0];
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/idpool2.d", dir);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		const char *c = e->d_name;
		ssize_t n;
		char *nl;
		json_t *j;

		if (!*c || (c[0] == '0' && c[1]) || strspn(c, "0123456789") != strlen(c))
			continue;
		fd = openat(dirfd(d), c, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		n = fd >= 0 ? read(fd, text, sizeof(text)) : -1;
		if (fd >= 0)
			close(fd);
		nl = n > 0 ? memchr(text, '\n', (size_t)n) : NULL;
		j = nl ? json_loadb(text, (size_t)(nl - text), 0, NULL) : NULL;
		if (json_is_string(json_object_get(j, "owner")) &&
		    json_is_integer(json_object_get(j, "start")) &&
		    json_is_integer(json_object_get(j, "size")))
			json_array_append_new(
			    allocs, json_pack("{s:O,s:O,s:O}", "owner", json_object_get(j, "owner"),
					      "start", json_object_get(j, "start"), "size",
					      json_object_get(j, "size")));
		json_decref(j);
	}
	if (d)
		closedir(d);
	return json_pack("{s:o}", "allocations", allocs);
}

/* Whether list (a dump's or first_lines') has owner with range r. */
static bool has_range(json_t *list, const char *owner, struct ward_idrange r)
{
	json_t *a;
	size_t i;

	json_array_foreach(json_object_get(list, "allocations"), i, a)
	{
		if (json_is_string(json_object_get(a, "owner")) &&
		    !strcmp(json_string_value(json_object_get(a, "owner")), owner) &&
		    json_integer_value(json_object_get(a, "start")) == (json_int_t)r.start)
			return true;
	}
	return false;
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
	json_t *before, *files, *a;
	bool untrusted;
	size_t i;
	int fd;

	if (!dir[0])
		read_boot_id();
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

	files = first_lines(&untrusted);
	before = dump(&pool);
	if (ward_idpool_acquire(&pool, OWNER, "c1", 1, &r, &err) == 0) {
		bool listed = false;
		json_array_foreach(json_object_get(before, "allocations"), i, a) listed =
		    listed || !strcmp(json_string_value(json_object_get(a, "owner")), OWNER);
		/* its own allocation, found in a file the dump refused */
		listed = listed || has_range(files, OWNER, r);
		if (!listed)
			check_new_range(before, r);
		/* The map built again from every file: the range of each whole first line is
		 * kept, also that of a file that does not read (the dump refused it). */
		if (!listed && untrusted)
			check_new_range(files, r);
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
	json_decref(files);
	json_decref(dump(&pool));
	return 0;
}
