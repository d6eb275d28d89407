/* The CDI step of the GPU inventory (gpu_cdi.c), called by ward_gpu_inventory_load only. */
#ifndef WARD_GPU_CDI_H
#define WARD_GPU_CDI_H

#include "err.h"
#include "gpu_types.h"
#include "gpu_internal.h"

/* Read the CDI specs of dirs (NULL-terminated) into inv: spec-level mounts, the
 * mounts of CDI devices named for a whole GPU, and the MIG devices (checked against caps
 * and the nvidia-caps major, -1 when absent; bad ones are left out with a warning). */
int gpu_cdi_load(struct ward_gpu_inventory *inv, char *const *dirs, const struct gpu_caps *caps,
		 int caps_major, struct ward_err *err);

#endif
