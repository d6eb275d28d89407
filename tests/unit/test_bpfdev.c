/* Unit tests: the cgroup device program. Rule parsing and evaluation in C, then the real
 * thing: the program loaded by the kernel, attached to a cgroup of the host's v2
 * hierarchy, and a child in that cgroup opening device nodes (cgroup device programs have
 * no BPF_PROG_TEST_RUN). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "bpfdev.h"
#include "cgroup.h"
#include "resources.h"
#include "tap.h"
#include "util.h"

#define M WARD_BPFDEV_MKNOD
#define R WARD_BPFDEV_READ
#define W WARD_BPFDEV_WRITE

/* linux.resources text -> rules, with the decoder the typed parser (resources.c) uses. */
static int rules_present(const char *json, struct ward_bpfdev_rule **r, size_t *n, bool *present,
			 struct ward_err *err)
{
	json_t *res = json ? json_loads(json, JSON_DECODE_ANY, NULL) : NULL;
	int rc;

	ward_err_clear(err);
	rc = ward_bpfdev_rules_from(res, r, n, present, err);
	json_decref(res);
	return rc;
}

static int rules(const char *json, struct ward_bpfdev_rule **r, size_t *n, struct ward_err *err)
{
	bool present;
	return rules_present(json, r, n, &present, err);
}

/* linux.resources text -> the struct (resources.h) -> the program, as create and update. */
static int apply_json(int cgfd, const char *json, bool update, struct ward_err *err)
{
	struct ward_resources res;
	int rc;
	ward_err_clear(err);
	if (ward_resources_parse(json, &res, err) < 0)
		return -1;
	/* update: without "devices" the attached program stays */
	rc = update && !res.has_devices
		 ? 0
		 : ward_bpfdev_apply(cgfd, res.has_devices ? res.devices : NULL,
				     res.has_devices ? res.n_devices : 0, err);
	ward_resources_free(&res);
	return rc;
}

static void test_parse(void)
{
	struct ward_err err;
	struct ward_bpfdev_rule *r = NULL;
	size_t n;
	bool present;

	CHECK(rules("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,"
		    "\"type\":\"c\",\"major\":1,\"minor\":7,\"access\":\"rw\"},{\"allow\":true,"
		    "\"type\":\"b\",\"major\":8}]}",
		    &r, &n, &err) == 0 &&
		  n == 3,
	      "three rules parse");
	CHECK(r && !r[0].allow && r[0].type == 'a' && r[0].major == WARD_BPFDEV_ANY &&
		  r[0].minor == WARD_BPFDEV_ANY && r[0].access == (M | R | W),
	      "deny-all: type a, any major/minor, rwm");
	CHECK(r && r[1].allow && r[1].type == 'c' && r[1].major == 1 && r[1].minor == 7 &&
		  r[1].access == (R | W),
	      "allow c 1:7 rw");
	CHECK(r && r[2].type == 'b' && r[2].major == 8 && r[2].minor == WARD_BPFDEV_ANY &&
		  r[2].access == (M | R | W),
	      "no minor is any minor; no access is rwm");
	free(r);

	CHECK(rules_present("{\"memory\":{}}", &r, &n, &present, &err) == 0 && !present && n == 0,
	      "no devices: not present");
	CHECK(rules_present(NULL, &r, &n, &present, &err) == 0 && !present,
	      "no resources: not present");
	CHECK(rules("{\"devices\":[{\"type\":\"c\"}]}", &r, &n, &err) < 0,
	      "a rule without allow is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.devices[0].allow", "error names allow");
	CHECK(rules("{\"devices\":[{\"allow\":true,\"type\":\"p\"}]}", &r, &n, &err) < 0,
	      "type p is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.devices[0].type", "error names type");
	CHECK(rules("{\"devices\":[{\"allow\":true},{\"allow\":true,\"access\":\"rx\"}]}", &r, &n,
		    &err) < 0,
	      "access x is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.resources.devices[1].access", "error names access");
	CHECK(rules("{\"devices\":[{\"allow\":true,\"access\":\"\"}]}", &r, &n, &err) < 0,
	      "empty access is refused");
	CHECK(rules("{\"devices\":[{\"allow\":true,\"major\":-2}]}", &r, &n, &err) < 0,
	      "major -2 is refused");
	CHECK(rules("{\"devices\":[{\"allow\":true,\"minor\":1048576}]}", &r, &n, &err) < 0,
	      "minor beyond 20 bits is refused");
	CHECK(rules("{\"devices\":{}}", &r, &n, &err) < 0, "devices must be an array");
}

