/* Kill points for the fault-injection tests (see fault.h). */
#include "fault.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const ward_fault_points[] = {
    /* create: container.c ward_container_create, effective.c ward_effective_build_at */
    "create.newdir",	   /* the state dir exists, locked, not yet under its name */
    "create.statedir",	   /* the state dir exists (locked) */
    "create.intent",	   /* intent.json names tenant and pod */
    "create.ids",	   /* the ID-pool slice is held */
    "create.gpus",	   /* the GPUs are leased */
    "create.config",	   /* exec.fifo made */
    "create.cgroup-named", /* intent.json names the cgroup, not made yet */
    "create.cgroup",	   /* the container's cgroup exists */
    "create.budget",	   /* the tenant's budget is applied */
    "create.limits",	   /* the limits are on the cgroup */
    "create.fork",	   /* stage 1 runs in the cgroup */
    "create.userns",	   /* the user namespace's maps are written */
    "create.pid",	   /* the init's pid is known */
    "create.devices",	   /* the device program is on the cgroup */
    "create.mounts",	   /* the idmapped mounts are sent */
    "create.saved",	   /* config.json written, state.json written aside (not in place) */
    "create.hooks",	   /* prestart/createRuntime hooks have run */
    "create.ready",	   /* the init is ready */
    "create.state",	   /* state.json is in place: created */
    /* delete: container.c ward_container_delete_status */
    "delete.kill",   /* the container's processes are killed */
    "delete.hooks",  /* poststop hooks have run */
    "delete.cgroup", /* the cgroup is destroyed */
    "delete.ids",    /* the ID-pool hold is released */
    "delete.gpus",   /* the GPU leases are given back */
    "delete.state",  /* state.json is removed (the intent is left) */
    NULL,
};

void ward_fault_point(const char *name)
{
	const char *want = getenv(WARD_FAULT_ENV);

	if (!want || strcmp(want, name))
		return;
	raise(SIGKILL);
}

bool ward_fault_list(void)
{
	const char *want = getenv(WARD_FAULT_ENV);

	if (!want || strcmp(want, "list"))
		return false;
	for (size_t i = 0; ward_fault_points[i]; i++)
		printf("%s\n", ward_fault_points[i]);
	fflush(stdout);
	return true;
}
