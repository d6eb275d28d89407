/* The ID pool's files: an allocation's text (its first line, the users' log), the checks of
 * a whole pool, the map's records as text, the names of idpool2.d (idpool.c has the format;
 * idpool_store.h what each function does). */
#include "idpool_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

void idpool_alloc_free(struct alloc *a)
{
	free(a->owner);
	strv_free(a->users);
	*a = (struct alloc){0};
}

void idpool_set_free(struct pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		idpool_alloc_free(&p->v[i]);
	free(p->v);
	*p = (struct pool){0};
}

bool idpool_owner_valid(const char *o)
{
	if (!o)
		return false;
	if (!strncmp(o, "pod:", 4))
		return o[4] != '\0';
	if (!strncmp(o, "tenant:", 7))
		return o[7] != '\0';
	return false;
}

bool idpool_is_pod(const char *o)
{
	return !strncmp(o, "pod:", 4);
}

char idpool_owner_type(const char *o)
{
	return idpool_is_pod(o) ? 'p' : 't';
}

uint32_t idpool_owner_key(const char *o)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *c = (const unsigned char *)o; *c; c++)
		h = (h ^ *c) * 16777619u;
	return h;
}

bool idpool_has_user(char *const *users, const char *u)
{
	for (size_t i = 0; users && users[i]; i++)
		if (!strcmp(users[i], u))
			return true;
	return false;
}

void idpool_drop_user(char **users, const char *u)
{
	size_t w = 0;
	for (size_t r = 0; users && users[r]; r++) {
		if (!strcmp(users[r], u))
			free(users[r]);
		else
			users[w++] = users[r];
	}
	if (users)
		users[w] = NULL;
}

/* ---- the directory and the lock ---- */

int idpool_open_dir(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* ---- reading an allocation ---- */

int idpool_bad(struct ward_err *err, const struct ward_idpool *p, const char *file,
	       const char *where, const char *what)
{
	return fail_as(err, EINVAL, "%s/%s is corrupt: %s%s (fix or remove it by hand)", p->lib_dir,
		       file, where, what ? what : "");
}

static int get_u32(json_t *o, const char *key, uint32_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > ID_LIMIT)
		return -1;
	*out = (uint32_t)json_integer_value(v);
	return 0;
}

int idpool_parse_alloc(json_t *a, const char *file, const char *where, enum alloc_format fmt,
		       uint32_t start, struct alloc *out, const struct ward_idpool *p,
		       struct ward_err *err)
{
	char what[160];
	json_t *owner = json_object_get(a, "owner"), *users = json_object_get(a, "users"), *u;
	const char *key;
	json_t *val;
	size_t j;

	if (!json_is_object(a))
		return idpool_bad(err, p, file, where, ": expected an object");
	json_object_foreach(a, key, val)
	{
		if (strcmp(key, "owner") && strcmp(key, "size") && strcmp(key, "users") &&
		    (fmt == FMT_OLD_FILE || strcmp(key, "start"))) {
			snprintf(what, sizeof(what), ": unknown key \"%.64s\"", key);
			return idpool_bad(err, p, file, where, what);
		}
	}
	if (!json_is_string(owner) || !idpool_owner_valid(json_string_value(owner)))
		return idpool_bad(err, p, file, where,
				  ".owner: expected a string \"pod:...\" or \"tenant:...\"");
	out->start = start;
	if (fmt != FMT_OLD_FILE && get_u32(a, "start", &out->start) < 0)
		return idpool_bad(err, p, file, where,
				  ".start: expected an integer in 0..4294967295");
	if (get_u32(a, "size", &out->size) < 0 || out->size == 0 || out->size % SLICE)
		return idpool_bad(err, p, file, where,
				  ".size: expected a positive multiple of 65536");
	if (out->start == 0 || (uint64_t)out->start + out->size > ID_LIMIT)
		return idpool_bad(
		    err, p, file, where,
		    ": range contains host ID 0 or 4294967295, which are never mapped");
	if ((users || fmt == FMT_FIRST_LINE) && !json_is_array(users))
		return idpool_bad(err, p, file, where, ".users: expected an array of strings");
	json_array_foreach(users, j, u)
	{
		if (!json_is_string(u))
			return idpool_bad(err, p, file, where,
					  ".users: expected an array of strings");
		if (fmt == FMT_FIRST_LINE && idpool_has_user(out->users, json_string_value(u)))
			return idpool_bad(err, p, file, where, ".users: a user twice");
		out->users = strv_append(out->users, json_string_value(u));
	}
	out->owner = xstrdup(json_string_value(owner));
	return 0;
}

