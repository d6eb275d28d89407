/* CVE-2019-5736: processes of ward that enter a container run from a sealed memfd copy
 * of the binary, so a container that opens /proc/<pid>/exe cannot write the real one. */
#ifndef WARD_SELFEXE_H
#define WARD_SELFEXE_H

#include "err.h"

/* If /proc/self/exe is not already a sealed memfd, copy it into one, seal it and re-exec
 * with the same argv/envp. Returns only on error (or when already sealed: 0). */
int ward_selfexe_ensure_sealed(char **argv, char **envp, struct ward_err *err);

#endif
