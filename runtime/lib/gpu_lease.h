/* The GPU lease ledger: which container of which tenant holds which GPU, and whether a GPU
 * is clean. One JSON file per host, <lib_dir>/gpu/ledger.json (lib_dir: ward.json
 * "lib_dir", where the ID pool lives too), rewritten atomically (write a temporary file,
 * fsync, rename) under an exclusive flock on <lib_dir>/gpu/ledger.lock, so concurrent
 * creates never lease one GPU twice, whatever state root (--root) each uses. A holder is a
 * container of one state root. (Before, the ledger was <state root>/@gpu/ledger.json, one
 * per state root: such a file is not read or migrated.)
 *
 * States of a GPU (by uuid; a GPU absent from the ledger is free):
 *   free         no holder, memory known clean
 *   leased       held by one or more containers, all of one tenant
 *   dirty        its last holder is gone, memory not yet wiped
 *   wiping       a wipe is running (pid recorded; a dead wiper means dirty again)
 *   quarantined  a wipe failed or found the GPU busy: refused to every tenant until an
 *                admin runs `ward gpu release UUID` (a new wipe, after resetting the GPU;
 *                --force frees it unwiped)
 * Only free, or leased by the same tenant, can be leased. Anything else is refused with
 * the GPU, the tenant and the reason in the message.
 *
 * Counters kept per GPU for metrics: lease seconds (closed leases), wipes, wipe failures,
 * bytes wiped, wipe seconds; and the last wipe's result. */
#ifndef WARD_GPU_LEASE_H
#define WARD_GPU_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

enum ward_gpu_state {
	WARD_GPU_FREE,
	WARD_GPU_LEASED,
	WARD_GPU_DIRTY,
	WARD_GPU_WIPING,
	WARD_GPU_QUARANTINED,
};
const char *ward_gpu_state_name(enum ward_gpu_state s); /* "free", "leased", ... */

struct ward_gpu_holder {
	char *root;	 /* the container's state root (absolute) */
	char *container; /* container id */
	char *pod;	 /* "namespace/name" from CRI annotations, or NULL */
	int64_t since;	 /* unix seconds */
};

struct ward_gpu_wipe_result {
	bool ok;
	uint64_t bytes; /* bytes zeroed and verified */
	uint64_t total; /* device memory size */
	double seconds; /* wall time of allocate + fill + verify */
	char *reason;	/* why it failed (NULL when ok) */
};

struct ward_gpu_entry {
	char *uuid;
	enum ward_gpu_state state;
	char *tenant; /* leased: the holders' tenant; otherwise the last one (NULL if none) */
	struct ward_gpu_holder *holders;
	size_t n_holders;
	pid_t wiper;	 /* wiping: the wiping process (0 otherwise) */
	char *reason;	 /* quarantined: why */
	int64_t changed; /* unix seconds of the last state change */
	/* counters */
	uint64_t lease_seconds, wipes, wipe_failures, wipe_bytes;
	double wipe_seconds;
	struct ward_gpu_wipe_result last_wipe; /* last_wipe.total == 0: none yet */
};

struct ward_gpu_ledger {
	struct ward_gpu_entry *e;
	size_t n;
};

/* Every operation below opens <lib_dir>/gpu (lib_dir created 0700 if missing, as the ID pool
 * does, gpu created 0700; refused if it is a symlink, not owned by root or us, or writable
 * by group or others), locks, reads, changes, writes and unlocks.
 * A ledger.json that does not parse or does not make sense fails every operation with an
 * error naming the file (errnum EINVAL); it is never reset. Refusals because of a GPU's
 * state have errnum EBUSY. */

/* Lease uuids[0..n) to container of tenant. All or nothing: if any GPU cannot be leased,
 * no lease changes and the error names the first such GPU:
 *   `GPU "GPU-...": leased by tenant "a" (container c1)` (or `(containers c1, c2 ...)`),
 *   `GPU "GPU-...": dirty: not wiped since tenant "a" used it`,
 *   `GPU "GPU-...": being wiped`,
 *   `GPU "GPU-...": quarantined: <reason>`.
 * The holder is the container of state_root (absolute). A holder whose container no longer
 * exists is dropped first (and that is written even if the lease is then refused); if that
 * empties the GPU it becomes dirty. A container exists while <root>/<id>/state.json exists
 * (root: the holder's state root), while <root>/<id> is locked (a create under way:
 * ward_state_create holds LOCK_EX), and for 120 s after it leased (a create that leases
 * before making its state directory). Leasing again to a container that already holds the
 * GPU is a no-op. */
int ward_gpu_lease(const char *lib_dir, const char *state_root, const char *tenant,
		   const char *container, const char *pod, char *const *uuids, size_t n,
		   struct ward_err *err);

/* The container (of state_root) gives up every GPU it holds. Each GPU it was the last holder of
 * becomes dirty, or free when dirty is false (a create that failed before the container ran
 * anything). *released gets those GPUs' uuids (NULL-terminated, may be
 * empty); NULL if the caller does not care. Not holding anything is not an error. */
int ward_gpu_unlease(const char *lib_dir, const char *state_root, const char *container, bool dirty,
		     char ***released, struct ward_err *err);

/* dirty or quarantined (an admin's new wipe: `ward gpu release`) -> wiping (by pid). Fails
 * if the GPU is neither (someone else is wiping it, or it was leased again: that cannot
 * happen to a dirty GPU, but check), or if pid does not
 * exist (ESRCH). The pid and its start time are recorded: once that process is gone the
 * GPU reads as dirty again (and another wipe_begin may take over), so pass the process
 * that lives until wipe_end. */
int ward_gpu_wipe_begin(const char *lib_dir, const char *uuid, pid_t pid, struct ward_err *err);
/* wiping -> free (r->ok) or quarantined (reason = r->reason, "wipe failed" if NULL);
 * wipes, wipe_bytes, wipe_seconds, wipe_failures (on failure) and last_wipe updated. Only
 * checks that the GPU is wiping (not whether the recorded wiper still lives). */
int ward_gpu_wipe_end(const char *lib_dir, const char *uuid, const struct ward_gpu_wipe_result *r,
		      struct ward_err *err);
/* quarantined or dirty (or wiping with a dead wiper) -> free: the admin has reset the GPU.
 * Refused while leased or while a live wiper runs. A free GPU: nothing to do, 0. */
int ward_gpu_release(const char *lib_dir, const char *uuid, struct ward_err *err);

/* A snapshot (read under a shared lock; wiping entries whose wiper is dead read as dirty
 * with wiper 0). No ledger yet (not even <lib_dir>) is an empty ledger; creates nothing.
 * Free GPUs that were leased once stay listed, with their counters. */
int ward_gpu_ledger_read(const char *lib_dir, struct ward_gpu_ledger *out, struct ward_err *err);
void ward_gpu_ledger_clear(struct ward_gpu_ledger *l);
const struct ward_gpu_entry *ward_gpu_ledger_find(const struct ward_gpu_ledger *l,
						  const char *uuid);

#endif
