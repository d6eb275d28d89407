/* NVIDIA GPUs on this host (gpu_*.c): the inventory (what exists, with which device nodes) and what
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
/* The types are here (gpu.h includes them with the functions); the functions, by concern:
 *   gpu_inventory.h  the host's GPUs (gpu_inventory.c; its CDI step in gpu_cdi.c)
 *   gpu_request.h    what a container asks for, and which GPUs that is for a tenant
 *   gpu_lease.h      which container holds which GPU on this host */
#ifndef WARD_GPU_TYPES_H
#define WARD_GPU_TYPES_H

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

#endif
