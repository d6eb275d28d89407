/* /dev inside the container: default devices, linux.devices, standard links, console. */
#ifndef WARD_DEV_H
#define WARD_DEV_H

#include <stdbool.h>

#include "err.h"
#include "spec.h"

/* With rootfd the rootfs (before pivot). If the spec mounts nothing at /dev, a tmpfs is
 * mounted there (nosuid,strictatime,mode=755,size=65536k);
 * devpts at /dev/pts and tmpfs at /dev/shm are added if the spec mounts none there.
 * Default devices null zero full random urandom tty are bind-mounted from the host
 * (same for linux.devices when in_userns, else mknod with the spec's mode/uid/gid);
 * /dev/ptmx -> pts/ptmx, /dev/fd -> /proc/self/fd, stdin/stdout/stderr -> /proc/self/fd/0..2
 * (/dev/core -> /proc/kcore is deliberately not created). */
int ward_dev_setup(int rootfd, const struct ward_spec *spec, bool in_userns, struct ward_err *err);

/* After pivot: bind the pty slave (fd) onto /dev/console (created if missing). */
int ward_dev_console(int slave_fd, struct ward_err *err);

/* The default device list (path, type, major, minor), for the cgroup device program. */
struct ward_default_dev {
	const char *path;
	char type;
	int major, minor;
};
extern const struct ward_default_dev ward_default_devices[];
extern const unsigned ward_n_default_devices;

#endif
