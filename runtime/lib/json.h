/* The JSON reader, one for every document ward decodes. Typed getters refuse what is not
 * of their type with an error naming the field path: "PATH: must be a string".
 *
 * Paths: a caller-owned buffer of WARD_JSON_PATH_MAX bytes per level ("parent.key",
 * "parent[i]"; truncated, never overflowed). JSON null reads as absent everywhere.
 * Value getters (ward_json_str, _u64, ...): 0 or -1 with err set.
 * Member getters: opt_*: 0 absent (out untouched), 1 set, -1 error; req_*: 0 set, -1 error or
 * missing ("PATH: missing"). */
#ifndef WARD_JSON_H
#define WARD_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define WARD_JSON_PATH_MAX 256

/* Decode a JSON object. Duplicate keys are rejected (two parsers reading one document two
 * ways is how policy checks get bypassed); integers in (INT64_MAX, UINT64_MAX] are kept for
 * the unsigned getters. NULL with err set. */
json_t *ward_json_decode(const char *json, size_t len, struct ward_err *err);
/* Text of v with json_dumps's flags (JSON_COMPACT, JSON_INDENT(2), ...), the big integers
 * written back as the integers they were. */
char *ward_json_dumps(json_t *v, size_t flags);
/* A JSON integer for v; above INT64_MAX the marker the decoder makes, which the unsigned
 * getters read and ward_json_dumps writes as the integer. */
json_t *ward_json_from_u64(uint64_t v);

/* "parent.key" ("key" at the top) and "parent[i]" into buf; parent may be buf itself. */
const char *ward_json_path_key(char *buf, const char *parent, const char *key);
const char *ward_json_path_idx(char *buf, const char *parent, size_t i);
/* "PATH: message"; returns -1. */
int ward_json_bad(struct ward_err *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "parent.key: missing"; returns -1. */
int ward_json_missing(struct ward_err *err, const char *parent, const char *key);
/* Member of an object; JSON null reads as absent (NULL). */
json_t *ward_json_member(json_t *o, const char *key);
/* A store file (ledger.json, idpool.json): text, the whole file, must be {"version":
 * version, key: [...]} and nothing else. The document (json_decref it) with *list its array,
 * or NULL with why saying what is wrong ("the file is empty", "line 3: ...", "unknown key
 * \"x\"", "version: expected 1", "gpus: expected an array"). */
json_t *ward_json_list_file(const char *text, size_t len, int version, const char *key,
			    json_t **list, char *why, size_t why_len);

/* ---- value level ---- */
/* A copy into *out (the old value freed), or (_ref) the JSON's own string, valid while v is. */
int ward_json_str(json_t *v, const char *path, char **out, struct ward_err *err);
int ward_json_str_ref(json_t *v, const char *path, const char **out, struct ward_err *err);
int ward_json_u64(json_t *v, const char *path, uint64_t max, uint64_t *out, struct ward_err *err);
int ward_json_u32(json_t *v, const char *path, uint32_t *out, struct ward_err *err);
int ward_json_i64(json_t *v, const char *path, int64_t min, int64_t max, int64_t *out,
		  struct ward_err *err);
int ward_json_bool(json_t *v, const char *path, bool *out, struct ward_err *err);

enum {
	WARD_JSON_STRV_NONEMPTY = 1 << 0, /* at least one element */
	WARD_JSON_STRV_ENV = 1 << 1,	  /* every element is KEY=VALUE */
};
/* Array of strings -> NULL-terminated vector (an empty array gives an empty vector). */
int ward_json_strv(json_t *v, const char *path, unsigned flags, char ***out, struct ward_err *err);

/* ---- object member level ---- */
/* Lenient: the member's string (the JSON's own, valid while o is), or NULL when o is not an
 * object, key is NULL or absent, or the value is not a string. */
const char *ward_json_str_at(json_t *o, const char *key);
/* Lenient, for ward's own files (state.json, intent.json): a copy of the member's string, or
 * of dflt (NULL stays NULL) when it is absent or not a string. */
char *ward_json_str_or(json_t *o, const char *key, const char *dflt);

int ward_json_opt_str(json_t *o, const char *parent, const char *key, char **out,
		      struct ward_err *err);
int ward_json_req_str(json_t *o, const char *parent, const char *key, char **out,
		      struct ward_err *err);
int ward_json_opt_u64(json_t *o, const char *parent, const char *key, uint64_t *out,
		      struct ward_err *err);
int ward_json_req_u64(json_t *o, const char *parent, const char *key, uint64_t *out,
		      struct ward_err *err);
int ward_json_opt_u32(json_t *o, const char *parent, const char *key, uint32_t *out,
		      struct ward_err *err);
int ward_json_req_u32(json_t *o, const char *parent, const char *key, uint32_t *out,
		      struct ward_err *err);
int ward_json_opt_i64(json_t *o, const char *parent, const char *key, int64_t min, int64_t max,
		      int64_t *out, struct ward_err *err);
int ward_json_opt_int(json_t *o, const char *parent, const char *key, int min, int max, int *out,
		      struct ward_err *err);
int ward_json_opt_bool(json_t *o, const char *parent, const char *key, bool *out,
		       struct ward_err *err);
int ward_json_opt_strv(json_t *o, const char *parent, const char *key, unsigned flags, char ***out,
		       struct ward_err *err);
/* An optional object (array) member: NULL with *r = 0 if absent, *r = -1 if of another type. */
json_t *ward_json_opt_obj(json_t *o, const char *parent, const char *key, int *r,
			  struct ward_err *err);
json_t *ward_json_opt_arr(json_t *o, const char *parent, const char *key, int *r,
			  struct ward_err *err);
/* Array element that must be an object (path: the element's). */
json_t *ward_json_elem_obj(json_t *arr, size_t i, const char *path, struct ward_err *err);
/* A required string that must be an absolute path. */
int ward_json_req_abs_path(json_t *o, const char *parent, const char *key, char **out,
			   struct ward_err *err);
/* Object of string values -> parallel NULL-terminated vectors. */
int ward_json_str_map(json_t *o, const char *parent, const char *key, char ***keys, char ***values,
		      struct ward_err *err);

#endif
