/* linux.resources.devices -> a cgroup device BPF program, by hand: see bpfdev.h.
 *
 * The program (r1 = struct bpf_cgroup_dev_ctx *; return 1 allows, 0 denies) has no branch:
 *
 *	r3 = 0                                   -- the accesses allowed so far (m r w bits)
 *	for each rule, first to last:
 *		r4 = (type ^ T) | (major ^ M) | (minor ^ m)   -- only the fields the rule names
 *		r4 = r4 == 0 ? ~0 : 0                -- as -r4 >> 63 (arithmetic), inverted
 *		r4 &= ACCESS                         -- the bits this rule decides, if it matches
 *		r3 &= ~r4; allow: r3 |= r4           -- so the last matching rule decides each bit
 *	return 1 - (((ctx->access_type >> 16) & ~r3) != 0)  -- every access asked is allowed
 *
 * The verifier walks straight-line code once, with no states to keep or compare: the
 * defaults' program is verified in about a tenth of the time the branching one took (one
 * section per access bit, a conditional jump per field of every rule), and the program
 * size is linear in the rules, with no 16-bit jump offsets to outgrow. All arithmetic is on
 * values below 2^32 zero-extended into 64-bit registers, so -r4 has bit 63 set exactly
 * when r4 is not 0. */
#include "bpfdev.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <jansson.h>
#include <linux/bpf.h>

#include "log.h"
#include "util.h"

const struct ward_bpfdev_rule ward_bpfdev_defaults[] = {
    /* mknod of any node: ward (outside a user namespace) and the container may create
     * nodes; opening them is what the rules below decide (runc and crun do the same) */
    {true, 'c', WARD_BPFDEV_ANY, WARD_BPFDEV_ANY, WARD_BPFDEV_MKNOD},
    {true, 'b', WARD_BPFDEV_ANY, WARD_BPFDEV_ANY, WARD_BPFDEV_MKNOD},
    /* ward_default_devices (dev.c): null zero full random urandom tty */
    {true, 'c', 1, 3, 7},
    {true, 'c', 1, 5, 7},
    {true, 'c', 1, 7, 7},
    {true, 'c', 1, 8, 7},
    {true, 'c', 1, 9, 7},
    {true, 'c', 5, 0, 7},
    /* /dev/console (a pts bind-mounted there), /dev/ptmx, /dev/pts/N */
    {true, 'c', 5, 1, 7},
    {true, 'c', 5, 2, 7},
    {true, 'c', 136, WARD_BPFDEV_ANY, 7},
};
const size_t ward_bpfdev_n_defaults = ARRAY_SIZE(ward_bpfdev_defaults);

/* ---- the rules ---------------------------------------------------------------------- */

static int get_num(json_t *d, const char *key, const char *path, int64_t max, int64_t *out,
		   struct ward_err *err)
{
	json_t *v = json_object_get(d, key);
	*out = WARD_BPFDEV_ANY;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return ward_fail(err, 0, "%s.%s: expected an integer", path, key);
	*out = json_integer_value(v);
	if (*out < -1 || *out > max)
		return ward_fail(err, 0, "%s.%s: %" PRId64 " is not -1 (any) or 0..%" PRId64, path,
				 key, *out, max);
	return 0;
}

static int parse_rule(json_t *d, const char *path, struct ward_bpfdev_rule *r, struct ward_err *err)
{
	json_t *allow = json_object_get(d, "allow");
	json_t *type = json_object_get(d, "type");
	json_t *access = json_object_get(d, "access");

	if (!json_is_object(d))
		return ward_fail(err, 0, "%s: expected an object", path);
	if (!json_is_boolean(allow))
		return ward_fail(err, 0, "%s.allow: %s", path,
				 allow ? "expected true or false" : "missing");
	r->allow = json_is_true(allow);
	r->type = 'a';
	if (type && !json_is_null(type)) {
		const char *t = json_string_value(type);
		if (!t || strlen(t) != 1 || !strchr("abc", t[0]))
			return ward_fail(err, 0, "%s.type: expected \"a\", \"b\" or \"c\"", path);
		r->type = t[0];
	}
	if (get_num(d, "major", path, 0xfff, &r->major, err) < 0 ||
	    get_num(d, "minor", path, 0xfffff, &r->minor, err) < 0)
		return -1;
	/* Optional in the runtime-spec; as in v1's devices.allow, no access means all. */
	r->access = WARD_BPFDEV_MKNOD | WARD_BPFDEV_READ | WARD_BPFDEV_WRITE;
	if (access && !json_is_null(access)) {
		const char *a = json_string_value(access);
		if (!a || !*a)
			return ward_fail(err, 0, "%s.access: expected a combination of r, w and m",
					 path);
		r->access = 0;
		for (const char *c = a; *c; c++) {
			unsigned bit = *c == 'm'   ? WARD_BPFDEV_MKNOD
				       : *c == 'r' ? WARD_BPFDEV_READ
				       : *c == 'w' ? WARD_BPFDEV_WRITE
						   : 0;
			if (!bit)
				return ward_fail(
				    err, 0,
				    "%s.access: \"%s\": expected a combination of r, w "
				    "and m",
				    path, a);
			r->access |= bit;
		}
	}
	return 0;
}

