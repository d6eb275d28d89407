/* The JSON reader: decoding (duplicate keys refused, integers above INT64_MAX kept) and
 * typed getters that name the field path of what they refuse ("linux.resources.memory.limit:
 * must be an integer"). spec.c (config.json), cgroup_res.c (linux.resources) and config.c
 * (ward.json, tenants) read through it. */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- decoding (big integers)
 * --------------------------------------------------------------------- */

/* jansson keeps integers as long long, but OCI has uint64 fields, and Go writes
 * RLIM_INFINITY as 18446744073709551615 (docker --ulimit memlock=-1 does). Before
 * decoding, integer literals in (INT64_MAX, UINT64_MAX] are rewritten as strings
 * "\u0000u64:<digits>", which only the unsigned getters below accept. No other string
 * can hold a NUL: a document that has a \u0000 escape of its own is decoded unchanged
 * (and rejected by jansson). Columns in decode errors after such a number shift. */
#define BIG_MARK     "\\u0000u64:" /* as written in JSON text */
#define BIG_MARK_RAW "u64:"	   /* after the NUL, as decoded */

static bool digits_above_int64(const char *p, size_t n)
{
	static const char i64max[] = "9223372036854775807";
	static const char u64max[] = "18446744073709551615";
	if (n < sizeof(i64max) - 1 || n > sizeof(u64max) - 1 || p[0] == '0')
		return false;
	if (n == sizeof(i64max) - 1 && memcmp(p, i64max, n) <= 0)
		return false;
	if (n == sizeof(u64max) - 1 && memcmp(p, u64max, n) > 0)
		return false;
	return true;
}

/* One pass over the text: returns the number of integers to rewrite, copying the
 * rewritten text to out unless out is NULL; -1 if a string holds a \u0000 escape. */
static ssize_t mark_pass(const char *s, size_t len, char *out, size_t *out_len)
{
	static const char mark[] = "\"" BIG_MARK;
	size_t o = 0;
	ssize_t marks = 0;
	bool in_str = false;

#define EMIT(p, n)                                                                                 \
	do {                                                                                       \
		if (out)                                                                           \
			memcpy(out + o, (p), (n));                                                 \
		o += (n);                                                                          \
	} while (0)
	for (size_t i = 0; i < len;) {
		size_t j = i + 1;
		if (in_str) {
			if (s[i] == '\\' && i + 1 < len) {
				if (s[i + 1] == 'u' && len - i >= 6 &&
				    memcmp(s + i + 2, "0000", 4) == 0)
					return -1;
				j = i + 2;
			} else if (s[i] == '"') {
				in_str = false;
			}
		} else if (s[i] == '"') {
			in_str = true;
		} else if (s[i] == '-' || (s[i] >= '0' && s[i] <= '9')) {
			bool plain = s[i] != '-';
			for (j = i + 1; j < len && s[j] && strchr("0123456789+-.eE", s[j]); j++)
				if (s[j] < '0' || s[j] > '9')
					plain = false;
			if (plain && digits_above_int64(s + i, j - i)) {
				EMIT(mark, sizeof(mark) - 1);
				EMIT(s + i, j - i);
				EMIT("\"", 1);
				marks++;
				i = j;
				continue;
			}
		}
		EMIT(s + i, j - i);
		i = j;
	}
#undef EMIT
	if (out)
		out[o] = '\0';
	*out_len = o;
	return marks;
}

/* Returns a rewritten copy, or NULL when nothing needs rewriting. */
static char *mark_big_ints(const char *s, size_t len, size_t *out_len)
{
	char *out;
	if (mark_pass(s, len, NULL, out_len) <= 0)
		return NULL;
	out = xmalloc(*out_len + 1);
	mark_pass(s, len, out, out_len);
	return out;
}

/* The digits of a marker string, or NULL if v is not one. */
static const char *big_int_digits(json_t *v)
{
	const char *s;
	if (!json_is_string(v) || json_string_length(v) < 1 + strlen(BIG_MARK_RAW))
		return NULL;
	s = json_string_value(v);
	if (s[0] != '\0' || memcmp(s + 1, BIG_MARK_RAW, strlen(BIG_MARK_RAW)) != 0)
		return NULL;
	return s + 1 + strlen(BIG_MARK_RAW);
}

/* Serialize v, turning marker strings back into the integers they were. */
char *ward_json_dumps(json_t *v, size_t flags)
{
	static const char mark[] = "\"" BIG_MARK;
	char *text = json_dumps(v, flags);
	char *r, *w, *m;
	if (!text)
		abort(); /* only on OOM, like xmalloc */
	/* "<mark>DIGITS" -> DIGITS, in place (the text only shrinks) */
	r = w = text;
	while ((m = strstr(r, mark))) {
		memmove(w, r, (size_t)(m - r));
		w += m - r;
		r = m + sizeof(mark) - 1;
		while (*r && *r != '"')
			*w++ = *r++;
		if (*r)
			r++;
	}
	memmove(w, r, strlen(r) + 1);
	return text;
}

