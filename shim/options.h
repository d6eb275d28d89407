/* containerd-shim-ward-v2's options, parsed in one place: the command line and environment
 * containerd starts the shim with, what containerd writes on `start`'s stdin (a runtime
 * options Any, or 2.3+'s BootstrapParams), and the runtime options of CreateTaskRequest
 * (CRI's runtimeoptions.v1.Options). Reference: /work/shared/reference/containerd-shim.md §1. */
#ifndef WARD_SHIM_OPTIONS_H
#define WARD_SHIM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "google/protobuf/any.pb-c.h"

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

/* The ward --config directory the runtime options name (CRI:
 * runtimeoptions.v1.Options{config_path}: a file's directory, or the directory itself), or
 * NULL (no options, another type, malformed). Malloc'd. */
char *shim_options_config_dir(const Google__Protobuf__Any *options);

/* ward's --root for a namespace: SHIM_WARD_ROOT_DIR "/" ns (malloc'd). */
char *shim_ward_root(const char *ns);
/* The ward binary: "ward" beside this executable if there is one, else "ward" (PATH). */
char *shim_ward_binary(void);

#endif
