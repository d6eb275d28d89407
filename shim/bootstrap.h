/* containerd-shim-ward-v2 bootstrap: the command line containerd runs (start, delete, serve),
 * the per-pod socket, the daemon that serves it. The ttrpc server itself is shim_serve()
 * (serve.h). Reference: /work/shared/reference/containerd-shim.md §1. */
#ifndef WARD_SHIM_BOOTSTRAP_H
#define WARD_SHIM_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "options.h"

/* The group a container belongs to, from its bundle's config.json text: the sandbox-id
 * annotation, else the container id. Returns a malloc'd string. */
char *shim_group_id(const char *config_json, size_t len, const char *id, struct ward_err *err);

/* <dir> "/" hex(sha256(<address>/<namespace>/<group>)) into out; dir NULL = SHIM_SOCKET_DIR. */
int shim_socket_path(const char *dir, const char *address, const char *ns, const char *group,
		     char *out, size_t cap, struct ward_err *err);

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

/* Encode containerd.task.v2.DeleteResponse{pid=1, exit_status=2, exited_at=3 Timestamp}.
 * Returns the length written (<= cap), or 0 if cap is too small (40 bytes always do). */
size_t shim_encode_delete_response(uint8_t *buf, size_t cap, uint32_t pid, uint32_t exit_status,
				   int64_t sec, int32_t nsec);

#endif
