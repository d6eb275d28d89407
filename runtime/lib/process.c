/* Per-process attributes: user and groups, umask, rlimits, oom score, io priority,
 * scheduler, personality. Names come from the tables below. */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

struct name_value {
	const char *name;
	int value;
};

static int lookup(const struct name_value *t, size_t n, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return t[i].value;
	return -1;
}

#define LOOKUP(table, name) lookup(table, ARRAY_SIZE(table), name)

/* ---- rlimits ---- */

static const struct name_value rlimits[] = {
    {"RLIMIT_AS", RLIMIT_AS},
    {"RLIMIT_CORE", RLIMIT_CORE},
    {"RLIMIT_CPU", RLIMIT_CPU},
    {"RLIMIT_DATA", RLIMIT_DATA},
    {"RLIMIT_FSIZE", RLIMIT_FSIZE},
    {"RLIMIT_LOCKS", RLIMIT_LOCKS},
    {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
    {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE},
    {"RLIMIT_NICE", RLIMIT_NICE},
    {"RLIMIT_NOFILE", RLIMIT_NOFILE},
    {"RLIMIT_NPROC", RLIMIT_NPROC},
    {"RLIMIT_RSS", RLIMIT_RSS},
    {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
    {"RLIMIT_RTTIME", RLIMIT_RTTIME},
    {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
    {"RLIMIT_STACK", RLIMIT_STACK},
};

int ward_rlimit_from_name(const char *name)
{
	return LOOKUP(rlimits, name);
}

int ward_rlimits_apply(const struct ward_process *p, struct ward_err *err)
{
	for (size_t i = 0; i < p->n_rlimits; i++) {
		const struct ward_rlimit *r = &p->rlimits[i];
		int res = ward_rlimit_from_name(r->type);
		struct rlimit rl = {.rlim_cur = r->soft, .rlim_max = r->hard};

		if (res < 0)
			return ward_fail(err, EINVAL, "process.rlimits[%zu]: unknown type \"%s\"",
					 i, r->type ? r->type : "");
		if (setrlimit((__rlimit_resource_t)res, &rl) < 0)
			return ward_fail_errno(err, "setrlimit %s (soft %llu, hard %llu)", r->type,
					       (unsigned long long)r->soft,
					       (unsigned long long)r->hard);
	}
	return 0;
}

void ward_rlimits_raise_hard(const struct ward_process *p, pid_t pid)
{
	for (size_t i = 0; p && i < p->n_rlimits; i++) {
		int res = ward_rlimit_from_name(p->rlimits[i].type);
		struct rlimit cur;

		if (res < 0 || prlimit(pid, (__rlimit_resource_t)res, NULL, &cur) < 0 ||
		    p->rlimits[i].hard <= cur.rlim_max)
			continue;
		cur.rlim_max = p->rlimits[i].hard;
		if (prlimit(pid, (__rlimit_resource_t)res, &cur, NULL) < 0)
			ward_debug("raise the hard %s to %llu: %s", p->rlimits[i].type,
				   (unsigned long long)p->rlimits[i].hard, strerror(errno));
	}
}

/* ---- io priority ---- */

#define WARD_IOPRIO_WHO_PROCESS	  1
#define WARD_IOPRIO_CLASS_SHIFT	  13
#define WARD_IOPRIO_LEVELS	  8
#define WARD_IOPRIO_VALUE(cl, lv) (((cl) << WARD_IOPRIO_CLASS_SHIFT) | (lv))

static const struct name_value ioprio_classes[] = {
    {"IOPRIO_CLASS_RT", 1},
    {"IOPRIO_CLASS_BE", 2},
    {"IOPRIO_CLASS_IDLE", 3},
};

int ward_ioprio_apply(const struct ward_process *p, struct ward_err *err)
{
	int cl;

	if (!p->has_io_priority)
		return 0;
	cl = LOOKUP(ioprio_classes, p->io_priority_class);
	if (cl < 0 || p->io_priority < 0 || p->io_priority >= WARD_IOPRIO_LEVELS)
		return ward_fail(err, EINVAL, "process.ioPriority: invalid class or priority");
	if (syscall(SYS_ioprio_set, WARD_IOPRIO_WHO_PROCESS, 0,
		    WARD_IOPRIO_VALUE(cl, p->io_priority)) < 0)
		return ward_fail_errno(err, "ioprio_set %s %d", p->io_priority_class,
				       p->io_priority);
	return 0;
}

/* ---- scheduler ---- */

/* struct sched_attr of sched_setattr(2); glibc 2.36 does not declare it. */
struct ward_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

#define WARD_SCHED_DEADLINE 6

static const struct name_value sched_policies[] = {
    {"SCHED_OTHER", 0},
    {"SCHED_FIFO", 1},
    {"SCHED_RR", 2},
    {"SCHED_BATCH", 3},
    {"SCHED_ISO", 4},
    {"SCHED_IDLE", 5},
    {"SCHED_DEADLINE", WARD_SCHED_DEADLINE},
};

static const struct name_value sched_flags[] = {
    {"SCHED_FLAG_RESET_ON_FORK", 0x01},	 {"SCHED_FLAG_RECLAIM", 0x02},
    {"SCHED_FLAG_DL_OVERRUN", 0x04},	 {"SCHED_FLAG_KEEP_POLICY", 0x08},
    {"SCHED_FLAG_KEEP_PARAMS", 0x10},	 {"SCHED_FLAG_UTIL_CLAMP_MIN", 0x20},
    {"SCHED_FLAG_UTIL_CLAMP_MAX", 0x40},
};

int ward_sched_apply(const struct ward_process *p, struct ward_err *err)
{
	const struct ward_scheduler *s = &p->scheduler;
	struct ward_sched_attr attr = {.size = sizeof(attr)};
	int policy;

	if (!p->has_scheduler)
		return 0;
	policy = LOOKUP(sched_policies, s->policy);
	if (policy < 0)
		return ward_fail(err, EINVAL, "process.scheduler.policy: unknown policy");
	attr.sched_policy = (uint32_t)policy;
	attr.sched_nice = s->nice;
	attr.sched_priority = (uint32_t)s->priority;
	attr.sched_runtime = s->runtime;
	attr.sched_deadline = s->deadline;
	attr.sched_period = s->period;
	for (size_t i = 0; s->flags && s->flags[i]; i++) {
		int f = LOOKUP(sched_flags, s->flags[i]);
		if (f < 0)
			return ward_fail(err, EINVAL, "process.scheduler.flags[%zu]: unknown flag",
					 i);
		attr.sched_flags |= (uint64_t)f;
	}
	if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0)
		return ward_fail_errno(err, "sched_setattr %s", s->policy);
	return 0;
}

/* ---- personality ---- */

static const struct name_value personality_domains[] = {
    {"LINUX", PER_LINUX},
    {"LINUX32", PER_LINUX32},
};

/* runtime-spec defines no personality flags yet: any flag is unknown. */
static int personality_value(const struct ward_personality *pers, unsigned long *out)
{
	int d = LOOKUP(personality_domains, pers->domain);
	if (d < 0 || (pers->flags && pers->flags[0]))
		return -1;
	*out = (unsigned long)d;
	return 0;
}

int ward_personality_apply(const struct ward_personality *pers, struct ward_err *err)
{
	unsigned long persona;

	if (!pers)
		return 0;
	if (personality_value(pers, &persona) < 0)
		return ward_fail(err, EINVAL, "linux.personality: invalid domain or flags");
	if (personality(persona) < 0)
		return ward_fail_errno(err, "personality %s", pers->domain);
	return 0;
}

/* ---- oom score ---- */

int ward_oom_score_apply(const struct ward_process *p, pid_t pid, struct ward_err *err)
{
	char path[64], val[16];
	int n;

	if (!p->has_oom_score_adj)
		return 0;
	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/oom_score_adj");
	else
		snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	n = snprintf(val, sizeof(val), "%d", p->oom_score_adj);
	if (write_file_at(AT_FDCWD, path, 0, 0, val, (size_t)n, err) < 0)
		return ward_wrap(err, "set oomScoreAdj %d", p->oom_score_adj);
	return 0;
}

/* ---- user ---- */

/* "deny" in /proc/self/setgroups (user namespace without setgroups permission). */
static bool setgroups_denied(void)
{
	char buf[16] = "";
	cleanup_fd int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		return false;
	return strncmp(buf, "deny", 4) == 0;
}

int ward_user_apply(const struct ward_process *p, struct ward_err *err)
{
	const struct ward_user *u = &p->user;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return ward_fail_errno(err, "prctl(PR_SET_KEEPCAPS)");
	if (setgroups_denied()) {
		/* nothing to clear can be cleared; only an explicit request is an error */
		if (u->n_additional_gids > 0)
			return ward_fail(err, EPERM,
					 "process.user.additionalGids: setgroups is denied in "
					 "this user namespace");
	} else if (setgroups(u->n_additional_gids, (const gid_t *)u->additional_gids) < 0) {
		return ward_fail_errno(err, "setgroups");
	}
	if (setresgid(u->gid, u->gid, u->gid) < 0)
		return ward_fail_errno(err, "setresgid %u", u->gid);
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return ward_fail_errno(err, "setresuid %u", u->uid);
	if (u->has_umask)
		umask((mode_t)u->umask);
	return 0;
}

/* ---- validation ---- */

static int validate_rlimits(const struct ward_process *p, struct ward_err *err)
{
	for (size_t i = 0; i < p->n_rlimits; i++) {
		const struct ward_rlimit *r = &p->rlimits[i];
		if (ward_rlimit_from_name(r->type) < 0)
			return ward_fail(err, 0, "process.rlimits[%zu].type: unknown rlimit \"%s\"",
					 i, r->type ? r->type : "");
		if (r->soft > r->hard)
			return ward_fail(err, 0,
					 "process.rlimits[%zu]: soft limit %llu is greater than "
					 "hard limit %llu",
					 i, (unsigned long long)r->soft,
					 (unsigned long long)r->hard);
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->rlimits[j].type, r->type) == 0)
				return ward_fail(err, 0,
						 "process.rlimits[%zu].type: duplicate %s (also "
						 "process.rlimits[%zu])",
						 i, r->type, j);
	}
	return 0;
}

