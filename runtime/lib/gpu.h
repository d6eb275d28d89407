/* NVIDIA GPUs on this host: the inventory (what exists, with which device nodes) and what
 * a container asks for. No NVML, no CUDA: everything comes from text files and device
 * nodes under configurable roots, so tests point them at fixtures.
 *
 *   <proc>/driver/nvidia/gpus/<bus>/information  "Model:", "GPU UUID:", "Bus Location:",
 *                                                "Device Minor:" (N of /dev/nvidiaN)
 *   <proc>/devices                               majors of "nvidia-uvm", "nvidia-caps"
 *                                                ("nvidia" or "nvidia-frontend" is 195)
 *   <proc>/driver/nvidia-caps/mig-minors         "gpu0/gi1/access 12", "gpu0/gi1/ci0/access 13"
 *   <cdi dirs>/NAME.json                         CDI specs of kind "nvidia.com/gpu": MIG
 *                                                devices (and optional library mounts)
 *   <dev>/nvidiactl, nvidia<N>, nvidia-uvm, nvidia-uvm-tools, nvidia-caps/nvidia-cap<M>
 *
 * Whole GPUs come from <proc>. A MIG device exists only as a CDI device whose name is its
 * "MIG-<uuid>" and whose deviceNodes hold its parent's /dev/nvidia<N> and its two
 * /dev/nvidia-caps/nvidia-cap<M> nodes; those minors must be the gpu<N>/gi<I>/access and
 * gpu<N>/gi<I>/ci<C>/access lines of mig-minors, else the device is left out with a warning.
 *
 * Every device node is checked against the host with lstat (no symlinks): it must be a
 * character device with the expected major:minor, else the GPU is left out of the inventory
 * (a warning says why). Without a good nvidiactl every GPU is left out.
 *
 * CDI specs: only *.json (YAML is skipped with a warning), no recursion, later directories
 * win for the same device name; a spec file or directory not owned by root or writable by
 * group/others is ignored with a warning. Only kind "nvidia.com/gpu" is used. ward takes
 * from them device names, deviceNodes' container paths (to identify the nodes) and mounts;
 * hooks and env are ignored (ward never runs CDI hooks) and host nodes always come from the
 * dev root, never from a CDI hostPath. CDI devices named by a whole GPU's uuid, index or
 * "gpuN" only add their mounts to that GPU. */
#ifndef WARD_GPU_H
#define WARD_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define WARD_GPU_MAJOR	   195
#define WARD_GPU_CTL_MINOR 255

/* Where the host's files are (all default to the real paths). */
struct ward_gpu_roots {
	const char *proc;      /* "/proc" */
	const char *dev;       /* "/dev" */
	char *const *cdi_dirs; /* NULL-terminated; NULL means {"/etc/cdi", "/var/run/cdi"} */
};

/* A device node as the container gets it: path in the container ("/dev/nvidia0") and the
 * host node it is bound from ("<dev>/nvidia0"), with its verified major:minor. */
struct ward_gpu_node {
	char *path;
	char *host_path;
	unsigned major, minor;
};

/* A read-only bind mount a CDI spec lists for a device (driver libraries, binaries). */
struct ward_gpu_mount {
	char *host_path;
	char *container_path;
};

struct ward_gpu {
	char *uuid;	/* "GPU-8c2d..." or "MIG-..." (as written by the driver or CDI) */
	char *bus_id;	/* "0000:3b:00.0" (lower case); MIG: the parent's */
	char *model;	/* "NVIDIA H100 80GB HBM3"; MIG: the CDI device name */
	int index;	/* whole GPUs: position in bus-id order (nvidia-smi's default); MIG: -1 */
	unsigned minor; /* N of /dev/nvidiaN (the parent's for MIG) */
	bool mig;
	char *parent_uuid; /* MIG: the whole GPU's uuid */
	/* The nodes only this device needs: /dev/nvidiaN, plus for MIG its two cap nodes.
	 * nvidiactl and uvm are in the inventory (shared by all GPUs). */
	struct ward_gpu_node *nodes;
	size_t n_nodes;
	struct ward_gpu_mount *mounts; /* from the CDI device's containerEdits.mounts */
	size_t n_mounts;
};

struct ward_gpu_inventory {
	struct ward_gpu *gpus; /* whole GPUs in bus-id order, then MIG devices */
	size_t n;
	struct ward_gpu_node ctl; /* /dev/nvidiactl 195:255 */
	/* major 0 and paths NULL when nvidia-uvm is not loaded or its node is bad (ctl too, but
	 * then the inventory holds no GPU) */
	struct ward_gpu_node uvm, uvm_tools;
	unsigned caps_major; /* "nvidia-caps" in /proc/devices, 0 if absent */
	/* Spec-level containerEdits.mounts of the nvidia.com/gpu CDI specs (libraries), given
	 * with any device of those specs. */
	struct ward_gpu_mount *mounts;
	size_t n_mounts;
	char *proc_root, *dev_root; /* as used */
};

/* Read the inventory (roots NULL: the real paths). A host without /proc/driver/nvidia has an
 * empty inventory (not an error). Unreadable or malformed files (information, devices,
 * mig-minors, CDI JSON) are errors naming the file and line; a major other than 195 for
 * "nvidia" in <proc>/devices is an error. GPUs marked "GPU Excluded: Yes" take no index. */
struct ward_gpu_inventory *ward_gpu_inventory_load(const struct ward_gpu_roots *roots,
						   struct ward_err *err);
void ward_gpu_inventory_free(struct ward_gpu_inventory *inv);

/* Look up by "GPU-..."/"MIG-..." uuid (case-insensitive, full length only), decimal index,
 * or bus id ("0000:3b:00.0", "00000000:3b:00.0" or "3b:00.0"; any case). Index and bus id
 * find whole GPUs only. NULL if none. */
const struct ward_gpu *ward_gpu_find(const struct ward_gpu_inventory *inv, const char *ref);

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
int ward_gpu_request_parse(const char *config_json_text, struct ward_gpu_request *req,
			   struct ward_err *err);
/* The same from the parsed config.json (a json_t * object): create's one parse. */
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
