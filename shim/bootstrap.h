/* containerd-shim-ward-v2 bootstrap: the command line containerd runs (start, delete, serve),
 * the per-pod socket, the daemon that serves it. The ttrpc server itself is shim_serve()
 * (serve.h). Reference: /work/shared/reference/containerd-shim.md §1. */
#ifndef WARD_SHIM_BOOTSTRAP_H
#define WARD_SHIM_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Where per-pod shim sockets live (hard-coded in containerd 1.6-2.2; 2.3+ may send
 * BootstrapParams.socket_dir instead). */
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

/* <dir> "/" hex(sha256(<address>/<namespace>/<group>)) into out; dir NULL = SHIM_SOCKET_DIR. */
int shim_socket_path(const char *dir, const char *address, const char *ns, const char *group,
		     char *out, size_t cap, struct ward_err *err);

/* What containerd writes on `start`'s stdin (reference §1.2): 1.6-2.2 a google.protobuf.Any
 * of the runtime options (or nothing), 2.3+ a containerd.runtime.bootstrap.v1.BootstrapParams
 * {instance_id=1, namespace=2, log_level=3, containerd_version=4, containerd_ttrpc_address=5,
 * containerd_grpc_address=6, containerd_binary=7, repeated extensions=8 {Any value=1},
 * optional socket_dir=9}. Both decode as each other; as upstream (pkg/shim/compat.go) does,
 * the input is BootstrapParams when its fields 1 and 2 equal -id and -namespace. */
struct shim_start_input {
	bool bootstrap_params; /* BootstrapParams (2.3+); false: a legacy Any, or nothing */
	bool has_options;      /* an options Any: the legacy Any, or the first extension's */
	char *options_type_url;
	uint8_t *options;
	size_t options_len;
	/* BootstrapParams only (NULL when absent or empty) */
	char *log_level, *containerd_version, *ttrpc_address, *grpc_address, *containerd_binary,
	    *socket_dir;
};

/* Decode buf (len 0: nothing was sent). id/ns: the -id and -namespace flags. Fails on bytes
 * that are not a protobuf message. Free with shim_start_input_free. */
int shim_decode_start_input(const uint8_t *buf, size_t len, const char *id, const char *ns,
			    struct shim_start_input *in, struct ward_err *err);
void shim_start_input_free(struct shim_start_input *in);

/* The runtime name `-info` reports. */
#define SHIM_RUNTIME_NAME "io.containerd.ward.v2"
/* The type URL containerd registers for the OCI features struct (JSON-encoded in the Any):
 * typeurl.Register(&features.Features{}, "types.containerd.io", "opencontainers/runtime-spec",
 * major, "features", "Features") in containerd's runtime/typeurl.go (1.7+). */
#define SHIM_FEATURES_TYPE_URL "types.containerd.io/opencontainers/runtime-spec/1/features/Features"

/* Encode containerd.types.RuntimeInfo{name=1, version=2 RuntimeVersion{version=1,
 * revision=2}, options=3 Any, features=4 Any, annotations=5 map} (api/types/introspection.proto
 * in containerd 2.x; Debian's 1.6.20 sources do not ship it, so the field numbers are the
 * reference's). options: the raw Any bytes to echo (NULL: none); features_json: the OCI
 * features JSON (NULL: none) sent as Any{SHIM_FEATURES_TYPE_URL, json}; no annotations.
 * Returns a malloc'd buffer and its length in *len. */
uint8_t *shim_encode_runtime_info(const char *name, const char *version, const char *revision,
				  const uint8_t *options, size_t options_len,
				  const char *features_json, size_t features_len, size_t *len);

/* `-info`: read the options Any on stdin, print a RuntimeInfo with `ward features` in it. */
int shim_info(struct ward_err *err);

/* `start`: read stdin (shim_decode_start_input), find or start the group's serving process,
 * write <bundle>/address, print the address on stdout. self_argv is re-executed (without the
 * action) as the daemon. From BootstrapParams: containerd_ttrpc_address becomes the daemon's
 * $TTRPC_ADDRESS when that is unset, containerd_grpc_address stands in for an empty -address,
 * socket_dir replaces SHIM_SOCKET_DIR. */
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