json_t *ward_json_from_u64(uint64_t v)
{
	char buf[64];
	int n;
	if (v <= INT64_MAX)
		return json_integer((json_int_t)v);
	n = snprintf(buf, sizeof(buf), "%c" BIG_MARK_RAW "%" PRIu64, '\0', v);
	return json_stringn(buf, (size_t)n);
}

/* Decode a JSON object. Duplicate keys are rejected: two parsers reading one document
 * two ways is how policy checks get bypassed. */
json_t *ward_json_decode(const char *json, size_t len, struct ward_err *err)
{
	json_error_t jerr;
	cleanup_free char *marked = NULL;
	size_t mlen = 0;
	size_t flags = JSON_REJECT_DUPLICATES;
	json_t *root;

	if (!json) {
		ward_fail(err, EINVAL, "no JSON text");
		return NULL;
	}
	marked = mark_big_ints(json, len, &mlen);
	if (marked)
		flags |= JSON_ALLOW_NUL;
	root = json_loadb(marked ? marked : json, marked ? mlen : len, flags, &jerr);
	if (!root) {
		ward_fail(err, 0, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column,
			  jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		ward_fail(err, 0, "must be a JSON object");
		return NULL;
	}
	return root;
}

/* ---- field paths and errors --------------------------------------------------------- */

/* Append strings to buf (WARD_JSON_PATH_MAX bytes), truncating; parent may be buf itself. */
static const char *fp_cat(char *buf, const char *parent, const char *a, const char *b,
			  const char *c)
{
	const char *parts[] = {a, b, c};
	size_t n;
	if (parent != buf) {
		buf[0] = '\0';
		if (parent)
			strncat(buf, parent, WARD_JSON_PATH_MAX - 1);
	}
	n = strlen(buf);
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		size_t l = parts[i] ? strlen(parts[i]) : 0;
		if (l > WARD_JSON_PATH_MAX - 1 - n)
			l = WARD_JSON_PATH_MAX - 1 - n;
		memcpy(buf + n, parts[i], l);
		n += l;
	}
	buf[n] = '\0';
	return buf;
}

/* "parent.key", or "key" at the top. */
const char *ward_json_path_key(char *buf, const char *parent, const char *key)
{
	return fp_cat(buf, parent, parent && *parent ? "." : "", key, "");
}

/* "parent[i]" */
const char *ward_json_path_idx(char *buf, const char *parent, size_t i)
{
	char idx[24];
	snprintf(idx, sizeof(idx), "%zu", i);
	return fp_cat(buf, parent, "[", idx, "]");
}

int ward_json_bad(struct ward_err *err, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ward_failv(err, 0, fmt, ap);
	va_end(ap);
	return ward_wrap(err, "%s", path);
}

/* Member of an object; JSON null reads as absent. */
json_t *ward_json_member(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_null(v) ? NULL : v;
}

json_t *ward_json_list_file(const char *text, size_t len, int version, const char *key,
			    json_t **list, char *why, size_t why_len)
{
	json_error_t jerr;
	json_t *doc, *v;
	const char *k;

	if (len == 0) {
		snprintf(why, why_len, "the file is empty");
		return NULL;
	}
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		snprintf(why, why_len, "line %d: %s", jerr.line, jerr.text);
		return NULL;
	}
	if (!json_is_object(doc)) {
		snprintf(why, why_len, "expected a JSON object");
		goto bad;
	}
	json_object_foreach(doc, k, v)
	{
		if (strcmp(k, "version") && strcmp(k, key)) {
			snprintf(why, why_len, "unknown key \"%.64s\"", k);
			goto bad;
		}
	}
	v = json_object_get(doc, "version");
	if (!json_is_integer(v) || json_integer_value(v) != version) {
		snprintf(why, why_len, "version: expected %d", version);
		goto bad;
	}
	*list = json_object_get(doc, key);
	if (json_is_array(*list))
		return doc;
	snprintf(why, why_len, "%s: expected an array", key);
bad:
	json_decref(doc);
	return NULL;
}

/* ---- typed getters: value level --------------------------------------------------- */

/* A string, not a big-integer marker: a NUL inside can only be one, i.e. the text was a
 * number. */
