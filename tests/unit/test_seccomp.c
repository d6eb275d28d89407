/* seccomp.c: validation errors name the field; a loaded filter does what the spec says. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "seccomp.h"
#include "tap.h"
#include "util.h"

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

/* valgrind 3.19 has no seccomp(2): libseccomp falls back to prctl, which cannot TSYNC,
 * and cannot tell whether KILL_PROCESS works */
static bool under_valgrind(void)
{
	return RUNNING_ON_VALGRIND || getenv("WARD_VALGRIND");
}

static char *names_getppid[] = {"getppid", NULL};
static char *names_personality[] = {"personality", NULL};
static char *names_getpgid[] = {"getpgid", NULL};
static char *names_mixed[] = {"no_such_syscall_xyz", "getsid", NULL};
static char *names_read[] = {"read", NULL};
static char *arch_list[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", NULL};
static char *flag_list[] = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
			    "SECCOMP_FILTER_FLAG_SPEC_ALLOW", NULL};

static int validate(const struct ward_seccomp *s, struct ward_err *err)
{
	ward_err_clear(err);
	return ward_seccomp_validate(s, err);
}

static bool in_table(const char *const *t, const char *name)
{
	for (size_t i = 0; t[i]; i++)
		if (strcmp(t[i], name) == 0)
			return true;
	return false;
}

