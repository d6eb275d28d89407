/* CDI specs of kind nvidia.com/gpu (see gpu_types.h): read for two things only, MIG devices
 * (which /proc cannot describe) and read-only library mounts. Their hooks and env are
 * ignored on purpose: ward never runs CDI hooks (they would run with host privileges on
 * behalf of whoever wrote the spec), and the container's environment is the pod's own.
 * Spec-level and device-level deviceNodes are never trusted as such either: every node ward
 * hands out is named by ward, taken from the dev root (never from a CDI hostPath) and
 * verified with lstat against the expected major:minor (gpu_node_verify). */
#include "gpu_cdi.h"

#include <ctype.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu_internal.h"
#include "log.h"
#include "util.h"

/* ------------------------------------------------------------------------------------------ */
/* CDI */

/* A device of an nvidia.com/gpu spec, as last seen (later directories win). */
struct cdi_dev {
	char *name;
	char *file;    /* for messages */
	json_t *edits; /* the device's containerEdits (borrowed reference kept alive) */
};

struct cdi {
	struct cdi_dev *v;
	size_t n;
};

static void cdi_free(struct cdi *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free_all(c->v[i].name, c->v[i].file);
		json_decref(c->v[i].edits);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int cdi_mounts(json_t *edits, const char *file, const char *what, struct ward_gpu_mount **m,
		      size_t *n, struct ward_err *err)
{
	json_t *mounts = edits ? json_object_get(edits, "mounts") : NULL, *e;
	size_t i;

	if (!mounts)
		return 0;
	if (!json_is_array(mounts))
		return ward_fail(err, 0, "%s: %s.containerEdits.mounts: expected an array", file,
				 what);
	json_array_foreach(mounts, i, e)
	{
		const char *host = json_string_value(json_object_get(e, "hostPath"));
		const char *ctr = json_string_value(json_object_get(e, "containerPath"));
		if (!json_is_object(e) || !host || !ctr || host[0] != '/' || ctr[0] != '/')
			return ward_fail(err, 0,
					 "%s: %s.containerEdits.mounts[%zu]: expected absolute "
					 "hostPath and containerPath",
					 file, what, i);
		gpu_mount_add(m, n, host, ctr);
	}
	return 0;
}

/* Only root may have written what ward trusts: a spec (or its directory) owned by another
 * user or writable by group or others is skipped with a warning. */
static bool cdi_trusted(const struct stat *st, const char *path)
{
	if (st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH))) {
		ward_warn("%s: not owned by root or writable by others: CDI specs there are "
			  "ignored",
			  path);
		return false;
	}
	return true;
}

static int cdi_load_file(struct ward_gpu_inventory *inv, struct cdi *cdi, const char *file,
			 struct ward_err *err)
{
	cleanup_fd int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	cleanup_free char *text = NULL;
	json_error_t je;
	json_t *root, *devices, *edits, *d;
	const char *kind;
	struct stat st;
	size_t i;
	int r = -1;

	if (fd < 0 || fstat(fd, &st) < 0)
		return ward_fail_errno(err, "open %s", file);
	if (!S_ISREG(st.st_mode)) {
		ward_warn("%s: not a regular file, skipped", file);
		return 0;
	}
	if (!cdi_trusted(&st, file))
		return 0;
	text = read_all_fd(fd, NULL, err);
	if (!text)
		return ward_wrap(err, "%s", file);
	root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return ward_fail(err, 0, "%s:%d: %s", file, je.line, je.text);
	if (!json_is_object(root)) {
		ward_fail(err, 0, "%s: expected a JSON object", file);
		goto out;
	}
	if (!json_is_string(json_object_get(root, "cdiVersion"))) {
		ward_fail(err, 0, "%s: cdiVersion: required string", file);
		goto out;
	}
	kind = json_string_value(json_object_get(root, "kind"));
	if (!kind) {
		ward_fail(err, 0, "%s: kind: required string", file);
		goto out;
	}
	if (strcmp(kind, CDI_KIND)) {
		ward_debug("%s: kind %s ignored", file, kind);
		r = 0;
		goto out;
	}
	devices = json_object_get(root, "devices");
	if (!json_is_array(devices)) {
		ward_fail(err, 0, "%s: devices: required array", file);
		goto out;
	}
	edits = json_object_get(root, "containerEdits");
	if (edits && !json_is_object(edits)) {
		ward_fail(err, 0, "%s: containerEdits: expected an object", file);
		goto out;
	}
	if (cdi_mounts(edits, file, "spec", &inv->mounts, &inv->n_mounts, err) < 0)
		goto out;
	json_array_foreach(devices, i, d)
	{
		const char *name = json_string_value(json_object_get(d, "name"));
		json_t *de = json_object_get(d, "containerEdits");
		struct cdi_dev *slot = NULL;

		if (!json_is_object(d) || !name || !*name) {
			ward_fail(err, 0, "%s: devices[%zu].name: required string", file, i);
			goto out;
		}
		if (de && !json_is_object(de)) {
			ward_fail(err, 0, "%s: devices[%zu].containerEdits: expected an object",
				  file, i);
			goto out;
		}
		for (size_t j = 0; j < cdi->n; j++)
			if (!strcasecmp(cdi->v[j].name, name)) /* uuids: any case */
				slot = &cdi->v[j];
		if (slot) {
			ward_debug("%s: CDI device %s=%s replaces the one of %s", file, CDI_KIND,
				   name, slot->file);
			free(slot->name);
			free(slot->file);
			json_decref(slot->edits);
		} else {
			cdi->v = xrealloc(cdi->v, (cdi->n + 1) * sizeof(*cdi->v));
			slot = &cdi->v[cdi->n++];
		}
		slot->name = xstrdup(name);
		slot->file = xstrdup(file);
		slot->edits = json_incref(de);
	}
	r = 0;
out:
	json_decref(root);
	return r;
}

