/* linux.seccomp -> classic BPF. Every name this file accepts comes from the tables below,
 * and `features` prints the same tables.
 *
 * libseccomp compiles a filter in the runtime, while the container init makes its mounts
 * (the init gets the program in a memfd; after pivot_root it could not read host files
 * anyway), its program is re-encoded as a search over syscall numbers (seccomp_tree.h), and the
 * result is cached under WARD_SECCOMP_CACHE_DIR: one file per filter, named by a hash
 * of its key and holding the full key, compared byte for byte on load. The key is a
 * canonical serialization of the filter plus everything else the program depends on
 * (native architecture, libseccomp version and API level, ward's commit, the format). */
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "seccomp_tree.h"
#include "sys.h"
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

/* Filter flags we support: libseccomp filter attribute, seccomp(2) flag. */
#define SECCOMP_FLAGS(X)                                                                           \
	X("SECCOMP_FILTER_FLAG_TSYNC", SCMP_FLTATR_CTL_TSYNC, SECCOMP_FILTER_FLAG_TSYNC)           \
	X("SECCOMP_FILTER_FLAG_LOG", SCMP_FLTATR_CTL_LOG, SECCOMP_FILTER_FLAG_LOG)                 \
	X("SECCOMP_FILTER_FLAG_SPEC_ALLOW", SCMP_FLTATR_CTL_SSB, SECCOMP_FILTER_FLAG_SPEC_ALLOW)

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
#define FLAG_ATTR(name, attr, bit) attr,
#define FLAG_BIT(name, attr, bit)  bit,
static const enum scmp_filter_attr flag_attrs[] = {SECCOMP_FLAGS(FLAG_ATTR)};
static const unsigned int flag_bits[] = {SECCOMP_FLAGS(FLAG_BIT)};

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

int ward_seccomp_validate_at(const struct ward_seccomp *s, const char *f, struct ward_err *err)
{
	char afield[160], efield[160];

	if (!s)
		return 0;
	snprintf(afield, sizeof(afield), "%s.defaultAction", f);
	snprintf(efield, sizeof(efield), "%s.defaultErrnoRet", f);
	if (check_action(s->default_action, s->has_default_errno_ret, s->default_errno_ret, afield,
			 efield, err) < 0)
		return -1;
	for (size_t i = 0; s->architectures && s->architectures[i]; i++)
		if (lookup(ward_seccomp_arch_names, s->architectures[i]) < 0)
			return ward_fail(err, 0,
					 "%s.architectures[%zu]: unknown architecture \"%s\"", f, i,
					 s->architectures[i]);
	for (size_t i = 0; s->flags && s->flags[i]; i++) {
		if (lookup(ward_seccomp_supported_flags, s->flags[i]) >= 0)
			continue;
		if (lookup(ward_seccomp_known_flags, s->flags[i]) >= 0)
			return ward_fail(err, 0,
					 "%s.flags[%zu]: %s is not supported (libseccomp %u.%u.%u)",
					 f, i, s->flags[i], seccomp_version()->major,
					 seccomp_version()->minor, seccomp_version()->micro);
		return ward_fail(err, 0, "%s.flags[%zu]: unknown flag \"%s\"", f, i, s->flags[i]);
	}
	if (s->listener_path && *s->listener_path)
		return ward_fail(err, 0,
				 "%s.listenerPath: seccomp notify listeners are not supported", f);
	for (size_t i = 0; i < s->n_syscalls; i++) {
		const struct ward_seccomp_rule *r = &s->syscalls[i];

		if (!r->names || !r->names[0])
			return ward_fail(err, 0,
					 "%s.syscalls[%zu].names: must be a non-empty array", f, i);
		snprintf(afield, sizeof(afield), "%s.syscalls[%zu].action", f, i);
		snprintf(efield, sizeof(efield), "%s.syscalls[%zu].errnoRet", f, i);
		if (check_action(r->action, r->has_errno_ret, r->errno_ret, afield, efield, err) <
		    0)
			return -1;
		for (size_t j = 0; j < r->n_args; j++) {
			const struct ward_seccomp_arg *a = &r->args[j];
			if (a->index >= SECCOMP_MAX_ARGS)
				return ward_fail(err, 0,
						 "%s.syscalls[%zu].args[%zu].index: %u is out of "
						 "range (0-%d)",
						 f, i, j, a->index, SECCOMP_MAX_ARGS - 1);
			if (!a->op)
				return ward_fail(err, 0, "%s.syscalls[%zu].args[%zu].op: required",
						 f, i, j);
			if (lookup(ward_seccomp_op_names, a->op) < 0)
				return ward_fail(err, 0,
						 "%s.syscalls[%zu].args[%zu].op: unknown operator "
						 "\"%s\"",
						 f, i, j, a->op);
		}
	}
	return 0;
}

