/* Per-process attributes applied by init (and exec) just before capabilities and seccomp:
 * user and groups, umask, rlimits, oom score, io priority, scheduler, personality. */
#ifndef WARD_PROCESS_H
#define WARD_PROCESS_H

#include <sys/types.h>

#include "err.h"
#include "spec.h"

/* Validate names and values of rlimits (unknown type, duplicates, soft > hard),
 * ioPriority, scheduler and personality. Field paths in errors ("process.rlimits[1]..."). */
int ward_process_validate(const struct ward_process *p, const struct ward_personality *pers,
			  struct ward_err *err);

int ward_rlimits_apply(const struct ward_process *p, struct ward_err *err);
/* The hard limits of p's rlimits that are above what process pid (0: the caller) has,
 * raised there, its soft limits as they are: from the host's user namespace, before the
 * process is in the container's, where it could not raise them (runc does the same).
 * Best effort: ward_rlimits_apply, in the process, reports what could not be set. */
void ward_rlimits_raise_hard(const struct ward_process *p, pid_t pid);
int ward_ioprio_apply(const struct ward_process *p, struct ward_err *err);
int ward_sched_apply(const struct ward_process *p, struct ward_err *err);
int ward_personality_apply(const struct ward_personality *pers, struct ward_err *err);
/* Write /proc/<pid>/oom_score_adj (pid 0 = self). */
int ward_oom_score_apply(const struct ward_process *p, pid_t pid, struct ward_err *err);

/* setgroups(additionalGids), setresgid, setresuid with PR_SET_KEEPCAPS kept on so the
 * capability sets survive; then umask if set. */
int ward_user_apply(const struct ward_process *p, struct ward_err *err);

/* A requested LSM label ward cannot apply is refused, never skipped: SELinux is not
 * supported (AppArmor profiles are checked by ward_apparmor_prepare, apparmor.h). what
 * prefixes the field path. */
int ward_process_refuse_labels(const struct ward_process *p, const char *what,
			       struct ward_err *err);

/* Name tables for `features`/validation. */
int ward_rlimit_from_name(const char *name); /* -1 if unknown */

#endif