static int cdi_load(struct ward_gpu_inventory *inv, char *const *dirs, struct cdi *cdi,
		    struct ward_err *err)
{
	memset(cdi, 0, sizeof(*cdi));
	for (size_t d = 0; dirs[d]; d++) {
		cleanup_strv char **names = NULL;
		struct stat st;
		if (stat(dirs[d], &st) < 0 || !S_ISDIR(st.st_mode) || !cdi_trusted(&st, dirs[d]))
			continue; /* absent (the usual case for one of the two) or untrusted */
		if (gpu_list_dir(dirs[d], &names, err) < 0)
			return -1;
		for (size_t i = 0; names && names[i]; i++) {
			size_t len = strlen(names[i]);
			cleanup_free char *file = path_join(dirs[d], names[i]);
			if (len > 5 && !strcmp(names[i] + len - 5, ".json")) {
				if (cdi_load_file(inv, cdi, file, err) < 0)
					return -1;
			} else if ((len > 5 && !strcmp(names[i] + len - 5, ".yaml")) ||
				   (len > 4 && !strcmp(names[i] + len - 4, ".yml"))) {
				ward_warn("%s: CDI YAML specs are not supported, skipped (generate "
					  "JSON: nvidia-ctk cdi generate --format=json)",
					  file);
			}
		}
	}
	return 0;
}

/* Number N of a container path "<prefix>N" (exact), or -1. */
static long node_number(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	unsigned v;
	if (strncmp(path, prefix, n) || gpu_parse_uint(path + n, 1u << 20, &v) < 0)
		return -1;
	return (long)v;
}

/* Optional CDI "major"/"minor" of a deviceNode must agree with what ward expects. */
static bool cdi_node_agrees(json_t *node, unsigned major, unsigned minor)
{
	json_t *ma = json_object_get(node, "major"), *mi = json_object_get(node, "minor");
	json_t *type = json_object_get(node, "type");
	if (ma && (!json_is_integer(ma) || json_integer_value(ma) != (json_int_t)major))
		return false;
	if (mi && (!json_is_integer(mi) || json_integer_value(mi) != (json_int_t)minor))
		return false;
	if (type && (!json_is_string(type) || strcmp(json_string_value(type), "c")))
		return false;
	return true;
}

/* "gpu<N>/gi<I>/access" (*ci = -1) or "gpu<N>/gi<I>/ci<C>/access". */
static int parse_mig_cap(const char *s, unsigned *gpu, unsigned *gi, long *ci)
{
	char *end;
	if (strncmp(s, "gpu", 3) || !isdigit((unsigned char)s[3]))
		return -1;
	*gpu = (unsigned)strtoul(s + 3, &end, 10);
	if (strncmp(end, "/gi", 3) || !isdigit((unsigned char)end[3]))
		return -1;
	*gi = (unsigned)strtoul(end + 3, &end, 10);
	*ci = -1;
	if (!strcmp(end, "/access"))
		return 0;
	if (strncmp(end, "/ci", 3) || !isdigit((unsigned char)end[3]))
		return -1;
	*ci = (long)strtoul(end + 3, &end, 10);
	return strcmp(end, "/access") ? -1 : 0;
}

