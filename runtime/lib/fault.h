/* Fault injection for the crash-safety tests: ward_fault_point("create.ids") kills the
 * process with SIGKILL when the environment variable WARD_FAULT_KILL names that point, so a
 * test can stop create or delete right after any step that leaves something on the host
 * and check that `ward delete -f` (or `ward gc`) removes it all. WARD_FAULT_KILL=list makes
 * ward print every point, one a line, and exit: tests/security/fault-injection.bats walks
 * that list, so a point added to ward_fault_points is tested without touching the test. */
#ifndef WARD_FAULT_H
#define WARD_FAULT_H

#include <stdbool.h>

#define WARD_FAULT_ENV "WARD_FAULT_KILL"

/* Every point, in the order they are passed (NULL-terminated). */
extern const char *const ward_fault_points[];

/* SIGKILL ourselves if WARD_FAULT_KILL equals name (one getenv when unset). */
void ward_fault_point(const char *name);

/* WARD_FAULT_KILL=list: print the points to stdout; true if it did (the caller exits). */
bool ward_fault_list(void);

#endif
