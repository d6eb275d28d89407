/* A seccomp program as a search over syscall numbers: seccomp_tree.h says what and why. */
#include "seccomp_tree.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define OFF_NR	  offsetof(struct seccomp_data, nr)
#define OFF_ARCH  offsetof(struct seccomp_data, arch)
#define MAX_ARCHS 16	     /* architectures one program tells apart */
#define MAX_STEPS (1u << 20) /* instructions one walk follows, over all its paths */
#define MAX_JUMP  255	     /* a conditional jump's reach */

/* Where the instructions for an interval of syscall numbers end: a return of a value, or
 * the original program from instruction v on (its first look at the arguments). */
enum end { END_RET, END_REST };
struct outcome {
	enum end end;
	uint32_t v;
};
struct interval {
	uint32_t lo, hi;
	struct outcome o;
};
/* The answers for one architecture: intervals that cover every number once, in order. */
struct partition {
	struct interval *iv;
	size_t n, cap;
};

/* What the accumulator holds on a path: a known value, the syscall number (within the
 * path's interval), or an architecture the program never compared with. */
enum acc { ACC_VALUE, ACC_NR, ACC_ARCH };

struct walk {
	const struct sock_filter *p;
	size_t len;
	bool arch_known;
	uint32_t arch;
	struct partition *out;
	uint32_t *archs; /* the walk with no known arch collects what it is compared with */
	size_t *n_archs;
	size_t steps;
	bool fail;
};

static void add(struct walk *w, uint32_t lo, uint32_t hi, enum end end, uint32_t v)
{
	struct partition *p = w->out;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 64;
		p->iv = xrealloc(p->iv, p->cap * sizeof(*p->iv));
	}
	p->iv[p->n++] = (struct interval){lo, hi, {end, v}};
}

static bool listed(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void note_arch(struct walk *w, uint32_t k)
{
	if (listed(w->archs, *w->n_archs, k))
		return;
	if (*w->n_archs == MAX_ARCHS)
		w->fail = true;
	else
		w->archs[(*w->n_archs)++] = k;
}

static bool holds(uint16_t op, uint32_t a, uint32_t k)
{
	switch (op) {
	case BPF_JEQ:
		return a == k;
	case BPF_JGT:
		return a > k;
	case BPF_JGE:
		return a >= k;
	default: /* BPF_JSET */
		return (a & k) != 0;
	}
}

/* Numbers [lo, hi] that go on at pc. */
struct piece {
	size_t pc;
	uint32_t lo, hi;
};

/* Follow the program from pc for the numbers [lo, hi], splitting the interval where a
 * comparison of the number splits it, until each piece returns or reads an argument. */
static void walk(struct walk *w, size_t pc, enum acc acc, uint32_t a, uint32_t lo, uint32_t hi)
{
	while (!w->fail) {
		const struct sock_filter *f;
		struct piece part[3];
		size_t n = 0, t, e;
		uint32_t tlo, thi;
		uint16_t op;

		if (pc >= w->len || ++w->steps > MAX_STEPS) {
			w->fail = true;
			return;
		}
		f = &w->p[pc];
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k == OFF_NR) {
				acc = ACC_NR;
			} else if (f->k == OFF_ARCH) {
				acc = w->arch_known ? ACC_VALUE : ACC_ARCH;
				a = w->arch;
			} else if (f->k % 4 == 0 && f->k < sizeof(struct seccomp_data)) {
				add(w, lo, hi, END_REST, (uint32_t)pc);
				return;
			} else {
				w->fail = true;
				return;
			}
			pc++;
			continue;
		case BPF_RET | BPF_K:
			add(w, lo, hi, END_RET, f->k);
			return;
		case BPF_JMP | BPF_JA:
			pc += 1 + (size_t)f->k;
			continue;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JSET | BPF_K:
			break;
		default:
			w->fail = true;
			return;
		}
		op = BPF_OP(f->code);
		t = pc + 1 + f->jt;
		e = pc + 1 + f->jf;
		if (acc == ACC_VALUE) {
			pc = holds(op, a, f->k) ? t : e;
			continue;
		}
		if (acc == ACC_ARCH) { /* unequal to every architecture compared with */
			if (op != BPF_JEQ) {
				w->fail = true;
				return;
			}
			note_arch(w, f->k);
			pc = e;
			continue;
		}
		/* the number: [tlo, thi] is where the comparison holds */
		if (op == BPF_JSET) { /* bits of the number: not modelled */
			w->fail = true;
			return;
		}
		if (op == BPF_JGT && f->k == UINT32_MAX) { /* never holds */
			pc = e;
			continue;
		}
		tlo = op == BPF_JGT ? f->k + 1 : f->k;
		thi = op == BPF_JEQ ? f->k : UINT32_MAX;
		if (tlo > lo)
			part[n++] = (struct piece){e, lo, tlo - 1 < hi ? tlo - 1 : hi};
		if (tlo <= hi && thi >= lo)
			part[n++] = (struct piece){t, tlo > lo ? tlo : lo, thi < hi ? thi : hi};
		if (thi < hi)
			part[n++] = (struct piece){e, thi + 1 > lo ? thi + 1 : lo, hi};
		for (size_t i = 0; i + 1 < n; i++)
			if (part[i].lo <= part[i].hi)
				walk(w, part[i].pc, acc, a, part[i].lo, part[i].hi);
		pc = part[n - 1].pc;
		lo = part[n - 1].lo;
		hi = part[n - 1].hi;
	}
}

