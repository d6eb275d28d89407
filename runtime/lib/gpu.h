/* NVIDIA GPUs on this host: the types (gpu_types.h, where the files ward reads are
 * described) and the functions, by concern: the inventory (gpu_inventory.h; its CDI step,
 * gpu_cdi.c) and what a container asks for (gpu_request.h). For the users of the GPU code;
 * gpu_*.c include only what they use, so no include cycle goes through this header. */
#ifndef WARD_GPU_H
#define WARD_GPU_H

#include "gpu_inventory.h" /* IWYU pragma: export */
#include "gpu_request.h"   /* IWYU pragma: export */
#include "gpu_types.h"	   /* IWYU pragma: export */

#endif
