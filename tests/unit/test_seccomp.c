/* seccomp.c: validation errors name the field; a loaded filter does what the spec says.
 * seccomp_profiles.c: the embedded profiles parse, compile, and deny what they promise
 * (checked from filtered children against an unfiltered baseline); the pod's filter stacks
 * on the tenant's; the compiled-filter cache hits, and distrusts damaged or foreign files. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include "log.h"
#include "seccomp.h"
#include "seccomp_profiles.h"
#include "seccomp_tree.h"
#include "spec.h"
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

/* ---- the embedded profiles ---- */

static void rm_rf(const char *dir)
{
	cleanup_free char *cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_strv(char *const *a, char *const *b)
{
	size_t i = 0;
	if (!a || !b)
		return a == b;
	for (; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return !a[i] && !b[i];
}

/* Every member of two decoded profiles, field by field. */
static bool same_seccomp(const struct ward_seccomp *a, const struct ward_seccomp *b)
{
	if (!same_str(a->default_action, b->default_action) ||
	    a->has_default_errno_ret != b->has_default_errno_ret ||
	    a->default_errno_ret != b->default_errno_ret ||
	    !same_strv(a->architectures, b->architectures) || !same_strv(a->flags, b->flags) ||
	    !same_str(a->listener_path, b->listener_path) ||
	    !same_str(a->listener_metadata, b->listener_metadata) || a->n_syscalls != b->n_syscalls)
		return false;
	for (size_t i = 0; i < a->n_syscalls; i++) {
		const struct ward_seccomp_rule *x = &a->syscalls[i], *y = &b->syscalls[i];
		if (!same_strv(x->names, y->names) || !same_str(x->action, y->action) ||
		    x->has_errno_ret != y->has_errno_ret || x->errno_ret != y->errno_ret ||
		    x->n_args != y->n_args)
			return false;
		for (size_t k = 0; k < x->n_args; k++)
			if (x->args[k].index != y->args[k].index ||
			    x->args[k].value != y->args[k].value ||
			    x->args[k].value_two != y->args[k].value_two ||
			    !same_str(x->args[k].op, y->args[k].op))
				return false;
	}
	return true;
}

/* The typed built-in of that name. */
static const struct ward_seccomp *profile_structs_of(const char *name)
{
	return !strcmp(name, "default")	 ? &ward_seccomp_builtin_default
	       : !strcmp(name, "strict") ? &ward_seccomp_builtin_strict
					 : &ward_seccomp_builtin_privileged;
}

/* Each built-in's typed form (made by seccomp-profiles/builtin-gen.c at build time) is what
 * the decoder makes of its JSON, and ward_seccomp_profile_parse hands out a copy of it; any
 * other text is decoded. */
static void test_profile_builtin(void)
{
	struct ward_err err = {0};

	for (size_t i = 0; ward_seccomp_profile_names[i]; i++) {
		const char *name = ward_seccomp_profile_names[i];
		cleanup_free char *text = ward_seccomp_profile_load(name, &err);
		struct ward_seccomp *decoded = text ? ward_seccomp_parse(text, name, &err) : NULL;
		struct ward_seccomp *built =
		    text ? ward_seccomp_profile_parse(text, name, &err) : NULL;

		char what[96];

		snprintf(what, sizeof(what),
			 "built-in profile \"%s\": the typed form is the decoder's", name);
		CHECK(decoded && built && same_seccomp(decoded, built), what);
		snprintf(what, sizeof(what), "built-in profile \"%s\": a copy of its own", name);
		CHECK(built && built->n_syscalls > 0 &&
			  built->syscalls != profile_structs_of(name)->syscalls &&
			  built->syscalls[0].names != profile_structs_of(name)->syscalls[0].names,
		      what);
		ward_seccomp_free(decoded);
		ward_seccomp_free(built);
	}
	/* Not a built-in's text (one space more): decoded, errors and all. */
	{
		cleanup_free char *text = ward_seccomp_profile_load("default", &err);
		cleanup_free char *other = xasprintf(" %s", text);
		struct ward_seccomp *sc = ward_seccomp_profile_parse(other, "other", &err);
		CHECK(sc && sc->n_syscalls == ward_seccomp_builtin_default.n_syscalls,
		      "another text is decoded");
		ward_seccomp_free(sc);
		ward_err_clear(&err);
		CHECK(!ward_seccomp_profile_parse("{\"defaultAction\": 1}", "bad", &err) &&
			  strstr(err.msg, "defaultAction"),
		      "another text's error names the field");
	}
}

static void test_profile_load(void)
{
	struct ward_err err = {0};
	char path[] = "/tmp/ward-test-profile-XXXXXX";
	int fd;
	char *text;
	size_t n = 0;

	for (; ward_seccomp_profile_names[n]; n++)
		;
	CHECK(n == 3, "three built-in profiles");
	text = ward_seccomp_profile_load("strict", &err);
	CHECK(text && strstr(text, "\"defaultAction\": \"SCMP_ACT_ERRNO\""),
	      "built-in profile by name");
	free(text);

	fd = mkstemp(path);
	if (fd < 0 || write_all(fd, "{\"defaultAction\": \"SCMP_ACT_LOG\"}", 33) < 0)
		abort();
	close(fd);
	text = ward_seccomp_profile_load(path, &err);
	CHECK(text && strcmp(text, "{\"defaultAction\": \"SCMP_ACT_LOG\"}") == 0,
	      "profile from an absolute path");
	free(text);
	unlink(path);
	ward_err_clear(&err);
	CHECK(!ward_seccomp_profile_load(path, &err), "missing file fails");
	CHECK_STR_CONTAINS(err.msg, path, "missing file: the error names it");

	ward_err_clear(&err);
	CHECK(!ward_seccomp_profile_load("defualt", &err), "unknown name fails");
	CHECK_STR_CONTAINS(err.msg, "seccomp profile \"defualt\"", "unknown name: named");
	ward_err_clear(&err);
	CHECK(!ward_seccomp_profile_load("profiles/default.json", &err), "relative path fails");
	CHECK_STR_CONTAINS(err.msg, "\"profiles/default.json\"", "relative path: named");
}

/* A spec around a linux.seccomp object, through the real parser; pod: the pod's own
 * filter as the tenant policy stores it (annotation), or NULL. */
static struct ward_spec *spec_with(const char *seccomp_json, const char *pod_json)
{
	struct ward_err err = {0};
	json_error_t jerr;
	json_t *sc = json_loads(seccomp_json, 0, &jerr);
	json_t *o = json_pack("{s:s, s:{s:s}, s:{s:o}}", "ociVersion", "1.3.0", "root", "path",
			      "rootfs", "linux", "seccomp", sc);
	struct ward_spec *spec;
	char *text;

	if (!sc || !o)
		return NULL;
	if (pod_json)
		json_object_set_new(o, "annotations",
				    json_pack("{s:s}", WARD_ANN_POD_SECCOMP, pod_json));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	spec = ward_spec_parse(text, strlen(text), "/tmp", &err);
	if (!spec)
		printf("#   %s\n", err.msg);
	free(text);
	return spec;
}

/* What a syscall did, from a child. */
struct outcome {
	long rc;
	int err;
	bool ran; /* false: the probe process died (no int 0x80 on this kernel, ...) */
};

#define NOT_EPERM (-1) /* expectation: the filter let it through (any result but EPERM) */
#define WORKS	  0    /* expectation: rc >= 0 */

#ifdef __x86_64__
/* An i386 system call from this 64-bit process: the filter sees AUDIT_ARCH_I386. */
static long int80(long nr, long a, long b, long c)
{
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	if (ret < 0 && ret > -4096) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
#endif

static long closing(long fd)
{
	if (fd >= 0)
		close((int)fd);
	return fd;
}

static long raw_clone(unsigned long flags)
{
	long rc = syscall(SYS_clone, flags | SIGCHLD, 0, NULL, NULL, 0);
	if (rc == 0)
		_exit(0);
	if (rc > 0)
		waitpid((pid_t)rc, NULL, 0);
	return rc;
}

static long probe_clone3(void)
{
	struct clone_args ca = {.exit_signal = SIGCHLD};
	long rc = syscall(SYS_clone3, &ca, sizeof(ca));
	if (rc == 0)
		_exit(0);
	if (rc > 0)
		waitpid((pid_t)rc, NULL, 0);
	return rc;
}

static long probe_socketcall_alg(void)
{
#ifdef __x86_64__
	/* socketcall(SYS_SOCKET, {AF_ALG, SOCK_SEQPACKET, 0}): the arguments must sit below
	 * 4 GiB for the i386 ABI */
	uint32_t *args = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (args == MAP_FAILED)
		_exit(2);
	args[0] = AF_ALG;
	args[1] = SOCK_SEQPACKET;
	args[2] = 0;
	return closing(int80(102, 1, (long)(uintptr_t)args, 0));
#else
	_exit(2);
#endif
}

static long probe(int i)
{
	struct perf_event_attr pe = {.type = PERF_TYPE_SOFTWARE, .size = sizeof(pe)};
	union bpf_attr ba;

	memset(&ba, 0, sizeof(ba));
	switch (i) {
	case 0:
		return syscall(SYS_getpid);
	case 1:
		return syscall(SYS_getppid);
	case 2:
		return closing(syscall(SYS_io_uring_setup, 1, NULL));
	case 3:
		return probe_clone3();
	case 4:
		return syscall(SYS_unshare, CLONE_NEWUSER);
	case 5:
		return syscall(SYS_unshare, CLONE_FS | CLONE_FILES);
	case 6:
		return syscall(SYS_unshare, CLONE_NEWUTS);
	case 7:
		return raw_clone(CLONE_NEWUSER);
	case 8:
		return raw_clone(CLONE_NEWNET);
	case 9:
		return closing(socket(AF_ALG, SOCK_SEQPACKET, 0));
	case 10:
		return closing(socket(AF_VSOCK, SOCK_STREAM, 0));
	case 11:
		return closing(socket(AF_PACKET, SOCK_RAW, 0));
	case 12:
		return closing(socket(AF_INET, SOCK_STREAM, 0));
	case 13: /* the kernel truncates the family to an int: 38, AF_ALG */
		return closing(syscall(SYS_socket, (1UL << 32) | AF_ALG, SOCK_SEQPACKET, 0));
	case 14:
		return closing(socket(AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */));
	case 15:
		return closing(socket(AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */));
	case 16:
		return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	case 17:
		return closing(syscall(SYS_bpf, BPF_PROG_LOAD, &ba, sizeof(ba)));
	case 18:
		return closing(syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0));
	case 19:
		return closing(syscall(SYS_userfaultfd, 0));
	case 20:
		return mount("none", "/nonexistent-ward-test", "tmpfs", 0, NULL);
	case 21:
		return closing(syscall(SYS_fsopen, "tmpfs", 0));
	case 22:
		return syscall(SYS_umount2, "/nonexistent-ward-test", 0);
	case 23:
		return closing(syscall(SYS_open_by_handle_at, -1, NULL, 0));
	case 24:
		return syscall(SYS_setns, -1, 0);
	case 25:
		return syscall(SYS_finit_module, -1, "", 0);
	case 26:
		return syscall(SYS_ptrace, PTRACE_PEEKDATA, getppid(), NULL, NULL);
	case 27:
		return syscall(SYS_process_vm_readv, getppid(), NULL, 0, NULL, 0, 0);
	case 28:
		return syscall(SYS_personality, 0xffffffffUL);
	case 29:
		return syscall(SYS_personality, PER_LINUX);
	case 30:
		return syscall(SYS_personality, ADDR_NO_RANDOMIZE);
	case 31:
		return syscall(SYS_chroot, "/nonexistent-ward-test");
	case 32: /* a length the kernel refuses before looking at the name */
		return syscall(SYS_sethostname, NULL, 100000);
	case 33:
		return syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	case 34: /* bad magic: EINVAL from the kernel */
		return syscall(SYS_reboot, 0, 0, 0, NULL);
	case 35:
		return syscall(SYS_swapon, "/nonexistent-ward-test", 0);
#ifdef __x86_64__
	case 36:
		return int80(20 /* getpid */, 0, 0, 0);
	case 37:
		return closing(int80(359 /* socket */, AF_ALG, SOCK_SEQPACKET, 0));
	case 38:
		return probe_socketcall_alg();
#endif
	}
	_exit(2);
}

#define N_PROBES 39
static const char *const probe_names[N_PROBES] = {
    "getpid",
    "getppid",
    "io_uring_setup",
    "clone3",
    "unshare(CLONE_NEWUSER)",
    "unshare(CLONE_FS|CLONE_FILES)",
    "unshare(CLONE_NEWUTS)",
    "clone(CLONE_NEWUSER)",
    "clone(CLONE_NEWNET)",
    "socket(AF_ALG)",
    "socket(AF_VSOCK)",
    "socket(AF_PACKET)",
    "socket(AF_INET, SOCK_STREAM)",
    "socket(1<<32 | AF_ALG)",
    "socket(AF_NETLINK, NETLINK_ROUTE)",
    "socket(AF_NETLINK, NETLINK_AUDIT)",
    "keyctl",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "mount",
    "fsopen",
    "umount2",
    "open_by_handle_at",
    "setns",
    "finit_module",
    "ptrace",
    "process_vm_readv",
    "personality(query)",
    "personality(PER_LINUX)",
    "personality(ADDR_NO_RANDOMIZE)",
    "chroot",
    "sethostname",
    "syslog",
    "reboot",
    "swapon",
    "i386 getpid",
    "i386 socket(AF_ALG)",
    "i386 socketcall(SYS_SOCKET, AF_ALG)",
};

/* Every probe in a process of its own (some change the process when allowed), under the
 * filters f (none: the baseline). */
static void run_probes(const struct ward_seccomp_filters *f, struct outcome out[N_PROBES])
{
	int p[2];
	pid_t pid;

	memset(out, 0, sizeof(struct outcome) * N_PROBES);
	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct ward_err err = {0};
		close(p[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    ward_seccomp_filters_install(f, &err) < 0)
			_exit(3);
		for (int i = 0; i < N_PROBES; i++) {
			pid_t c = fork();
			if (c == 0) {
				struct outcome o = {.ran = true};
				errno = 0;
				o.rc = probe(i);
				o.err = o.rc < 0 ? errno : 0;
				(void)!write(p[1], &i, sizeof(i));
				(void)!write(p[1], &o, sizeof(o));
				_exit(0);
			}
			waitpid(c, NULL, 0);
		}
		_exit(0);
	}
	close(p[1]);
	for (;;) {
		int i;
		struct outcome o;
		if (read_exact(p[0], &i, sizeof(i)) != sizeof(i) ||
		    read_exact(p[0], &o, sizeof(o)) != sizeof(o) || i < 0 || i >= N_PROBES)
			break;
		out[i] = o;
	}
	close(p[0]);
	waitpid(pid, NULL, 0);
}

/* want: an errno (the filter's answer), WORKS or NOT_EPERM. A denial only counts when the
 * unfiltered baseline answered differently: the filter, not the kernel, said no. */
static void expect(const char *profile, const struct outcome *base, const struct outcome *got,
		   int i, int want)
{
	char name[160];

	if (want > 0)
		snprintf(name, sizeof(name), "%s: %s fails with %s", profile, probe_names[i],
			 strerrorname_np(want));
	else
		snprintf(name, sizeof(name), "%s: %s %s", profile, probe_names[i],
			 want == WORKS ? "works" : "passes the filter");
	if (!base[i].ran) {
		printf("ok %d - %s # skip not available here\n", ++tap_n, name);
		return;
	}
	if (want > 0 && base[i].rc < 0 && base[i].err == want) {
		printf("ok %d - %s # skip the kernel already answers %s\n", ++tap_n, name,
		       strerrorname_np(want));
		return;
	}
	if (want == WORKS)
		CHECK(got[i].ran && got[i].rc >= 0, name);
	else if (want == NOT_EPERM)
		CHECK(got[i].ran && (got[i].rc >= 0 || got[i].err != EPERM), name);
	else
		CHECK(got[i].ran && got[i].rc == -1 && got[i].err == want, name);
	if (getenv("WARD_TEST_VERBOSE") || (got[i].ran && got[i].rc < 0 &&
					    (want == WORKS || (want > 0 && got[i].err != want) ||
					     (want == NOT_EPERM && got[i].err == EPERM))))
		printf("#   got rc %ld %s, unfiltered rc %ld %s\n", got[i].rc,
		       got[i].rc < 0 ? strerrorname_np(got[i].err) : "", base[i].rc,
		       base[i].rc < 0 ? strerrorname_np(base[i].err) : "");
}

/* Expectations: index -> answer, per profile. */
struct want {
	int probe, def, strict, priv;
};
static const struct want wants[] = {
    {0, WORKS, WORKS, WORKS},	       /* getpid */
    {2, EPERM, EPERM, EPERM},	       /* io_uring */
    {3, ENOSYS, ENOSYS, ENOSYS},       /* clone3: libc falls back to clone */
    {4, EPERM, EPERM, EPERM},	       /* unshare(NEWUSER) */
    {5, WORKS, WORKS, WORKS},	       /* unshare(FS|FILES) */
    {6, EPERM, EPERM, WORKS},	       /* unshare(NEWUTS) */
    {7, EPERM, EPERM, EPERM},	       /* clone(NEWUSER) */
    {8, EPERM, EPERM, WORKS},	       /* clone(NEWNET) */
    {9, EPERM, EPERM, EPERM},	       /* AF_ALG */
    {10, EPERM, EPERM, EPERM},	       /* AF_VSOCK */
    {11, EPERM, EPERM, EPERM},	       /* AF_PACKET: denied to privileged pods too */
    {12, WORKS, WORKS, WORKS},	       /* AF_INET */
    {13, EPERM, EPERM, EPERM},	       /* AF_ALG with high bits */
    {14, WORKS, WORKS, WORKS},	       /* NETLINK_ROUTE */
    {15, NOT_EPERM, EPERM, NOT_EPERM}, /* NETLINK_AUDIT */
    {16, EPERM, EPERM, EPERM},	       /* keyctl */
    {17, EPERM, EPERM, EPERM},	       /* bpf */
    {18, EPERM, EPERM, EPERM},	       /* perf_event_open */
    {19, EPERM, EPERM, EPERM},	       /* userfaultfd */
    {20, EPERM, EPERM, EPERM},	       /* mount */
    {21, EPERM, EPERM, EPERM},	       /* fsopen */
    {22, EPERM, EPERM, EPERM},	       /* umount2 */
    {23, EPERM, EPERM, EPERM},	       /* open_by_handle_at */
    {24, EPERM, EPERM, EPERM},	       /* setns */
    {25, EPERM, EPERM, EPERM},	       /* finit_module */
    {26, EPERM, EPERM, NOT_EPERM},     /* ptrace */
    {27, EPERM, EPERM, NOT_EPERM},     /* process_vm_readv */
    {28, WORKS, WORKS, WORKS},	       /* personality query */
    {29, WORKS, EPERM, WORKS},	       /* personality(PER_LINUX) */
    {30, EPERM, EPERM, EPERM},	       /* ASLR off */
    {31, EPERM, EPERM, NOT_EPERM},     /* chroot */
    {32, EPERM, EPERM, NOT_EPERM},     /* sethostname */
    {33, EPERM, EPERM, EPERM},	       /* syslog */
    {34, EPERM, EPERM, NOT_EPERM},     /* reboot (pid namespace) */
    {35, EPERM, EPERM, EPERM},	       /* swapon */
    {36, WORKS, WORKS, WORKS},	       /* i386 getpid */
    {37, EPERM, EPERM, EPERM},	       /* i386 socket(AF_ALG) */
    {38, ENOSYS, ENOSYS, ENOSYS},      /* i386 socketcall */
};

static struct ward_spec *profile_spec(const char *name)
{
	cleanup_free char *text = NULL;
	struct ward_err err = {0};

	text = ward_seccomp_profile_load(name, &err);
	return text ? spec_with(text, NULL) : NULL;
}

static void test_profiles(void)
{
	struct outcome base[N_PROBES], got[N_PROBES];
	struct ward_seccomp_filters none = {0};
	char cache[] = "/tmp/ward-test-seccomp-cache-XXXXXX";

	if (!mkdtemp(cache))
		abort();
	ward_seccomp_cache_set_dir(cache);
	/* valgrind knows neither the exotic syscalls nor how to run under an allow-list */
	if (under_valgrind())
		printf("ok %d - baseline # skip under valgrind\n", ++tap_n);
	else {
		run_probes(&none, base);
		CHECK(base[0].ran && base[0].rc > 0, "baseline: probes run");
	}
	for (int p = 0; ward_seccomp_profile_names[p]; p++) {
		const char *name = ward_seccomp_profile_names[p];
		struct ward_spec *spec = profile_spec(name);
		struct ward_seccomp_filters f = {0};
		struct ward_err err = {0};
		char msg[128];

		snprintf(msg, sizeof(msg), "%s: parses as linux.seccomp", name);
		CHECK(spec && spec->linux.seccomp, msg);
		if (!spec)
			continue;
		snprintf(msg, sizeof(msg), "%s: validates", name);
		CHECK(ward_seccomp_validate(spec->linux.seccomp, &err) == 0, msg);
		snprintf(msg, sizeof(msg), "%s: compiles", name);
		CHECK(ward_seccomp_prepare(&spec->linux, &f, &err) == 0 && f.n == 1, msg);
		if (f.n != 1) {
			printf("#   %s\n", err.msg);
			ward_spec_free(spec);
			continue;
		}
		printf("# %s: %u BPF instructions\n", name, f.prog[0].len);
		if (under_valgrind()) {
			printf("ok %d - %s: probes # skip under valgrind\n", ++tap_n, name);
		} else {
			run_probes(&f, got);
			for (size_t i = 0; i < ARRAY_SIZE(wants); i++) {
				const struct want *w = &wants[i];
				expect(name, base, got, w->probe,
				       p == 0	? w->def
				       : p == 1 ? w->strict
						: w->priv);
			}
		}
		ward_seccomp_filters_free(&f);
		ward_spec_free(spec);
	}
	ward_seccomp_cache_set_dir(NULL);
	rm_rf(cache);
}

struct install_result {
	int rc;
	char msg[sizeof(((struct ward_err *)0)->msg)];
};

static void install_in_child(const struct ward_seccomp_filters *f, struct install_result *r)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct ward_err err = {0};
		struct install_result res = {0};
		close(p[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(3);
		res.rc = ward_seccomp_filters_install(f, &err);
		memcpy(res.msg, err.msg, sizeof(res.msg));
		(void)!write(p[1], &res, sizeof(res));
		_exit(0);
	}
	close(p[1]);
	if (read_exact(p[0], r, sizeof(*r)) != sizeof(*r))
		r->rc = 99;
	close(p[0]);
	waitpid(pid, NULL, 0);
}

/* The pod's filter (from the annotation) stacked on the tenant's default profile. */
/* The filters as the runtime hands them to the init (a memfd) come back the same: order,
 * instructions, flags, which one is the pod's. */
static void check_handover(const struct ward_seccomp_filters *f)
{
	struct ward_seccomp_filters back = {0};
	struct ward_err err = {0};
	int fd = ward_seccomp_filters_to_fd(f, &err);
	bool same;

	CHECK(fd >= 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC, "handover: a memfd, close-on-exec");
	same = fd >= 0 && ward_seccomp_filters_from_fd(fd, &back, &err) == 0 && back.n == f->n;
	for (size_t i = 0; same && i < f->n; i++)
		same = back.prog[i].len == f->prog[i].len &&
		       back.prog[i].flags == f->prog[i].flags &&
		       !strcmp(back.prog[i].what, f->prog[i].what) &&
		       !memcmp(back.prog[i].insns, f->prog[i].insns,
			       f->prog[i].len * sizeof(struct sock_filter));
	CHECK(same, "handover: the init reads back the same filters, in order");
	ward_seccomp_filters_free(&back);
	if (fd >= 0)
		close(fd);
}

/* What is not the runtime's whole message is refused, and leaves no filter. */
static void test_handover_malformed(void)
{
	static const struct {
		const char *what;
		uint32_t words[6];
		size_t n_words;
	} bad[] = {
	    {"an empty file", {0}, 0},
	    {"three filters", {3}, 1},
	    {"a filter of 0 instructions", {1, 0, 0}, 3},
	    {"a filter cut short", {1, 0, 2, 0x6, 0}, 5},
	    {"bytes after the last filter", {0, 7}, 2},
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct ward_seccomp_filters f = {0};
		struct ward_err err = {0};
		cleanup_fd int fd = memfd_create("t", MFD_CLOEXEC);
		char msg[128];

		if (fd < 0 ||
		    write(fd, bad[i].words, bad[i].n_words * 4) != (ssize_t)(bad[i].n_words * 4))
			abort();
		snprintf(msg, sizeof(msg), "handover: %s is refused, no filter kept", bad[i].what);
		CHECK(ward_seccomp_filters_from_fd(fd, &f, &err) < 0 && f.n == 0 &&
			  strstr(err.msg, "malformed"),
		      msg);
	}
}

static void test_stacking(void)
{
	static const char pod[] =
	    "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
	    "{\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 1},"
	    "{\"names\": [\"clone3\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13}]}";
	cleanup_free char *tenant = NULL;
	struct outcome base[N_PROBES], got[N_PROBES];
	struct ward_seccomp_filters none = {0}, f = {0};
	struct ward_err err = {0};
	struct ward_spec *spec;

	tenant = ward_seccomp_profile_load("default", &err);
	spec = tenant ? spec_with(tenant, pod) : NULL;
	CHECK(spec && spec->linux.seccomp && spec->linux.seccomp_pod,
	      "stacking: both filters parsed (pod's from the annotation)");
	if (!spec)
		return;
	CHECK(ward_seccomp_prepare(&spec->linux, &f, &err) == 0 && f.n == 2,
	      "stacking: two programs compiled");
	CHECK(f.n == 2 && strcmp(f.prog[0].what, "pod filter") == 0,
	      "stacking: the pod's program comes first");
	check_handover(&f);
	if (under_valgrind() || f.n != 2) {
		printf("ok %d - stacking: probes # skip\n", ++tap_n);
	} else {
		run_probes(&none, base);
		run_probes(&f, got);
		expect("stacked", base, got, 1, EPERM);	 /* the pod's denial */
		expect("stacked", base, got, 2, EPERM);	 /* the tenant's denial */
		expect("stacked", base, got, 9, EPERM);	 /* AF_ALG */
		expect("stacked", base, got, 0, WORKS);	 /* both allow */
		expect("stacked", base, got, 12, WORKS); /* both allow */
		/* both deny clone3: the errno of the filter loaded last (the tenant's) */
		expect("stacked", base, got, 3, ENOSYS);
	}
	ward_seccomp_filters_free(&f);
	ward_spec_free(spec);

	/* a pod filter that denies seccomp(2) cannot shed the tenant's: the install fails */
	if (!under_valgrind()) {
		struct install_result r = {0};
		spec = spec_with(tenant, "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": "
					 "[{\"names\": [\"seccomp\"], \"action\": "
					 "\"SCMP_ACT_ERRNO\"}]}");
		CHECK(spec && ward_seccomp_prepare(&spec->linux, &f, &err) == 0 && f.n == 2,
		      "stacking: a pod filter denying seccomp(2) compiles");
		install_in_child(&f, &r);
		CHECK(r.rc < 0, "stacking: then the tenant's filter cannot load, and that fails");
		CHECK_STR_CONTAINS(r.msg, "pod filter loaded, then: load filter",
				   "stacking: the error says why");
		ward_seccomp_filters_free(&f);
		ward_spec_free(spec);
	}

	/* an invalid pod filter names the annotation */
	spec = spec_with(tenant, "{\"defaultAction\": \"SCMP_ACT_NOPE\"}");
	ward_err_clear(&err);
	CHECK(spec && ward_seccomp_prepare(&spec->linux, &f, &err) < 0,
	      "stacking: an invalid pod filter fails");
	CHECK_STR_CONTAINS(err.msg, "annotations." WARD_ANN_POD_SECCOMP ".defaultAction",
			   "stacking: the error names the annotation");
	CHECK(f.n == 0, "stacking: nothing left compiled after the error");
	ward_spec_free(spec);
}

/* ---- the compiled-filter cache ---- */

static char *cache_file(const char *dir)
{
	char *found = NULL;
	cleanup_free char *cmd = xasprintf("ls %s/*.bpf 2>/dev/null", dir);
	FILE *f = popen(cmd, "r");
	char line[512];

	if (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		found = xstrdup(line);
	}
	if (f)
		pclose(f);
	return found;
}

static bool same_prog(const struct ward_seccomp_prog *a, const struct ward_seccomp_prog *b)
{
	return a->len == b->len && a->len &&
	       memcmp(a->insns, b->insns, a->len * sizeof(struct sock_filter)) == 0;
}

static void test_cache(void)
{
	char dir[] = "/tmp/ward-test-seccomp-cache-XXXXXX";
	struct ward_seccomp_prog fresh = {0}, p = {0};
	struct ward_seccomp_cache_stats *st = &ward_seccomp_cache_stats;
	struct ward_spec *spec = profile_spec("default");
	const struct ward_seccomp *s = spec ? spec->linux.seccomp : NULL;
	struct ward_err err = {0};
	cleanup_free char *file = NULL;
	cleanup_free char *sub = NULL;
	struct stat sb;
	int fd;

	if (!s || !mkdtemp(dir))
		abort();
	ward_seccomp_cache_set_dir(dir);
	memset(st, 0, sizeof(*st));

	CHECK(ward_seccomp_compile(s, &fresh, &err) == 0, "cache: first compile");
	CHECK(st->misses == 1 && st->hits == 0 && st->stored == 1,
	      "cache: first compile is a miss and stores an entry");
	file = cache_file(dir);
	CHECK(file && stat(file, &sb) == 0 && (sb.st_mode & 077) == 0,
	      "cache: the entry is private (0600)");

	CHECK(ward_seccomp_compile(s, &p, &err) == 0 && st->hits == 1 && st->misses == 1,
	      "cache: second compile hits");
	CHECK(same_prog(&p, &fresh), "cache: the cached program is the compiled one");
	ward_seccomp_prog_free(&p);

	/* one flipped bit in the program */
	fd = file ? open(file, O_RDWR | O_CLOEXEC) : -1;
	if (fd >= 0) {
		unsigned char c;
		off_t at = (off_t)sb.st_size - 3;
		if (pread(fd, &c, 1, at) != 1)
			abort();
		c ^= 0x10;
		if (pwrite(fd, &c, 1, at) != 1)
			abort();
		close(fd);
	}
	CHECK(ward_seccomp_compile(s, &p, &err) == 0 && st->rejected == 1 && st->misses == 2 &&
		  st->stored == 2,
	      "cache: a damaged entry is refused, recompiled and rewritten");
	CHECK(same_prog(&p, &fresh), "cache: the recompiled program is right");
	ward_seccomp_prog_free(&p);
	CHECK(ward_seccomp_compile(s, &p, &err) == 0 && st->hits == 2,
	      "cache: the rewritten entry hits");
	ward_seccomp_prog_free(&p);

	/* cut short */
	if (file && truncate(file, sb.st_size / 2) < 0)
		abort();
	CHECK(ward_seccomp_compile(s, &p, &err) == 0 && st->rejected == 2 && st->stored == 3,
	      "cache: a truncated entry is refused and rewritten");
	CHECK(same_prog(&p, &fresh), "cache: program right after a truncated entry");
	ward_seccomp_prog_free(&p);

	/* an entry someone else owns is not trusted */
	if (geteuid() == 0 && file && chown(file, 65534, 65534) == 0) {
		CHECK(ward_seccomp_compile(s, &p, &err) == 0 && st->rejected == 3 && st->hits == 2,
		      "cache: an entry owned by another user is refused");
		ward_seccomp_prog_free(&p);
		CHECK(stat(file, &sb) == 0 && sb.st_uid == 0, "cache: and replaced by our own");
	} else {
		printf("ok %d - cache: foreign owner # skip not root\n", ++tap_n);
		printf("ok %d - cache: replaced # skip not root\n", ++tap_n);
	}

	/* The same bit flipped in two instructions (the top bit of k: RET_ALLOW and
	 * RET_KILL_PROCESS differ there), which a plain word-wise hash would cancel. */
	memset(st, 0, sizeof(*st));
	fd = file && stat(file, &sb) == 0 ? open(file, O_RDWR | O_CLOEXEC) : -1;
	for (off_t at = sb.st_size - 1; fd >= 0 && at >= sb.st_size - 9; at -= 8) {
		unsigned char c; /* the 8th byte of each instruction: k's top byte */
		if (pread(fd, &c, 1, at) != 1)
			abort();
		c ^= 0x80;
		if (pwrite(fd, &c, 1, at) != 1)
			abort();
	}
	if (fd >= 0)
		close(fd);
	CHECK(ward_seccomp_compile(s, &p, &err) == 0 && st->rejected == 1 && st->hits == 0,
	      "cache: the same bit flipped in two instructions is refused");
	CHECK(same_prog(&p, &fresh), "cache: and the program recompiled is right");
	ward_seccomp_prog_free(&p);

	/* a directory others can write to is not used at all */
	chmod(dir, 0777);
	memset(st, 0, sizeof(*st));
	CHECK(ward_seccomp_compile(s, &p, &err) == 0 && st->hits == 0 && st->stored == 0 &&
		  st->misses == 1,
	      "cache: a world-writable cache directory is ignored");
	CHECK(same_prog(&p, &fresh), "cache: the program is still right");
	ward_seccomp_prog_free(&p);
	chmod(dir, 0700);

	/* a different filter is a different entry */
	free(s->syscalls[0].names[0]);
	s->syscalls[0].names[0] = xstrdup("getppid");
	memset(st, 0, sizeof(*st));
	CHECK(ward_seccomp_compile(s, &p, &err) == 0 && st->misses == 1 && st->hits == 0,
	      "cache: a changed filter misses");
	CHECK(!same_prog(&p, &fresh), "cache: and compiles to another program");
	ward_seccomp_prog_free(&p);

	/* the cache directory and its missing parent are created */
	sub = xasprintf("%s/made/seccomp-cache", dir);
	ward_seccomp_cache_set_dir(sub);
	memset(st, 0, sizeof(*st));
	CHECK(ward_seccomp_compile(s, &p, &err) == 0 && st->stored == 1 && stat(sub, &sb) == 0 &&
		  (sb.st_mode & 0777) == 0700,
	      "cache: the directory is made, 0700");
	ward_seccomp_prog_free(&p);

	ward_seccomp_cache_set_dir(NULL);
	ward_seccomp_prog_free(&fresh);
	ward_spec_free(spec);
	rm_rf(dir);
}

/* ---- how far a syscall walks through the compiled program ---------------------------- */

/* Classic BPF as the kernel's seccomp runs it, on a seccomp_data: the action and how many
 * instructions ran (0: the program is malformed for this input). */
static uint32_t bpf_run(const struct ward_seccomp_prog *p, const struct seccomp_data *d,
			unsigned *steps)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	const unsigned char *data = (const unsigned char *)d;

	*steps = 0;
	for (unsigned pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->insns[pc];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? x : f->k;
		++*steps;
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (BPF_MODE(f->code) == BPF_ABS && f->k % 4 == 0 && f->k <= sizeof(*d) - 4)
				memcpy(&a, data + f->k, 4);
			else if (BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS)
				a = mem[f->k];
			else if (BPF_MODE(f->code) == BPF_IMM)
				a = f->k;
			else
				return *steps = 0;
			break;
		case BPF_LDX:
			x = BPF_MODE(f->code) == BPF_MEM && f->k < BPF_MEMWORDS ? mem[f->k] : f->k;
			break;
		case BPF_ST:
			mem[f->k % BPF_MEMWORDS] = a;
			break;
		case BPF_STX:
			mem[f->k % BPF_MEMWORDS] = x;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_AND:
				a &= src;
				break;
			case BPF_OR:
				a |= src;
				break;
			case BPF_ADD:
				a += src;
				break;
			case BPF_SUB:
				a -= src;
				break;
			case BPF_RSH:
				a >>= src & 31;
				break;
			case BPF_LSH:
				a <<= src & 31;
				break;
			default:
				return *steps = 0;
			}
			break;
		case BPF_JMP: {
			bool t;
			if (BPF_OP(f->code) == BPF_JA) {
				pc += f->k;
				continue;
			}
			switch (BPF_OP(f->code)) {
			case BPF_JEQ:
				t = a == src;
				break;
			case BPF_JGT:
				t = a > src;
				break;
			case BPF_JGE:
				t = a >= src;
				break;
			case BPF_JSET:
				t = (a & src) != 0;
				break;
			default:
				return *steps = 0;
			}
			pc += t ? f->jt : f->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? a : f->k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		}
	}
	return *steps = 0;
}