int ward_seccomp_validate(const struct ward_seccomp *s, struct ward_err *err)
{
	return ward_seccomp_validate_at(s, "linux.seccomp", err);
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
	/* A binary tree of syscall numbers instead of libseccomp's default linear chain: the
	 * same decisions, but the kernel's load-time emulation of the filter for every syscall
	 * number (its per-syscall allow bitmap) and every filtered syscall of the workload walk
	 * O(log n) comparisons instead of up to one per named syscall. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0)
		return ward_fail(err, -rc, "set SCMP_FLTATR_CTL_OPTIMIZE 2 (binary tree)");
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

/* ---- compiling with libseccomp ---- */

static unsigned int kernel_flags(const struct ward_seccomp *s)
{
	unsigned int bits = 0;
	for (size_t i = 0; s->flags && s->flags[i]; i++)
		bits |= flag_bits[lookup(ward_seccomp_supported_flags, s->flags[i])];
	return bits;
}

/* The program libseccomp would load, read back from seccomp_export_bpf (libseccomp 2.5
 * exports to an fd only). */
static int export_program(scmp_filter_ctx ctx, struct ward_seccomp_prog *out, struct ward_err *err)
{
	cleanup_fd int fd = memfd_create("ward-seccomp", MFD_CLOEXEC);
	cleanup_free char *buf = NULL;
	size_t len;
	int rc;

	if (fd < 0)
		return ward_fail_errno(err, "memfd for the filter");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return ward_fail(err, -rc, "generate filter");
	if (lseek(fd, 0, SEEK_SET) < 0)
		return ward_fail_errno(err, "rewind filter");
	buf = read_all_fd(fd, &len, err);
	if (!buf)
		return ward_wrap(err, "read filter");
	if (len == 0 || len % sizeof(struct sock_filter) ||
	    len / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return ward_fail(err, E2BIG, "filter of %zu bytes: not 1 to %d instructions", len,
				 BPF_MAXINSNS);
	out->len = (unsigned short)(len / sizeof(struct sock_filter));
	out->insns = xmalloc(len);
	memcpy(out->insns, buf, len);
	return 0;
}

/* ---- ENOSYS for syscalls newer than the profile ---------------------------------- */

#define X32_SYSCALL_BIT 0x40000000u

/* The highest number of a syscall the profile names, on arch; -1 if none. */
static long highest_named(const struct ward_seccomp *s, uint32_t arch)
{
	long max = -1;
	for (size_t i = 0; i < s->n_syscalls; i++)
		for (char **n = s->syscalls[i].names; n && *n; n++) {
			int nr = seccomp_syscall_resolve_name_arch(arch, *n);
			if (nr >= 0 && nr > max)
				max = nr;
		}
	return max;
}

static void emit(struct sock_filter *v, size_t *n, struct sock_filter insn)
{
	v[(*n)++] = insn;
}

/* A syscall numbered above every one the profile names is newer than the profile, and
 * its default action (EPERM) would stop libc from falling back to the older call it
 * replaces (clone3 -> clone): such syscalls get ENOSYS, as runc and crun give them. A
 * prefix of one block per architecture of the filter, before libseccomp's program:
 *   ld arch; jeq ARCH, 0, skip; ld nr; jgt MAX, 0, 1; ret ERRNO(ENOSYS)
 * (x86-64 sends x32 syscalls, numbered from X32_SYSCALL_BIT, to the x32 maximum). Only for
 * a default action that refuses; a program without a block for the caller's arch is
 * unchanged. */
static int add_enosys_prefix(const struct ward_seccomp *s, uint32_t def,
			     struct ward_seccomp_prog *prog, struct ward_err *err)
{
	uint32_t archs[16];
	size_t n_arch = 0, n = 0;
	long x32 = -1;
	struct sock_filter pre[16 * 8];
	const struct sock_filter ret_enosys =
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
	uint32_t act = def & SECCOMP_RET_ACTION_FULL;

	if (act == SECCOMP_RET_ALLOW || act == SECCOMP_RET_LOG || act == SECCOMP_RET_TRACE ||
	    def == (SECCOMP_RET_ERRNO | ENOSYS))
		return 0;
	archs[n_arch++] = seccomp_arch_native();
	for (size_t i = 0; s->architectures && s->architectures[i] && n_arch < 16; i++) {
		uint32_t a = arch_values[lookup(ward_seccomp_arch_names, s->architectures[i])];
		bool seen = false;
		for (size_t j = 0; j < n_arch; j++)
			seen = seen || archs[j] == a;
		if (a == SCMP_ARCH_X32)
			x32 = highest_named(s, a);
		else if (!seen)
			archs[n_arch++] = a;
	}
	for (size_t i = 0; i < n_arch; i++) {
		long max = highest_named(s, archs[i]);
		bool x86_64 = archs[i] == SCMP_ARCH_X86_64;
		if (max < 0)
			continue;
		emit(pre, &n,
		     (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						  offsetof(struct seccomp_data, arch)));
		emit(pre, &n,
		     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, archs[i], 0,
						  x86_64 ? (x32 >= 0 ? 6 : 4) : 3));
		emit(pre, &n,
		     (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						  offsetof(struct seccomp_data, nr)));
		if (x86_64) /* x32: to its own check, or past this block */
			emit(pre, &n,
			     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
							  X32_SYSCALL_BIT, 2, 0));
		emit(pre, &n,
		     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)max, 0, 1));
		emit(pre, &n, ret_enosys);
		if (x86_64 && x32 >= 0) {
			emit(pre, &n,
			     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, (uint32_t)x32,
							  0, 1));
			emit(pre, &n, ret_enosys);
		}
	}
	if (n == 0)
		return 0;
	if (prog->len + n > BPF_MAXINSNS)
		return ward_fail(err, E2BIG, "filter of %zu instructions: more than %d",
				 prog->len + n, BPF_MAXINSNS);
	prog->insns = realloc(prog->insns, (prog->len + n) * sizeof(struct sock_filter));
	if (!prog->insns)
		abort();
	memmove(prog->insns + n, prog->insns, prog->len * sizeof(struct sock_filter));
	memcpy(prog->insns, pre, n * sizeof(struct sock_filter));
	prog->len = (unsigned short)(prog->len + n);
	return 0;
}

