/* Shared by gpu_inventory.c, gpu_cdi.c and gpu_request.c only (not an API): the node, mount
 * and text helpers, in gpu_inventory.c. */
#ifndef WARD_GPU_INTERNAL_H
#define WARD_GPU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "gpu_types.h"

#define CDI_KIND      "nvidia.com/gpu"
#define GPU_MAX_MINOR 254 /* 254 is nvidia-modeset, 255 nvidiactl */

/* gpu_inventory.c */

/* The "name minor" lines of <proc>/driver/nvidia-caps/mig-minors. */
struct gpu_caps;
/* Name of the nvidia-caps minor, NULL if mig-minors does not list it. */
const char *gpu_cap_name(const struct gpu_caps *c, unsigned minor);

void gpu_clear(struct ward_gpu *g);
/* Append *g to the inventory (taking what it holds; *g is zeroed). */
void gpu_add(struct ward_gpu_inventory *inv, struct ward_gpu *g);
/* Index of the whole GPU /dev/nvidia<minor>, or SIZE_MAX. */
size_t gpu_find_minor(const struct ward_gpu_inventory *inv, unsigned minor);
/* Add (host, container) to a mount list; a later mount at the same container path replaces
 * the earlier one (later CDI directories win). */
void gpu_mount_add(struct ward_gpu_mount **m, size_t *n, const char *host, const char *ctr);
/* Make a verified node: host_path = <dev>/<name>, path = /dev/<name>. Returns 0, or -1 with
 * why (for a warning) when the host node is missing or not the expected char device. */
int gpu_node_verify(const char *dev_root, const char *name, unsigned major, unsigned minor,
		    struct ward_gpu_node *out, char *why, size_t why_len);
/* Sorted names of a directory (no dot files). *names NULL when the directory is absent. */
int gpu_list_dir(const char *path, char ***names, struct ward_err *err);
/* Blanks (and a line end) off both ends, in place. */
char *gpu_trim(char *s);
/* Strict unsigned decimal (no sign, no spaces, not empty). */
int gpu_parse_uint(const char *s, unsigned max, unsigned *out);
/* "GPU-"/"MIG-" followed by hex digits and dashes (the driver's and CDI's spelling). */
bool gpu_valid_uuid(const char *s, const char *prefix);

#endif
