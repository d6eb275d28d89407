/* Task events to containerd (reference: /work/shared/reference/containerd-shim.md §3.2).
 *
 * Every event is packed into google.protobuf.Any (type_url = the message's proto full name,
 * e.g. "containerd.events.TaskCreate") at publish time, stamped with the current time and
 * queued; one publisher thread sends the queue in order as
 * containerd.services.events.ttrpc.v1.Events/Forward(ForwardRequest{Envelope{timestamp,
 * namespace, topic, event}}) on $TTRPC_ADDRESS, metadata containerd-namespace-ttrpc = <ns>,
 * over one connection kept open (reopened on error). A failed send is retried
 * (SHIM_EVENTS_ATTEMPTS tries, backoff from SHIM_EVENTS_BACKOFF_MS doubling); then the event
 * goes through `<publish_binary> --address <address> publish --topic T --namespace NS` with the
 * Any bytes on stdin, as containerd's v1 shims did. After a fallback, later events try the
 * socket once before falling back, so a dead containerd costs one connect() per event. Order
 * is kept throughout: one event is finished (delivered, refused or dropped) before the next.
 *
 * Publishing never blocks the caller beyond a malloc and a mutex; call it from any thread.
 * The fallback child is reaped by pid: a SIGCHLD handler doing waitpid(-1) may reap it
 * first (then its status is unknown, which is harmless); it must ignore pids it did not
 * start. */
#ifndef WARD_SHIM_EVENTS_H
#define WARD_SHIM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <protobuf-c/protobuf-c.h>

#include "options.h"

#define SHIM_EVENTS_SERVICE	"containerd.services.events.ttrpc.v1.Events"
#define SHIM_EVENTS_METHOD	"Forward"
#define SHIM_EVENTS_NS_KEY	"containerd-namespace-ttrpc"
#define SHIM_EVENTS_ATTEMPTS	5     /* Forward tries per event before the fallback */
#define SHIM_EVENTS_BACKOFF_MS	100   /* sleep after the first failed try, doubled each time */
#define SHIM_EVENTS_CALL_MS	5000  /* per Forward call, as the Go publisher */
#define SHIM_EVENTS_PUBLISH_MS	10000 /* the publish binary is killed after this */
#define SHIM_DEFAULT_TTRPC_ADDR "/run/containerd/containerd.sock.ttrpc"

#define SHIM_TOPIC_TASK_CREATE	     "/tasks/create"
#define SHIM_TOPIC_TASK_START	     "/tasks/start"
#define SHIM_TOPIC_TASK_EXIT	     "/tasks/exit"
#define SHIM_TOPIC_TASK_DELETE	     "/tasks/delete"
#define SHIM_TOPIC_TASK_EXEC_ADDED   "/tasks/exec-added"
#define SHIM_TOPIC_TASK_EXEC_STARTED "/tasks/exec-started"
#define SHIM_TOPIC_TASK_PAUSED	     "/tasks/paused"
#define SHIM_TOPIC_TASK_RESUMED	     "/tasks/resumed"
#define SHIM_TOPIC_TASK_CHECKPOINTED "/tasks/checkpointed"
#define SHIM_TOPIC_TASK_OOM	     "/tasks/oom"

/* Remember o->namespace, the ttrpc address (o->ttrpc_address, else $TTRPC_ADDRESS, else
 * SHIM_DEFAULT_TTRPC_ADDR), o->publish_binary and o->address (strings are copied), and start
 * the publisher thread. Returns 0, or -1 (logged) when already running or the thread cannot
 * start. May be called again after shim_events_shutdown. */
int shim_events_init(const struct shim_opts *o);

/* Queue `event` (packed now; the caller keeps ownership) for `topic`. Returns 0, or -1
 * (logged) when not initialized or shutting down. */
int shim_event_publish(const char *topic, const ProtobufCMessage *event);

/* Wait until every queued event is finished, at most timeout_ms (< 0: no limit). True when
 * the queue drained. */
bool shim_events_flush(int timeout_ms);

/* Flush (at most timeout_ms), then stop the publisher thread and forget the options. Events
 * still queued after the timeout are dropped (logged). Call before the shim exits. */
void shim_events_shutdown(int timeout_ms);

/* Counters since init (tests, debug logs). */
struct shim_events_stats {
	uint64_t forwarded; /* accepted by Forward */
	uint64_t published; /* handed to the publish binary, which exited 0 */
	uint64_t dropped;   /* refused by containerd, or every way failed */
};
void shim_events_get_stats(struct shim_events_stats *st);

/* ---- OOM kills (cgroup v2 memory.events) ----
 * cgroup_path: the container's cgroup directory (e.g. /sys/fs/cgroup/ward/ctr). */

/* An inotify fd (O_NONBLOCK|O_CLOEXEC, the caller closes it) watching
 * <cgroup_path>/memory.events; *last = its current oom_kill count. Register the fd on the
 * loop; when readable, call shim_oom_drain(fd) then shim_oom_check. Returns -1 on error:
 * errno ENOENT (no memory controller in that cgroup v2 tree, as on hybrid hosts) with one
 * debug line, anything else with a warning. */
int shim_oom_fd(const char *cgroup_path, uint64_t *last);
/* Read every pending inotify event from fd. True when the watch was removed (IN_IGNORED:
 * the cgroup is gone): unwatch and close the fd then. */
bool shim_oom_drain(int fd);
/* True when oom_kill in <cgroup_path>/memory.events is now above *last (then *last is
 * updated): publish a containerd.events.TaskOOM. False when unchanged or unreadable. */
bool shim_oom_check(const char *cgroup_path, uint64_t *last);
/* oom_kill from memory.events text (0 when absent). */
uint64_t shim_oom_parse(const char *memory_events);

#endif
