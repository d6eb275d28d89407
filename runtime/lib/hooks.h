/* OCI hooks: fork/exec path with args and env, state JSON on stdin, timeout. */
#ifndef WARD_HOOKS_H
#define WARD_HOOKS_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "spec.h"

/* The environment of a hook whose config has no env: PATH=this, nothing else. */
#define WARD_HOOK_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Hook kind name as in config.json ("createRuntime"). */
const char *ward_hook_kind_name(enum ward_hook_kind k);

/* Run the hooks in order; the first failure (exec error, non-zero exit, signal, timeout)
 * stops and fails with "createRuntime hook #1 (/path): exited with status 3". */
int ward_hooks_run(const struct ward_hooks *h, enum ward_hook_kind kind, const char *state_json,
		   struct ward_err *err);

/* For ward's hook programs: the OCI state JSON the runtime writes on stdin (fd), as an
 * object with a valid container "id" and, with need_pid, a positive "pid"; NULL with err
 * ("state on stdin: ..."). */
json_t *ward_hook_read_state(int fd, bool need_pid, struct ward_err *err);

#endif
