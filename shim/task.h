/* The containerd.task.v2.Task service: a table of containers driven through the ward CLI.
 * Everything runs on the ttrpc server's loop thread. Reference:
 * /work/shared/reference/containerd-shim.md §3. */
#ifndef WARD_SHIM_TASK_H
#define WARD_SHIM_TASK_H

#include <stdbool.h>
#include <stddef.h>

#include "options.h"
#include "err.h"
#include "ttrpc.h"

/* Register every Task method on srv. o must outlive the server. */
void shim_task_register(struct ttrpc_server *srv, const struct shim_opts *o);
/* Reap every exited child (SIGCHLD): record exits, complete Waits, publish /tasks/exit. */
void shim_task_reap(void);
/* Containers still in the table. */
size_t shim_task_count(void);

#endif