int ward_bpfdev_rules_from(json_t *res, struct ward_bpfdev_rule **rules, size_t *n, bool *present,
			   struct ward_err *err)
{
	json_t *devs, *d;
	size_t i;

	*rules = NULL;
	*n = 0;
	*present = false;
	if (!res || json_is_null(res))
		return 0;
	if (!json_is_object(res))
		return ward_fail(err, 0, "linux.resources: expected an object");
	devs = json_object_get(res, "devices");
	if (!devs || json_is_null(devs))
		return 0;
	if (!json_is_array(devs))
		return ward_fail(err, 0, "linux.resources.devices: expected an array");
	*present = true;
	*rules = xcalloc(json_array_size(devs) + 1, sizeof(**rules));
	json_array_foreach(devs, i, d)
	{
		char path[64];
		snprintf(path, sizeof(path), "linux.resources.devices[%zu]", i);
		if (parse_rule(d, path, &(*rules)[i], err) < 0) {
			free(*rules);
			*rules = NULL;
			return -1;
		}
	}
	*n = json_array_size(devs);
	return 0;
}

static bool rule_matches(const struct ward_bpfdev_rule *r, char type, uint32_t major,
			 uint32_t minor)
{
	return (r->type == 'a' || r->type == type) &&
	       (r->major == WARD_BPFDEV_ANY || (uint32_t)r->major == major) &&
	       (r->minor == WARD_BPFDEV_ANY || (uint32_t)r->minor == minor);
}

/* The spec's rules followed by the defaults (which therefore win). */
static struct ward_bpfdev_rule *all_rules(const struct ward_bpfdev_rule *rules, size_t n,
					  size_t *total)
{
	struct ward_bpfdev_rule *all = xcalloc(n + ward_bpfdev_n_defaults, sizeof(*all));
	if (n)
		memcpy(all, rules, n * sizeof(*all));
	memcpy(all + n, ward_bpfdev_defaults, ward_bpfdev_n_defaults * sizeof(*all));
	*total = n + ward_bpfdev_n_defaults;
	return all;
}

bool ward_bpfdev_allows(const struct ward_bpfdev_rule *rules, size_t n, char type, uint32_t major,
			uint32_t minor, unsigned access)
{
	size_t total;
	cleanup_free struct ward_bpfdev_rule *all = all_rules(rules, n, &total);
	for (unsigned bit = 1; bit <= WARD_BPFDEV_WRITE; bit <<= 1) {
		bool ok = false;
		if (!(access & bit))
			continue;
		for (size_t i = total; i-- > 0;) {
			if ((all[i].access & bit) && rule_matches(&all[i], type, major, minor)) {
				ok = all[i].allow;
				break;
			}
		}
		if (!ok)
			return false;
	}
	return true;
}

/* ---- the program -------------------------------------------------------------------- */

struct prog {
	struct bpf_insn *v;
	size_t n, cap;
};

static size_t emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n] =
	    (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
	return p->n++;
}

#define LDX_W(p, dst, src, off) emit(p, BPF_LDX | BPF_MEM | BPF_W, dst, src, off, 0)
#define MOV64_IMM(p, dst, imm)	emit(p, BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define MOV64_REG(p, dst, src)	emit(p, BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0)
#define AND32_IMM(p, dst, imm)	emit(p, BPF_ALU | BPF_AND | BPF_K, dst, 0, 0, imm)
#define XOR32_IMM(p, dst, imm)	emit(p, BPF_ALU | BPF_XOR | BPF_K, dst, 0, 0, imm)
#define RSH32_IMM(p, dst, imm)	emit(p, BPF_ALU | BPF_RSH | BPF_K, dst, 0, 0, imm)
#define OR32_REG(p, dst, src)	emit(p, BPF_ALU | BPF_OR | BPF_X, dst, src, 0, 0)
#define AND64_IMM(p, dst, imm)	emit(p, BPF_ALU64 | BPF_AND | BPF_K, dst, 0, 0, imm)
#define XOR64_IMM(p, dst, imm)	emit(p, BPF_ALU64 | BPF_XOR | BPF_K, dst, 0, 0, imm)
#define AND64_REG(p, dst, src)	emit(p, BPF_ALU64 | BPF_AND | BPF_X, dst, src, 0, 0)
#define OR64_REG(p, dst, src)	emit(p, BPF_ALU64 | BPF_OR | BPF_X, dst, src, 0, 0)
#define SUB64_REG(p, dst, src)	emit(p, BPF_ALU64 | BPF_SUB | BPF_X, dst, src, 0, 0)
#define NEG64(p, dst)		emit(p, BPF_ALU64 | BPF_NEG, dst, 0, 0, 0)
#define ARSH64_IMM(p, dst, imm) emit(p, BPF_ALU64 | BPF_ARSH | BPF_K, dst, 0, 0, imm)
#define RSH64_IMM(p, dst, imm)	emit(p, BPF_ALU64 | BPF_RSH | BPF_K, dst, 0, 0, imm)
#define EXIT(p)			emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

