/* linux.seccomp -> libseccomp filter. Every name this file accepts comes from the tables
 * below, and `features` prints the same tables. */
#include "seccomp.h"

#include <errno.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "util.h"

#define SECCOMP_MAX_ARGS 6 /* syscall arguments a condition can look at */

/* Actions: name, value (ERRNO/TRACE get the errno added), takes errnoRet. */
#define SECCOMP_ACTIONS(X)                                                                         \
	X("SCMP_ACT_KILL", SCMP_ACT_KILL, false)                                                   \
	X("SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, false)                                   \
	X("SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, false)                                     \
	X("SCMP_ACT_TRAP", SCMP_ACT_TRAP, false)                                                   \
	X("SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0), true)                                               \
	X("SCMP_ACT_TRACE", SCMP_ACT_TRACE(0), true)                                               \
	X("SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, false)                                                 \
	X("SCMP_ACT_LOG", SCMP_ACT_LOG, false)

/* Known to the spec, refused here: ward has no seccomp notify listener support. */
#define SECCOMP_ACT_NOTIFY_NAME "SCMP_ACT_NOTIFY"

#define SECCOMP_OPS(X)                                                                             \
	X("SCMP_CMP_NE", SCMP_CMP_NE)                                                              \
	X("SCMP_CMP_LT", SCMP_CMP_LT)                                                              \
	X("SCMP_CMP_LE", SCMP_CMP_LE)                                                              \
	X("SCMP_CMP_EQ", SCMP_CMP_EQ)                                                              \
	X("SCMP_CMP_GE", SCMP_CMP_GE)                                                              \
	X("SCMP_CMP_GT", SCMP_CMP_GT)                                                              \
	X("SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ)

/* Architectures libseccomp 2.5.4 knows. */
#define SECCOMP_ARCHS(X)                                                                           \
	X("SCMP_ARCH_X86", SCMP_ARCH_X86)                                                          \
	X("SCMP_ARCH_X86_64", SCMP_ARCH_X86_64)                                                    \
	X("SCMP_ARCH_X32", SCMP_ARCH_X32)                                                          \
	X("SCMP_ARCH_ARM", SCMP_ARCH_ARM)                                                          \
	X("SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64)                                                  \
	X("SCMP_ARCH_MIPS", SCMP_ARCH_MIPS)                                                        \
	X("SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64)                                                    \
	X("SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32)                                              \
	X("SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL)                                                    \
	X("SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64)                                                \
	X("SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32)                                          \
	X("SCMP_ARCH_PPC", SCMP_ARCH_PPC)                                                          \
	X("SCMP_ARCH_PPC64", SCMP_ARCH_PPC64)                                                      \
	X("SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE)                                                  \
	X("SCMP_ARCH_S390", SCMP_ARCH_S390)                                                        \
	X("SCMP_ARCH_S390X", SCMP_ARCH_S390X)                                                      \
	X("SCMP_ARCH_PARISC", SCMP_ARCH_PARISC)                                                    \
	X("SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64)                                                \
	X("SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64)

/* Filter flags we support, as libseccomp filter attributes. */
#define SECCOMP_FLAGS(X)                                                                           \
	X("SECCOMP_FILTER_FLAG_TSYNC", SCMP_FLTATR_CTL_TSYNC)                                      \
	X("SECCOMP_FILTER_FLAG_LOG", SCMP_FLTATR_CTL_LOG)                                          \
	X("SECCOMP_FILTER_FLAG_SPEC_ALLOW", SCMP_FLTATR_CTL_SSB)

/* Flags the spec defines that libseccomp 2.5.4 cannot set. */
#define SECCOMP_UNSUPPORTED_FLAGS(X) X("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", 0)

#define NAME_OF(name, ...) name,

const char *const ward_seccomp_action_names[] = {SECCOMP_ACTIONS(NAME_OF) NULL};
const char *const ward_seccomp_op_names[] = {SECCOMP_OPS(NAME_OF) NULL};
const char *const ward_seccomp_arch_names[] = {SECCOMP_ARCHS(NAME_OF) NULL};
const char *const ward_seccomp_known_flags[] = {SECCOMP_FLAGS(NAME_OF)
						    SECCOMP_UNSUPPORTED_FLAGS(NAME_OF) NULL};
const char *const ward_seccomp_supported_flags[] = {SECCOMP_FLAGS(NAME_OF) NULL};

struct action_def {
	uint32_t value;
	bool takes_errno;
};
#define ACTION_DEF(name, value, takes_errno) {value, takes_errno},
static const struct action_def action_defs[] = {SECCOMP_ACTIONS(ACTION_DEF)};

#define VALUE_OF(name, value) value,
static const enum scmp_compare op_values[] = {SECCOMP_OPS(VALUE_OF)};
static const uint32_t arch_values[] = {SECCOMP_ARCHS(VALUE_OF)};
static const enum scmp_filter_attr flag_attrs[] = {SECCOMP_FLAGS(VALUE_OF)};

/* Index of name in a NULL-terminated table, or -1. */
static int lookup(const char *const *table, const char *name)
{
	for (int i = 0; name && table[i]; i++)
		if (strcmp(table[i], name) == 0)
			return i;
	return -1;
}

/* field: "linux.seccomp.defaultAction" or "linux.seccomp.syscalls[2]" (then ".action"). */
static int check_action(const char *action, bool has_errno, uint32_t errno_ret,
			const char *action_field, const char *errno_field, struct ward_err *err)
{
	int i;

	if (!action)
		return ward_fail(err, 0, "%s: required", action_field);
	if (strcmp(action, SECCOMP_ACT_NOTIFY_NAME) == 0)
		return ward_fail(err, 0,
				 "%s: SCMP_ACT_NOTIFY: seccomp notify listeners are not supported",
				 action_field);
	i = lookup(ward_seccomp_action_names, action);
	if (i < 0)
		return ward_fail(err, 0, "%s: unknown action \"%s\"", action_field, action);
	if (has_errno && !action_defs[i].takes_errno)
		return ward_fail(err, 0,
				 "%s: only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not %s",
				 errno_field, action);
	if (has_errno && errno_ret > 0xffff)
		return ward_fail(err, 0, "%s: %u is out of range (0-65535)", errno_field,
				 errno_ret);
	return 0;
}

int ward_seccomp_validate(const struct ward_seccomp *s, struct ward_err *err)
{
	if (!s)
		return 0;
	if (check_action(s->default_action, s->has_default_errno_ret, s->default_errno_ret,
			 "linux.seccomp.defaultAction", "linux.seccomp.defaultErrnoRet", err) < 0)
		return -1;
	for (size_t i = 0; s->architectures && s->architectures[i]; i++)
		if (lookup(ward_seccomp_arch_names, s->architectures[i]) < 0)
			return ward_fail(err, 0,
					 "linux.seccomp.architectures[%zu]: unknown architecture "
					 "\"%s\"",
					 i, s->architectures[i]);
	for (size_t i = 0; s->flags && s->flags[i]; i++) {
		if (lookup(ward_seccomp_supported_flags, s->flags[i]) >= 0)
			continue;
		if (lookup(ward_seccomp_known_flags, s->flags[i]) >= 0)
			return ward_fail(
			    err, 0,
			    "linux.seccomp.flags[%zu]: %s is not supported (libseccomp "
			    "%u.%u.%u)",
			    i, s->flags[i], seccomp_version()->major, seccomp_version()->minor,
			    seccomp_version()->micro);
		return ward_fail(err, 0, "linux.seccomp.flags[%zu]: unknown flag \"%s\"", i,
				 s->flags[i]);
	}
	if (s->listener_path && *s->listener_path)
		return ward_fail(err, 0,
				 "linux.seccomp.listenerPath: seccomp notify listeners are not "
				 "supported");
	for (size_t i = 0; i < s->n_syscalls; i++) {
		const struct ward_seccomp_rule *r = &s->syscalls[i];
		char afield[64], efield[64];

		if (!r->names || !r->names[0])
			return ward_fail(err, 0,
					 "linux.seccomp.syscalls[%zu].names: must be a non-empty "
					 "array",
					 i);
		snprintf(afield, sizeof(afield), "linux.seccomp.syscalls[%zu].action", i);
		snprintf(efield, sizeof(efield), "linux.seccomp.syscalls[%zu].errnoRet", i);
		if (check_action(r->action, r->has_errno_ret, r->errno_ret, afield, efield, err) <
		    0)
			return -1;
		for (size_t j = 0; j < r->n_args; j++) {
			const struct ward_seccomp_arg *a = &r->args[j];
			if (a->index >= SECCOMP_MAX_ARGS)
				return ward_fail(
				    err, 0,
				    "linux.seccomp.syscalls[%zu].args[%zu].index: %u is "
				    "out of range (0-%d)",
				    i, j, a->index, SECCOMP_MAX_ARGS - 1);
			if (!a->op)
				return ward_fail(
				    err, 0, "linux.seccomp.syscalls[%zu].args[%zu].op: required", i,
				    j);
			if (lookup(ward_seccomp_op_names, a->op) < 0)
				return ward_fail(
				    err, 0,
				    "linux.seccomp.syscalls[%zu].args[%zu].op: unknown "
				    "operator \"%s\"",
				    i, j, a->op);
		}
	}
	return 0;
}

/* Validated action name -> libseccomp action value. */
static uint32_t action_value(const char *action, bool has_errno, uint32_t errno_ret)
{
	const struct action_def *d = &action_defs[lookup(ward_seccomp_action_names, action)];
	if (!d->takes_errno)
		return d->value;
	return d->value | ((has_errno ? errno_ret : (uint32_t)EPERM) & 0xffffU);
}

static int add_rule(scmp_filter_ctx ctx, const struct ward_seccomp_rule *r, size_t i, uint32_t act,
		    struct ward_err *err)
{
	struct scmp_arg_cmp conds[SECCOMP_MAX_ARGS * 4];
	unsigned per_index[SECCOMP_MAX_ARGS] = {0};
	bool split = false;
	size_t n = r->n_args;

	if (n > ARRAY_SIZE(conds))
		return ward_fail(err, 0, "linux.seccomp.syscalls[%zu].args: too many conditions",
				 i);
	for (size_t j = 0; j < n; j++) {
		const struct ward_seccomp_arg *a = &r->args[j];
		conds[j] = (struct scmp_arg_cmp){
		    .arg = a->index,
		    .op = op_values[lookup(ward_seccomp_op_names, a->op)],
		    .datum_a = a->value,     /* the mask for MASKED_EQ */
		    .datum_b = a->value_two, /* the value for MASKED_EQ */
		};
		if (++per_index[a->index] > 1)
			split = true;
	}

	for (size_t k = 0; r->names[k]; k++) {
		const char *name = r->names[k];
		int nr = seccomp_syscall_resolve_name(name);
		int rc = 0;

		if (nr == __NR_SCMP_ERROR) {
			ward_debug("seccomp: unknown syscall \"%s\" skipped", name);
			continue;
		}
		/* libseccomp takes one condition per argument in a rule; with several on the
		 * same argument, add one rule per condition (as runc does). */
		if (split) {
			for (size_t j = 0; j < n && rc == 0; j++)
				rc = seccomp_rule_add_array(ctx, act, nr, 1, &conds[j]);
		} else {
			rc = seccomp_rule_add_array(ctx, act, nr, (unsigned)n, n ? conds : NULL);
		}
		if (rc < 0)
			return ward_fail(err, -rc, "linux.seccomp.syscalls[%zu]: add rule for %s",
					 i, name);
	}
	return 0;
}

static int build(scmp_filter_ctx ctx, const struct ward_seccomp *s, uint32_t def,
		 struct ward_err *err)
{
	int rc;

	/* noNewPrivileges is the caller's decision, not libseccomp's. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc < 0)
		return ward_fail(err, -rc, "clear SCMP_FLTATR_CTL_NNP");
	for (size_t i = 0; s->architectures && s->architectures[i]; i++) {
		uint32_t arch = arch_values[lookup(ward_seccomp_arch_names, s->architectures[i])];
		rc = seccomp_arch_add(ctx, arch);
		if (rc < 0 && rc != -EEXIST)
			return ward_fail(err, -rc, "linux.seccomp.architectures[%zu]: add %s", i,
					 s->architectures[i]);
	}
	for (size_t i = 0; s->flags && s->flags[i]; i++) {
		rc = seccomp_attr_set(
		    ctx, flag_attrs[lookup(ward_seccomp_supported_flags, s->flags[i])], 1);
		if (rc < 0)
			return ward_fail(err, -rc, "linux.seccomp.flags[%zu]: set %s", i,
					 s->flags[i]);
	}
	for (size_t i = 0; i < s->n_syscalls; i++) {
		const struct ward_seccomp_rule *r = &s->syscalls[i];
		uint32_t act = action_value(r->action, r->has_errno_ret, r->errno_ret);

		/* libseccomp refuses rules that repeat the default action; they are no-ops */
		if (act == def)
			continue;
		if (add_rule(ctx, r, i, act, err) < 0)
			return -1;
	}
	return 0;
}

int ward_seccomp_load(const struct ward_seccomp *s, struct ward_err *err)
{
	scmp_filter_ctx ctx;
	uint32_t def;
	int rc;

	if (!s)
		return 0;
	/* callers add the "seccomp" context */
	if (ward_seccomp_validate(s, err) < 0)
		return -1;
	def = action_value(s->default_action, s->has_default_errno_ret, s->default_errno_ret);
	ctx = seccomp_init(def);
	if (!ctx)
		return ward_fail(err, EINVAL, "seccomp_init(%s)", s->default_action);
	if (build(ctx, s, def, err) < 0) {
		seccomp_release(ctx);
		return -1;
	}
	/* Everything that can fail with a readable message is done: load last. */
	rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0)
		return ward_fail(err, -rc, "load filter");
	return 0;
}
