/* containers/storage (podman, CRI-O, buildah): which overlay layer is a container's. Its
 * graph root's overlay-containers/containers.json (and, for newer versions' volatile
 * containers, the run root's overlay-containers/volatile-containers.json) lists every
 * container as {"id": ..., "layer": ...}; the container's root is that layer's
 * <graph root>/overlay/<layer>/merged. Both files are root's, in root-only directories. */
#ifndef WARD_CSTORAGE_H
#define WARD_CSTORAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* The layer of container id in a parsed containers.json (an array of objects), or NULL:
 * not listed, or listed without a layer name. Borrowed from list. */
const char *ward_cstorage_layer_in(json_t *list, const char *id);

/* *layer: the layer of container id (malloc'd), or NULL when no file lists it (a missing
 * file lists nothing). graph_root and run_root may be NULL. -1 with err when a file that
 * exists cannot be read or parsed. The files are opened beneath their directories without
 * following symlinks. */
int ward_cstorage_layer(const char *graph_root, const char *run_root, const char *id, char **layer,
			struct ward_err *err);

/* Whether path is a layer's merged dir under graph_root (<graph_root>/overlay/<layer>/merged,
 * by name: the policy has checked whose layer it is). */
bool ward_cstorage_is_layer_root(const char *graph_root, const char *path);

/* The container's own layer, root.path held as root_fd (the overlay's merged dir, whose
 * root directory is the upper dir's), is bound to the pod's host IDs [start, start+size):
 * ward gives the upper dir's root to the range the first time a container runs in it
 * (overlay.h). True when it is the host root's (0:0, a layer no ward container has run in:
 * podman made it) or inside the range; false with why ("owned by 589824:589824, outside
 * the pod's range 524288-589823") when a container of another pod ran in it: another
 * engine's container, under another ward state root over the same storage, whose id the
 * pod named. fstat of root_fd only: nothing is opened by name. */
bool ward_cstorage_layer_owner_ok(int root_fd, uint32_t start, uint32_t size, char *why,
				  size_t len);

/* Whether bundle_fd (the bundle directory ward opened, whose config.json it reads) is
 * container id's own userdata directory, <graph_root or run_root>/overlay-containers/<id>/
 * userdata: podman's bundle is the graph root's, CRI-O's the run root's. Compared by
 * identity (st_dev, st_ino through fstat of both fds), never by name; the userdata dir is
 * opened beneath its storage dir without following symlinks. Only then are the container's
 * userdata directories its own (policy.h): a bundle elsewhere that names a container's id
 * is not that container. Either root may be NULL. */
bool ward_cstorage_bundle_is_userdata(int bundle_fd, const char *graph_root, const char *run_root,
				      const char *id);

#endif