enum { R0, R1, R2, R3, R4, R5 };

/* The kernel's limit on a program's size (BPF_COMPLEXITY_LIMIT_INSNS): at most 21
 * instructions a rule, so some 47000 rules. */
#define MAX_INSNS 1000000

/* r4 |= (field of the context, masked) ^ value; the first field of a rule sets r4. */
static void diff_field(struct prog *p, int16_t off, int32_t mask, int32_t value, bool first)
{
	LDX_W(p, R2, R1, off);
	if (mask)
		AND32_IMM(p, R2, mask);
	XOR32_IMM(p, R2, value);
	if (first)
		MOV64_REG(p, R4, R2);
	else
		OR32_REG(p, R4, R2);
}

int ward_bpfdev_build(const struct ward_bpfdev_rule *rules, size_t n, void **insns, size_t *n_insns,
		      struct ward_err *err)
{
	size_t total;
	cleanup_free struct ward_bpfdev_rule *all = all_rules(rules, n, &total);
	struct prog p = {0};

	*insns = NULL;
	MOV64_IMM(&p, R3, 0);
	for (size_t i = 0; i < total; i++) {
		const struct ward_bpfdev_rule *r = &all[i];
		bool first = true;

		if (r->type != 'a') {
			diff_field(&p, offsetof(struct bpf_cgroup_dev_ctx, access_type), 0xffff,
				   r->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK,
				   first);
			first = false;
		}
		if (r->major != WARD_BPFDEV_ANY) {
			diff_field(&p, offsetof(struct bpf_cgroup_dev_ctx, major), 0,
				   (int32_t)r->major, first);
			first = false;
		}
		if (r->minor != WARD_BPFDEV_ANY) {
			diff_field(&p, offsetof(struct bpf_cgroup_dev_ctx, minor), 0,
				   (int32_t)r->minor, first);
			first = false;
		}
		if (first) {
			MOV64_IMM(&p, R4, -1); /* no conditions: it matches every device */
		} else {
			NEG64(&p, R4);
			ARSH64_IMM(&p, R4, 63); /* ~0 when some field differs */
			XOR64_IMM(&p, R4, -1);	/* ~0 when the rule matches */
		}
		/* ctx access bits are the same as ours: BPF_DEVCG_ACC_MKNOD/READ/WRITE */
		AND64_IMM(&p, R4, (int32_t)(r->access & 7));
		MOV64_REG(&p, R5, R4);
		XOR64_IMM(&p, R5, -1);
		AND64_REG(&p, R3, R5);
		if (r->allow)
			OR64_REG(&p, R3, R4);
		if (p.n > MAX_INSNS) {
			free(p.v);
			return ward_fail(err, E2BIG,
					 "%zu device rules: the program would be too large", n);
		}
	}
	/* r2 = what is asked for and not allowed; return r2 == 0 */
	LDX_W(&p, R2, R1, offsetof(struct bpf_cgroup_dev_ctx, access_type));
	RSH32_IMM(&p, R2, 16);
	XOR64_IMM(&p, R3, -1);
	AND64_REG(&p, R2, R3);
	NEG64(&p, R2);
	RSH64_IMM(&p, R2, 63); /* 1 when something asked for is not allowed */
	/* r0 = 1 - r2: a subtraction, whose bounds ([0, 1]) every verifier tracks (6.1 loses
	 * them through 1 ^ r2 and refuses the program's return value) */
	MOV64_IMM(&p, R0, 1);
	SUB64_REG(&p, R0, R2);
	EXIT(&p);
	*insns = p.v;
	*n_insns = p.n;
	return 0;
}

/* ---- bpf(2) ------------------------------------------------------------------------- */

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

#define LOG_SIZE (1u << 20)

