/* CVE-2019-5736: processes of ward that enter a container run from a binary that cannot be
 * written through /proc/<pid>/exe: a detached read-only clone of the binary's own mount
 * (open_tree + mount_setattr; it belongs to no mount namespace, so nobody can make it
 * writable again), else a sealed memfd copy of the binary (kernels without those calls). */
#ifndef WARD_SELFEXE_H
#define WARD_SELFEXE_H

#include "err.h"

/* If /proc/self/exe is neither on a read-only mount nor a sealed memfd, re-exec with the
 * same argv/envp from a read-only clone of its mount, else from a sealed memfd copy.
 * Returns only on error (or when already protected: 0). */
int ward_selfexe_ensure_sealed(char **argv, char **envp, struct ward_err *err);

#endif
