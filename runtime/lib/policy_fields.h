/* Every field of config.json (runtime-spec v1.2, and the v1.3 additions ward knows of) and
 * what a non-trusted tenant's pod gets for it: one table, the single source of truth for
 * the policy's coverage, docs/policy.md and the unit test that feeds the policy a hostile
 * value for every entry.
 *
 * A path names a field as the pod writes it: "process.user.uid", "[]" for the elements of
 * an array ("mounts[].options"), "*" for any key of a map ("annotations.*",
 * "linux.sysctl.*"); an entry ending in "*" after a prefix (annotations.ward.dev/ then "*")
 * matches the keys that start with that prefix, and an exact key wins over a pattern.
 *
 * ward_policy_check_fields walks the pod's JSON before any rule runs: a field with no entry
 * is refused with its path (default deny: nothing ward does not model passes through), a
 * REFUSED field that holds more than its empty value is refused, and the bounds of the
 * fields no rule of policy.c bounds (check below) are checked. The KEPT, OVERRIDDEN and
 * BOUNDED decisions of the other fields are carried out by the rules of policy.c. */
#ifndef WARD_POLICY_FIELDS_H
#define WARD_POLICY_FIELDS_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

enum ward_field_decision {
	WARD_FIELD_KEPT,       /* the pod's value, as written */
	WARD_FIELD_OVERRIDDEN, /* replaced (or completed) by the policy */
	WARD_FIELD_BOUNDED,    /* kept inside limits; a value outside them is refused */
	WARD_FIELD_REFUSED,    /* any value but the empty one is refused */
};

struct ward_policy_field {
	const char *path;
	enum ward_field_decision decision;
	const char *rule;   /* the rule named in a refusal ("tenant "x": RULE: ...") */
	const char *reason; /* one line: what the pod gets, and why */
	/* The bound checked here, for fields no rule of policy.c bounds: NULL if v (under
	 * the map key `key`, or the field's own name) is inside it, else why it is not. */
	const char *(*check)(const char *key, json_t *v);
};

extern const struct ward_policy_field ward_policy_fields[];
extern const size_t ward_policy_n_fields;

/* The entry with exactly this path, or NULL. */
const struct ward_policy_field *ward_policy_field_find(const char *path);

/* "kept", "overridden", "bounded", "refused" */
const char *ward_policy_decision_name(enum ward_field_decision d);

/* Walk the pod's config.json: 0 if every field present has a decision and none is refused,
 * else -1 with `tenant "NAME": RULE: PATH: why` in err. The pod is not changed. */
int ward_policy_check_fields(json_t *pod, const char *tenant_name, struct ward_err *err);

/* The same for the process JSON of an exec (exec --process FILE) into a container of a
 * non-trusted tenant: its fields are checked as config.json's process.* (text, len: the
 * file's content; a document that does not decode is refused here). */
int ward_policy_check_process_fields(const char *json, size_t len, const char *tenant_name,
				     struct ward_err *err);

#endif
