/* Device access control for cgroup v2: a BPF_PROG_TYPE_CGROUP_DEVICE program built from
 * linux.resources.devices, hand-assembled and loaded with bpf(2) (no libbpf), attached
 * to the container's cgroup with BPF_F_ALLOW_MULTI before the container's init runs
 * anything of the container (container.c: verified while stage 1 makes the namespaces,
 * attached before the init is told to go on).
 *
 * Semantics are cgroup v1's devices.allow/deny, as runc and crun implement them: no rule
 * matching means deny; for each access the process asks for (m, r, w) the LAST rule that
 * matches the device (type, major, minor; -1 = any) and names that access decides. After
 * the spec's rules ward always appends its default allow list (ward_bpfdev_defaults):
 * mknod of any node (opening one is what counts), /dev/null zero full random urandom tty,
 * /dev/console 5:1, /dev/ptmx 5:2 and /dev/pts/N 136:any; no tun/tap. */
#ifndef WARD_BPFDEV_H
#define WARD_BPFDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"

#define WARD_BPFDEV_ANY (-1)

enum { WARD_BPFDEV_MKNOD = 1, WARD_BPFDEV_READ = 2, WARD_BPFDEV_WRITE = 4 };

struct ward_bpfdev_rule {
	bool allow;
	char type;	 /* 'a' (char and block), 'c', 'b' */
	int64_t major;	 /* WARD_BPFDEV_ANY or 0..0xfff */
	int64_t minor;	 /* WARD_BPFDEV_ANY or 0..0xfffff */
	unsigned access; /* WARD_BPFDEV_MKNOD | READ | WRITE */
};

extern const struct ward_bpfdev_rule ward_bpfdev_defaults[];
extern const size_t ward_bpfdev_n_defaults;

/* linux.resources.devices of the parsed linux.resources object (NULL or JSON null: none)
 * -> rules (malloc'd; the defaults are not included); the typed parser (resources.h)
 * decodes linux.resources.devices with it. present is false when there is no "devices"
 * (update leaves the program alone then). */
int ward_bpfdev_rules_from(json_t *res, struct ward_bpfdev_rule **rules, size_t *n, bool *present,
			   struct ward_err *err);

/* What the program decides (the same evaluation, in C): for tests and explanations.
 * type 'c' or 'b', access a set of WARD_BPFDEV_*. Includes the defaults. */
bool ward_bpfdev_allows(const struct ward_bpfdev_rule *rules, size_t n, char type, uint32_t major,
			uint32_t minor, unsigned access);

/* The program's instructions (struct bpf_insn, malloc'd) for rules + defaults. */
int ward_bpfdev_build(const struct ward_bpfdev_rule *rules, size_t n, void **insns, size_t *n_insns,
		      struct ward_err *err);

/* Load (verify) the program for rules + defaults without attaching it: an fd. */
int ward_bpfdev_load(const struct ward_bpfdev_rule *rules, size_t n, struct ward_err *err);

/* Load the program for rules + defaults and attach it to the cgroup (an O_RDONLY directory
 * fd). Programs already attached there are replaced atomically: the new one takes the old
 * one's place (BPF_F_REPLACE) or, with several, is attached before they are detached, so
 * the cgroup is never without one. */
int ward_bpfdev_apply(int cgroup_fd, const struct ward_bpfdev_rule *rules, size_t n,
		      struct ward_err *err);

/* The halves of ward_bpfdev_apply, for a create that verifies the program while the
 * container's namespaces are being made and attaches it before the init runs anything of
 * the container (container.c): the instructions (ward_bpfdev_build), loading them (an
 * fd), and the atomic attach of a loaded program described above. */
int ward_bpfdev_load_insns(const void *insns, size_t n_insns, struct ward_err *err);
int ward_bpfdev_attach(int cgroup_fd, int prog_fd, struct ward_err *err);

/* Ids of the device programs attached to the cgroup (at most max), for tests and
 * diagnostics. Returns the count or -1. */
int ward_bpfdev_query(int cgroup_fd, uint32_t *ids, uint32_t max, struct ward_err *err);

#endif
