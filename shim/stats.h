/* Task.Stats in the shim process: a container's cgroup v2 files read directly (the parser is
 * runtime/lib/cgroup_stats.c) into io.containerd.cgroups.v2.Metrics, no `ward` child. */
#ifndef WARD_SHIM_STATS_H
#define WARD_SHIM_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "state.h"

#define SHIM_METRICS_TYPE_URL "io.containerd.cgroups.v2.Metrics"

/* The state of container `id` under ward_root, read into *st under the container's shared
 * lock, as `ward state` reads it: the state dir's fd (the lock; close it when done with *st,
 * and ward_state_clear(st)), or -1 with err set and *st cleared. */
int shim_state_open(const char *ward_root, const char *id, struct ward_state *st,
		    struct ward_err *err);

/* The cgroup of container `id` as ward recorded it in its state under ward_root (the
 * state read under the container's shared lock, as `ward events --stats` does). Malloc'd. */
char *shim_stats_cgroup(const char *ward_root, const char *id, struct ward_err *err);

/* Metrics{pids, cpu, memory} of the cgroup v2 directory `cgroup`, packed (malloc'd, its
 * length in *len). Files of controllers that are not enabled there read as zero, as do
 * keys the kernel does not have; memory limits of "max" are UINT64_MAX, a pids limit of
 * "max" is 0. Fails only when the directory cannot be opened. */
uint8_t *shim_stats_metrics(const char *cgroup, size_t *len, struct ward_err *err);

#endif