static void test_eval(void)
{
	struct ward_err err;
	struct ward_bpfdev_rule *r = NULL;
	size_t n;

	rules("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]}", &r, &n, &err);
	CHECK(ward_bpfdev_allows(r, n, 'c', 1, 3, R | W), "deny-all: /dev/null still rw (default)");
	CHECK(ward_bpfdev_allows(r, n, 'c', 1, 9, R), "deny-all: urandom still readable");
	CHECK(ward_bpfdev_allows(r, n, 'c', 5, 1, R | W), "deny-all: console 5:1 allowed");
	CHECK(ward_bpfdev_allows(r, n, 'c', 5, 2, R | W), "deny-all: ptmx 5:2 allowed");
	CHECK(ward_bpfdev_allows(r, n, 'c', 136, 7, R | W), "deny-all: pts 136:* allowed");
	CHECK(!ward_bpfdev_allows(r, n, 'c', 1, 1, R), "deny-all: /dev/mem 1:1 denied");
	CHECK(!ward_bpfdev_allows(r, n, 'b', 8, 0, R), "deny-all: a disk is denied");
	CHECK(ward_bpfdev_allows(r, n, 'c', 1, 1, M), "mknod of any char node is allowed");
	CHECK(ward_bpfdev_allows(r, n, 'b', 8, 0, M), "mknod of any block node is allowed");
	CHECK(!ward_bpfdev_allows(r, n, 'c', 10, 200, R | W), "no tun/tap by default");
	free(r);

	CHECK(!ward_bpfdev_allows(NULL, 0, 'c', 1, 1, R), "no rules: deny by default");
	CHECK(ward_bpfdev_allows(NULL, 0, 'c', 1, 3, R), "no rules: defaults allowed");

	rules("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":false,\"type\":"
	      "\"c\",\"major\":1,\"minor\":3}]}",
	      &r, &n, &err);
	CHECK(ward_bpfdev_allows(r, n, 'c', 1, 3, R | W),
	      "the defaults come last: a spec cannot deny /dev/null");
	free(r);

	rules(
	    "{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":4,\"minor\":1,\"access\":"
	    "\"rwm\"},{\"allow\":false,\"type\":\"c\",\"major\":4,\"minor\":1,\"access\":\"w\"}]}",
	    &r, &n, &err);
	CHECK(ward_bpfdev_allows(r, n, 'c', 4, 1, R), "allow rwm then deny w: r allowed");
	CHECK(!ward_bpfdev_allows(r, n, 'c', 4, 1, R | W), "allow rwm then deny w: rw denied");
	CHECK(!ward_bpfdev_allows(r, n, 'c', 4, 1, W), "allow rwm then deny w: w denied");
	free(r);

	rules("{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":4,\"access\":\"r\"},{"
	      "\"allow\":true,\"type\":\"c\",\"major\":4,\"minor\":2,\"access\":\"w\"}]}",
	      &r, &n, &err);
	CHECK(ward_bpfdev_allows(r, n, 'c', 4, 2, R | W), "r from one rule, w from another");
	CHECK(!ward_bpfdev_allows(r, n, 'c', 4, 3, R | W), "w only where the rule says");
	CHECK(!ward_bpfdev_allows(r, n, 'b', 4, 2, R), "type c rules do not match block");
	free(r);

	rules("{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":true,\"access\":"
	      "\"rwm\"},{\"allow\":false,\"type\":\"b\",\"major\":8,\"minor\":0}]}",
	      &r, &n, &err);
	CHECK(ward_bpfdev_allows(r, n, 'c', 1, 1, R | W), "allow-all lets /dev/mem through");
	CHECK(!ward_bpfdev_allows(r, n, 'b', 8, 0, R), "a later deny wins over allow-all");
	free(r);
}

