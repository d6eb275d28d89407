/* Wiping a GPU's memory through the CUDA driver API, loaded at run time from libcuda.so.1
 * with our own prototypes (no CUDA headers or toolkit at build time).
 *
 * ward_gpu_wipe runs the scrub in a child process (the only process that ever loads
 * libcuda), with a fixed environment (CUDA_VISIBLE_DEVICES=<uuid>, nothing else: no
 * LD_PRELOAD, no LD_LIBRARY_PATH), cwd "/", and reports back over a pipe. The child:
 *   cuInit(0); exactly one visible device; cuDeviceGetUuid(_v2) must equal uuid;
 *   retain and set its primary context; cuMemGetInfo_v2 (free, total);
 *   allocate free memory in chunks, 1 GiB first, halving on CUDA_ERROR_OUT_OF_MEMORY down
 *   to a 64 KiB floor; fill each with zeros (cuMemsetD32_v2); cuCtxSynchronize; read back
 *   samples (first, last and one random 64 KiB of each chunk) with cuMemcpyDtoH_v2 and
 *   check they are zero; free everything; release the primary context.
 * Success requires: every call succeeded, every sample zero, bytes wiped >= free at start
 * minus slack_bytes, and total minus free at start <= held_max (memory that is not free at
 * start is memory someone else holds: a process still on the GPU; our own primary context
 * takes a few hundred MiB on real GPUs, hence the default). The parent kills a child that
 * runs past timeout_s. The caller must be single-threaded (the child is forked, not exec'd).
 *
 * Before loading anything, busy_pids is checked: a host process with a file descriptor on
 * one of the GPU's device nodes (st_rdev match over <proc>/[0-9]*\/fd) means a process is
 * still on the GPU, and the wipe fails without touching the device. */
#ifndef WARD_GPU_WIPE_H
#define WARD_GPU_WIPE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

struct ward_wipe_opts {
	const char *libcuda;   /* dlopen name or absolute path ("libcuda.so.1") */
	const char *uuid;      /* "GPU-..." or "MIG-..." */
	const char *proc_root; /* for the busy check ("/proc") */
	const dev_t *rdevs;    /* the GPU's own device nodes (not nvidiactl/uvm) */
	size_t n_rdevs;
	unsigned timeout_s;   /* 0: 600 */
	uint64_t slack_bytes; /* 0: 64 MiB */
	uint64_t held_max;    /* 0: 1 GiB: allowed total - free at start (context overhead) */
};

struct ward_wipe_report {
	bool ok;
	uint64_t total;	     /* device memory, from cuMemGetInfo */
	uint64_t free_start; /* free at start */
	uint64_t bytes;	     /* bytes zeroed */
	uint64_t residue;    /* non-zero bytes seen in samples read before the memset */
	double seconds;	     /* allocate + memset + sync + verify */
	double gbps;	     /* bytes / seconds / 1e9 */
	pid_t busy_pid;	     /* > 0: the process found on the GPU */
	char reason[512];    /* why it failed */
};

/* 0 when the scrub ran to completion or was refused because a process is on the GPU
 * (report->ok says whether it succeeded, report->reason why not); -1 when it could not run
 * at all or did not finish: bad options, fork/pipe failure, timeout (the child is killed),
 * a child that died without a report (err says why; report->reason too; ok is false). */
int ward_gpu_wipe(const struct ward_wipe_opts *o, struct ward_wipe_report *report,
		  struct ward_err *err);

#endif