/* Every syscall the kernel sees is decided within a few dozen instructions (96 at most): the
 * profiles compile to a binary tree of syscall numbers (libseccomp's SCMP_FLTATR_CTL_OPTIMIZE 2),
 * not a chain with one comparison per named syscall. The kernel emulates the program for
 * every syscall number when it is loaded (its per-syscall allow bitmap), and every
 * filtered syscall of the workload walks it: a chain made the load several times slower
 * (as a chain, the privileged profile walked 672 instructions for socket(2)). */
static void test_decision_depth(void)
{
	char cache[] = "/tmp/ward-test-seccomp-cache-XXXXXX";

	if (!mkdtemp(cache))
		abort();
	ward_seccomp_cache_set_dir(cache);
	for (int p = 0; ward_seccomp_profile_names[p]; p++) {
		const char *name = ward_seccomp_profile_names[p];
		struct ward_spec *spec = profile_spec(name);
		struct ward_seccomp_filters f = {0};
		struct ward_err err = {0};
		unsigned worst = 0, worst_nr = 0, broken = 0, allowed = 0;
		char msg[160];

		if (!spec || ward_seccomp_prepare(&spec->linux, &f, &err) < 0 || f.n != 1) {
			snprintf(msg, sizeof(msg), "%s: compiles for the depth check", name);
			CHECK(false, msg);
			ward_spec_free(spec);
			continue;
		}
		for (uint32_t nr = 0; nr < 1024; nr++) {
			struct seccomp_data d = {.nr = (int)nr, .arch = AUDIT_ARCH_X86_64};
			unsigned steps;
			uint32_t act = bpf_run(&f.prog[0], &d, &steps);
			broken += steps == 0;
			allowed += (act & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW;
			if (steps > worst)
				worst = steps, worst_nr = nr;
		}
		snprintf(msg, sizeof(msg),
			 "%s: every x86-64 syscall decided within 96 instructions (worst: %u, "
			 "syscall %u; %u allowed)",
			 name, worst, worst_nr, allowed);
		CHECK(broken == 0 && allowed > 0 && worst <= 96, msg);
		ward_seccomp_filters_free(&f);
		ward_spec_free(spec);
	}
	ward_seccomp_cache_set_dir(NULL);
	rm_rf(cache);
}

/* ---- the search over syscall numbers answers as libseccomp's program does ------------ */

#define X32_BIT 0x40000000u

/* What tells the two programs apart, if anything: the first input they answer differently
 * (or either cannot run), printed; false then. Inputs: every architecture the filters name
 * and others, syscall numbers 0-1099 in the native and x32 ranges, every constant the flat
 * program compares with and its neighbours, the ends of the number range; arguments and
 * the instruction pointer all equal to one of a set of values, or one argument set alone. */
static bool same_answers(const char *what, const struct ward_seccomp_prog *flat,
			 const struct ward_seccomp_prog *tree)
{
	static const uint32_t archs[] = {AUDIT_ARCH_X86_64,  AUDIT_ARCH_I386,
					 AUDIT_ARCH_AARCH64, 0,
					 UINT32_MAX,	     AUDIT_ARCH_X86_64 ^ 1};
	static const uint64_t values[] = {0,	      1,
					  2,	      8,
					  10,	      16,
					  38,	      40,
					  0x20000,    0x20008,
					  0x7e020000, 0x10000000,
					  0x40000000, 0x80000000,
					  UINT32_MAX, 0x100000000ULL,
					  UINT64_MAX, 0x100000002ULL};
	size_t n_nrs = 0, cap = 2200 + 3 * (size_t)flat->len + 8;
	cleanup_free uint32_t *nrs = xcalloc(cap, sizeof(*nrs));
	size_t runs = 0;

	for (uint32_t i = 0; i < 1100; i++) {
		nrs[n_nrs++] = i;
		nrs[n_nrs++] = X32_BIT + i;
	}
	for (unsigned pc = 0; pc < flat->len; pc++)
		if (BPF_CLASS(flat->insns[pc].code) == BPF_JMP) {
			nrs[n_nrs++] = flat->insns[pc].k - 1;
			nrs[n_nrs++] = flat->insns[pc].k;
			nrs[n_nrs++] = flat->insns[pc].k + 1;
		}
	nrs[n_nrs++] = X32_BIT - 1;
	nrs[n_nrs++] = INT32_MAX;
	nrs[n_nrs++] = (uint32_t)INT32_MAX + 1;
	nrs[n_nrs++] = UINT32_MAX;
	for (size_t a = 0; a < ARRAY_SIZE(archs); a++)
		for (size_t i = 0; i < n_nrs; i++)
			for (size_t v = 0; v < ARRAY_SIZE(values) * 7; v++) {
				struct seccomp_data d = {.nr = (int)nrs[i], .arch = archs[a]};
				uint64_t val = values[v % ARRAY_SIZE(values)];
				size_t only = v / ARRAY_SIZE(values); /* 0: all, else arg only-1 */
				uint32_t x, y;
				unsigned sx, sy;

				/* one argument alone: only for a few values, else it takes long
				 * (under valgrind, the arguments all alike only) */
				if (only && (v % ARRAY_SIZE(values) % 4 || under_valgrind()))
					continue;
				d.instruction_pointer = only ? 0 : val;
				for (size_t k = 0; k < 6; k++)
					d.args[k] = !only || k == only - 1 ? val : 0;
				x = bpf_run(flat, &d, &sx);
				y = bpf_run(tree, &d, &sy);
				runs++;
				if (sx && sy && x == y)
					continue;
				printf(
				    "#   %s: arch %#x nr %u args %#llx (only %zu): libseccomp %#x "
				    "(%u steps), search %#x (%u steps)\n",
				    what, archs[a], nrs[i], (unsigned long long)val, only, x, sx, y,
				    sy);
				return false;
			}
	printf("#   %s: %zu inputs alike, %u -> %u instructions\n", what, runs, flat->len,
	       tree->len);
	return true;
}

/* A profile made up from seed: any default action, some of the architectures, rules of
 * every action over a pool of syscalls (socket and ipc multiplexed on i386 among them),
 * with 0-2 conditions of every operator. */
static char *random_profile(unsigned seed)
{
	static const char *const actions[] = {"SCMP_ACT_ERRNO",	       "SCMP_ACT_ALLOW",
					      "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_TRAP",
					      "SCMP_ACT_LOG",	       "SCMP_ACT_KILL_THREAD"};
	static const char *const arch[] = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
	static const char *const names[] = {
	    "read",	  "write",	 "openat",  "close",  "socket",	  "bind",
	    "connect",	  "personality", "clone",   "clone3", "unshare",  "mount",
	    "socketcall", "ipc",	 "shmget",  "msgsnd", "getpid",	  "ioctl",
	    "mmap",	  "mmap2",	 "_llseek", "lseek",  "kill",	  "setns",
	    "bpf",	  "keyctl",	 "ptrace",  "chmod",  "fchmodat", "getrandom"};
	static const char *const ops[] = {"SCMP_CMP_NE",       "SCMP_CMP_LT", "SCMP_CMP_LE",
					  "SCMP_CMP_EQ",       "SCMP_CMP_GE", "SCMP_CMP_GT",
					  "SCMP_CMP_MASKED_EQ"};
	static const uint64_t values[] = {0,	   1,	       8,	   38,
					  0x20008, 0x7e020000, UINT32_MAX, 0x100000002ULL};
	json_t *p = json_object(), *archs = json_array(), *rules = json_array();
	char *text;

	srandom(seed);
	bool used[ARRAY_SIZE(names)] = {false};

	json_object_set_new(p, "defaultAction", json_string(actions[random() % 3 == 0 ? 1 : 0]));
	if (!strcmp(json_string_value(json_object_get(p, "defaultAction")), "SCMP_ACT_ERRNO") &&
	    random() % 2)
		json_object_set_new(p, "defaultErrnoRet", json_integer(random() % 100));
	for (size_t i = 0; i < ARRAY_SIZE(arch); i++)
		if (random() % 3)
			json_array_append_new(archs, json_string(arch[i]));
	json_object_set_new(p, "architectures", archs);
	for (long r = random() % 12; r >= 0; r--) {
		json_t *rule = json_object(), *nm = json_array(), *args = json_array();
		const char *act = actions[random() % ARRAY_SIZE(actions)];
		for (long n = random() % 8; n >= 0; n--) {
			size_t k = (size_t)random() % ARRAY_SIZE(names);
			if (!used[k]) /* a syscall in two rules can conflict (libseccomp: EEXIST) */
				json_array_append_new(nm, json_string(names[k]));
			used[k] = true;
		}
		if (json_array_size(nm) == 0)
			json_array_append_new(nm, json_string("getppid"));
		json_object_set_new(rule, "names", nm);
		json_object_set_new(rule, "action", json_string(act));
		if (!strcmp(act, "SCMP_ACT_ERRNO") && random() % 2)
			json_object_set_new(rule, "errnoRet", json_integer(random() % 100));
		for (long a = random() % 4 - 1; a > 0; a--) {
			const char *op = ops[random() % ARRAY_SIZE(ops)];
			json_t *arg =
			    json_pack("{s:I, s:I, s:s}", "index", (json_int_t)(random() % 6),
				      "value", (json_int_t)values[random() % 8], "op", op);
			if (!strcmp(op, "SCMP_CMP_MASKED_EQ"))
				json_object_set_new(arg, "valueTwo",
						    json_integer((json_int_t)values[random() % 8]));
			json_array_append_new(args, arg);
		}
		json_object_set_new(rule, "args", args);
		json_array_append_new(rules, rule);
	}
	json_object_set_new(p, "syscalls", rules);
	text = json_dumps(p, JSON_COMPACT);
	json_decref(p);
	return text;
}

/* The kernel's own checks of a seccomp program, as far as the searches can fail them: a
 * return last, every jump inside the program, loads of aligned words of seccomp_data. */
static bool well_formed(const struct ward_seccomp_prog *p)
{
	if (p->len == 0 || p->len > BPF_MAXINSNS || BPF_CLASS(p->insns[p->len - 1].code) != BPF_RET)
		return false;
	for (unsigned pc = 0; pc < p->len; pc++) {
		const struct sock_filter *f = &p->insns[pc];
		if (f->code == (BPF_JMP | BPF_JA) && f->k >= p->len - pc - 1)
			return false;
		if (BPF_CLASS(f->code) == BPF_JMP && f->code != (BPF_JMP | BPF_JA) &&
		    (pc + 1u + f->jt >= p->len || pc + 1u + f->jf >= p->len))
			return false;
		if (f->code == (BPF_LD | BPF_W | BPF_ABS) &&
		    (f->k % 4 || f->k > sizeof(struct seccomp_data) - 4))
			return false;
	}
	return true;
}

/* The kernel takes it as a filter: loaded in a child, which says so through shared memory
 * (the filter may refuse every syscall after it, exit_group too) and is then killed. */
static bool kernel_loads(const struct ward_seccomp_prog *p)
{
	volatile int *state = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				   -1, 0); /* 0: not yet, 1: loaded, 2: refused */
	bool r;
	pid_t pid;

	if (state == MAP_FAILED)
		abort();
	*state = 0;
	pid = fork();
	if (pid == 0) {
		struct sock_fprog f = {.len = p->len, .filter = p->insns};
		*state = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
				 syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &f) == 0
			     ? 1
			     : 2;
		for (;;)
			; /* no syscall is sure to be allowed now: the parent kills us */
	}
	for (int i = 0; i < 5000 && *state == 0; i++)
		usleep(1000);
	r = *state == 1;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	munmap((void *)state, 4096);
	return r;
}

