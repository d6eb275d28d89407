/* caps.c and process.c: capability names, applying the five sets, user switch, rlimits,
 * io priority, scheduler, personality, oom score; validation errors name the field.
 * Everything that changes the process runs in a forked child. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caps.h"
#include "log.h"
#include "process.h"
#include "tap.h"
#include "util.h"

/* Run fn in a child; it fills a buffer that comes back through a pipe. */
static bool in_child(void (*fn)(void *out, void *arg), void *arg, void *out, size_t len)
{
	int p[2], status = 0;
	pid_t pid;
	ssize_t n;

	fflush(stdout);
	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	pid = fork();
	if (pid == 0) {
		char *buf = calloc(1, len);
		close(p[0]);
		fn(buf, arg);
		(void)!write(p[1], buf, len);
		free(buf);
		_exit(0);
	}
	close(p[1]);
	n = read_exact(p[0], out, len);
	close(p[0]);
	waitpid(pid, &status, 0);
	return n == (ssize_t)len && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* "CapEff:\t0000000000000400" from /proc/self/status. */
static uint64_t status_caps(const char *field)
{
	struct ward_err err;
	cleanup_free char *s = read_file_at(AT_FDCWD, "/proc/self/status", NULL, &err);
	char *p = s ? strstr(s, field) : NULL;
	return p ? strtoull(p + strlen(field) + 2, NULL, 16) : UINT64_MAX;
}

#define BIT(c) (UINT64_C(1) << (c))

/* ---- capabilities ---- */

static void test_cap_names(void)
{
	bool round_trip = true;
	int last = ward_caps_last();
	struct ward_err err;
	cleanup_free char *kernel_last =
	    read_file_at(AT_FDCWD, "/proc/sys/kernel/cap_last_cap", NULL, &err);

	CHECK(kernel_last && last == atoi(kernel_last), "ward_caps_last matches the kernel");
	CHECK(ward_caps_name(0) && strcmp(ward_caps_name(0), "CAP_CHOWN") == 0,
	      "cap 0 is CAP_CHOWN");
	CHECK(ward_caps_from_name("CAP_SYS_ADMIN") == 21, "CAP_SYS_ADMIN is 21");
	CHECK(ward_caps_from_name("CAP_NET_BIND_SERVICE") == 10, "CAP_NET_BIND_SERVICE is 10");
	CHECK(ward_caps_from_name("CAP_NOPE") == -1, "unknown name is -1");
	CHECK(ward_caps_from_name("cap_chown") == -1, "names are upper case, as in the spec");
	CHECK(ward_caps_from_name("3") == -1, "numbers are not names");
	CHECK(ward_caps_name(-1) == NULL && ward_caps_name(64) == NULL, "out of range is NULL");
	for (int c = 0; c <= last; c++) {
		const char *n = ward_caps_name(c);
		if (!n || ward_caps_from_name(n) != c || strncmp(n, "CAP_", 4) != 0)
			round_trip = false;
	}
	CHECK(round_trip, "name <-> number round-trips for every cap of this kernel");
}

static void test_caps_from_spec(void)
{
	char *bnd[] = {"CAP_CHOWN", "CAP_KILL", "CAP_NOT_A_CAP", NULL};
	char *eff[] = {"CAP_KILL", NULL};
	struct ward_capabilities c = {.bounding = bnd, .effective = eff};
	struct ward_capset set;
	struct ward_err err = {0};

	CHECK(ward_caps_from_spec(&c, &set, &err) == 0, "unknown capability is not an error");
	CHECK(set.bounding == (BIT(0) | BIT(5)), "bounding: known names only");
	CHECK(set.effective == BIT(5), "effective");
	CHECK(set.permitted == 0 && set.inheritable == 0 && set.ambient == 0,
	      "absent sets are empty");
	CHECK(ward_caps_from_spec(NULL, &set, &err) == 0 && set.bounding == 0,
	      "NULL capabilities: all empty");
}

struct caps_out {
	int rc;
	char msg[sizeof(((struct ward_err *)0)->msg)];
	uint64_t eff, prm, inh, bnd, amb;
	uid_t uid, euid;
	gid_t gid;
	int ngroups;
	gid_t groups[4];
	mode_t umask;
};

static void read_caps(struct caps_out *o)
{
	o->eff = status_caps("CapEff");
	o->prm = status_caps("CapPrm");
	o->inh = status_caps("CapInh");
	o->bnd = status_caps("CapBnd");
	o->amb = status_caps("CapAmb");
}

static void caps_child(void *out, void *arg)
{
	struct caps_out *o = out;
	struct ward_err err = {0};
	o->rc = ward_caps_apply(arg, &err);
	memcpy(o->msg, err.msg, sizeof(o->msg));
	read_caps(o);
}

static void test_caps_apply(void)
{
	/* CAP_CHOWN 0, CAP_KILL 5, CAP_SETPCAP 8, CAP_NET_BIND_SERVICE 10 */
	struct ward_capset set = {
	    .bounding = BIT(0) | BIT(5) | BIT(10),
	    .effective = BIT(0) | BIT(5),
	    .permitted = BIT(0) | BIT(5) | BIT(10),
	    .inheritable = BIT(10),
	    .ambient = BIT(10),
	};
	struct caps_out o = {0};

	CHECK(in_child(caps_child, &set, &o, sizeof(o)), "caps child ran");
	CHECK(o.rc == 0, "ward_caps_apply succeeds as root");
	if (o.rc)
		printf("#   %s\n", o.msg);
	CHECK(o.bnd == set.bounding, "CapBnd is the bounding set");
	CHECK(o.eff == set.effective, "CapEff is the effective set");
	CHECK(o.prm == set.permitted, "CapPrm is the permitted set");
	CHECK(o.inh == set.inheritable, "CapInh is the inheritable set");
	CHECK(o.amb == set.ambient, "CapAmb is the ambient set");

	/* ungrantable capabilities are dropped with a warning, not fatal (runtime-spec 1.1) */
	set = (struct ward_capset){.bounding = BIT(0) | BIT(5),
				   .effective = BIT(0) | BIT(5),
				   .permitted = BIT(0),
				   .ambient = BIT(0)};
	CHECK(in_child(caps_child, &set, &o, sizeof(o)), "caps child ran (inconsistent sets)");
	CHECK(o.rc == 0, "effective outside permitted is not an error");
	CHECK(o.eff == BIT(0) && o.prm == BIT(0), "effective cap outside permitted dropped");
	CHECK(o.amb == 0, "ambient cap outside inheritable dropped");
	if (!(status_caps("CapPrm") & BIT(CAP_SYS_RESOURCE))) {
		/* this host's root lacks CAP_SYS_RESOURCE: asking for it must not fail */
		set = (struct ward_capset){.bounding = BIT(0) | BIT(CAP_SYS_RESOURCE),
					   .effective = BIT(0) | BIT(CAP_SYS_RESOURCE),
					   .permitted = BIT(0) | BIT(CAP_SYS_RESOURCE)};
		CHECK(in_child(caps_child, &set, &o, sizeof(o)), "caps child ran (not held)");
		CHECK(o.rc == 0 && o.eff == BIT(0) && o.prm == BIT(0),
		      "capability the runtime lacks is ignored");
		if (o.rc)
			printf("#   %s\n", o.msg);
	}
}

/* The order init uses: user switch with KEEPCAPS, then capabilities. */
static void user_child(void *out, void *arg)
{
	struct caps_out *o = out;
	struct ward_err err = {0};
	const struct ward_process *p = arg;
	struct ward_capset set = {
	    .bounding = BIT(0) | BIT(10),
	    .effective = BIT(10),
	    .permitted = BIT(10),
	    .inheritable = BIT(10),
	    .ambient = BIT(10),
	};

	o->rc = ward_user_apply(p, &err);
	if (o->rc == 0)
		o->rc = ward_caps_apply(&set, &err);
	memcpy(o->msg, err.msg, sizeof(o->msg));
	o->uid = getuid();
	o->euid = geteuid();
	o->gid = getgid();
	o->ngroups = getgroups(4, o->groups);
	o->umask = umask(0);
	read_caps(o);
}

static void test_user_then_caps(void)
{
	uint32_t gids[] = {1000, 2000};
	struct ward_process p = {
	    .user = {.uid = 1000,
		     .gid = 1001,
		     .has_umask = true,
		     .umask = 027,
		     .additional_gids = gids,
		     .n_additional_gids = 2},
	};
	struct caps_out o = {0};

	CHECK(in_child(user_child, &p, &o, sizeof(o)), "user child ran");
	CHECK(o.rc == 0, "ward_user_apply + ward_caps_apply succeed");
	if (o.rc)
		printf("#   %s\n", o.msg);
	CHECK(o.uid == 1000 && o.euid == 1000, "uid 1000");
	CHECK(o.gid == 1001, "gid 1001");
	CHECK(o.ngroups == 2 && o.groups[0] == 1000 && o.groups[1] == 2000, "additional gids set");
	CHECK(o.umask == 027, "umask 027");
	CHECK(o.eff == BIT(10) && o.prm == BIT(10), "caps kept across the uid switch");
	CHECK(o.amb == BIT(10), "ambient raised for the non-root user");
	CHECK(o.bnd == (BIT(0) | BIT(10)), "bounding dropped after the uid switch");
}

/* ---- rlimits ---- */

struct rl_out {
	int rc;
	char msg[sizeof(((struct ward_err *)0)->msg)];
	struct rlimit nofile, rttime;
};

static void rlimit_child(void *out, void *arg)
{
	struct rl_out *o = out;
	struct ward_err err = {0};
	o->rc = ward_rlimits_apply(arg, &err);
	memcpy(o->msg, err.msg, sizeof(o->msg));
	getrlimit(RLIMIT_NOFILE, &o->nofile);
	getrlimit(RLIMIT_RTTIME, &o->rttime);
}

static void test_rlimits(void)
{
	struct rlimit cur, nofile;
	struct ward_rlimit rl[2] = {
	    {.type = "RLIMIT_NOFILE", .soft = 100},
	    {.type = "RLIMIT_RTTIME", .soft = 5000000, .hard = 6000000},
	};
	struct ward_process p = {.rlimits = rl, .n_rlimits = 2};
	struct rl_out o = {0};

	CHECK(ward_rlimit_from_name("RLIMIT_NOFILE") == RLIMIT_NOFILE, "RLIMIT_NOFILE name");
	CHECK(ward_rlimit_from_name("RLIMIT_RTTIME") == RLIMIT_RTTIME, "RLIMIT_RTTIME name");
	CHECK(ward_rlimit_from_name("RLIMIT_FOO") == -1, "unknown rlimit name");

	/* lower the soft limit only: valgrind does not let a client change the hard one */
	getrlimit(RLIMIT_NOFILE, &nofile);
	rl[0].hard = nofile.rlim_max;
	getrlimit(RLIMIT_RTTIME, &cur);
	if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < rl[1].hard)
		rl[1].hard = rl[1].soft =
		    cur.rlim_max; /* only lowering works without SYS_RESOURCE */
	CHECK(in_child(rlimit_child, &p, &o, sizeof(o)), "rlimit child ran");
	CHECK(o.rc == 0, "rlimits apply");
	if (o.rc)
		printf("#   %s\n", o.msg);
	CHECK(o.nofile.rlim_cur == 100 && o.nofile.rlim_max == nofile.rlim_max,
	      "RLIMIT_NOFILE soft lowered to 100");
	CHECK(o.rttime.rlim_cur == rl[1].soft && o.rttime.rlim_max == rl[1].hard,
	      "RLIMIT_RTTIME applied");
}