/* Every shape of rule set must build, and pass the kernel's verifier (test_cgroup). */
static const char *const sets[] = {
    "{}",
    "{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]}",
    "{\"devices\":[{\"allow\":true,\"access\":\"rwm\"}]}",
    "{\"devices\":[{\"allow\":true,\"access\":\"rwm\"},{\"allow\":false,\"access\":\"r\"}]}",
    "{\"devices\":[{\"allow\":true,\"type\":\"b\",\"access\":\"m\"},{\"allow\":false,"
    "\"type\":\"c\",\"major\":4095,\"minor\":1048575,\"access\":\"w\"}]}",
};

/* n rules (c MAJ:i, alternately deny and allow, all access): ward_bpfdev_build's result;
 * a failed build leaves no instructions. */
static int build_many(size_t n, size_t *n_insns, struct ward_err *err)
{
	struct ward_bpfdev_rule *r = xcalloc(n, sizeof(*r));
	void *insns = NULL;
	int rc;

	for (size_t i = 0; i < n; i++)
		r[i] = (struct ward_bpfdev_rule){i % 2, 'c', (int64_t)(i % 4096), (int64_t)i,
						 R | W | M};
	ward_err_clear(err);
	rc = ward_bpfdev_build(r, n, &insns, n_insns, err);
	if (rc < 0 && insns)
		rc = 0; /* a failure must not leave a program */
	free(insns);
	free(r);
	return rc;
}

static void test_load(void)
{
	struct ward_err err;
	char name[80];
	size_t many;
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		struct ward_bpfdev_rule *r = NULL;
		void *insns = NULL;
		size_t n, n_insns;
		rules(sets[i], &r, &n, &err);
		snprintf(name, sizeof(name), "rule set %zu builds", i);
		CHECK(ward_bpfdev_build(r, n, &insns, &n_insns, &err) == 0 && n_insns > 0, name);
		free(insns);
		free(r);
	}
	/* 2000 and 5000 rules (more than the old branching program's 16-bit jumps allowed):
	 * at most 21 instructions a rule; 60000: beyond the kernel's 1M instructions */
	CHECK(build_many(2000, &many, &err) == 0, "2000 rules build");
	CHECK(build_many(5000, &many, &err) == 0 && many <= 21 * 5011 + 10,
	      "5000 rules build (at most 21 instructions a rule)");
	CHECK(build_many(60000, &many, &err) < 0, "60000 rules are refused");
	CHECK_STR_CONTAINS(err.msg, "60000 device rules: the program would be too large",
			   "the error says why");
}

/* ---- the program, run here ---------------------------------------------------------- */

static bool alu(uint8_t op, uint64_t *d, uint64_t src)
{
	switch (op) {
	case BPF_MOV:
		*d = src;
		return true;
	case BPF_AND:
		*d &= src;
		return true;
	case BPF_OR:
		*d |= src;
		return true;
	case BPF_XOR:
		*d ^= src;
		return true;
	case BPF_SUB:
		*d -= src;
		return true;
	case BPF_NEG:
		*d = -*d;
		return true;
	case BPF_RSH:
		*d >>= src & 63;
		return true;
	case BPF_ARSH:
		*d = (uint64_t)((int64_t)*d >> (src & 63));
		return true;
	default:
		return false;
	}
}