/* The search of s has a comparison whose left half is out of a conditional jump's reach
 * (`jge N, 0, 1; ja LEFT`): the levels above the blocks are in it. */
static bool has_far_half(const struct ward_seccomp *s)
{
	struct ward_seccomp_prog flat;
	struct sock_filter *t = NULL;
	struct ward_err err = {0};
	size_t len = 0;
	bool far = false;

	if (ward_seccomp_compile_flat(s, &flat, &err) < 0)
		return false;
	if (ward_seccomp_tree(flat.insns, flat.len, &t, &len) == 0)
		for (size_t i = 0; i + 1 < len && !far; i++)
			far = t[i].code == (BPF_JMP | BPF_JGE | BPF_K) && t[i].jt == 0 &&
			      t[i].jf == 1 && t[i + 1].code == (BPF_JMP | BPF_JA) &&
			      t[i + 1].k > 255;
	free(t);
	ward_seccomp_prog_free(&flat);
	return far;
}

/* flat: libseccomp's program; the search made of it, whether shorter or not; with
 * compiled, also what ward_seccomp_compile hands out (the search where it is shorter). */
static void check_search(const char *what, const struct ward_seccomp *s, bool compiled)
{
	struct ward_seccomp_prog flat, tree = {0};
	struct ward_err err = {0};
	struct sock_filter *insns = NULL;
	size_t len = 0;
	char msg[160];

	snprintf(msg, sizeof(msg), "%s: libseccomp compiles it", what);
	CHECK(ward_seccomp_compile_flat(s, &flat, &err) == 0, msg);
	if (!flat.insns) {
		printf("#   %s\n", err.msg);
		return;
	}
	snprintf(msg, sizeof(msg), "%s: its program is re-encoded as a search", what);
	CHECK(ward_seccomp_tree(flat.insns, flat.len, &insns, &len) == 0, msg);
	tree = (struct ward_seccomp_prog){.insns = insns, .len = (unsigned short)len};
	snprintf(msg, sizeof(msg), "%s: the search answers every input as libseccomp's program",
		 what);
	CHECK(insns && same_answers(what, &flat, &tree), msg);
	snprintf(msg, sizeof(msg), "%s: the search is well formed and the kernel loads it", what);
	if (under_valgrind())
		CHECK(insns && well_formed(&tree), msg);
	else
		CHECK(insns && well_formed(&tree) && kernel_loads(&tree), msg);
	if (compiled) {
		snprintf(msg, sizeof(msg),
			 "%s: compiled, it is the search, less than half as long as libseccomp's "
			 "(%u -> %zu)",
			 what, flat.len, len);
		CHECK(ward_seccomp_compile(s, &tree, &err) == 0 && tree.len == len &&
			  !memcmp(tree.insns, insns, len * sizeof(*insns)) && len * 2 < flat.len,
		      msg);
		ward_seccomp_prog_free(&tree);
	}
	free(insns);
	ward_seccomp_prog_free(&flat);
}