/* The same decisions as one search over syscall numbers per architecture, where that is
 * shorter (seccomp_tree.h): the default profile's 1243 instructions (libseccomp's 1201 and
 * the ENOSYS prefix) become 336, and the kernel's load of the filter in the init (its JIT)
 * costs in proportion (0.31 -> 0.12 ms). */
static void as_search(struct ward_seccomp_prog *p)
{
	struct sock_filter *tree;
	size_t len;

	if (ward_seccomp_tree(p->insns, p->len, &tree, &len) < 0)
		return;
	if (len >= p->len) {
		free(tree);
		return;
	}
	ward_debug("seccomp: %u instructions as a search over syscall numbers: %zu", p->len, len);
	free(p->insns);
	p->insns = tree;
	p->len = (unsigned short)len;
}

static int compile_libseccomp(const struct ward_seccomp *s, struct ward_seccomp_prog *out,
			      struct ward_err *err)
{
	uint32_t def =
	    action_value(s->default_action, s->has_default_errno_ret, s->default_errno_ret);
	scmp_filter_ctx ctx = seccomp_init(def);
	int rc;

	if (!ctx)
		return ward_fail(err, EINVAL, "seccomp_init(%s)", s->default_action);
	rc = build(ctx, s, def, err);
	if (rc == 0)
		rc = export_program(ctx, out, err);
	if (rc == 0)
		rc = add_enosys_prefix(s, def, out, err);
	seccomp_release(ctx);
	return rc;
}