/* ---- ioprio, scheduler, personality, oom ---- */

struct misc_out {
	int rc;
	char msg[sizeof(((struct ward_err *)0)->msg)];
	long ioprio;
	int policy, nice, persona;
	char oom[16];
};

static void misc_child(void *out, void *arg)
{
	struct misc_out *o = out;
	const struct ward_process *p = arg;
	struct ward_personality pers = {.domain = "LINUX32"};
	struct ward_err err = {0};
	int fd;

	o->rc = ward_ioprio_apply(p, &err);
	if (o->rc == 0)
		o->rc = ward_sched_apply(p, &err);
	if (o->rc == 0)
		o->rc = ward_personality_apply(&pers, &err);
	if (o->rc == 0)
		o->rc = ward_oom_score_apply(p, 0, &err);
	memcpy(o->msg, err.msg, sizeof(o->msg));
	o->ioprio = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
	o->policy = sched_getscheduler(0);
	errno = 0;
	o->nice = getpriority(PRIO_PROCESS, 0);
	o->persona = personality(0xffffffff);
	fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!read(fd, o->oom, sizeof(o->oom) - 1);
		close(fd);
	}
}

static void test_misc_apply(void)
{
	struct ward_process p = {
	    .has_io_priority = true,
	    .io_priority_class = "IOPRIO_CLASS_BE",
	    .io_priority = 5,
	    .has_scheduler = true,
	    .scheduler = {.policy = "SCHED_BATCH", .nice = 7},
	    .has_oom_score_adj = true,
	    .oom_score_adj = 500, /* raising needs no privilege */
	};
	struct misc_out o = {0};

	CHECK(in_child(misc_child, &p, &o, sizeof(o)), "misc child ran");
	CHECK(o.rc == 0, "ioprio, scheduler, personality and oom score apply");
	if (o.rc)
		printf("#   %s\n", o.msg);
	CHECK(o.ioprio == ((2 << 13) | 5), "io priority BE/5");
	CHECK(o.policy == SCHED_BATCH, "policy SCHED_BATCH");
	CHECK(o.nice == 7, "nice 7");
	CHECK((o.persona & PER_MASK) == PER_LINUX32, "personality LINUX32");
	CHECK(atoi(o.oom) == 500, "oom_score_adj 500");
}