static int validate_scheduler(const struct ward_scheduler *s, struct ward_err *err)
{
	int policy = LOOKUP(sched_policies, s->policy);

	if (policy < 0)
		return ward_fail(err, 0, "process.scheduler.policy: unknown policy \"%s\"",
				 s->policy ? s->policy : "");
	if (s->nice < -20 || s->nice > 19)
		return ward_fail(err, 0, "process.scheduler.nice: %d is out of range (-20 to 19)",
				 s->nice);
	if (s->priority != 0 && strcmp(s->policy, "SCHED_FIFO") != 0 &&
	    strcmp(s->policy, "SCHED_RR") != 0)
		return ward_fail(err, 0,
				 "process.scheduler.priority: only valid with SCHED_FIFO or "
				 "SCHED_RR");
	if (policy != WARD_SCHED_DEADLINE && (s->runtime || s->deadline || s->period))
		return ward_fail(err, 0,
				 "process.scheduler: runtime, deadline and period are only valid "
				 "with SCHED_DEADLINE");
	for (size_t i = 0; s->flags && s->flags[i]; i++)
		if (LOOKUP(sched_flags, s->flags[i]) < 0)
			return ward_fail(err, 0,
					 "process.scheduler.flags[%zu]: unknown flag \"%s\"", i,
					 s->flags[i]);
	return 0;
}