int ward_seccomp_compile_flat(const struct ward_seccomp *s, struct ward_seccomp_prog *out,
			      struct ward_err *err)
{
	*out = (struct ward_seccomp_prog){.what = "filter"};
	if (ward_seccomp_validate(s, err) < 0)
		return -1;
	out->flags = kernel_flags(s);
	return compile_libseccomp(s, out, err);
}

/* ---- the cache ---- */

#define CACHE_FORMAT                                                                               \
	"ward-seccomp-cache 6" /* 2: ENOSYS prefix; 3: binary tree; 5: hash; 6: search */
#define CACHE_MAGIC "WARDBPF1"

struct cache_head {
	char magic[8];
	uint32_t key_len;
	uint32_t n_insns;
	uint64_t sum; /* FNV-1a 64 of key and program: catches torn or damaged files */
};

struct ward_seccomp_cache_stats ward_seccomp_cache_stats;
static const char *cache_dir = WARD_SECCOMP_CACHE_DIR;

void ward_seccomp_cache_set_dir(const char *dir)
{
	cache_dir = dir;
}

/* FNV-1a's step on 64-bit words, then the high half folded into the low one (else a bit
 * of a word would reach only the bits above it: two flipped top bits cancelled), the tail
 * byte by byte: an entry's ~15 KB in a few microseconds (a byte at a time took tens, twice
 * per create). Each step is a bijection of h, so one changed word always changes the sum;
 * the key itself is compared in full. */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i = 0;

	for (; i + sizeof(uint64_t) <= len; i += sizeof(uint64_t)) {
		uint64_t w;
		memcpy(&w, p + i, sizeof(w));
		h ^= w;
		h *= 0x100000001b3ULL;
		h ^= h >> 32;
	}
	for (; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
#define FNV_SEED 0xcbf29ce484222325ULL

/* Strings are length-prefixed, so no two filters serialize alike. */
/* " LEN:S" without printf's format parsing (a profile has hundreds of names). */
static void key_str(FILE *f, const char *s)
{
	char num[24];
	size_t len, n = sizeof(num);

	if (!s) {
		fputs(" -", f);
		return;
	}
	len = strlen(s);
	num[--n] = ':';
	do
		num[--n] = (char)('0' + len % 10);
	while ((len /= 10) > 0);
	num[--n] = ' ';
	fwrite(num + n, 1, sizeof(num) - n, f);
	fputs(s, f);
}

static void key_strv(FILE *f, char *const *v)
{
	fprintf(f, " %zu", strv_len(v));
	for (size_t i = 0; v && v[i]; i++)
		key_str(f, v[i]);
}

/* Everything the compiled program depends on, as text. malloc'd, *len without the NUL. */
static char *cache_key(const struct ward_seccomp *s, size_t *len)
{
	const struct scmp_version *v = seccomp_version();
	char *key = NULL;
	FILE *f = open_memstream(&key, len);

	if (!f)
		abort();
	fprintf(f, "%s\nward %s\nlibseccomp %u.%u.%u api %u\nnative %u\n", CACHE_FORMAT,
		WARD_COMMIT, v->major, v->minor, v->micro, seccomp_api_get(),
		seccomp_arch_native());
	fputs("default", f);
	key_str(f, s->default_action);
	fprintf(f, " %d %u\narchitectures", s->has_default_errno_ret, s->default_errno_ret);
	key_strv(f, s->architectures);
	fputs("\nflags", f);
	key_strv(f, s->flags);
	fprintf(f, "\nsyscalls %zu\n", s->n_syscalls);
	for (size_t i = 0; i < s->n_syscalls; i++) {
		const struct ward_seccomp_rule *r = &s->syscalls[i];
		fputs("rule", f);
		key_str(f, r->action);
		fprintf(f, " %d %u names", r->has_errno_ret, r->errno_ret);
		key_strv(f, r->names);
		fprintf(f, " args %zu", r->n_args);
		for (size_t j = 0; j < r->n_args; j++) {
			const struct ward_seccomp_arg *a = &r->args[j];
			fprintf(f, " %u", a->index);
			key_str(f, a->op);
			fprintf(f, " %llu %llu", (unsigned long long)a->value,
				(unsigned long long)a->value_two);
		}
		fputc('\n', f);
	}
	if (fclose(f) != 0)
		abort();
	return key;
}

static void cache_name(const char *key, size_t key_len, char name[32])
{
	snprintf(name, 32, "%016llx.bpf", (unsigned long long)fnv1a(FNV_SEED, key, key_len));
}

/* The cache directory, if it is ours alone (a writable-by-others cache would let anyone
 * swap a tenant's filter). create: make it (and a missing parent) first. */
static int cache_open_dir(bool create)
{
	struct stat st;
	int fd;

	if (!cache_dir)
		return -1;
	if (create && mkdir(cache_dir, 0700) < 0 && errno == ENOENT) {
		cleanup_free char *parent = xstrdup(cache_dir);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			(void)mkdir(parent, 0711);
			(void)mkdir(cache_dir, 0700);
		}
	}
	fd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		ward_debug("seccomp cache: %s is not private to uid %u, not used", cache_dir,
			   (unsigned)geteuid());
		close(fd);
		return -1;
	}
	return fd;
}

