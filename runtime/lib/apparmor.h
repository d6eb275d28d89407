/* AppArmor: is it on, is a profile loaded (ward-default is loaded from the copy embedded in
 * the binary when it is not), and the exec label of the container's processes. */
#ifndef WARD_APPARMOR_H
#define WARD_APPARMOR_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define WARD_APPARMOR_DEFAULT "ward-default"

/* /sys/module/apparmor/parameters/enabled is Y and securityfs shows
 * /sys/kernel/security/apparmor. */
bool ward_apparmor_enabled(void);

/* NULL, "" and "unconfined": there is no profile to apply. */
bool ward_apparmor_is_unconfined(const char *profile);

/* The profile is in /sys/kernel/security/apparmor/profiles; if it is not and it is
 * ward-default, load the embedded text with `apparmor_parser -r` (text on stdin). Any other
 * missing profile is an error naming it. */
int ward_apparmor_ensure_loaded(const char *profile, struct ward_err *err);

/* What create and exec do before forking anything for a process that asks for profile:
 * nothing for "unconfined" (or none); "AppArmor is not enabled on this host" when it is not;
 * else ensure_loaded. The caller adds the field path. */
int ward_apparmor_prepare(const char *profile, struct ward_err *err);

/* Write "exec <profile>" to /proc/thread-self/attr/apparmor/exec (else attr/exec), through
 * /proc verified as procfs and a lookup that crosses no mount (a file mounted over the
 * attribute cannot swallow the write, CVE-2025-52881), then read it back. Takes effect at
 * the next execve of this thread: call it last before exec. Nothing for "unconfined". */
int ward_apparmor_exec_label(const char *profile, struct ward_err *err);

/* The embedded ward-default profile text (runtime/apparmor/ward-default). */
const char *ward_apparmor_default_text(size_t *len);

/* Whether the profiles list (the text of .../apparmor/profiles: "name (mode)" lines) has
 * a profile called name. */
bool ward_apparmor_list_has(const char *list, const char *name);

#endif
