/* Statistics of a cgroup v2 directory in runc's `events` shape (libcontainer/types). */
#ifndef WARD_CGROUP_STATS_H
#define WARD_CGROUP_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

/* The "data" object of a runc stats event, as JSON text (malloc'd):
 *   cpu      from cpu.stat (usage always; throttling with the cpu controller),
 *   memory   from memory.current/max/peak/events/stat, swap from memory.swap.* (reported
 *            as memory+swap, as runc does for v1 compatibility),
 *   pids     from pids.current/max, blkio from io.stat, hugetlb from hugetlb.<size>.*.
 * A controller that is not enabled in the cgroup leaves its object out. Limits of "max"
 * are 18446744073709551615 for memory (as runc) and left out for pids. */
char *ward_cgroup_stats_json(const char *path, struct ward_err *err);

/* memory.events oom_kill of the cgroup; -1 when the memory controller is not there. */
int ward_cgroup_oom_kills(const char *path, uint64_t *count);

/* One figure of the cgroup open at dfd, for ward metrics: the number in file (key NULL;
 * "max" is not a figure) or the "key value" line of a keyed file (cpu.stat, memory.events).
 * false when the file or the key is not there. */
bool ward_cgroup_stat_value(int dfd, const char *file, const char *key, uint64_t *v);
/* The number in file (as ward_cgroup_stat_value), with "max" read as UINT64_MAX (and
 * *is_max set). false when the file is not there or malformed. */
bool ward_cgroup_u64(int dfd, const char *file, uint64_t *v, bool *is_max);
/* The value of the "key value" line of keyed-file text (cpu.stat, memory.stat, ...). */
bool ward_cgroup_keyed(const char *text, const char *key, uint64_t *v);
/* io.stat rbytes and wbytes summed over devices; false when there is no io.stat. */
bool ward_cgroup_io_bytes(int dfd, uint64_t *rbytes, uint64_t *wbytes);

#endif
