/* Resources of an existing container: `update` (new limits, a new device program) and
 * `events` (runc-shaped stats and OOM events). */
#ifndef WARD_CONTAINER_RES_H
#define WARD_CONTAINER_RES_H

#include <stdbool.h>

#include "err.h"
#include "resources.h"

/* Apply LinuxResources (what `runc update -r` reads, parsed by
 * ward_resources_parse_update, or update's flags set on the struct) to a created, running
 * or paused container: memory.swap without memory.limit is taken against the current
 * memory.max (res->memory.limit is set to it), then ward_resources_check; then the cgroup
 * files of the fields given, and, when it has "devices", a new device program replacing
 * the old one (the defaults stay allowed). */
int ward_container_update(int rootfd, const char *id, struct ward_resources *res,
			  struct ward_err *err);

/* One line of output: the JSON of one event, without newline. A non-zero return stops. */
typedef int (*ward_event_fn)(const char *json, void *arg);

/* once: one {"type":"stats","id":ID,"data":{...}} and return. Else stats every
 * interval_ms and {"type":"oom","id":ID} whenever memory.events oom_kill grows, until the
 * container's init exits. */
int ward_container_events(int rootfd, const char *id, bool once, long interval_ms,
			  ward_event_fn emit, void *arg, struct ward_err *err);

#endif