static int prog_load(const struct bpf_insn *insns, size_t n, struct ward_err *err)
{
	static const char license[] = "GPL";
	union bpf_attr attr;
	cleanup_free char *log = NULL;
	size_t len;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attr.expected_attach_type = BPF_CGROUP_DEVICE;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uint64_t)(uintptr_t)license;
	snprintf(attr.prog_name, sizeof(attr.prog_name), "ward_devices");
	fd = (int)sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd >= 0)
		return fd;
	if (errno != EACCES && errno != EINVAL)
		return ward_fail_errno(err, "load the device BPF program");
	/* The verifier said no: load again for its reason (a bug in the builder), which is the
	 * end of its log (a log that fills the buffer fails with ENOSPC before kernel 6.4:
	 * room for every instruction's line). */
	log = xcalloc(1, LOG_SIZE);
	attr.log_level = 1;
	attr.log_buf = (uint64_t)(uintptr_t)log;
	attr.log_size = LOG_SIZE;
	fd = (int)sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd >= 0)
		return fd;
	log[LOG_SIZE - 1] = '\0';
	len = strlen(log);
	while (len > 0 && log[len - 1] == '\n')
		log[--len] = '\0';
	for (char *c = log; *c; c++)
		if (*c == '\n')
			*c = ' ';
	return ward_fail_errno(err, "load the device BPF program (verifier: ...%s)",
			       log + (len > 300 ? len - 300 : 0));
}

int ward_bpfdev_load(const struct ward_bpfdev_rule *rules, size_t n, struct ward_err *err)
{
	cleanup_free void *insns = NULL;
	size_t n_insns;

	if (ward_bpfdev_build(rules, n, &insns, &n_insns, err) < 0)
		return -1;
	return prog_load(insns, n_insns, err);
}

int ward_bpfdev_query(int cgroup_fd, uint32_t *ids, uint32_t max, struct ward_err *err)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.query.target_fd = (uint32_t)cgroup_fd;
	attr.query.attach_type = BPF_CGROUP_DEVICE;
	attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
	attr.query.prog_cnt = max;
	if (sys_bpf(BPF_PROG_QUERY, &attr) < 0)
		return ward_fail_errno(err, "query the device BPF programs of the cgroup");
	return (int)attr.query.prog_cnt;
}

static int prog_fd_by_id(uint32_t id)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_id = id;
	return (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr);
}

static int attach(int cgroup_fd, int prog_fd, int replace_fd)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cgroup_fd;
	attr.attach_bpf_fd = (uint32_t)prog_fd;
	attr.attach_type = BPF_CGROUP_DEVICE;
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	if (replace_fd >= 0) {
		attr.attach_flags |= BPF_F_REPLACE;
		attr.replace_bpf_fd = (uint32_t)replace_fd;
	}
	return (int)sys_bpf(BPF_PROG_ATTACH, &attr);
}

static int detach(int cgroup_fd, int prog_fd)
{
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cgroup_fd;
	attr.attach_bpf_fd = (uint32_t)prog_fd;
	attr.attach_type = BPF_CGROUP_DEVICE;
	return (int)sys_bpf(BPF_PROG_DETACH, &attr);
}

int ward_bpfdev_load_insns(const void *insns, size_t n_insns, struct ward_err *err)
{
	return prog_load(insns, n_insns, err);
}

int ward_bpfdev_attach(int cgroup_fd, int prog, struct ward_err *err)
{
	uint32_t old[64];
	int n_old;

	n_old = ward_bpfdev_query(cgroup_fd, old, ARRAY_SIZE(old), err);
	if (n_old < 0)
		return -1;
	if (n_old > (int)ARRAY_SIZE(old))
		return ward_fail(err, E2BIG, "%d device BPF programs attached to the cgroup",
				 n_old);
	if (n_old == 1) {
		/* One program (ours, from create or the last update): swap it in place. */
		cleanup_fd int old_fd = prog_fd_by_id(old[0]);
		if (old_fd >= 0 && attach(cgroup_fd, prog, old_fd) == 0)
			return 0;
		/* It went away meanwhile, or replacing is refused: fall through */
	}
	if (attach(cgroup_fd, prog, -1) < 0)
		return ward_fail_errno(err, "attach the device BPF program to the cgroup");
	/* The new program is in force; only now drop the old ones. */
	for (int i = 0; i < n_old; i++) {
		cleanup_fd int old_fd = prog_fd_by_id(old[i]);
		if (old_fd < 0)
			continue; /* already gone */
		if (detach(cgroup_fd, old_fd) < 0 && errno != ENOENT)
			return ward_fail_errno(err, "detach the previous device BPF program %u",
					       old[i]);
	}
	return 0;
}

int ward_bpfdev_apply(int cgroup_fd, const struct ward_bpfdev_rule *rules, size_t n,
		      struct ward_err *err)
{
	cleanup_fd int prog = ward_bpfdev_load(rules, n, err);

	return prog < 0 ? -1 : ward_bpfdev_attach(cgroup_fd, prog, err);
}