/* 1: found and used, 0: absent, -1: present but unusable. */
static int cache_load(int dfd, const char *name, const char *key, size_t key_len,
		      struct ward_seccomp_prog *out)
{
	cleanup_fd int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	cleanup_free char *buf = NULL;
	struct cache_head h;
	struct stat st;
	size_t prog_len;
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < (off_t)sizeof(h) || st.st_size > (1 << 20))
		return -1;
	buf = xmalloc((size_t)st.st_size);
	n = read_exact(fd, buf, (size_t)st.st_size);
	if (n != st.st_size)
		return -1;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, CACHE_MAGIC, sizeof(h.magic)) != 0 || h.key_len != key_len ||
	    h.n_insns == 0 || h.n_insns > BPF_MAXINSNS)
		return -1;
	prog_len = (size_t)h.n_insns * sizeof(struct sock_filter);
	if ((size_t)st.st_size != sizeof(h) + key_len + prog_len)
		return -1;
	if (memcmp(buf + sizeof(h), key, key_len) != 0)
		return -1;
	if (fnv1a(fnv1a(FNV_SEED, buf + sizeof(h), key_len), buf + sizeof(h) + key_len, prog_len) !=
	    h.sum)
		return -1;
	out->insns = xmalloc(prog_len);
	memcpy(out->insns, buf + sizeof(h) + key_len, prog_len);
	out->len = (unsigned short)h.n_insns;
	return 1;
}

/* Write to a temporary name, then rename over the entry: readers see a whole file or
 * none. Failures only cost the next create a compile. */
static void cache_store(int dfd, const char *name, const char *key, size_t key_len,
			const struct ward_seccomp_prog *p)
{
	static unsigned seq;
	size_t prog_len = (size_t)p->len * sizeof(struct sock_filter);
	struct cache_head h = {.key_len = (uint32_t)key_len, .n_insns = p->len};
	char tmp[64];
	int fd;
	bool ok;

	memcpy(h.magic, CACHE_MAGIC, sizeof(h.magic));
	h.sum = fnv1a(fnv1a(FNV_SEED, key, key_len), p->insns, prog_len);
	snprintf(tmp, sizeof(tmp), ".%s.%d.%u", name, (int)getpid(), seq++);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ward_debug("seccomp cache: create %s/%s: %s", cache_dir, tmp, strerror(errno));
		return;
	}
	ok = write_all(fd, &h, sizeof(h)) == 0 && write_all(fd, key, key_len) == 0 &&
	     write_all(fd, p->insns, prog_len) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || renameat(dfd, tmp, dfd, name) < 0) {
		ward_debug("seccomp cache: write %s/%s: %s", cache_dir, name, strerror(errno));
		unlinkat(dfd, tmp, 0);
		return;
	}
	ward_seccomp_cache_stats.stored++;
}