static bool plain_string(json_t *v)
{
	return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

int ward_json_str_ref(json_t *v, const char *path, const char **out, struct ward_err *err)
{
	if (!plain_string(v))
		return ward_json_bad(err, path, "must be a string");
	*out = json_string_value(v);
	return 0;
}

int ward_json_str(json_t *v, const char *path, char **out, struct ward_err *err)
{
	const char *s = NULL;
	if (ward_json_str_ref(v, path, &s, err) < 0)
		return -1;
	free(*out);
	*out = xstrdup(s);
	return 0;
}

int ward_json_u64(json_t *v, const char *path, uint64_t max, uint64_t *out, struct ward_err *err)
{
	const char *digits = big_int_digits(v);
	uint64_t x;
	if (json_is_integer(v) && json_integer_value(v) >= 0)
		x = (uint64_t)json_integer_value(v);
	else if (digits && parse_u64(digits, &x) == 0)
		;
	else
		return ward_json_bad(err, path, "must be a non-negative integer");
	if (x > max)
		return ward_json_bad(err, path, "must be at most %" PRIu64, max);
	*out = x;
	return 0;
}

int ward_json_u32(json_t *v, const char *path, uint32_t *out, struct ward_err *err)
{
	uint64_t x;
	if (ward_json_u64(v, path, UINT32_MAX, &x, err) < 0)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

int ward_json_i64(json_t *v, const char *path, int64_t min, int64_t max, int64_t *out,
		  struct ward_err *err)
{
	int64_t x;
	if (big_int_digits(v))
		return ward_json_bad(
		    err, path, "must be an integer between %" PRId64 " and %" PRId64, min, max);
	if (!json_is_integer(v))
		return ward_json_bad(err, path, "must be an integer");
	x = json_integer_value(v);
	if (x < min || x > max)
		return ward_json_bad(
		    err, path, "must be an integer between %" PRId64 " and %" PRId64, min, max);
	*out = x;
	return 0;
}

int ward_json_bool(json_t *v, const char *path, bool *out, struct ward_err *err)
{
	if (!json_is_boolean(v))
		return ward_json_bad(err, path, "must be a boolean");
	*out = json_is_true(v);
	return 0;
}

static bool is_abs(const char *p)
{
	return p && p[0] == '/';
}

/* Array of strings -> NULL-terminated vector (an empty array gives an empty vector). */
int ward_json_strv(json_t *v, const char *path, unsigned flags, char ***out, struct ward_err *err)
{
	cleanup_strv char **vec = NULL;
	char p[WARD_JSON_PATH_MAX];
	size_t i;
	json_t *e;

	if (!json_is_array(v) || ((flags & WARD_JSON_STRV_NONEMPTY) && json_array_size(v) == 0))
		return ward_json_bad(err, path, "must be %s array of strings",
				     (flags & WARD_JSON_STRV_NONEMPTY) ? "a non-empty" : "an");
	vec = xcalloc(json_array_size(v) + 1, sizeof(char *));
	/* An element's path is made for its error only: these are the long lists (a seccomp
	 * profile's syscall names, an environment), and a path costs more than the copy. */
	json_array_foreach(v, i, e)
	{
		if (!plain_string(e))
			return ward_json_bad(err, ward_json_path_idx(p, path, i),
					     "must be a string");
		vec[i] = xstrdup(json_string_value(e));
		if ((flags & WARD_JSON_STRV_ENV) && (vec[i][0] == '=' || !strchr(vec[i], '=')))
			return ward_json_bad(err, ward_json_path_idx(p, path, i),
					     "must be KEY=VALUE, got \"%s\"", vec[i]);
	}
	strv_free(*out);
	*out = steal_ptr(vec);
	return 0;
}

/* ---- typed getters: object member level --------------------------------------------
 * opt_*: 0 absent (out untouched), 1 set, -1 error. req_*: 0 set, -1 error/missing. */

/* Member key of o (NULL if absent or null), with its field path written to p. */
static json_t *field(json_t *o, const char *parent, const char *key, char *p)
{
	ward_json_path_key(p, parent, key);
	return ward_json_member(o, key);
}

int ward_json_missing(struct ward_err *err, const char *parent, const char *key)
{
	char p[WARD_JSON_PATH_MAX];
	return ward_json_bad(err, ward_json_path_key(p, parent, key), "missing");
}

const char *ward_json_str_at(json_t *o, const char *key)
{
	return key ? json_string_value(json_object_get(o, key)) : NULL;
}

char *ward_json_str_or(json_t *o, const char *key, const char *dflt)
{
	json_t *v = json_object_get(o, key);
	const char *s = json_is_string(v) ? json_string_value(v) : dflt;
	return s ? xstrdup(s) : NULL;
}

/* A req_* from its opt_*: absent is "missing". */
static int required(int r, struct ward_err *err, const char *parent, const char *key)
{
	return r == 0 ? ward_json_missing(err, parent, key) : r < 0 ? -1 : 0;
}

/* ward_json_opt_NAME and ward_json_req_NAME (json.h) for values of type TYPE, read by CONV
 * (an expression of the member v and its path p). */
#define OPT_REQ(name, type, conv)                                                                  \
	int ward_json_opt_##name(json_t *o, const char *parent, const char *key, type *out,        \
				 struct ward_err *err)                                             \
	{                                                                                          \
		char p[WARD_JSON_PATH_MAX];                                                        \
		json_t *v = field(o, parent, key, p);                                              \
		return !v ? 0 : (conv) < 0 ? -1 : 1;                                               \
	}                                                                                          \
	int ward_json_req_##name(json_t *o, const char *parent, const char *key, type *out,        \
				 struct ward_err *err)                                             \
	{                                                                                          \
		return required(ward_json_opt_##name(o, parent, key, out, err), err, parent, key); \
	}

OPT_REQ(str, char *, ward_json_str(v, p, out, err))
OPT_REQ(u64, uint64_t, ward_json_u64(v, p, UINT64_MAX, out, err))
OPT_REQ(u32, uint32_t, ward_json_u32(v, p, out, err))
#undef OPT_REQ

int ward_json_opt_i64(json_t *o, const char *parent, const char *key, int64_t min, int64_t max,
		      int64_t *out, struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX];
	json_t *v = field(o, parent, key, p);
	return !v ? 0 : ward_json_i64(v, p, min, max, out, err) < 0 ? -1 : 1;
}

