/* Capabilities (libcap): the five sets of process.capabilities. */
#ifndef WARD_CAPS_H
#define WARD_CAPS_H

#include <stdint.h>

#include "err.h"
#include "spec.h"

struct ward_capset {
	uint64_t bounding, effective, inheritable, permitted, ambient; /* bit n = cap n */
};

/* Convert names to bits. Unknown names or caps this kernel lacks are ignored with a
 * warning (runtime-spec 1.1). A NULL spec set is empty. */
int ward_caps_from_spec(const struct ward_capabilities *c, struct ward_capset *out,
			struct ward_err *err);

/* Apply in the calling process, which already switched to its final uid/gid with
 * PR_SET_KEEPCAPS: drop bounding, set E/P/I, raise ambient. */
int ward_caps_apply(const struct ward_capset *c, struct ward_err *err);

/* Highest capability number this kernel knows, and name of cap n ("CAP_CHOWN"). */
int ward_caps_last(void);
const char *ward_caps_name(int cap);	   /* static string or NULL */
int ward_caps_from_name(const char *name); /* -1 if unknown */

#endif