/* A line of the users' log: {"add": USER} or {"remove": USER}, applied to a. */
static int apply_log_line(json_t *l, struct alloc *a, const char *file, const char *where,
			  const struct ward_idpool *p, struct ward_err *err)
{
	const char *key = NULL, *user;
	json_t *val = NULL;

	if (json_is_object(l) && json_object_size(l) == 1) {
		void *it = json_object_iter(l);
		key = json_object_iter_key(it);
		val = json_object_iter_value(it);
	}
	if (!key || (strcmp(key, "add") && strcmp(key, "remove")) || !json_is_string(val))
		return idpool_bad(
		    err, p, file, where,
		    ": expected {\"add\": USER} or {\"remove\": USER} (a user's string)");
	user = json_string_value(val);
	if (!strcmp(key, "add")) {
		if (idpool_has_user(a->users, user))
			return idpool_bad(err, p, file, where, ": adds a user who is there");
		a->users = strv_append(a->users, user);
	} else {
		if (!idpool_has_user(a->users, user))
			return idpool_bad(err, p, file, where, ": removes a user who is not there");
		idpool_drop_user(a->users, user);
	}
	return 0;
}

int idpool_parse_file(const char *text, size_t len, const char *file, const struct ward_idpool *p,
		      struct alloc *a, size_t *committed, struct ward_err *err)
{
	const char *end = text, *line = text, *nl;
	size_t no = 0;

