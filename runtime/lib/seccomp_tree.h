/* A compiled seccomp program re-encoded as one binary search over syscall numbers per
 * architecture, with the same answer for every input.
 *
 * libseccomp's program (and ward's ENOSYS prefix before it) compares the architecture and
 * the syscall number many times over: three architectures of the default profile make 1201
 * instructions, and the kernel's load (its BPF JIT, run when the init installs the filter)
 * costs in proportion. Most syscalls' answers do not depend on their arguments at all; for
 * those the answer is a function of (architecture, number) that changes at a few dozen
 * numbers, and a search over those intervals says it in a fraction of the instructions.
 *
 * How: the program is run symbolically, once per architecture it tells apart, over every
 * syscall number at once (a path per interval of numbers that takes the same branches).
 * Each path ends at a return, whose value is then that interval's answer, or at the first
 * load of an argument or the instruction pointer: that interval continues in the original
 * instructions from there (copied, with everything they can reach). Programs of any other
 * shape (scratch memory, the X register, arithmetic on the number or the architecture) are
 * left as they are. */
#ifndef WARD_SECCOMP_TREE_H
#define WARD_SECCOMP_TREE_H

#include <stddef.h>

struct sock_filter;

/* The re-encoded program in *out (malloc'd, *out_len instructions; not always fewer than
 * len: small programs can grow), or -1, prog then kept as it is: a shape this file does
 * not model, more than 16 architectures told apart, a walk over 2^20 instructions, a
 * result over BPF_MAXINSNS, or one that fails the spot check made before it is returned
 * (both programs run on the ends of every interval with three argument patterns: a
 * guard against a bug here, not a proof; the unit tests compare far more inputs). */
int ward_seccomp_tree(const struct sock_filter *prog, size_t len, struct sock_filter **out,
		      size_t *out_len);

#endif
