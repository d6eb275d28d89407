/* Injection of a container's leased GPUs (ward-gpu-hook inject, an OCI createRuntime hook
 * registered by ward's policy pass).
 *
 * Runs as host root in the runtime's namespaces while the container's rootfs is prepared
 * and not yet pivoted into. Everything taken from the host is opened first, in the hook's
 * own mount namespace: each device node (checked again: a character device with the
 * inventory's major:minor) as a detached read-only, nosuid, noexec bind; a tmpfs holding
 * copies of /proc/driver/nvidia's version and params (ModifyDeviceFiles forced to 0) and
 * of the leased GPUs' gpus/<bus>/information only; the CDI specs' library mounts as
 * read-only, nosuid, nodev binds. Then the hook enters the container's mount namespace and
 * attaches them below root.path (taken from the effective config.json in ward's state dir,
 * never from the bundle), resolving every container path inside the rootfs
 * (RESOLVE_IN_ROOT: a symlink in the image cannot point the hook outside it). Nothing is
 * read from, loaded from or executed in the container. */
#ifndef WARD_GPU_INJECT_H
#define WARD_GPU_INJECT_H

#include <stdbool.h>
#include <sys/types.h>

#include "err.h"
#include "gpu.h"

struct ward_inject {
	const struct ward_gpu_inventory *inv;
	const struct ward_gpu *const *gpus; /* the leased GPUs */
	size_t n_gpus;
	bool compute;	       /* nvidia-uvm and nvidia-uvm-tools too */
	pid_t pid;	       /* the container's init (state JSON) */
	const char *root_path; /* root.path of the effective spec */
};

int ward_gpu_inject(const struct ward_inject *in, struct ward_err *err);

#endif