/* ---- validation ---- */

static int validate(const struct ward_process *p, const struct ward_personality *pers,
		    struct ward_err *err)
{
	ward_err_clear(err);
	return ward_process_validate(p, pers, err);
}

static void test_validate(void)
{
	struct ward_err err;
	struct ward_rlimit rl[2] = {
	    {.type = "RLIMIT_NOFILE", .soft = 1024, .hard = 4096},
	    {.type = "RLIMIT_CORE", .soft = 0, .hard = 0},
	};
	char *sched_flags[] = {"SCHED_FLAG_RESET_ON_FORK", NULL};
	char *bad_sched_flags[] = {"SCHED_FLAG_RESET_ON_FORK", "SCHED_FLAG_TURBO", NULL};
	char *pers_flags[] = {"ADDR_NO_RANDOMIZE", NULL};
	struct ward_process p = {
	    .rlimits = rl,
	    .n_rlimits = 2,
	    .has_io_priority = true,
	    .io_priority_class = "IOPRIO_CLASS_RT",
	    .io_priority = 7,
	    .has_scheduler = true,
	    .scheduler = {.policy = "SCHED_FIFO", .priority = 10, .flags = sched_flags},
	    .has_oom_score_adj = true,
	    .oom_score_adj = -999,
	};
	struct ward_personality pers = {.domain = "LINUX"};

	CHECK(validate(&p, &pers, &err) == 0, "valid process passes");
	CHECK(validate(NULL, NULL, &err) == 0, "nothing to validate passes");

	rl[1].type = "RLIMIT_FOO";
	CHECK(validate(&p, NULL, &err) < 0, "unknown rlimit fails");
	CHECK_STR_CONTAINS(err.msg, "process.rlimits[1].type: unknown rlimit \"RLIMIT_FOO\"",
			   "unknown rlimit message");
	rl[1].type = "RLIMIT_NOFILE";
	CHECK(validate(&p, NULL, &err) < 0, "duplicate rlimit fails");
	CHECK_STR_CONTAINS(err.msg, "process.rlimits[1].type: duplicate RLIMIT_NOFILE",
			   "duplicate rlimit message");
	rl[1].type = "RLIMIT_CORE";
	rl[0].soft = 10;
	rl[0].hard = 5;
	CHECK(validate(&p, NULL, &err) < 0, "soft > hard fails");
	CHECK_STR_CONTAINS(err.msg,
			   "process.rlimits[0]: soft limit 10 is greater than hard limit 5",
			   "soft > hard message");
	rl[0].soft = 5;

	p.io_priority_class = "IOPRIO_CLASS_TURBO";
	CHECK(validate(&p, NULL, &err) < 0, "bad ioprio class fails");
	CHECK_STR_CONTAINS(err.msg,
			   "process.ioPriority.class: unknown class \"IOPRIO_CLASS_TURBO\"",
			   "bad ioprio class message");
	p.io_priority_class = "IOPRIO_CLASS_IDLE";
	p.io_priority = 8;
	CHECK(validate(&p, NULL, &err) < 0, "ioprio priority 8 fails");
	CHECK_STR_CONTAINS(err.msg, "process.ioPriority.priority: 8 is out of range (0-7)",
			   "ioprio priority message");
	p.io_priority = -1;
	CHECK(validate(&p, NULL, &err) < 0, "ioprio priority -1 fails");
	p.io_priority = 0;

	p.scheduler.policy = "SCHED_FASTEST";
	CHECK(validate(&p, NULL, &err) < 0, "bad scheduler policy fails");
	CHECK_STR_CONTAINS(err.msg, "process.scheduler.policy: unknown policy \"SCHED_FASTEST\"",
			   "bad scheduler policy message");
	p.scheduler.policy = "SCHED_OTHER";
	CHECK(validate(&p, NULL, &err) < 0, "priority with SCHED_OTHER fails");
	CHECK_STR_CONTAINS(err.msg, "process.scheduler.priority: only valid with SCHED_FIFO",
			   "priority message");
	p.scheduler.priority = 0;
	p.scheduler.nice = 20;
	CHECK(validate(&p, NULL, &err) < 0, "nice 20 fails");
	CHECK_STR_CONTAINS(err.msg, "process.scheduler.nice: 20 is out of range", "nice message");
	p.scheduler.nice = -20;
	p.scheduler.runtime = 1000;
	CHECK(validate(&p, NULL, &err) < 0, "runtime with SCHED_OTHER fails");
	CHECK_STR_CONTAINS(err.msg, "only valid with SCHED_DEADLINE", "deadline params message");
	p.scheduler.policy = "SCHED_DEADLINE";
	p.scheduler.deadline = p.scheduler.period = 2000;
	CHECK(validate(&p, NULL, &err) == 0, "SCHED_DEADLINE with runtime/deadline/period passes");
	p.scheduler.flags = bad_sched_flags;
	CHECK(validate(&p, NULL, &err) < 0, "unknown scheduler flag fails");
	CHECK_STR_CONTAINS(err.msg, "process.scheduler.flags[1]: unknown flag \"SCHED_FLAG_TURBO\"",
			   "scheduler flag message");
	p.scheduler.flags = sched_flags;

	p.oom_score_adj = 1001;
	CHECK(validate(&p, NULL, &err) < 0, "oomScoreAdj 1001 fails");
	CHECK_STR_CONTAINS(err.msg, "process.oomScoreAdj: 1001 is out of range", "oom message");
	p.oom_score_adj = 0;

	pers.domain = "LINUX64";
	CHECK(validate(&p, &pers, &err) < 0, "bad personality domain fails");
	CHECK_STR_CONTAINS(err.msg, "linux.personality.domain: unknown domain \"LINUX64\"",
			   "personality domain message");
	pers.domain = "LINUX32";
	CHECK(validate(&p, &pers, &err) == 0, "LINUX32 passes");
	pers.flags = pers_flags;
	CHECK(validate(&p, &pers, &err) < 0, "personality flag fails");
	CHECK_STR_CONTAINS(err.msg,
			   "linux.personality.flags[0]: unknown flag \"ADDR_NO_RANDOMIZE\"",
			   "personality flag message");
}

int main(void)
{
	/* line-buffered: a forked child (valgrind turns a failed exec into an exit) must not
	 * repeat buffered TAP lines */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ward_log_open("/dev/null", false, true);
	test_cap_names();
	test_caps_from_spec();
	test_caps_apply();
	test_user_then_caps();
	test_rlimits();
	test_misc_apply();
	test_validate();
	TAP_DONE();
}
