/* containerd-shim-ward-v2 bootstrap: the command line containerd runs (start, delete, serve),
 * the per-pod socket, the daemon that serves it. The ttrpc server itself is shim_serve()
 * (serve.h). Reference: /work/shared/reference/containerd-shim.md §1. */
#ifndef WARD_SHIM_BOOTSTRAP_H
#define WARD_SHIM_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Where per-pod shim sockets live (hard-coded in containerd 1.6/1.7). */
#define SHIM_SOCKET_DIR "/run/containerd/s"
/* ward's state root for a namespace: SHIM_WARD_ROOT_DIR "/" <namespace>. */
#define SHIM_WARD_ROOT_DIR "/run/containerd/ward"
/* The listening socket handed from `start` to the serving process. */
#define SHIM_LISTEN_FD 3
/* The annotation that groups the containers of one pod into one shim. */
#define SHIM_SANDBOX_ANNOTATION "io.kubernetes.cri.sandbox-id"

enum shim_action { SHIM_SERVE, SHIM_START, SHIM_DELETE, SHIM_VERSION, SHIM_INFO };

/* Flags (Go flag style) and environment. Strings point into argv/environ. */
struct shim_opts {
	enum shim_action action;
	const char *namespace;	    /* -namespace, else $NAMESPACE */
	const char *address;	    /* -address: containerd's gRPC socket */
	const char *publish_binary; /* -publish-binary: containerd, for `publish` */
	const char *id;		    /* -id: the container */
	const char *bundle; /* -bundle, else the working directory (set by shim_parse_args) */
	const char *socket; /* -socket (unused by v2 containerd) */
	bool debug;	    /* -debug */
	const char *ttrpc_address; /* $TTRPC_ADDRESS: containerd's ttrpc socket (events) */
	const char *grpc_address;  /* $GRPC_ADDRESS (1.7+) */
	int max_shim_version;	   /* $MAX_SHIM_VERSION, 0 if absent */
	int action_index;	   /* argv index of the action word (argc when none) */
	/* Serving process only: the socket path the listener is bound to (from getsockname). */
	char socket_path[108];
};

/* Parse argv (flags, then the action). Unknown flags are ignored, as the reference asks.
 * Checks what every action needs (namespace, id). bundle_buf holds the cwd when -bundle is
 * absent. */
int shim_parse_args(int argc, char **argv, struct shim_opts *o, char *bundle_buf, size_t cap,
		    struct ward_err *err);

/* The group a container belongs to, from its bundle's config.json text: the sandbox-id
 * annotation, else the container id. Returns a malloc'd string. */
char *shim_group_id(const char *config_json, size_t len, const char *id, struct ward_err *err);

/* SHIM_SOCKET_DIR "/" hex(sha256(<address>/<namespace>/<group>)) into out. */
int shim_socket_path(const char *address, const char *ns, const char *group, char *out, size_t cap,
		     struct ward_err *err);

/* `start`: find or start the group's serving process, write <bundle>/address, print the
 * address on stdout. self_argv is re-executed (without the action) as the daemon. */
int shim_start(const struct shim_opts *o, char **self_argv, struct ward_err *err);

/* `delete`: force-delete the container in ward, unmount <bundle>/rootfs, remove
 * <bundle>/address, print a DeleteResponse on stdout. Problems are warnings (stderr):
 * delete is idempotent. */
int shim_delete(const struct shim_opts *o, struct ward_err *err);

/* The serving process (no action): subreaper, log fifo, SIGPIPE ignored, then
 * shim_serve(SHIM_LISTEN_FD, o); unlinks the socket when that returns. */
int shim_daemon(struct shim_opts *o, struct ward_err *err);

/* ward's --root for a namespace: SHIM_WARD_ROOT_DIR "/" ns (malloc'd). */
char *shim_ward_root(const char *ns);
/* The ward binary: "ward" beside this executable if there is one, else "ward" (PATH). */
char *shim_ward_binary(void);

/* Encode containerd.task.v2.DeleteResponse{pid=1, exit_status=2, exited_at=3 Timestamp}.
 * Returns the length written (<= cap), or 0 if cap is too small (40 bytes always do). */
size_t shim_encode_delete_response(uint8_t *buf, size_t cap, uint32_t pid, uint32_t exit_status,
				   int64_t sec, int32_t nsec);

#endif