/* The instructions the builder emits, as the kernel runs them (-1: one it does not emit). */
static int64_t run_prog(const struct bpf_insn *v, size_t n, const struct bpf_cgroup_dev_ctx *ctx)
{
	uint64_t r[11] = {0};
	for (size_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *i = &v[pc];
		uint64_t src =
		    BPF_SRC(i->code) == BPF_X ? r[i->src_reg] : (uint64_t)(int64_t)i->imm;
		uint64_t *d = &r[i->dst_reg];
		uint32_t field;
		if (i->code == (BPF_JMP | BPF_EXIT))
			return (int64_t)r[0];
		switch (BPF_CLASS(i->code)) {
		case BPF_LDX:
			if (i->code != (BPF_LDX | BPF_MEM | BPF_W) || i->src_reg != 1 ||
			    i->off < 0 || (size_t)i->off + 4 > sizeof(*ctx))
				return -1;
			memcpy(&field, (const char *)ctx + i->off, 4);
			*d = field;
			break;
		case BPF_ALU: { /* 32-bit: on the low halves, the result zero-extended */
			uint64_t low = (uint32_t)*d;
			if (!alu(BPF_OP(i->code), &low, (uint32_t)src))
				return -1;
			*d = (uint32_t)low;
			break;
		}
		case BPF_ALU64:
			if (!alu(BPF_OP(i->code), d, src))
				return -1;
			break;
		default:
			return -1; /* no jumps: the program is straight-line */
		}
	}
	return -1;
}

static int64_t decide(const struct ward_bpfdev_rule *r, size_t n, char type, uint32_t major,
		      uint32_t minor, unsigned access)
{
	struct ward_err err;
	void *insns = NULL;
	size_t n_insns;
	int64_t rc = -1;
	struct bpf_cgroup_dev_ctx ctx = {
	    .access_type =
		(access << 16) | (type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK),
	    .major = major,
	    .minor = minor};
	if (ward_bpfdev_build(r, n, &insns, &n_insns, &err) == 0)
		rc = run_prog(insns, n_insns, &ctx);
	free(insns);
	return rc;
}

/* The program decides as ward_bpfdev_allows does (the rules' meaning, in C), for random
 * rule sets over a few devices and every access combination; and it has no jump: the
 * verifier walks it once (a branching program cost the verifier 0.5 ms for the defaults,
 * more per rule). Whether the kernel agrees is test_cgroup's part. */
static void test_program(void)
{
	static const uint32_t majors[] = {1, 4, 5, 136};
	static const uint32_t minors[] = {1, 3, 7};
	unsigned seed = 12345, mismatches = 0, cases = 0;
	char first[200] = "";

	for (int set = 0; set < 300; set++) {
		struct ward_bpfdev_rule r[6];
		size_t n = (size_t)(rand_r(&seed) % 7);
		for (size_t i = 0; i < n; i++) {
			int t = rand_r(&seed) % 3;
			r[i] = (struct ward_bpfdev_rule){
			    .allow = rand_r(&seed) % 2,
			    .type = t == 0   ? 'a'
				    : t == 1 ? 'c'
					     : 'b',
			    .major = rand_r(&seed) % 3 ? (int64_t)majors[rand_r(&seed) % 4]
						       : WARD_BPFDEV_ANY,
			    .minor = rand_r(&seed) % 3 ? (int64_t)minors[rand_r(&seed) % 3]
						       : WARD_BPFDEV_ANY,
			    .access = (unsigned)(rand_r(&seed) % 7) + 1};
		}
		for (int t = 0; t < 2; t++)
			for (size_t ma = 0; ma < 4; ma++)
				for (size_t mi = 0; mi < 3; mi++)
					for (unsigned acc = 0; acc < 8; acc++) {
						char type = t ? 'b' : 'c';
						int64_t got =
						    decide(r, n, type, majors[ma], minors[mi], acc);
						bool want = ward_bpfdev_allows(
						    r, n, type, majors[ma], minors[mi], acc);
						cases++;
						if (got != (want ? 1 : 0) && !mismatches++)
							snprintf(first, sizeof(first),
								 "set %d: %c %u:%u access %u: "
								 "program %lld, rules %d",
								 set, type, majors[ma], minors[mi],
								 acc, (long long)got, want);
					}
	}
	printf("# %u cases\n", cases);
	if (mismatches)
		printf("#   %u mismatches, first: %s\n", mismatches, first);
	CHECK(mismatches == 0, "the program decides as the rules say (300 random rule sets)");
	{
		void *insns = NULL;
		size_t n_insns, jumps = 0;
		struct ward_err err;
		CHECK(ward_bpfdev_build(NULL, 0, &insns, &n_insns, &err) == 0, "defaults build");
		for (size_t i = 0; insns && i < n_insns; i++) {
			uint8_t c = ((struct bpf_insn *)insns)[i].code;
			jumps += (BPF_CLASS(c) == BPF_JMP || BPF_CLASS(c) == BPF_JMP32) &&
				 c != (BPF_JMP | BPF_EXIT);
		}
		CHECK(insns && jumps == 0 &&
			  ((struct bpf_insn *)insns)[n_insns - 1].code == (BPF_JMP | BPF_EXIT),
		      "the program has no jump: one exit, at the end");
		free(insns);
	}
}