static int validate_personality(const struct ward_personality *pers, struct ward_err *err)
{
	if (LOOKUP(personality_domains, pers->domain) < 0)
		return ward_fail(err, 0, "linux.personality.domain: unknown domain \"%s\"",
				 pers->domain ? pers->domain : "");
	if (pers->flags && pers->flags[0])
		return ward_fail(err, 0, "linux.personality.flags[0]: unknown flag \"%s\"",
				 pers->flags[0]);
	return 0;
}

int ward_process_validate(const struct ward_process *p, const struct ward_personality *pers,
			  struct ward_err *err)
{
	if (p) {
		if (validate_rlimits(p, err) < 0)
			return -1;
		if (p->has_io_priority) {
			if (LOOKUP(ioprio_classes, p->io_priority_class) < 0)
				return ward_fail(err, 0,
						 "process.ioPriority.class: unknown class \"%s\"",
						 p->io_priority_class ? p->io_priority_class : "");
			if (p->io_priority < 0 || p->io_priority >= WARD_IOPRIO_LEVELS)
				return ward_fail(err, 0,
						 "process.ioPriority.priority: %d is out of range "
						 "(0-%d)",
						 p->io_priority, WARD_IOPRIO_LEVELS - 1);
		}
		if (p->has_scheduler && validate_scheduler(&p->scheduler, err) < 0)
			return -1;
		if (p->has_oom_score_adj && (p->oom_score_adj < -1000 || p->oom_score_adj > 1000))
			return ward_fail(err, 0,
					 "process.oomScoreAdj: %d is out of range (-1000 to 1000)",
					 p->oom_score_adj);
	}
	if (pers && validate_personality(pers, err) < 0)
		return -1;
	return 0;
}

int ward_process_refuse_labels(const struct ward_process *p, const char *what, struct ward_err *err)
{
	if (p->selinux_label && *p->selinux_label)
		return ward_fail(err, 0,
				 "%s.selinuxLabel: SELinux labels are not supported by ward", what);
	return 0;
}