static int cmp_lo(const void *x, const void *y)
{
	const struct interval *a = x, *b = y;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static bool same_outcome(const struct outcome *a, const struct outcome *b)
{
	return a->end == b->end && a->v == b->v;
}

/* Sort, check that the intervals cover every number once, merge neighbours that end the
 * same way. */
static bool normalize(struct partition *p)
{
	size_t n = 0;

	if (p->n == 0)
		return false;
	qsort(p->iv, p->n, sizeof(*p->iv), cmp_lo);
	if (p->iv[0].lo != 0 || p->iv[p->n - 1].hi != UINT32_MAX)
		return false;
	for (size_t i = 0; i < p->n; i++) {
		if (p->iv[i].lo > p->iv[i].hi || (i > 0 && p->iv[i].lo != p->iv[i - 1].hi + 1))
			return false;
		if (n > 0 && same_outcome(&p->iv[n - 1].o, &p->iv[i].o))
			p->iv[n - 1].hi = p->iv[i].hi;
		else
			p->iv[n++] = p->iv[i];
	}
	p->n = n;
	return true;
}

static bool same_partition(const struct partition *a, const struct partition *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->iv[i].lo != b->iv[i].lo || !same_outcome(&a->iv[i].o, &b->iv[i].o))
			return false;
	return true;
}

/* Only the accumulator: no scratch memory, no X register (what the copied rest of the
 * program starts with is then only what it loads itself). */
static bool accumulator_only(const struct sock_filter *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint16_t c = p[i].code;
		switch (BPF_CLASS(c)) {
		case BPF_LD:
			if (c != (BPF_LD | BPF_W | BPF_ABS) && c != (BPF_LD | BPF_IMM) &&
			    c != (BPF_LD | BPF_W | BPF_LEN))
				return false;
			break;
		case BPF_ALU:
		case BPF_JMP:
			if (BPF_SRC(c) == BPF_X)
				return false;
			break;
		case BPF_RET:
			break;
		default: /* LDX, ST, STX, MISC */
			return false;
		}
	}
	return true;
}