static void test_search(void)
{
	char cache[] = "/tmp/ward-test-seccomp-cache-XXXXXX";
	/* a program with the X register or scratch memory is left as it is */
	struct sock_filter with_x[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0), BPF_STMT(BPF_MISC | BPF_TAX, 0),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 4), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, 0),	   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	/* nor one that tests bits of the syscall number */
	struct sock_filter jset[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 1, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, 0), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
	struct sock_filter *out = NULL;
	size_t out_len = 0;
	int n_random = under_valgrind() ? 3 : 60;

	if (!mkdtemp(cache))
		abort();
	ward_seccomp_cache_set_dir(cache);
	CHECK(ward_seccomp_tree(with_x, ARRAY_SIZE(with_x), &out, &out_len) < 0 && !out,
	      "search: a program using the X register is kept as it is");
	CHECK(ward_seccomp_tree(jset, ARRAY_SIZE(jset), &out, &out_len) < 0 && !out,
	      "search: a program testing bits of the number is kept as it is");
	for (int p = 0; ward_seccomp_profile_names[p]; p++) {
		struct ward_spec *spec = profile_spec(ward_seccomp_profile_names[p]);
		if (spec)
			check_search(ward_seccomp_profile_names[p], spec->linux.seccomp, true);
		else
			CHECK(false, "search: a built-in profile parses");
		ward_spec_free(spec);
	}
	/* every other x86-64 syscall allowed: hundreds of intervals per architecture, so the
	 * search has levels above its blocks (and jumps over halves out of a branch's reach) */
	{
		json_t *names = json_array(), *profile;
		cleanup_free char *text = NULL;
		struct ward_spec *spec;

		for (int nr = 0; nr < 460; nr += 2) {
			char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
			if (name)
				json_array_append_new(names, json_string(name));
			free(name);
		}
		profile = json_pack("{s:s, s:[s, s, s], s:[{s:o, s:s}]}", "defaultAction",
				    "SCMP_ACT_ERRNO", "architectures", "SCMP_ARCH_X86_64",
				    "SCMP_ARCH_X86", "SCMP_ARCH_X32", "syscalls", "names", names,
				    "action", "SCMP_ACT_ALLOW");
		text = json_dumps(profile, JSON_COMPACT);
		json_decref(profile);
		spec = spec_with(text, NULL);
		if (spec)
			check_search("every other syscall", spec->linux.seccomp, false);
		else
			CHECK(false, "search: the every-other-syscall profile parses");
		CHECK(spec && has_far_half(spec->linux.seccomp),
		      "every other syscall: the search jumps over a half beyond a branch's reach");
		ward_spec_free(spec);
	}
	for (int i = 0; i < n_random; i++) {
		cleanup_free char *text = random_profile((unsigned)i + 1);
		struct ward_spec *spec = spec_with(text, NULL);
		char what[48];

		snprintf(what, sizeof(what), "made-up profile %d", i + 1);
		if (spec)
			check_search(what, spec->linux.seccomp, false);
		else
			CHECK(false, "search: a made-up profile parses");
		ward_spec_free(spec);
	}
	ward_seccomp_cache_set_dir(NULL);
	rm_rf(cache);
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
	test_profile_load();
	test_profile_builtin();
	test_profiles();
	test_stacking();
	test_handover_malformed();
	test_cache();
	test_decision_depth();
	test_search();
	TAP_DONE();
}
