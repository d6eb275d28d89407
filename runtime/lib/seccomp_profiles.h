/* ward's seccomp profiles (seccomp-profiles/NAME.json), built into the binary so ward works
 * without an install step. README.md beside the JSON explains every denied group. */
#ifndef WARD_SECCOMP_PROFILES_H
#define WARD_SECCOMP_PROFILES_H

#include "err.h"
#include "spec.h"

/* NULL-terminated: "default", "strict", "privileged". */
extern const char *const ward_seccomp_profile_names[];

/* The JSON text (an OCI linux.seccomp object) of a built-in profile by name, or of the
 * file at an absolute path; malloc'd. Anything else is an error naming the profile.
 * ("unconfined" means no filter at all: the caller handles it before asking.) */
char *ward_seccomp_profile_load(const char *name_or_path, struct ward_err *err);

/* A profile's text decoded (ward_seccomp_parse, errors naming what): a built-in's text is
 * not parsed again but copied from its typed form, made from the same JSON at build time
 * (seccomp-profiles/builtin-gen.c). malloc'd; ward_seccomp_free. */
struct ward_seccomp *ward_seccomp_profile_parse(const char *text, const char *what,
						struct ward_err *err);

/* The built-in profiles, typed ($(BUILD)/seccomp_builtin.c). */
extern const struct ward_seccomp ward_seccomp_builtin_default;
extern const struct ward_seccomp ward_seccomp_builtin_strict;
extern const struct ward_seccomp ward_seccomp_builtin_privileged;

#endif