/* Mark in in_rest what the rest of the program can reach from pc. */
static bool mark(const struct sock_filter *p, size_t len, size_t pc, bool *in_rest)
{
	while (pc < len && !in_rest[pc]) {
		uint16_t c = p[pc].code;
		in_rest[pc] = true;
		if (BPF_CLASS(c) == BPF_RET)
			return true;
		if (c == (BPF_JMP | BPF_JA)) {
			pc += 1 + (size_t)p[pc].k;
		} else if (BPF_CLASS(c) == BPF_JMP) {
			if (!mark(p, len, pc + 1 + p[pc].jt, in_rest))
				return false;
			pc += 1 + p[pc].jf;
		} else {
			pc++;
		}
	}
	return pc < len;
}

/* ---- writing the program ---- */

struct emit {
	struct sock_filter *v;
	size_t n, cap;
	const size_t *rest_at; /* original index -> index in the output */
};

static void put(struct emit *e, struct sock_filter f)
{
	if (e->n == e->cap) /* the sizes computed first and what is written disagree */
		abort();
	e->v[e->n++] = f;
}

/* A search is a tree of `jge N` (N: the first number of the right half). Its lower levels
 * are blocks of at most BLOCK instructions: the comparisons, then one instruction per
 * distinct answer of the block (a return, or a jump to the rest) that every comparison
 * above such a leaf jumps to, all within a conditional jump's reach. The levels above a
 * block put the left half after the comparison, then the right half (a `ja` when the left
 * half is beyond reach). */
#define BLOCK (MAX_JUMP + 1)

static size_t distinct(const struct interval *iv, size_t n, const struct interval **first)
{
	size_t d = 0;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < d && !same_outcome(&first[j]->o, &iv[i].o))
			j++;
		if (j == d)
			first[d++] = &iv[i];
	}
	return d;
}

static size_t block_size(const struct interval *iv, size_t n)
{
	const struct interval *first[BLOCK];
	if (n > BLOCK)
		return SIZE_MAX;
	return n - 1 + distinct(iv, n, first);
}

static size_t tree_size(const struct interval *iv, size_t n)
{
	size_t b = block_size(iv, n), left, right;
	if (b <= BLOCK)
		return b;
	left = tree_size(iv, n / 2);
	right = tree_size(iv + n / 2, n - n / 2);
	return 1 + (left > MAX_JUMP) + left + right;
}

static void put_answer(struct emit *e, const struct outcome *o)
{
	if (o->end == END_RET)
		put(e, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, o->v));
	else
		put(e, (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA,
						    (uint32_t)(e->rest_at[o->v] - e->n - 1)));
}

/* The comparisons of a block over iv[0, n), n > 1; its answers start at pool. */
static void put_block_node(struct emit *e, const struct interval *iv, size_t n, size_t pool,
			   const struct interval *const *answers)
{
	size_t at = e->n, target[2];
	const struct interval *half[2] = {iv, iv + n / 2};
	size_t len[2] = {n / 2, n - n / 2};

	put(e, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, iv[n / 2].lo, 0, 0));
	for (int h = 0; h < 2; h++) {
		if (len[h] > 1) {
			target[h] = e->n;
			put_block_node(e, half[h], len[h], pool, answers);
		} else {
			size_t j = 0;
			while (!same_outcome(&answers[j]->o, &half[h]->o))
				j++;
			target[h] = pool + j;
		}
	}
	e->v[at].jf = (uint8_t)(target[0] - at - 1);
	e->v[at].jt = (uint8_t)(target[1] - at - 1);
}

static void put_tree(struct emit *e, const struct interval *iv, size_t n)
{
	const struct interval *answers[BLOCK];
	size_t left;

	if (block_size(iv, n) <= BLOCK) {
		size_t d = distinct(iv, n, answers);
		/* n - 1 comparisons (one per inner node), then the answers */
		size_t pool = e->n + n - 1;
		if (n > 1)
			put_block_node(e, iv, n, pool, answers);
		if (e->n != pool)
			abort();
		for (size_t j = 0; j < d; j++)
			put_answer(e, &answers[j]->o);
		return;
	}
	left = tree_size(iv, n / 2);
	if (left <= MAX_JUMP) {
		put(e, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, iv[n / 2].lo,
						    (uint8_t)left, 0));
	} else {
		put(e, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, iv[n / 2].lo, 0, 1));
		put(e, (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)left));
	}
	put_tree(e, iv, n / 2);
	put_tree(e, iv + n / 2, n - n / 2);
}

