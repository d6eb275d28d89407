/* OCI hooks: fork/exec path with args and env, state JSON on stdin, timeout. */
#ifndef WARD_HOOKS_H
#define WARD_HOOKS_H

#include "err.h"
#include "spec.h"

/* Hook kind name as in config.json ("createRuntime"). */
const char *ward_hook_kind_name(enum ward_hook_kind k);

/* Run the hooks in order; the first failure (exec error, non-zero exit, signal, timeout)
 * stops and fails with "createRuntime hook #1 (/path): exited with status 3". */
int ward_hooks_run(const struct ward_hooks *h, enum ward_hook_kind kind, const char *state_json,
		   struct ward_err *err);

#endif
