/* Paths inside the container are fds, never strings joined onto the rootfs.
 * Every lookup is scoped to the root fd (openat2 RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS):
 * symlinks and ".." resolve as if rootfd were "/", so nothing can leave the rootfs. */
#ifndef WARD_PATH_H
#define WARD_PATH_H

#include <stdbool.h>
#include <sys/types.h>

#include "err.h"

/* Open path (absolute or relative, both taken relative to rootfd) inside the root.
 * flags are open flags (O_CLOEXEC is always added). Returns fd or -1 with err set. */
int ward_path_open(int rootfd, const char *path, int flags, struct ward_err *err);

enum ward_path_kind { WARD_PATH_DIR, WARD_PATH_FILE };

/* Resolve path inside root, creating missing components: intermediate ones as
 * directories (mode 0755), the last one as a directory or an empty regular file
 * (mode 0644) per kind. An existing last component is accepted as is (any type if
 * kind is FILE, a directory if kind is DIR). Returns an O_PATH fd of the final
 * component, or -1 with err set. Never follows a symlink out of the root. */
int ward_path_mkdir_p(int rootfd, const char *path, enum ward_path_kind kind, struct ward_err *err);

/* "/proc/self/fd/N" for an fd (buffer of at least 32 bytes). */
const char *ward_fd_path(int fd, char *buf);

/* Clean a container path lexically for messages/keys: collapse "//", "." and
 * ".." (never above "/"), always absolute. Returns malloc'd string. */
char *ward_path_clean(const char *path);

#endif