/* One architecture's search: the number loaded first, unless one answer covers all. */
static size_t search_size(const struct partition *p)
{
	return p->n == 1 ? 1 : 1 + tree_size(p->iv, p->n);
}

static void put_search(struct emit *e, const struct partition *p)
{
	if (p->n > 1)
		put(e, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_NR));
	put_tree(e, p->iv, p->n);
}

/* ---- checking the result ---- */

/* Classic BPF as seccomp runs it, for the instructions accumulator_only() lets through and
 * what this file writes; false for anything else. (The unit test has an interpreter of its
 * own, written apart, so that a misreading of cBPF here cannot hide itself there.) */
static bool run(const struct sock_filter *p, size_t len, const struct seccomp_data *d,
		uint32_t *ret)
{
	uint32_t a = 0;

	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *f = &p[pc];
		uint32_t k = f->k;
		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k % 4 || k >= sizeof(*d))
				return false;
			memcpy(&a, (const char *)d + k, sizeof(a));
			continue;
		case BPF_LD | BPF_IMM:
			a = k;
			continue;
		case BPF_LD | BPF_W | BPF_LEN:
			a = sizeof(*d);
			continue;
		case BPF_ALU | BPF_ADD | BPF_K:
			a += k;
			continue;
		case BPF_ALU | BPF_SUB | BPF_K:
			a -= k;
			continue;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= k;
			continue;
		case BPF_ALU | BPF_OR | BPF_K:
			a |= k;
			continue;
		case BPF_ALU | BPF_XOR | BPF_K:
			a ^= k;
			continue;
		case BPF_ALU | BPF_LSH | BPF_K:
			a = k < 32 ? a << k : 0;
			continue;
		case BPF_ALU | BPF_RSH | BPF_K:
			a = k < 32 ? a >> k : 0;
			continue;
		case BPF_JMP | BPF_JA:
			pc += k;
			continue;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += holds(BPF_OP(f->code), a, k) ? f->jt : f->jf;
			continue;
		case BPF_RET | BPF_K:
			*ret = k;
			return true;
		case BPF_RET | BPF_A:
			*ret = a;
			return true;
		default:
			return false;
		}
	}
	return false;
}

/* Both programs answer alike at both ends of every interval, for every architecture they
 * tell apart and one they do not, with arguments of all zeros, all ones and a mix. */
static bool agree(const struct sock_filter *a, size_t a_len, const struct sock_filter *b,
		  size_t b_len, const uint32_t *archs, size_t n_archs,
		  const struct partition *parts)
{
	static const uint64_t args[] = {0, UINT64_MAX, 0x8000000100000002ULL};
	uint32_t other = 0;

	while (listed(archs, n_archs, other))
		other++;
	for (size_t k = 0; k <= n_archs; k++) {
		const struct partition *p = &parts[k];
		for (size_t i = 0; i < p->n; i++)
			for (size_t j = 0; j < ARRAY_SIZE(args) * 2; j++) {
				struct seccomp_data d = {
				    .nr = (int)(j % 2 ? p->iv[i].hi : p->iv[i].lo),
				    .arch = k ? archs[k - 1] : other,
				    .instruction_pointer = args[j / 2],
				};
				uint32_t ra, rb;
				for (size_t x = 0; x < 6; x++)
					d.args[x] = args[j / 2];
				if (!run(a, a_len, &d, &ra) || !run(b, b_len, &d, &rb) || ra != rb)
					return false;
			}
	}
	return true;
}