static void test_tables(void)
{
	bool subset = true;
	CHECK(in_table(ward_seccomp_action_names, "SCMP_ACT_KILL_PROCESS"),
	      "actions: KILL_PROCESS");
	CHECK(in_table(ward_seccomp_action_names, "SCMP_ACT_LOG"), "actions: LOG");
	CHECK(!in_table(ward_seccomp_action_names, "SCMP_ACT_NOTIFY"),
	      "actions: NOTIFY is not advertised");
	CHECK(in_table(ward_seccomp_op_names, "SCMP_CMP_MASKED_EQ"), "operators: MASKED_EQ");
	CHECK(in_table(ward_seccomp_arch_names, "SCMP_ARCH_RISCV64"), "archs: RISCV64");
	CHECK(in_table(ward_seccomp_known_flags, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"),
	      "known flags: WAIT_KILLABLE_RECV");
	CHECK(!in_table(ward_seccomp_supported_flags, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"),
	      "supported flags: not WAIT_KILLABLE_RECV");
	for (size_t i = 0; ward_seccomp_supported_flags[i]; i++)
		subset =
		    subset && in_table(ward_seccomp_known_flags, ward_seccomp_supported_flags[i]);
	CHECK(subset, "supported flags are known flags");
}

static void test_validate(void)
{
	struct ward_err err;
	struct ward_seccomp_arg eq_arg = {.index = 0, .value = 1, .op = "SCMP_CMP_EQ"};
	struct ward_seccomp_arg bad_op = {.index = 1, .value = 1, .op = "SCMP_CMP_ALMOST"};
	struct ward_seccomp_arg bad_index = {.index = 6, .value = 1, .op = "SCMP_CMP_EQ"};
	struct ward_seccomp_rule rules[2] = {
	    {.names = names_getppid, .action = "SCMP_ACT_ERRNO"},
	    {.names = names_personality, .action = "SCMP_ACT_ALLOW"},
	};
	struct ward_seccomp s = {.default_action = "SCMP_ACT_ALLOW",
				 .architectures = arch_list,
				 .flags = flag_list,
				 .syscalls = rules,
				 .n_syscalls = 2};
	char *bad_arch[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_PDP11", NULL};
	char *killable[] = {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", NULL};
	char *unknown_flag[] = {"SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_FAST", NULL};
	char *no_names[] = {NULL};

	rules[1].args = &eq_arg;
	rules[1].n_args = 1;
	CHECK(validate(&s, &err) == 0, "valid profile passes");
	CHECK(validate(NULL, &err) == 0, "no seccomp section passes");

	s.default_action = "SCMP_ACT_FOO";
	CHECK(validate(&s, &err) < 0, "unknown default action fails");
	CHECK_STR_CONTAINS(err.msg, "linux.seccomp.defaultAction: unknown action \"SCMP_ACT_FOO\"",
			   "unknown default action message");
	s.default_action = "SCMP_ACT_NOTIFY";
	CHECK(validate(&s, &err) < 0, "NOTIFY default action fails");
	CHECK_STR_CONTAINS(err.msg, "SCMP_ACT_NOTIFY: seccomp notify listeners are not supported",
			   "NOTIFY default action message");
	s.default_action = NULL;
	CHECK(validate(&s, &err) < 0, "missing default action fails");
	CHECK_STR_CONTAINS(err.msg, "linux.seccomp.defaultAction: required",
			   "missing default action message");
	s.default_action = "SCMP_ACT_ALLOW";

	s.has_default_errno_ret = true;
	s.default_errno_ret = 1;
	CHECK(validate(&s, &err) < 0, "defaultErrnoRet with ALLOW fails");
	CHECK_STR_CONTAINS(err.msg, "linux.seccomp.defaultErrnoRet: only valid with",
			   "defaultErrnoRet message");
	s.default_action = "SCMP_ACT_ERRNO";
	CHECK(validate(&s, &err) == 0, "defaultErrnoRet with ERRNO passes");
	s.default_action = "SCMP_ACT_ALLOW";
	s.has_default_errno_ret = false;

	rules[1].action = "SCMP_ACT_NOTIFY";
	CHECK(validate(&s, &err) < 0, "NOTIFY rule fails");
	CHECK_STR_CONTAINS(err.msg,
			   "linux.seccomp.syscalls[1].action: SCMP_ACT_NOTIFY: seccomp notify "
			   "listeners are not supported",
			   "NOTIFY rule message names the rule");
	rules[1].action = "SCMP_ACT_BOGUS";
	CHECK(validate(&s, &err) < 0, "unknown rule action fails");
	CHECK_STR_CONTAINS(err.msg,
			   "linux.seccomp.syscalls[1].action: unknown action \"SCMP_ACT_BOGUS\"",
			   "unknown rule action message");
	rules[1].action = "SCMP_ACT_ALLOW";

	rules[1].has_errno_ret = true;
	rules[1].errno_ret = 5;
	CHECK(validate(&s, &err) < 0, "errnoRet with ALLOW fails");
	CHECK_STR_CONTAINS(err.msg, "linux.seccomp.syscalls[1].errnoRet: only valid with",
			   "errnoRet message");
	rules[1].action = "SCMP_ACT_TRACE";
	CHECK(validate(&s, &err) == 0, "errnoRet with TRACE passes");
	rules[1].action = "SCMP_ACT_ERRNO";
	rules[1].errno_ret = 70000;
	CHECK(validate(&s, &err) < 0, "errnoRet out of range fails");
	CHECK_STR_CONTAINS(err.msg, "linux.seccomp.syscalls[1].errnoRet: 70000 is out of range",
			   "errnoRet range message");
	rules[1].action = "SCMP_ACT_ALLOW";
	rules[1].has_errno_ret = false;

	s.architectures = bad_arch;
	CHECK(validate(&s, &err) < 0, "unknown architecture fails");
	CHECK_STR_CONTAINS(err.msg,
			   "linux.seccomp.architectures[1]: unknown architecture "
			   "\"SCMP_ARCH_PDP11\"",
			   "unknown architecture message");
	s.architectures = arch_list;

	s.flags = killable;
	CHECK(validate(&s, &err) < 0, "WAIT_KILLABLE_RECV fails");
	CHECK_STR_CONTAINS(err.msg,
			   "linux.seccomp.flags[0]: SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV is "
			   "not supported",
			   "WAIT_KILLABLE_RECV message");
	s.flags = unknown_flag;
	CHECK(validate(&s, &err) < 0, "unknown flag fails");
	CHECK_STR_CONTAINS(err.msg,
			   "linux.seccomp.flags[1]: unknown flag \"SECCOMP_FILTER_FLAG_FAST\"",
			   "unknown flag message");
	s.flags = flag_list;

	rules[1].args = &bad_op;
	CHECK(validate(&s, &err) < 0, "unknown operator fails");
	CHECK_STR_CONTAINS(err.msg,
			   "linux.seccomp.syscalls[1].args[0].op: unknown operator "
			   "\"SCMP_CMP_ALMOST\"",
			   "unknown operator message");
	rules[1].args = &bad_index;
	CHECK(validate(&s, &err) < 0, "argument index 6 fails");
	CHECK_STR_CONTAINS(err.msg, "linux.seccomp.syscalls[1].args[0].index: 6 is out of range",
			   "argument index message");
	rules[1].args = &eq_arg;

	rules[0].names = no_names;
	CHECK(validate(&s, &err) < 0, "empty names fails");
	CHECK_STR_CONTAINS(err.msg, "linux.seccomp.syscalls[0].names:", "empty names message");
	rules[0].names = names_getppid;

	s.listener_path = "/run/listener.sock";
	CHECK(validate(&s, &err) < 0, "listenerPath fails");
	CHECK_STR_CONTAINS(err.msg, "linux.seccomp.listenerPath: seccomp notify listeners",
			   "listenerPath message");
	s.listener_path = NULL;

	/* load validates first, and reports before touching the process */
	s.default_action = "SCMP_ACT_FOO";
	ward_err_clear(&err);
	CHECK(ward_seccomp_load(&s, &err) < 0, "load refuses an invalid profile");
	CHECK_STR_CONTAINS(err.msg, "linux.seccomp.defaultAction: unknown action",
			   "load error message");
}

/* Results from a filtered child, one slot per check. */
struct load_result {
	int load_rc;
	char load_msg[sizeof(((struct ward_err *)0)->msg)];
	long getppid_rc;
	int getppid_errno;
	int pers_bad_errno;
	long pers_query_rc;
	int pgid1_errno, pgid2_errno;
	long pgid0_rc;
	int getsid_errno;
	long read_rc;
};

static void filtered_child(int fd)
{
	struct ward_err err = {0};
	struct load_result r = {0};
	struct ward_seccomp_arg pers_arg = {.index = 0, .value = 0x12345, .op = "SCMP_CMP_EQ"};
	/* two conditions on the same argument: one rule per condition */
	struct ward_seccomp_arg pgid_args[2] = {
	    {.index = 0, .value = 1000001, .op = "SCMP_CMP_EQ"},
	    {.index = 0, .value = 1000002, .op = "SCMP_CMP_EQ"},
	};
	struct ward_seccomp_rule rules[] = {
	    {.names = names_getppid,
	     .action = "SCMP_ACT_ERRNO",
	     .has_errno_ret = true,
	     .errno_ret = 42},
	    {.names = names_personality,
	     .action = "SCMP_ACT_ERRNO",
	     .has_errno_ret = true,
	     .errno_ret = 43,
	     .args = &pers_arg,
	     .n_args = 1},
	    {.names = names_getpgid,
	     .action = "SCMP_ACT_ERRNO",
	     .has_errno_ret = true,
	     .errno_ret = 44,
	     .args = pgid_args,
	     .n_args = 2},
	    /* the unknown name is skipped, getsid still gets the default EPERM */
	    {.names = names_mixed, .action = "SCMP_ACT_ERRNO"},
	    /* same as the default action: skipped, not an error */
	    {.names = names_read, .action = "SCMP_ACT_ALLOW"},
	};
	struct ward_seccomp s = {.default_action = "SCMP_ACT_ALLOW",
				 .architectures = arch_list,
				 .flags = under_valgrind() ? NULL : flag_list,
				 .syscalls = rules,
				 .n_syscalls = ARRAY_SIZE(rules)};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(3);
	r.load_rc = ward_seccomp_load(&s, &err);
	memcpy(r.load_msg, err.msg, sizeof(r.load_msg));
	errno = 0;
	r.getppid_rc = syscall(SYS_getppid);
	r.getppid_errno = errno;
	errno = 0;
	(void)syscall(SYS_personality, 0x12345UL);
	r.pers_bad_errno = errno;
	r.pers_query_rc = syscall(SYS_personality, 0xffffffffUL);
	errno = 0;
	(void)syscall(SYS_getpgid, 1000001);
	r.pgid1_errno = errno;
	errno = 0;
	(void)syscall(SYS_getpgid, 1000002);
	r.pgid2_errno = errno;
	r.pgid0_rc = syscall(SYS_getpgid, 0);
	errno = 0;
	(void)syscall(SYS_getsid, 0);
	r.getsid_errno = errno;
	r.read_rc = read(-1, NULL, 0); /* EBADF from the kernel, not from the filter */
	(void)!write(fd, &r, sizeof(r));
	_exit(0);
}

static void test_load(void)
{
	int p[2];
	struct load_result r = {0};
	pid_t pid;
	int status = 0;

	fflush(stdout);
	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		filtered_child(p[1]);
	}
	close(p[1]);
	CHECK(read_exact(p[0], &r, sizeof(r)) == (ssize_t)sizeof(r), "filtered child reported");
	close(p[0]);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "filtered child exited 0");
	CHECK(r.load_rc == 0, "filter loads");
	if (r.load_rc != 0)
		printf("#   %s\n", r.load_msg);
	CHECK(r.getppid_rc == -1 && r.getppid_errno == 42, "getppid fails with errnoRet 42");
	CHECK(r.pers_bad_errno == 43, "personality(0x12345) matches the arg condition");
	CHECK(r.pers_query_rc >= 0, "personality(query) does not match");
	CHECK(r.pgid1_errno == 44 && r.pgid2_errno == 44,
	      "two conditions on one argument: both match");
	CHECK(r.pgid0_rc >= 0, "getpgid(0) matches neither condition");
	CHECK(r.getsid_errno == EPERM, "ERRNO without errnoRet is EPERM; unknown name skipped");
	CHECK(r.read_rc == -1, "rule equal to the default action is skipped");
}

static void kill_child(void)
{
	struct ward_err err = {0};
	struct ward_seccomp_rule rule = {.names = names_getppid, .action = "SCMP_ACT_KILL_PROCESS"};
	struct ward_seccomp s = {
	    .default_action = "SCMP_ACT_ALLOW", .syscalls = &rule, .n_syscalls = 1};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || ward_seccomp_load(&s, &err) < 0)
		_exit(3);
	(void)syscall(SYS_getppid);
	_exit(0);
}

/* Allow-list child: everything but write and exit fails with defaultErrnoRet. */
static void allowlist_child(int fd)
{
	struct ward_err err = {0};
	char *allowed[] = {"write", "exit", "exit_group", "rt_sigreturn", NULL};
	struct ward_seccomp_rule rule = {.names = allowed, .action = "SCMP_ACT_ALLOW"};
	struct ward_seccomp s = {.default_action = "SCMP_ACT_ERRNO",
				 .has_default_errno_ret = true,
				 .default_errno_ret = ENOSYS,
				 .syscalls = &rule,
				 .n_syscalls = 1};
	int e;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || ward_seccomp_load(&s, &err) < 0)
		_exit(3);
	errno = 0;
	(void)syscall(SYS_getppid);
	e = errno;
	(void)!write(fd, &e, sizeof(e));
	_exit(0);
}

static void test_kill_and_default_errno(void)
{
	int status = 0, p[2], e = 0;
	pid_t pid;

	/* and valgrind's own syscalls would hit the allow-list */
	if (under_valgrind()) {
		printf("ok %d - SCMP_ACT_KILL_PROCESS # skip under valgrind\n", ++tap_n);
		printf("ok %d - defaultErrnoRet # skip under valgrind\n", ++tap_n);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		kill_child();
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
	      "SCMP_ACT_KILL_PROCESS kills with SIGSYS");

	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		allowlist_child(p[1]);
	}
	close(p[1]);
	CHECK(read_exact(p[0], &e, sizeof(e)) == (ssize_t)sizeof(e) && e == ENOSYS,
	      "defaultAction ERRNO uses defaultErrnoRet");
	close(p[0]);
	waitpid(pid, &status, 0);
}

int main(void)
{
	/* line-buffered: a forked child (valgrind turns a failed exec into an exit) must not
	 * repeat buffered TAP lines */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ward_log_open("/dev/null", false, true);
	test_tables();
	test_validate();
	test_load();
	test_kill_and_default_errno();
	TAP_DONE();
}