/* Build the MIG device of CDI device d. Returns 0 with *g filled, or -1 with why. */
static int mig_build(const struct ward_gpu_inventory *inv, const struct gpu_caps *caps,
		     int caps_major, const struct cdi_dev *d, struct ward_gpu *g, char *why,
		     size_t why_len)
{
	json_t *nodes = json_object_get(d->edits, "deviceNodes"), *n;
	long parent_minor = -1, cap_minor[2] = {-1, -1};
	size_t n_caps = 0, i, pi;
	const struct ward_gpu *parent;
	long gi_id = -1, ci_gi = -1;

	if (!gpu_valid_uuid(d->name, "MIG-")) {
		snprintf(why, why_len, "name is not MIG-<uuid>");
		return -1;
	}
	if (!json_is_array(nodes)) {
		snprintf(why, why_len, "no containerEdits.deviceNodes");
		return -1;
	}
	json_array_foreach(nodes, i, n)
	{
		const char *path = json_string_value(json_object_get(n, "path"));
		long v;
		if (!path) {
			snprintf(why, why_len, "deviceNodes[%zu]: no path", i);
			return -1;
		}
		if ((v = node_number(path, "/dev/nvidia-caps/nvidia-cap")) >= 0) {
			if (n_caps == 2) {
				snprintf(why, why_len, "more than two nvidia-cap nodes");
				return -1;
			}
			if (caps_major < 0) {
				snprintf(why, why_len, "nvidia-caps is not in /proc/devices");
				return -1;
			}
			if (!cdi_node_agrees(n, (unsigned)caps_major, (unsigned)v)) {
				snprintf(why, why_len, "%s: not the nvidia-caps device %d:%ld",
					 path, caps_major, v);
				return -1;
			}
			cap_minor[n_caps++] = v;
		} else if ((v = node_number(path, "/dev/nvidia")) >= 0) {
			if (parent_minor >= 0 || v >= GPU_MAX_MINOR ||
			    !cdi_node_agrees(n, WARD_GPU_MAJOR, (unsigned)v)) {
				snprintf(why, why_len, "%s: not one GPU node %d:%ld", path,
					 WARD_GPU_MAJOR, v);
				return -1;
			}
			parent_minor = v;
		} else if (strcmp(path, "/dev/nvidiactl") && strcmp(path, "/dev/nvidia-uvm") &&
			   strcmp(path, "/dev/nvidia-uvm-tools")) {
			/* Shared nodes come from the inventory; anything else is refused. */
			snprintf(why, why_len, "unexpected device node %s", path);
			return -1;
		}
	}
	if (parent_minor < 0 || n_caps != 2) {
		snprintf(why, why_len, "needs /dev/nvidia<N> and two /dev/nvidia-caps nodes");
		return -1;
	}
	pi = gpu_find_minor(inv, (unsigned)parent_minor);
	if (pi == SIZE_MAX) {
		snprintf(why, why_len, "parent /dev/nvidia%ld is not a GPU of this host",
			 parent_minor);
		return -1;
	}
	parent = &inv->gpus[pi];
	/* One cap must be gpu<N>/gi<I>/access, the other gpu<N>/gi<I>/ci<C>/access. */
	for (size_t k = 0; k < 2; k++) {
		const char *nm = gpu_cap_name(caps, (unsigned)cap_minor[k]);
		unsigned gpu_n, gi;
		long ci;
		if (!nm) {
			snprintf(why, why_len, "nvidia-cap%ld is not in mig-minors", cap_minor[k]);
			return -1;
		}
		if (parse_mig_cap(nm, &gpu_n, &gi, &ci) < 0 || gpu_n != (unsigned)parent_minor) {
			snprintf(why, why_len,
				 "nvidia-cap%ld is %s, not a MIG capability of gpu%ld",
				 cap_minor[k], nm, parent_minor);
			return -1;
		}
		if (ci < 0 && gi_id < 0)
			gi_id = gi;
		else if (ci >= 0 && ci_gi < 0)
			ci_gi = gi;
		else
			gi_id = -2; /* two of a kind */
	}
	if (gi_id < 0 || ci_gi < 0 || gi_id != ci_gi) {
		snprintf(why, why_len,
			 "nvidia-cap%ld and nvidia-cap%ld are not a GPU instance and one of its "
			 "compute instances",
			 cap_minor[0], cap_minor[1]);
		return -1;
	}

	memset(g, 0, sizeof(*g));
	g->nodes = xcalloc(3, sizeof(*g->nodes));
	{
		char name[64];
		snprintf(name, sizeof(name), "nvidia%ld", parent_minor);
		if (gpu_node_verify(inv->dev_root, name, WARD_GPU_MAJOR, (unsigned)parent_minor,
				    &g->nodes[0], why, why_len) < 0)
			goto fail;
		g->n_nodes = 1;
		for (size_t k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "nvidia-caps/nvidia-cap%ld", cap_minor[k]);
			if (gpu_node_verify(inv->dev_root, name, (unsigned)caps_major,
					    (unsigned)cap_minor[k], &g->nodes[g->n_nodes], why,
					    why_len) < 0)
				goto fail;
			g->n_nodes++;
		}
	}
	g->uuid = xstrdup(d->name);
	g->bus_id = xstrdup(parent->bus_id);
	g->model = xstrdup(d->name);
	g->index = -1;
	g->minor = parent->minor;
	g->mig = true;
	g->parent_uuid = xstrdup(parent->uuid);
	return 0;