/* ---- on a real cgroup --------------------------------------------------------------- */

static char tmp[64];
static char cg[4200];

/* A child that moves itself into the test cgroup (cgroup.procs; clone3 CLONE_INTO_CGROUP,
 * ward's own way, is not known to valgrind). */
static pid_t fork_in_cgroup(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		char procs[4300];
		struct ward_err err;
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
		if (write_file_at(AT_FDCWD, procs, 0, 0, "0", 1, &err) < 0)
			_exit(255);
	}
	return pid;
}

/* open path with flags in a child in the cgroup; the errno (0 = opened), -1 on trouble. */
static int open_in_cgroup(int cgfd, const char *path, int flags)
{
	int status;
	pid_t pid;
	(void)cgfd;
	pid = fork_in_cgroup();
	if (pid == 0) {
		int fd = open(path, flags | O_CLOEXEC | O_NONBLOCK);
		_exit(fd >= 0 ? 0 : (errno & 0xff));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 255)
		return -1;
	return WEXITSTATUS(status);
}

/* mknod in a child in the cgroup; the errno (0 = made). */
static int mknod_in_cgroup(int cgfd, const char *path, dev_t dev)
{
	int status;
	pid_t pid;
	(void)cgfd;
	pid = fork_in_cgroup();
	if (pid == 0)
		_exit(mknod(path, S_IFCHR | 0600, dev) == 0 ? 0 : (errno & 0xff));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 255)
		return -1;
	return WEXITSTATUS(status);
}

static int attached(int cgfd)
{
	struct ward_err err;
	uint32_t ids[8];
	return ward_bpfdev_query(cgfd, ids, 8, &err);
}

