/* What a container holds on the host, written into its state dir (<root>/<id>/intent.json,
 * write-then-rename) before each allocation, so that whatever a create (or delete) that
 * died half-way left behind is known: `ward delete -f` and `ward gc` undo what it names.
 * Every undo is idempotent (a release of an ID-pool user or a GPU lease that is not held,
 * a cgroup that does not exist, are no-ops), so an intent may name a thing a moment before
 * it exists. The intent stays for the container's life; delete removes it last. */
#ifndef WARD_INTENT_H
#define WARD_INTENT_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

#define WARD_INTENT_JSON "intent.json"

struct ward_intent {
	char *tenant;	 /* the tenant's name (NULL: not chosen yet) */
	char *pod;	 /* the pod the container belongs to */
	char *bundle;	 /* the bundle's absolute path */
	char *ids_owner; /* ID-pool owner the container is (about to be) a user of, or NULL */
	uint32_t ids_start, ids_size; /* its range once acquired (0, 0 before) */
	char **gpus;		      /* GPU uuids (about to be) leased, NULL-terminated or NULL */
	char *cgroup;		      /* the container's cgroup (about to be) made, or NULL */
	bool ran; /* something of the container may have run (stage 1 forked): GPUs are dirty */
};

/* Write (atomically replace) dirfd/intent.json. */
int ward_intent_write(int dirfd, const struct ward_intent *in, struct ward_err *err);
/* Read dirfd/intent.json; errnum ENOENT when there is none. */
int ward_intent_read(int dirfd, struct ward_intent *in, struct ward_err *err);
void ward_intent_clear(struct ward_intent *in);

#endif