fail:
	gpu_clear(g);
	return -1;
}

/* Whole GPU a CDI device name stands for: uuid, index or "gpuN". */
static struct ward_gpu *cdi_whole_gpu(struct ward_gpu_inventory *inv, const char *name)
{
	const char *ref = name;
	bool by_uuid;
	unsigned idx = 0;

	if (!strncmp(name, "gpu", 3) && isdigit((unsigned char)name[3]))
		ref = name + 3;
	/* ward_gpu_find's uuid and index forms (the inventory is being built: this file is its
	 * CDI step, so it does not call back into gpu_inventory.c's API) */
	by_uuid = !strncasecmp(ref, "GPU-", 4);
	if (!by_uuid && gpu_parse_uint(ref, 1u << 20, &idx) < 0)
		return NULL;
	for (size_t i = 0; i < inv->n; i++) {
		struct ward_gpu *g = &inv->gpus[i];
		if (!g->mig && (by_uuid ? !strcasecmp(g->uuid, ref) : g->index == (int)idx))
			return g;
	}
	return NULL;
}

static int cmp_mig(const void *a, const void *b)
{
	const struct ward_gpu *x = a, *y = b;
	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return strcasecmp(x->uuid, y->uuid);
}

static int apply_cdi(struct ward_gpu_inventory *inv, const struct cdi *cdi,
		     const struct gpu_caps *caps, int caps_major, struct ward_err *err)
{
	size_t n_whole = inv->n;

	for (size_t i = 0; i < cdi->n; i++) {
		const struct cdi_dev *d = &cdi->v[i];
		char what[300], why[600];
		snprintf(what, sizeof(what), "device %s", d->name);
		if (!strncasecmp(d->name, "MIG-", 4)) {
			struct ward_gpu g;
			bool dup = false;
			for (size_t j = n_whole; j < inv->n; j++)
				dup |= !strcasecmp(inv->gpus[j].uuid, d->name);
			if (dup) {
				ward_warn(
				    "%s: MIG device %s listed twice under different spellings, "
				    "left out",
				    d->file, d->name);
				continue;
			}
			if (mig_build(inv, caps, caps_major, d, &g, why, sizeof(why)) < 0) {
				ward_warn("%s: MIG device %s left out: %s", d->file, d->name, why);
				continue;
			}
			if (cdi_mounts(d->edits, d->file, what, &g.mounts, &g.n_mounts, err) < 0) {
				gpu_clear(&g);
				return -1;
			}
			gpu_add(inv, &g);
		} else {
			struct ward_gpu *g = cdi_whole_gpu(inv, d->name);
			if (!g) {
				ward_debug("%s: CDI device %s names no GPU of the inventory",
					   d->file, d->name);
				continue;
			}
			if (cdi_mounts(d->edits, d->file, what, &g->mounts, &g->n_mounts, err) < 0)
				return -1;
		}
	}
	if (inv->n > n_whole)
		qsort(inv->gpus + n_whole, inv->n - n_whole, sizeof(*inv->gpus), cmp_mig);
	return 0;
}

int gpu_cdi_load(struct ward_gpu_inventory *inv, char *const *dirs, const struct gpu_caps *caps,
		 int caps_major, struct ward_err *err)
{
	struct cdi cdi = {0};
	int r = 0;

	if (cdi_load(inv, dirs, &cdi, err) < 0 || apply_cdi(inv, &cdi, caps, caps_major, err) < 0)
		r = -1;
	cdi_free(&cdi);
	return r;
}
