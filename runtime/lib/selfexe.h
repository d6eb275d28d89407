/* CVE-2019-5736: processes of ward that enter a container run from a binary that cannot be
 * written through /proc/<pid>/exe: a detached read-only clone of the binary's own mount
 * (open_tree + mount_setattr; it belongs to no mount namespace, so nobody can make it
 * writable again), else a sealed memfd copy of the binary (kernels without those calls).
 *
 * Or, for creating containers, the kernel's own permission check: when every tenant of the
 * configuration is untrusted, every container ward creates runs in a user namespace whose
 * ID maps hold only host IDs at or above the pool base (config.c refuses fixed ranges below
 * it; the pool never hands out less), so no process of a container can be the binary's
 * owner or group, nor have a capability over an inode they own (capabilities in a user
 * namespace cover only inodes whose owners it maps): the binary is not writable to them
 * through /proc/<pid>/exe or any other name. The re-exec (about 0.5 ms, one more exec of a
 * static binary) is then left out; a trusted tenant (its pods may run without a user
 * namespace or map host root), a binary owned by a mappable ID, writable by others or
 * with an ACL, keep it. */
#ifndef WARD_SELFEXE_H
#define WARD_SELFEXE_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#include "err.h"

/* If /proc/self/exe is neither on a read-only mount nor a sealed memfd, re-exec with the
 * same argv/envp from a read-only clone of its mount, else from a sealed memfd copy.
 * Returns only on error (or when already protected: 0). */
int ward_selfexe_ensure_sealed(char **argv, char **envp, struct ward_err *err);

/* Whether the user namespaces of cfg's tenants already keep every container away from the
 * running binary (see above): no tenant is trusted, /proc/self/exe is owned by a uid and
 * gid below the pool base, writable by its owner alone and without an access ACL, and no
 * container that could write it may still run: none was made this boot under a
 * configuration that failed this test (ward_selfexe_mark_exposed), and this boot is not
 * the one in which this ward replaced an older one (<lib_dir>/selfexe/; selfexe.c). */
bool ward_selfexe_userns_guards(const struct ward_config *cfg);
/* Record that a create or run of this boot failed ward_selfexe_userns_guards: until the
 * next boot every create, run and exec re-executes. */
int ward_selfexe_mark_exposed(const struct ward_config *cfg, struct ward_err *err);

/* main's argv and envp, for a re-exec decided later (ward_selfexe_guard_pid). */
void ward_selfexe_remember(char **argv, char **envp);
/* Before entering the running container of init pid (exec): unless this process already
 * runs from a protected binary, or pid's user namespace maps neither the binary's owner nor
 * its group (and it is not writable by others nor has an ACL), re-exec as
 * ward_selfexe_ensure_sealed does (the command starts over, protected). 0, or -1 when it
 * cannot tell or cannot re-exec. */
int ward_selfexe_guard_pid(pid_t pid, struct ward_err *err);

#endif