static int compile(const struct ward_seccomp *s, bool use_cache, struct ward_seccomp_prog *out,
		   struct ward_err *err)
{
	cleanup_free char *key = NULL;
	cleanup_fd int dfd = -1;
	char name[32];
	size_t key_len = 0;
	int found = 0;

	*out = (struct ward_seccomp_prog){.what = "filter"};
	if (ward_seccomp_validate(s, err) < 0)
		return -1;
	out->flags = kernel_flags(s);
	if (use_cache)
		dfd = cache_open_dir(false);
	if (dfd >= 0) {
		key = cache_key(s, &key_len);
		cache_name(key, key_len, name);
		found = cache_load(dfd, name, key, key_len, out);
		if (found > 0) {
			ward_seccomp_cache_stats.hits++;
			ward_debug("seccomp cache: hit %s/%s (%u instructions)", cache_dir, name,
				   out->len);
			return 0;
		}
		if (found < 0) {
			ward_seccomp_cache_stats.rejected++;
			ward_debug("seccomp cache: %s/%s is unusable, recompiling", cache_dir,
				   name);
		}
	}
	if (compile_libseccomp(s, out, err) < 0)
		return -1;
	as_search(out);
	ward_seccomp_cache_stats.misses++;
	if (!use_cache)
		return 0;
	if (dfd < 0) {
		dfd = cache_open_dir(true);
		if (dfd < 0)
			return 0;
		key = cache_key(s, &key_len);
		cache_name(key, key_len, name);
	}
	cache_store(dfd, name, key, key_len, out);
	return 0;
}

int ward_seccomp_compile(const struct ward_seccomp *s, struct ward_seccomp_prog *out,
			 struct ward_err *err)
{
	return compile(s, true, out, err);
}

void ward_seccomp_prog_free(struct ward_seccomp_prog *p)
{
	free(p->insns);
	p->insns = NULL;
	p->len = 0;
}

/* ---- installing ---- */

int ward_seccomp_install(const struct ward_seccomp_prog *p, struct ward_err *err)
{
	struct sock_fprog prog = {.len = p->len, .filter = p->insns};
	long rc = sys_seccomp(SECCOMP_SET_MODE_FILTER, p->flags, &prog);

	/* As libseccomp: without seccomp(2) (valgrind 3.19), prctl does flagless filters. */
	if (rc < 0 && errno == ENOSYS && p->flags == 0)
		rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	if (rc < 0)
		return ward_fail_errno(err, "load %s", p->what);
	if (rc > 0) /* TSYNC: the thread that could not be synchronised */
		return ward_fail(err, EAGAIN, "load %s: thread %ld cannot be synchronised", p->what,
				 rc);
	return 0;
}

int ward_seccomp_load(const struct ward_seccomp *s, struct ward_err *err)
{
	struct ward_seccomp_prog p;
	int rc;

	if (!s)
		return 0;
	/* callers add the "seccomp" context */
	if (compile(s, false, &p, err) < 0)
		return -1;
	rc = ward_seccomp_install(&p, err);
	ward_seccomp_prog_free(&p);
	return rc;
}

/* ---- a container's filters ---- */

static const char pod_filter[] = "pod filter";