	for (const char *c = text; c < text + len; c++)
		if (*c == '\n')
			end = c + 1;
	*committed = (size_t)(end - text);
	if (*committed == 0)
		return 1; /* empty, or a first line whose writer was stopped: never there */
	for (; line < end; line = nl + 1) {
		char where[32];
		json_error_t jerr;
		json_t *j;
		int rc;

		nl = memchr(line, '\n', (size_t)(end - line));
		snprintf(where, sizeof(where), "line %zu", ++no);
		j = json_loadb(line, (size_t)(nl - line), JSON_REJECT_DUPLICATES, &jerr);
		if (!j) {
			char what[200];
			snprintf(what, sizeof(what), ": %s", jerr.text);
			return idpool_bad(err, p, file, where, what);
		}
		if (no == 1) {
			rc = idpool_parse_alloc(j, file, where, FMT_FIRST_LINE, 0, a, p, err);
		} else {
			rc = apply_log_line(j, a, file, where, p, err);
		}
		json_decref(j);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int idpool_first_range(const char *text, size_t len, struct alloc *a)
{
	const char *nl = memchr(text, '\n', len);
	json_t *j = nl ? json_loadb(text, (size_t)(nl - text), 0, NULL) : NULL;
	json_t *owner = json_object_get(j, "owner");
	int rc = -1;

	if (json_is_string(owner) && idpool_owner_valid(json_string_value(owner)) &&
	    get_u32(j, "start", &a->start) == 0 && get_u32(j, "size", &a->size) == 0 && a->start &&
	    a->size && a->size % SLICE == 0 && (uint64_t)a->start + a->size <= ID_LIMIT) {
		a->owner = xstrdup(json_string_value(owner));
		rc = 0;
	}
	json_decref(j);
	return rc;
}

void idpool_rec_name(char buf[16], size_t i)
{
	snprintf(buf, 16, "%u", (unsigned)(i % MAP_MAX_REC));
}

static int cmp_start(const void *a, const void *b)
{
	const struct alloc *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int idpool_set_check(struct pool *pl, const struct ward_idpool *p, const char *file,
		     struct ward_err *err)
{
	for (size_t i = 0; i < pl->n; i++)
		for (size_t j = 0; j < i; j++) {
			if (strcmp(pl->v[j].owner, pl->v[i].owner))
				continue;
			char what[400];
			snprintf(what, sizeof(what),
				 "two allocations (%u and %u) have the same owner \"%.200s\"",
				 pl->v[j].start, pl->v[i].start, pl->v[i].owner);
			return idpool_bad(err, p, file, what, NULL);
		}
	/* Overlapping allocations mean the files were edited by hand or something is badly
	 * wrong: handing out more IDs on top would only spread the damage. */
	if (pl->n > 1) /* v is NULL for an empty pool */
		qsort(pl->v, pl->n, sizeof(*pl->v), cmp_start);
	for (size_t i = 1; i < pl->n; i++) {
		const struct alloc *x = &pl->v[i - 1], *y = &pl->v[i];
		if ((uint64_t)x->start + x->size > y->start) {
			char what[640];
			snprintf(what, sizeof(what), "\"%.200s\" and \"%.200s\" overlap", x->owner,
				 y->owner);
			return idpool_bad(err, p, file, what, NULL);
		}
	}
	return 0;
}

struct alloc *idpool_set_add(struct pool *pl)
{
	pl->v = xrealloc(pl->v, (pl->n + 1) * sizeof(*pl->v));
	pl->v[pl->n] = (struct alloc){0};
	return &pl->v[pl->n++];
}

bool idpool_parse_index(const char *name, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (!*name || (name[0] == '0' && name[1]) || strlen(name) > 10)
		return false;
	for (const char *c = name; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		v = v * 10 + (uint64_t)(*c - '0');
	}
	*out = v;
	return v <= max;
}

bool idpool_is_tmp_name(const char *name)
{
	size_t n = strlen(name);
	return name[0] == '.' && n > 5 && !strcmp(name + n - 4, ".tmp");
}

int idpool_each_name(int pdfd, const char *dir, const struct ward_idpool *p,
		     int (*each)(const char *name, void *arg), void *arg, struct ward_err *err)
{
	int dfd = fcntl(pdfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	int rc = 0;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return ward_fail_errno(err, "ID pool: read %s/%s", p->lib_dir, dir);
	}
	while (rc == 0 && (errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = each(de->d_name, arg);
	if (rc == 0 && errno)
		rc = ward_fail_errno(err, "ID pool: read %s/%s", p->lib_dir, dir);
	closedir(d);
	return rc < 0 ? -1 : 0;
}

char *idpool_alloc_text(const struct alloc *a)
{
	json_t *users = json_array();
	for (size_t j = 0; a->users && a->users[j]; j++)
		json_array_append_new(users, json_string(a->users[j]));
	json_t *j = json_pack("{s:s,s:I,s:I,s:o}", "owner", a->owner, "start", (json_int_t)a->start,
			      "size", (json_int_t)a->size, "users", users);
	char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	char *line = text ? xasprintf("%s\n", text) : NULL;
	free(text);
	json_decref(j);
	return line;
}

char *idpool_log_text(bool add, const char *user)
{
	json_t *j = json_pack("{s:s}", add ? "add" : "remove", user);
	char *text = json_dumps(j, JSON_COMPACT);
	char *line = text ? xasprintf("%s\n", text) : NULL;
	free(text);
	json_decref(j);
	return line;
}

void idpool_map_header(char buf[MAP_HDR + 1])
{
	char boot[37];
	/* The boot this map is for (a pod's files are not fsync'd: after a crash, the disk
	 * holds any part of the map and of the files). "unknown" without /proc: the map is
	 * then built again by each change. */
	ward_boot_id(boot);
	snprintf(buf, MAP_HDR + 1, "ward-idpool-map 1 boot=%-40s\n", boot);
}

void idpool_rec_text(const struct rec *r, char buf[MAP_REC + 1])
{
	snprintf(buf, MAP_REC + 1, "%010u %010u %c%08x\n", r->start, r->size, r->type, r->key);
}

char *idpool_map_text(const struct rec *r, size_t n, size_t *len)
{
	char *t = xmalloc(MAP_HDR + n * MAP_REC + 1);
	idpool_map_header(t);
	for (size_t i = 0; i < n; i++)
		idpool_rec_text(&r[i], t + MAP_HDR + i * MAP_REC);
	*len = MAP_HDR + n * MAP_REC;
	return t;
}

int idpool_write_fresh(int dirfd, const char *dir, const char *tmp, const char *name,
		       const char *text, size_t len, bool durable, struct ward_err *err)
{
	cleanup_fd int fd =
	    openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0 || write_all(fd, text, len) < 0 || (durable && fsync(fd) < 0)) {
		ward_fail_errno(err, "ID pool: write %s/%s", dir, tmp);
		unlinkat(dirfd, tmp, 0);
		return -1;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0)
		return ward_fail_errno(err, "ID pool: rename %s/%s to %s", dir, tmp, name);
	if (durable && fsync(dirfd) < 0)
		return ward_fail_errno(err, "ID pool: fsync %s", dir);
	return 0;
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "dec8 reads digits little-endian");

/* 8 decimal digits at t, 8 at a time (a map of 500 records is parsed by every change;
 * one digit at a time was a quarter of its cost). Little-endian: t[0] in the low byte. */
static bool dec8(const char *t, uint64_t *out)
{
	uint64_t x, d;

	memcpy(&x, t, 8);
	d = x - 0x3030303030303030ull;
	/* every byte 0x30..0x39: high nibble 3, and the low one + 6 stays below 16 */
	if ((x & 0xf0f0f0f0f0f0f0f0ull) != 0x3030303030303030ull ||
	    ((d + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull))
		return false;
	d = (d * 10) + (d >> 8); /* pairs: t[0]t[1] in byte 0, t[2]t[3] in byte 2, ... */
	d = (((d & 0x000000ff000000ffull) * (100 + (1000000ull << 32))) +
	     (((d >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32)))) >>
	    32;
	*out = d;
	return true;
}

/* 10 decimal digits at t. */
static bool dec(const char *t, uint64_t *out)
{
	uint64_t hi;
	unsigned d0 = (unsigned char)t[8] - '0', d1 = (unsigned char)t[9] - '0';

	if (!dec8(t, &hi) || d0 > 9 || d1 > 9)
		return false;
	*out = hi * 100 + d0 * 10 + d1;
	return true;
}

/* n hex digits (lower case) at t. */
static bool hex(const char *t, int n, uint64_t *out)
{
	/* a digit's value + 1, 0 for anything else; a table, as the keys' digits are random
	 * and a branch on digit or letter would miss half the time */
	static const uint8_t val[256] = {
	    ['0'] = 1,	['1'] = 2,  ['2'] = 3,	['3'] = 4,  ['4'] = 5,	['5'] = 6,
	    ['6'] = 7,	['7'] = 8,  ['8'] = 9,	['9'] = 10, ['a'] = 11, ['b'] = 12,
	    ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	};
	uint64_t v = 0;
	unsigned bad = 0;

	for (int i = 0; i < n; i++) {
		unsigned d = val[(unsigned char)t[i]];
		bad |= d == 0;
		v = v * 16 + d - 1;
	}
	*out = v;
	return !bad;
}

bool idpool_parse_rec(const char *t, struct rec *r)
{
	uint64_t start, size, key;

	if (!dec(t, &start) || t[10] != ' ' || !dec(t + 11, &size) || t[21] != ' ' ||
	    !hex(t + 23, 8, &key) || t[31] != '\n' || start > ID_LIMIT || size > ID_LIMIT)
		return false;
	*r = (struct rec){(uint32_t)start, (uint32_t)size, (uint32_t)key, t[22]};
	if (r->type == '-')
		return start == 0 && size == 0 && key == 0;
	return (r->type == 'p' || r->type == 't') && start && size && size % SLICE == 0 &&
	       start + size <= ID_LIMIT;
}