int ward_json_opt_int(json_t *o, const char *parent, const char *key, int min, int max, int *out,
		      struct ward_err *err)
{
	int64_t x;
	int r = ward_json_opt_i64(o, parent, key, min, max, &x, err);
	if (r > 0)
		*out = (int)x;
	return r;
}

int ward_json_opt_bool(json_t *o, const char *parent, const char *key, bool *out,
		       struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX];
	json_t *v = field(o, parent, key, p);
	return !v ? 0 : ward_json_bool(v, p, out, err) < 0 ? -1 : 1;
}

int ward_json_opt_strv(json_t *o, const char *parent, const char *key, unsigned flags, char ***out,
		       struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX];
	json_t *v = field(o, parent, key, p);
	return !v ? 0 : ward_json_strv(v, p, flags, out, err) < 0 ? -1 : 1;
}

/* An optional object member: NULL with *r = 0 if absent, *r = -1 if not an object. */
/* An optional member of JSON type t ("must be " what otherwise). */
static json_t *opt_typed(json_t *o, const char *parent, const char *key, json_type t,
			 const char *what, int *r, struct ward_err *err)
{
	json_t *v = ward_json_member(o, key);
	char p[WARD_JSON_PATH_MAX];
	*r = 0;
	if (v && json_typeof(v) != t) {
		*r = ward_json_bad(err, ward_json_path_key(p, parent, key), "must be %s", what);
		return NULL;
	}
	return v;
}

json_t *ward_json_opt_obj(json_t *o, const char *parent, const char *key, int *r,
			  struct ward_err *err)
{
	return opt_typed(o, parent, key, JSON_OBJECT, "an object", r, err);
}

json_t *ward_json_opt_arr(json_t *o, const char *parent, const char *key, int *r,
			  struct ward_err *err)
{
	return opt_typed(o, parent, key, JSON_ARRAY, "an array", r, err);
}

/* Array element that must be an object. */
json_t *ward_json_elem_obj(json_t *arr, size_t i, const char *path, struct ward_err *err)
{
	json_t *e = json_array_get(arr, i);
	if (!json_is_object(e)) {
		ward_json_bad(err, path, "must be an object");
		return NULL;
	}
	return e;
}

int ward_json_req_abs_path(json_t *o, const char *parent, const char *key, char **out,
			   struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX];
	if (ward_json_req_str(o, parent, key, out, err) < 0)
		return -1;
	if (!is_abs(*out))
		return ward_json_bad(err, ward_json_path_key(p, parent, key),
				     "must be an absolute path, got \"%s\"", *out);
	return 0;
}

/* Object of string values -> parallel NULL-terminated vectors. */
int ward_json_str_map(json_t *o, const char *parent, const char *key, char ***keys, char ***values,
		      struct ward_err *err)
{
	char p[WARD_JSON_PATH_MAX], q[WARD_JSON_PATH_MAX];
	const char *k;
	json_t *v;
	size_t i = 0;
	int r;
	json_t *obj = ward_json_opt_obj(o, parent, key, &r, err);
	if (!obj)
		return r;
	ward_json_path_key(p, parent, key);
	*keys = xcalloc(json_object_size(obj) + 1, sizeof(char *));
	*values = xcalloc(json_object_size(obj) + 1, sizeof(char *));
	json_object_foreach(obj, k, v)
	{
		if (ward_json_str(v, ward_json_path_key(q, p, k), &(*values)[i], err) < 0)
			return -1;
		(*keys)[i++] = xstrdup(k);
	}
	return 0;
}
