/* What a container asks for and which GPUs of the inventory that is (gpu_request.c). */
#ifndef WARD_GPU_REQUEST_H
#define WARD_GPU_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "gpu_types.h"

/* What a container asks for, from its config.json (pure parsing, no host access):
 *   1. CDI annotations "cdi.k8s.io/<anything>": comma lists of "nvidia.com/gpu=<name>"
 *      (name: uuid, index, "all", a MIG uuid); other vendors' kinds are errors;
 *   2. else linux.devices char entries with major 195 minor < 254 (containerd's CDI
 *      injection already applied; 254 is nvidia-modeset, 255 nvidiactl): "minor:<N>";
 *   3. else NVIDIA_VISIBLE_DEVICES in process.env: "all", "none", "void", "" (none) or a
 *      comma list of uuids / indexes / bus ids (empty entries skipped; anything else is
 *      kept as a ref and fails in ward_gpu_resolve). The last definition wins. No legacy
 *      default: CUDA_VERSION without NVIDIA_VISIBLE_DEVICES asks for nothing.
 * refs gets the references as written ("all" stays "all"; CDI "gpuN" becomes "N"),
 * NULL-terminated, never NULL after success (empty: no GPU). Several cdi.k8s.io/ keys are
 * read in sorted key order. compute: whether nvidia-uvm is wanted (NVIDIA_DRIVER_CAPABILITIES
 * unset, empty, "all" or containing "compute"; always with CDI and linux.devices). source:
 * the first "cdi.k8s.io/x", "linux.devices" or "NVIDIA_VISIBLE_DEVICES", for messages; NULL
 * when nothing asks for GPUs. Malformed values are errors naming the key; req is then empty. */
struct ward_gpu_request {
	char **refs;
	bool compute;
	char *source;
};
/* From the parsed config.json (a json_t * object): create's one parse. */
int ward_gpu_request_from_json(const void *spec, struct ward_gpu_request *req,
			       struct ward_err *err);
void ward_gpu_request_clear(struct ward_gpu_request *req);

/* Resolve a request against the inventory and the tenant's GPUs (tenant_gpus: uuids,
 * indexes or bus ids as written in the tenant file, NULL-terminated or NULL; those not on
 * this host are ignored). "all" = every GPU of the tenant present on this host, including
 * the MIG devices of its whole GPUs. "minor:N" names the whole GPU /dev/nvidiaN.
 * out: indexes into inv->gpus (malloc'd, NULL when n_out is 0; caller frees), in order of
 * first mention, no duplicates. A reference that names no GPU of this host, or one the
 * tenant does not own, is an error naming the GPU (its uuid when found), the tenant and the
 * reason (callers prefix req->source): `GPU "GPU-1234...": not assigned to tenant "a"`,
 * `GPU "7": no such GPU on this host`. A MIG device of the
 * tenant's whole GPU counts as the tenant's; owning a MIG device does not give its parent. */
int ward_gpu_resolve(const struct ward_gpu_inventory *inv, const struct ward_gpu_request *req,
		     const char *tenant, char *const *tenant_gpus, size_t **out, size_t *n_out,
		     struct ward_err *err);

#endif