static void test_cgroup(void)
{
	struct ward_err err = {0};
	const char *v2 = ward_cgroup_v2_root(&err);
	char mem[128], fake[128], fake2[128];
	int cgfd = -1;
	int e;

	if (geteuid() != 0 || !v2) {
		printf("ok %d # skip not root or no cgroup v2\n", ++tap_n);
		return;
	}
	snprintf(cg, sizeof(cg), "%s/ward-unit-bpfdev-%d", v2, (int)getpid());
	if (ward_cgroup_create(cg, &err) < 0 || (cgfd = ward_cgroup_open(cg, &err)) < 0) {
		CHECK(0, "create a test cgroup");
		printf("#   %s\n", err.msg);
		return;
	}
	snprintf(mem, sizeof(mem), "%s/mem", tmp);
	snprintf(fake, sizeof(fake), "%s/fake", tmp);
	snprintf(fake2, sizeof(fake2), "%s/fake2", tmp);

	CHECK(apply_json(cgfd, "{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]}", false,
			 &err) == 0,
	      "the program loads and attaches to a cgroup of the v2 hierarchy");
	if (err.msg[0])
		printf("#   %s\n", err.msg);
	CHECK(attached(cgfd) == 1, "one program is attached");
	CHECK(open_in_cgroup(cgfd, "/dev/null", O_RDWR) == 0, "in the cgroup /dev/null opens rw");
	CHECK(open_in_cgroup(cgfd, "/dev/urandom", O_RDONLY) == 0, "/dev/urandom opens");
	e = mknod_in_cgroup(cgfd, mem, makedev(1, 1));
	CHECK(e == 0, "mknod c 1:1 in the cgroup is allowed (m)");
	e = open_in_cgroup(cgfd, mem, O_RDONLY);
	CHECK(e == EPERM, "opening the mknod'ed c 1:1 (/dev/mem) node fails with EPERM");
	if (e != EPERM)
		printf("#   errno %d\n", e);
	{
		int fd = open(mem, O_RDONLY | O_CLOEXEC);
		CHECK(fd >= 0 || errno != EPERM,
		      "outside the cgroup the same node is not refused by the program");
		if (fd >= 0)
			close(fd);
	}

	/* c 4095:0: no driver, so an allowed open fails with ENXIO, a denied one with EPERM */
	CHECK(mknod(fake, S_IFCHR | 0600, makedev(4095, 0)) == 0, "mknod c 4095:0 (no driver)");
	CHECK(open_in_cgroup(cgfd, fake, O_RDONLY) == EPERM, "c 4095:0 is denied");
	CHECK(apply_json(cgfd,
			 "{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},{\"allow\":"
			 "true,\"type\":\"c\",\"major\":4095,\"minor\":0,\"access\":"
			 "\"r\"}]}",
			 true, &err) == 0,
	      "update: a new program with an allow rule for c 4095:0 r");
	CHECK(attached(cgfd) == 1, "update replaced the program: still one attached");
	e = open_in_cgroup(cgfd, fake, O_RDONLY);
	CHECK(e != EPERM && e != 0, "c 4095:0 r passes the program (ENXIO from the kernel)");
	CHECK(open_in_cgroup(cgfd, fake, O_WRONLY) == EPERM, "c 4095:0 w is still denied");
	CHECK(open_in_cgroup(cgfd, "/dev/null", O_RDWR) == 0, "the defaults stay allowed");
	CHECK(open_in_cgroup(cgfd, mem, O_RDONLY) == EPERM, "c 1:1 stays denied");

	CHECK(apply_json(cgfd, "{\"memory\":{}}", true, &err) == 0 && attached(cgfd) == 1 &&
		  open_in_cgroup(cgfd, fake, O_RDONLY) != EPERM,
	      "update without devices keeps the program");
	CHECK(apply_json(cgfd, "{\"devices\":[]}", true, &err) == 0 && attached(cgfd) == 1 &&
		  open_in_cgroup(cgfd, fake, O_RDONLY) == EPERM,
	      "update with an empty device list: only the defaults");
	CHECK(mknod(fake2, S_IFCHR | 0600, makedev(4095, 1)) == 0 &&
		  open_in_cgroup(cgfd, fake2, O_RDONLY) == EPERM,
	      "c 4095:1 is denied");

	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		char name[80];
		snprintf(name, sizeof(name), "rule set %zu passes the verifier and attaches", i);
		CHECK(apply_json(cgfd, sets[i], false, &err) == 0 && attached(cgfd) == 1, name);
		if (err.msg[0])
			printf("#   %s\n", err.msg);
	}
	{
		struct ward_bpfdev_rule *r = xcalloc(2000, sizeof(*r));
		for (int i = 0; i < 2000; i++)
			r[i] = (struct ward_bpfdev_rule){i % 2, 'c', i % 4096, i, R | W | M};
		CHECK(ward_bpfdev_apply(cgfd, r, 2000, &err) == 0 && attached(cgfd) == 1,
		      "2000 rules pass the verifier");
		if (err.msg[0])
			printf("#   %s\n", err.msg);
		free(r);
	}
	close(cgfd);
	CHECK(ward_cgroup_destroy(cg, &err) == 0, "the test cgroup is removed");
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/ward-bpfdev-XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	test_parse();
	test_eval();
	test_load();
	test_program();
	test_cgroup();
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmp);
	}
	TAP_DONE();
}