int ward_seccomp_tree(const struct sock_filter *prog, size_t len, struct sock_filter **out,
		      size_t *out_len)
{
	struct partition parts[MAX_ARCHS + 1] = {0}; /* [0]: an unknown arch, [i]: archs[i-1] */
	uint32_t archs[MAX_ARCHS];
	size_t n_archs = 0, total, n_keep = 0;
	cleanup_free bool *rest = NULL;
	cleanup_free size_t *rest_at = NULL;
	bool keep[MAX_ARCHS] = {false};
	struct emit e = {0};
	int rc = -1;

	if (len == 0 || len > BPF_MAXINSNS || !accumulator_only(prog, len))
		return -1;
	/* the walk without an arch finds which ones the program tells apart */
	for (size_t k = 0; k <= n_archs; k++) {
		struct walk w = {.p = prog,
				 .len = len,
				 .arch_known = k > 0,
				 .arch = k ? archs[k - 1] : 0,
				 .out = &parts[k],
				 .archs = archs,
				 .n_archs = &n_archs};
		walk(&w, 0, ACC_VALUE, 0, 0, UINT32_MAX);
		if (w.fail || !normalize(&parts[k]))
			goto out;
	}

	/* an arch answered as the unknown ones are needs no search of its own */
	for (size_t k = 0; k < n_archs; k++) {
		keep[k] = !same_partition(&parts[k + 1], &parts[0]);
		n_keep += keep[k];
	}
	/* the rest of the program that the searches end in */
	rest = xcalloc(len, sizeof(*rest));
	for (size_t k = 0; k <= n_archs; k++) {
		if (k > 0 && !keep[k - 1])
			continue;
		for (size_t i = 0; i < parts[k].n; i++)
			if (parts[k].iv[i].o.end == END_REST &&
			    !mark(prog, len, parts[k].iv[i].o.v, rest))
				goto out;
	}
	total = n_keep ? 1 + 2 * n_keep : 0; /* ld arch; per arch: jeq, ja */
	for (size_t k = 0; k <= n_archs; k++)
		if (k == 0 || keep[k - 1])
			total += search_size(&parts[k]);
	rest_at = xcalloc(len, sizeof(*rest_at));
	for (size_t i = 0; i < len; i++)
		if (rest[i])
			rest_at[i] = total++;
	if (total > BPF_MAXINSNS)
		goto out;

	e.v = xcalloc(total, sizeof(*e.v));
	e.cap = total;
	e.rest_at = rest_at;
	if (n_keep) {
		size_t at = 1 + 2 * n_keep + search_size(&parts[0]);
		put(&e, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, OFF_ARCH));
		for (size_t k = 0; k < n_archs; k++) {
			if (!keep[k])
				continue;
			put(&e, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, archs[k], 0,
							     1));
			put(&e, (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA,
							     (uint32_t)(at - e.n - 1)));
			at += search_size(&parts[k + 1]);
		}
	}
	put_search(&e, &parts[0]);
	for (size_t k = 0; k < n_archs; k++)
		if (keep[k])
			put_search(&e, &parts[k + 1]);
	/* the rest, as it was but nearer: a jump only shortens */
	for (size_t i = 0; i < len; i++) {
		struct sock_filter f = prog[i];
		if (!rest[i])
			continue;
		if (f.code == (BPF_JMP | BPF_JA)) {
			f.k = (uint32_t)(rest_at[i + 1 + f.k] - rest_at[i] - 1);
		} else if (BPF_CLASS(f.code) == BPF_JMP) {
			f.jt = (uint8_t)(rest_at[i + 1 + f.jt] - rest_at[i] - 1);
			f.jf = (uint8_t)(rest_at[i + 1 + f.jf] - rest_at[i] - 1);
		}
		put(&e, f);
	}
	if (e.n != total || !agree(prog, len, e.v, e.n, archs, n_archs, parts))
		goto out;
	*out = steal_ptr(e.v);
	*out_len = e.n;
	rc = 0;
out:
	free(e.v);
	for (size_t k = 0; k <= MAX_ARCHS; k++)
		free(parts[k].iv);
	return rc;
}
