/* The audit trail: one JSON line per event (create, start, exit, delete, exec, refused,
 * gpu-lease, gpu-wipe) appended to <audit_dir>/<tenant>.log, a root-owned directory no
 * container can reach (see man 8 ward-audit-hook). A line is written with one write(2) on an
 * O_APPEND file; a failed or short write is an error, never dropped.
 *
 * Line: {"time": RFC 3339, "event": ..., "tenant": ..., then the event's own fields}. */
#ifndef WARD_AUDIT_H
#define WARD_AUDIT_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "config.h"
#include "err.h"
#include "pod.h"
#include "spec.h"
#include "state.h"

#define WARD_AUDIT_UNKNOWN "_unknown" /* the log of events without a known tenant */

/* Append event (an object with at least "event"; "time" and "tenant" are set here) to the
 * log of tenant (NULL: "_unknown") under cfg->audit_dir. */
int ward_audit_write(const struct ward_config *cfg, const char *tenant, json_t *event,
		     struct ward_err *err);
/* The same with the directory given (the hooks, which read no configuration). */
int ward_audit_write_dir(const char *dir, const char *tenant, json_t *event, struct ward_err *err);

/* Open the audit directory (O_DIRECTORY fd), creating it 0700 if create and missing.
 * Refused: a symbolic link, not a directory, not owned by root, writable by group or
 * others. */
int ward_audit_dir_open(const char *dir, bool create, struct ward_err *err);

/* ward-audit-hook's fields, which it has only the effective spec (its config.json) for: pod
 * {namespace, name, uid} from the CRI annotations, host_ids from ward.ids (own.h), apparmor
 * (process.apparmorProfile), capabilities (process.capabilities.bounding), gpus
 * (ward.gpus; an older spec: the ward.dev/ annotations). Returns the tenant (annotation
 * ward.dev/tenant), or NULL. ward's own lines take the tenant and the pod from the pod
 * create resolved (state.json), never from the annotations. */
const char *ward_audit_spec_fields(json_t *event, json_t *spec);

/* The lifecycle lines ward writes itself (no hook process): create (after the createRuntime
 * hooks; a failure fails the create), start (after the poststart hooks; a failure stops the
 * container), exit then delete (after the poststop hooks; a failure is a warning). The same
 * lines, fields and file as ward-audit-hook's.
 *
 * ward_audit_lifecycle_base: at create, the fields every line of the container carries, in
 * the hook's order: tenant (pod->tenant, or null), container, bundle, pod (pod's identity),
 * the spec's facts (as ward_audit_spec_fields), seccomp (the tenant's profile name; "pod":
 * the pod's own). The compact JSON text, kept in the container's state (ward_state.audit).
 * malloc'd. */
char *ward_audit_lifecycle_base(json_t *spec, const struct ward_pod *pod, const char *id,
				const char *bundle, const char *seccomp);
/* One line: event "create", "start", "exit" (exit_status: the init's, or < 0: unknown,
 * null) or "delete", with pid when > 0. */
int ward_audit_lifecycle(const struct ward_config *cfg, const char *base, const char *event,
			 pid_t pid, int exit_status, struct ward_err *err);
/* The same with a second line (event2, or NULL: none) after it, both in one write: exit
 * and delete at the end of a container. */
int ward_audit_lifecycle2(const struct ward_config *cfg, const char *base, const char *event,
			  const char *event2, pid_t pid, int exit_status, struct ward_err *err);

/* ward exec: an "exec" event (args, user, tty) for the container of state st (its tenant
 * and pod; an older state without a pod: ward_state_tenant and the CRI annotations) whose
 * effective spec (its state's config.json, as exec read it) is spec. The caller refuses
 * the exec when this fails: an unaudited exec does not run. */
int ward_audit_exec(const struct ward_config *cfg, json_t *spec, const struct ward_state *st,
		    const struct ward_process *p, struct ward_err *err);

/* ward create refused (the tenant policy or anything else before the container existed):
 * a "refused" event with the message, to the tenant's log when the bundle names one.
 * A failed write is a warning: the create fails anyway. */
void ward_audit_refused(const struct ward_config *cfg, const char *bundle, const char *id,
			const char *message);

/* A time for `ward audit --since`: RFC 3339 ("2026-11-21T09:38:08Z", fraction and
 * offset optional) or relative to now ("90s", "10m", "2h", "1d"). */
int ward_audit_parse_time(const char *s, const struct timespec *now, struct timespec *out,
			  struct ward_err *err);

#endif
