/* linux.seccomp -> libseccomp filter. */
#ifndef WARD_SECCOMP_H
#define WARD_SECCOMP_H

#include "err.h"
#include "spec.h"

/* Check actions, architectures, operators, flags and arg indexes; errors name the field
 * ("linux.seccomp.syscalls[2].action: unknown action \"X\""). Unknown syscall names are
 * not errors (skipped with a debug log when loading), as in runc. */
int ward_seccomp_validate(const struct ward_seccomp *s, struct ward_err *err);

/* Build and load the filter into the calling thread (last step before exec). */
int ward_seccomp_load(const struct ward_seccomp *s, struct ward_err *err);

/* NULL-terminated name tables, for `features`. */
extern const char *const ward_seccomp_action_names[];
extern const char *const ward_seccomp_op_names[];
extern const char *const ward_seccomp_arch_names[];
extern const char *const ward_seccomp_known_flags[];
extern const char *const ward_seccomp_supported_flags[];

#endif
