/* The host's NVIDIA GPUs (gpu_inventory.c, gpu_cdi.c); the types and the files read are
 * described in gpu_types.h. */
#ifndef WARD_GPU_INVENTORY_H
#define WARD_GPU_INVENTORY_H

#include "err.h"
#include "gpu_types.h"

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

#endif
