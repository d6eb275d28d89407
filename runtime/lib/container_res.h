/* Resources of an existing container: `update` (new limits, a new device program) and
 * `events` (runc-shaped stats and OOM events). */
#ifndef WARD_CONTAINER_RES_H
#define WARD_CONTAINER_RES_H

#include <stdbool.h>

#include "err.h"

/* Apply a LinuxResources JSON (what `runc update -r` reads) to a created, running or
 * paused container: the cgroup files of the fields given, and, when the JSON has
 * "devices", a new device program replacing the old one (the defaults stay allowed).
 * memory.swap without memory.limit is taken against the current memory.max. */
int ward_container_update(int rootfd, const char *id, const char *resources_json,
			  struct ward_err *err);

/* One line of output: the JSON of one event, without newline. A non-zero return stops. */
typedef int (*ward_event_fn)(const char *json, void *arg);

/* once: one {"type":"stats","id":ID,"data":{...}} and return. Else stats every
 * interval_ms and {"type":"oom","id":ID} whenever memory.events oom_kill grows, until the
 * container's init exits. */
int ward_container_events(int rootfd, const char *id, bool once, long interval_ms,
			  ward_event_fn emit, void *arg, struct ward_err *err);

#endif