int ward_seccomp_prepare(const struct ward_linux *l, struct ward_seccomp_filters *f,
			 struct ward_err *err)
{
	f->n = 0;
	if (l->seccomp_pod) {
		if (ward_seccomp_validate_at(l->seccomp_pod, "annotations." WARD_ANN_POD_SECCOMP,
					     err) < 0 ||
		    ward_seccomp_compile(l->seccomp_pod, &f->prog[0], err) < 0)
			return ward_wrap(err, "pod filter");
		f->prog[f->n++].what = pod_filter;
	}
	if (l->seccomp) {
		if (ward_seccomp_compile(l->seccomp, &f->prog[f->n], err) < 0) {
			ward_seccomp_filters_free(f);
			return -1;
		}
		f->n++;
	}
	return 0;
}

int ward_seccomp_filters_install(const struct ward_seccomp_filters *f, struct ward_err *err)
{
	/* Pod's first: the tenant's, loaded last, decides the errno when both deny. */
	for (size_t i = 0; f && i < f->n; i++) {
		if (ward_seccomp_install(&f->prog[i], err) == 0)
			continue;
		/* seccomp(2) itself goes through the filters already loaded */
		if (i > 0)
			ward_wrap(err, "%s loaded, then", f->prog[i - 1].what);
		return -1;
	}
	return 0;
}

/* In the memfd: the count, then per filter a record and its instructions. */
struct filter_record {
	uint32_t flags;
	uint16_t len;
	uint8_t pod;
	uint8_t pad;
};

int ward_seccomp_filters_to_fd(const struct ward_seccomp_filters *f, struct ward_err *err)
{
	cleanup_fd int fd = memfd_create("ward-seccomp-filters", MFD_CLOEXEC);
	uint32_t n = (uint32_t)f->n;
	bool ok;

	if (fd < 0)
		return ward_fail_errno(err, "memfd for the seccomp filters");
	ok = write_all(fd, &n, sizeof(n)) == 0;
	for (size_t i = 0; ok && i < f->n; i++) {
		const struct ward_seccomp_prog *p = &f->prog[i];
		struct filter_record r = {
		    .flags = p->flags, .len = p->len, .pod = p->what == pod_filter};
		ok = write_all(fd, &r, sizeof(r)) == 0 &&
		     write_all(fd, p->insns, p->len * sizeof(struct sock_filter)) == 0;
	}
	if (!ok)
		return ward_fail_errno(err, "write the seccomp filters");
	return steal_fd(fd);
}

int ward_seccomp_filters_from_fd(int fd, struct ward_seccomp_filters *f, struct ward_err *err)
{
	cleanup_free char *buf = NULL;
	size_t len, off = sizeof(uint32_t);
	uint32_t n;

	f->n = 0;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return ward_fail_errno(err, "read the seccomp filters");
	buf = read_all_fd(fd, &len, err);
	if (!buf)
		return ward_wrap(err, "read the seccomp filters");
	if (len < off)
		goto bad;
	memcpy(&n, buf, sizeof(n));
	if (n > ARRAY_SIZE(f->prog))
		goto bad;
	for (uint32_t i = 0; i < n; i++) {
		struct ward_seccomp_prog *p = &f->prog[i];
		struct filter_record r;
		size_t size;

		if (len - off < sizeof(r))
			goto bad;
		memcpy(&r, buf + off, sizeof(r));
		off += sizeof(r);
		size = (size_t)r.len * sizeof(struct sock_filter);
		if (r.len == 0 || r.len > BPF_MAXINSNS || len - off < size)
			goto bad;
		*p = (struct ward_seccomp_prog){.insns = xmalloc(size),
						.len = r.len,
						.flags = r.flags,
						.what = r.pod ? pod_filter : "filter"};
		memcpy(p->insns, buf + off, size);
		off += size;
		f->n++;
	}
	if (off == len)
		return 0;
bad:
	ward_seccomp_filters_free(f);
	return ward_fail(err, EINVAL, "the seccomp filters: %zu bytes, malformed", len);
}

void ward_seccomp_filters_free(struct ward_seccomp_filters *f)
{
	for (size_t i = 0; i < f->n; i++)
		ward_seccomp_prog_free(&f->prog[i]);
	f->n = 0;
}
