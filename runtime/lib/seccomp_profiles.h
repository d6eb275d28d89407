/* ward's seccomp profiles (seccomp-profiles/NAME.json), built into the binary so ward works
 * without an install step. README.md beside the JSON explains every denied group. */
#ifndef WARD_SECCOMP_PROFILES_H
#define WARD_SECCOMP_PROFILES_H

#include "err.h"

/* NULL-terminated: "default", "strict", "privileged". */
extern const char *const ward_seccomp_profile_names[];

/* The JSON text (an OCI linux.seccomp object) of a built-in profile by name, or of the
 * file at an absolute path; malloc'd. Anything else is an error naming the profile.
 * ("unconfined" means no filter at all: the caller handles it before asking.) */
char *ward_seccomp_profile_load(const char *name_or_path, struct ward_err *err);

#endif
