/* libFuzzer target: the ID pool's idpool.json (<lib_dir>/idpool.json, the oldest format,
 * read and migrated into idpool2.d by the first change; fuzz_idpool_dir has the newer
 * ones). The input is written as the file in a private directory without idpool2.d, then a new pod
 * acquires a range (migrating the file), gives it back, and the pool is dumped. What the pool
 * promises is checked: a new range lies in the pool, overlaps no fixed range and no allocation of
 * the file, and never holds host ID 0 or 4294967295. */
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_idpool.h"

static char dir[64];

/* The allocations of the file as written (before the acquire). */
static void check_range(const uint8_t *data, size_t size, struct ward_idrange r)
{
	json_t *root = json_loadb((const char *)data, size, 0, NULL), *a;
	json_t *allocs = json_object_get(root, "allocations");
	bool own = false;
	size_t i;

	json_array_foreach(allocs, i, a)
	{
		const char *owner = json_string_value(json_object_get(a, "owner"));
		json_int_t start = json_integer_value(json_object_get(a, "start"));
		json_int_t n = json_integer_value(json_object_get(a, "size"));
		if (owner && !strcmp(owner, OWNER)) {
			own = true;
			continue;
		}
		if (overlap(r.start, r.size, (uint64_t)start, (uint64_t)n))
			broken("the new range overlaps another owner's allocation");
	}
	json_decref(root);
	if (r.size == 0 || r.start == 0 || (uint64_t)r.start + r.size > 0xffffffffull)
		broken("a range holding host ID 0 or 4294967295");
	if (!own) /* else the owner's range as the file has it */
		check_in_pool(r);
}

/* Remove the files of path, then path (a flat directory). */
static void remove_flat_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(path);
}

/* The pool's directories, so that the next input is migrated afresh. */
static void remove_pool_dir(void)
{
	static const char *const subs[] = {"idpool2.d", "idpool2.d.new", "idpool.d",
					   "idpool.d.old"};
	char sub[96];

	for (size_t i = 0; i < sizeof(subs) / sizeof(*subs); i++) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, subs[i]);
		remove_flat_dir(sub);
	}
}

/* The private directory goes when the fuzzer exits (a crash leaves it for a look). */
static void remove_dir(void)
{
	remove_pool_dir();
	remove_flat_dir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ward_idpool pool = FUZZ_IDPOOL(dir);
	struct ward_err err = {0};
	struct ward_idrange r;
	char path[96];
	int fd;

	private_dir(dir, sizeof(dir), "ward-fuzz-idpool", remove_dir);
	remove_pool_dir();
	snprintf(path, sizeof(path), "%s/idpool.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);

	if (ward_idpool_acquire(&pool, OWNER, "c1", 1, &r, &err) == 0) {
		check_range(data, size, r);
		if (ward_idpool_release(&pool, OWNER, "c1", &err) < 0)
			broken("a pool just written cannot be read back");
	} else {
		fuzz_debug("%s", err.msg);
	}
	free(ward_idpool_dump(&pool, &err));
	return 0;
}
