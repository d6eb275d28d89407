/* NVIDIA GPU inventory, request parsing and resolution (see gpu.h). Pure text parsing plus
 * lstat of device nodes: no NVML, no CUDA, nothing opened but plain files and directories.
 *
 * CDI specs are read for two things only: MIG devices (which /proc cannot describe) and
 * read-only library mounts. Their hooks and env are ignored on purpose: ward never runs
 * CDI hooks (they would run with host privileges on behalf of whoever wrote the spec), and
 * the container's environment is the pod's own. Spec-level and device-level deviceNodes
 * are never trusted as such either: every node ward hands out is named by ward, taken from
 * the dev root (never from a CDI hostPath) and verified with lstat against the expected
 * major:minor. */
#include "gpu.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define CDI_KIND	"nvidia.com/gpu"
#define CDI_ANNOTATION	"cdi.k8s.io/"
#define GPU_MAX_MINOR	254 /* 254 is nvidia-modeset, 255 nvidiactl */
#define GPU_ENV_DEVICES "NVIDIA_VISIBLE_DEVICES"
#define GPU_ENV_CAPS	"NVIDIA_DRIVER_CAPABILITIES"

/* ------------------------------------------------------------------------------------------ */
/* Small helpers */

static void node_clear(struct ward_gpu_node *n)
{
	free(n->path);
	free(n->host_path);
	memset(n, 0, sizeof(*n));
}

static void mounts_free(struct ward_gpu_mount *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].host_path);
		free(m[i].container_path);
	}
	free(m);
}

static void gpu_clear(struct ward_gpu *g)
{
	free(g->uuid);
	free(g->bus_id);
	free(g->model);
	free(g->parent_uuid);
	for (size_t i = 0; i < g->n_nodes; i++)
		node_clear(&g->nodes[i]);
	free(g->nodes);
	mounts_free(g->mounts, g->n_mounts);
	memset(g, 0, sizeof(*g));
}

void ward_gpu_inventory_free(struct ward_gpu_inventory *inv)
{
	if (!inv)
		return;
	for (size_t i = 0; i < inv->n; i++)
		gpu_clear(&inv->gpus[i]);
	free(inv->gpus);
	node_clear(&inv->ctl);
	node_clear(&inv->uvm);
	node_clear(&inv->uvm_tools);
	mounts_free(inv->mounts, inv->n_mounts);
	free(inv->proc_root);
	free(inv->dev_root);
	free(inv);
}

/* Add (host, container) to a mount list; a later mount at the same container path replaces
 * the earlier one (later CDI directories win). */
static void mount_add(struct ward_gpu_mount **m, size_t *n, const char *host, const char *ctr)
{
	for (size_t i = 0; i < *n; i++) {
		if (!strcmp((*m)[i].container_path, ctr)) {
			free((*m)[i].host_path);
			(*m)[i].host_path = xstrdup(host);
			return;
		}
	}
	*m = xrealloc(*m, (*n + 1) * sizeof(**m));
	(*m)[*n].host_path = xstrdup(host);
	(*m)[*n].container_path = xstrdup(ctr);
	(*n)++;
}

static char *trim(char *s)
{
	char *e;
	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* Strict unsigned decimal (no sign, no spaces, not empty). */
static int parse_uint(const char *s, unsigned max, unsigned *out)
{
	uint64_t v;
	if (!*s || !isdigit((unsigned char)*s) || parse_u64(s, &v) < 0 || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* PCI address "dddd:bb:dd.f" or "bb:dd.f" (hex, domain 0 when absent). */
struct pci_addr {
	unsigned long domain, bus, dev, fn;
};

static int parse_hex_field(const char **p, char end, unsigned long max, unsigned long *out)
{
	const char *s = *p;
	unsigned long v = 0;
	size_t n = 0;
	for (; isxdigit((unsigned char)*s); s++, n++) {
		if (n >= 8)
			return -1;
		v = v * 16 +
		    (unsigned long)(isdigit((unsigned char)*s) ? *s - '0' : tolower(*s) - 'a' + 10);
	}
	if (n == 0 || *s != end || v > max)
		return -1;
	*out = v;
	*p = end ? s + 1 : s;
	return 0;
}

static int parse_pci(const char *s, struct pci_addr *a)
{
	const char *p = s;
	size_t colons = 0;
	for (const char *q = s; *q; q++)
		colons += *q == ':';
	memset(a, 0, sizeof(*a));
	if (colons == 2 && parse_hex_field(&p, ':', 0xffffffffUL, &a->domain) < 0)
		return -1;
	if (colons != 1 && colons != 2)
		return -1;
	if (parse_hex_field(&p, ':', 0xff, &a->bus) < 0 ||
	    parse_hex_field(&p, '.', 0x1f, &a->dev) < 0 ||
	    parse_hex_field(&p, '\0', 0x7, &a->fn) < 0)
		return -1;
	return 0;
}

static int pci_cmp(const struct pci_addr *a, const struct pci_addr *b)
{
	const unsigned long x[] = {a->domain, a->bus, a->dev, a->fn};
	const unsigned long y[] = {b->domain, b->bus, b->dev, b->fn};
	for (size_t i = 0; i < ARRAY_SIZE(x); i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/* "GPU-"/"MIG-" followed by hex digits and dashes (the driver's and CDI's spelling). */
static bool valid_uuid(const char *s, const char *prefix)
{
	if (strncasecmp(s, prefix, 4) || !s[4])
		return false;
	for (s += 4; *s; s++)
		if (!isxdigit((unsigned char)*s) && *s != '-')
			return false;
	return true;
}

/* Make a verified node: host_path = <dev>/<name>, path = /dev/<name>. Returns 0, or -1 with
 * why (for a warning) when the host node is missing or not the expected char device. */
static int node_verify(const char *dev_root, const char *name, unsigned major, unsigned minor,
		       struct ward_gpu_node *out, char *why, size_t why_len)
{
	cleanup_free char *host = path_join(dev_root, name);
	struct stat st;

	if (lstat(host, &st) < 0) {
		snprintf(why, why_len, "%s: %s", host, strerror(errno));
		return -1;
	}
	if (!S_ISCHR(st.st_mode)) {
		snprintf(why, why_len, "%s: not a character device", host);
		return -1;
	}
	if (major(st.st_rdev) != major || minor(st.st_rdev) != minor) {
		snprintf(why, why_len, "%s: device %u:%u, expected %u:%u", host, major(st.st_rdev),
			 minor(st.st_rdev), major, minor);
		return -1;
	}
	out->path = xasprintf("/dev/%s", name);
	out->host_path = steal_ptr(host);
	out->major = major;
	out->minor = minor;
	return 0;
}

static int open_dir(const char *path, DIR **out, struct ward_err *err)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*out = NULL;
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return ward_fail_errno(err, "open %s", path);
	}
	*out = fdopendir(fd);
	if (!*out) {
		int e = errno;
		close(fd);
		return ward_fail(err, e, "open %s", path);
	}
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of a directory (no dot files). *names NULL when the directory is absent. */
static int list_dir(const char *path, char ***names, struct ward_err *err)
{
	DIR *d;
	struct dirent *e;
	char **v = NULL;
	int r = open_dir(path, &d, err);

	*names = NULL;
	if (r <= 0)
		return r;
	v = xcalloc(1, sizeof(char *));
	errno = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] != '.')
			v = strv_append(v, e->d_name);
		errno = 0;
	}
	if (errno) {
		int en = errno;
		closedir(d);
		strv_free(v);
		return ward_fail(err, en, "read directory %s", path);
	}
	closedir(d);
	qsort(v, strv_len(v), sizeof(char *), cmp_str);
	*names = v;
	return 0;
}

/* Next line of a NUL-terminated buffer (modified in place); NULL at the end. */
static char *next_line(char **cursor)
{
	char *s = *cursor, *nl;
	if (!s || !*s)
		return NULL;
	nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		*cursor = nl + 1;
	} else {
		*cursor = s + strlen(s);
	}
	return s;
}

/* ------------------------------------------------------------------------------------------ */
/* /proc files */

struct majors {
	int nvidia; /* -1: not listed */
	int uvm;
	int caps;
};

static int read_proc_devices(const char *proc, struct majors *m, struct ward_err *err)
{
	cleanup_free char *path = path_join(proc, "devices");
	cleanup_free char *text = read_file_at(AT_FDCWD, path, NULL, err);
	char *cur = text, *line;
	bool chr = false;
	int lineno = 0;

	m->nvidia = m->uvm = m->caps = -1;
	if (!text)
		return -1;
	while ((line = next_line(&cur))) {
		char *s = trim(line), *name;
		unsigned major;
		lineno++;
		if (!*s)
			continue;
		if (!strcmp(s, "Character devices:")) {
			chr = true;
			continue;
		}
		if (!strcmp(s, "Block devices:")) {
			chr = false;
			continue;
		}
		name = s + strcspn(s, " \t");
		if (*name)
			*name++ = '\0';
		name = trim(name);
		if (parse_uint(s, 4095, &major) < 0 || !*name)
			return ward_fail(err, 0, "%s:%d: expected \"<major> <name>\"", path,
					 lineno);
		if (!chr)
			continue;
		if (!strcmp(name, "nvidia") || !strcmp(name, "nvidia-frontend")) {
			if (major != WARD_GPU_MAJOR)
				return ward_fail(err, 0, "%s:%d: %s has major %u, expected %d",
						 path, lineno, name, major, WARD_GPU_MAJOR);
			m->nvidia = (int)major;
		} else if (!strcmp(name, "nvidia-uvm")) {
			m->uvm = (int)major;
		} else if (!strcmp(name, "nvidia-caps")) {
			m->caps = (int)major;
		}
	}
	return 0;
}

/* One parsed information file. */
struct info {
	char *uuid, *bus, *model;
	struct pci_addr pci;
	unsigned minor;
	bool excluded, unknown_uuid;
};

static void info_clear(struct info *i)
{
	free(i->uuid);
	free(i->bus);
	free(i->model);
	memset(i, 0, sizeof(*i));
}

static int parse_information(const char *path, struct info *out, struct ward_err *err)
{
	cleanup_free char *text = read_file_at(AT_FDCWD, path, NULL, err);
	char *cur = text, *line;
	int lineno = 0;
	bool have_minor = false;

	memset(out, 0, sizeof(*out));
	if (!text)
		return -1;
	while ((line = next_line(&cur))) {
		char *colon, *key, *val;
		lineno++;
		if (!*trim(line))
			continue;
		colon = strchr(line, ':');
		if (!colon)
			return ward_fail(err, 0, "%s:%d: expected \"Key: value\"", path, lineno);
		*colon = '\0';
		key = trim(line);
		val = trim(colon + 1);
		if (!strcmp(key, "GPU UUID")) {
			if (out->uuid || out->unknown_uuid)
				return ward_fail(err, 0, "%s:%d: duplicate GPU UUID", path, lineno);
			if (val[0] == '?') {
				out->unknown_uuid = true; /* GPU not initialised */
			} else if (!valid_uuid(val, "GPU-")) {
				return ward_fail(err, 0,
						 "%s:%d: GPU UUID \"%s\": expected GPU-<hex>", path,
						 lineno, val);
			} else {
				out->uuid = xstrdup(val);
			}
		} else if (!strcmp(key, "Bus Location")) {
			if (out->bus)
				return ward_fail(err, 0, "%s:%d: duplicate Bus Location", path,
						 lineno);
			if (parse_pci(val, &out->pci) < 0)
				return ward_fail(err, 0,
						 "%s:%d: Bus Location \"%s\": expected "
						 "dddd:bb:dd.f",
						 path, lineno, val);
			out->bus = xstrdup(val);
			for (char *p = out->bus; *p; p++)
				*p = (char)tolower((unsigned char)*p);
		} else if (!strcmp(key, "Device Minor")) {
			if (have_minor)
				return ward_fail(err, 0, "%s:%d: duplicate Device Minor", path,
						 lineno);
			if (parse_uint(val, GPU_MAX_MINOR - 1, &out->minor) < 0)
				return ward_fail(err, 0,
						 "%s:%d: Device Minor \"%s\": expected 0 to %d",
						 path, lineno, val, GPU_MAX_MINOR - 1);
			have_minor = true;
		} else if (!strcmp(key, "Model")) {
			free(out->model);
			out->model = xstrdup(val);
		} else if (!strcmp(key, "GPU Excluded")) {
			out->excluded = !strcasecmp(val, "yes");
		}
	}
	if (!out->uuid && !out->unknown_uuid)
		return ward_fail(err, 0, "%s: no \"GPU UUID:\" line", path);
	if (!out->bus)
		return ward_fail(err, 0, "%s: no \"Bus Location:\" line", path);
	if (!have_minor)
		return ward_fail(err, 0, "%s: no \"Device Minor:\" line", path);
	if (!out->model)
		out->model = xstrdup("");
	return 0;
}

static int cmp_info(const void *a, const void *b)
{
	return pci_cmp(&((const struct info *)a)->pci, &((const struct info *)b)->pci);
}

static void gpu_add(struct ward_gpu_inventory *inv, struct ward_gpu *g)
{
	inv->gpus = xrealloc(inv->gpus, (inv->n + 1) * sizeof(*inv->gpus));
	inv->gpus[inv->n++] = *g;
	memset(g, 0, sizeof(*g));
}

static int load_whole_gpus(struct ward_gpu_inventory *inv, const char *gpus_dir,
			   struct ward_err *err)
{
	cleanup_strv char **names = NULL;
	struct info *infos = NULL;
	size_t n = 0;
	int r = 0, index = 0;

	if (list_dir(gpus_dir, &names, err) < 0)
		return -1;
	for (size_t i = 0; names && names[i]; i++) {
		cleanup_free char *dir = path_join(gpus_dir, names[i]);
		cleanup_free char *file = path_join(dir, "information");
		infos = xrealloc(infos, (n + 1) * sizeof(*infos));
		if (parse_information(file, &infos[n], err) < 0) {
			info_clear(&infos[n]);
			r = -1;
			goto out;
		}
		n++;
	}
	qsort(infos, n, sizeof(*infos), cmp_info);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < i; j++) {
			if (infos[i].uuid && infos[j].uuid &&
			    !strcasecmp(infos[i].uuid, infos[j].uuid)) {
				r = ward_fail(err, 0, "%s: GPU %s listed twice", gpus_dir,
					      infos[i].uuid);
				goto out;
			}
			if (infos[i].minor == infos[j].minor ||
			    !pci_cmp(&infos[i].pci, &infos[j].pci)) {
				r = ward_fail(err, 0, "%s: GPUs %s and %s share a minor or bus id",
					      gpus_dir, infos[j].bus, infos[i].bus);
				goto out;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct info *f = &infos[i];
		struct ward_gpu g = {0};
		struct ward_gpu_node node = {0};
		char name[32], why[600];

		/* NVML does not enumerate excluded GPUs, so they take no index. */
		if (f->excluded) {
			ward_warn("GPU %s (%s): excluded by the driver, left out", f->bus,
				  f->uuid ? f->uuid : "uuid unknown");
			continue;
		}
		g.index = index++;
		if (f->unknown_uuid) {
			ward_warn("GPU %s: the driver does not know its UUID yet, left out",
				  f->bus);
			continue;
		}
		snprintf(name, sizeof(name), "nvidia%u", f->minor);
		if (node_verify(inv->dev_root, name, WARD_GPU_MAJOR, f->minor, &node, why,
				sizeof(why)) < 0) {
			ward_warn("GPU %s (%s): left out: %s", f->uuid, f->bus, why);
			continue;
		}
		g.uuid = steal_ptr(f->uuid);
		g.bus_id = steal_ptr(f->bus);
		g.model = steal_ptr(f->model);
		g.minor = f->minor;
		g.nodes = xmalloc(sizeof(*g.nodes));
		g.nodes[0] = node;
		g.n_nodes = 1;
		gpu_add(inv, &g);
	}
out:
	for (size_t i = 0; i < n; i++)
		info_clear(&infos[i]);
	free(infos);
	return r;
}

/* mig-minors: "name minor" lines. */
struct cap_minor {
	char *name;
	unsigned minor;
};

struct caps {
	struct cap_minor *v;
	size_t n;
};

static void caps_free(struct caps *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].name);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int read_mig_minors(const char *proc, struct caps *caps, struct ward_err *err)
{
	cleanup_free char *path = path_join(proc, "driver/nvidia-caps/mig-minors");
	cleanup_free char *text = NULL;
	char *cur, *line;
	int lineno = 0;

	memset(caps, 0, sizeof(*caps));
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0; /* no MIG support loaded */
	text = read_file_at(AT_FDCWD, path, NULL, err);
	if (!text)
		return -1;
	cur = text;
	while ((line = next_line(&cur))) {
		char *s = trim(line), *num;
		unsigned minor;
		lineno++;
		if (!*s)
			continue;
		num = strrchr(s, ' ');
		if (!num)
			num = strrchr(s, '\t');
		if (!num)
			return ward_fail(err, 0, "%s:%d: expected \"<name> <minor>\"", path,
					 lineno);
		*num++ = '\0';
		s = trim(s);
		if (!*s || strchr(s, ' ') || strchr(s, '\t') ||
		    parse_uint(num, 1u << 20, &minor) < 0)
			return ward_fail(err, 0, "%s:%d: expected \"<name> <minor>\"", path,
					 lineno);
		caps->v = xrealloc(caps->v, (caps->n + 1) * sizeof(*caps->v));
		caps->v[caps->n].name = xstrdup(s);
		caps->v[caps->n].minor = minor;
		caps->n++;
	}
	return 0;
}

static const char *cap_name(const struct caps *c, unsigned minor)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].minor == minor)
			return c->v[i].name;
	return NULL;
}

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
		free(c->v[i].name);
		free(c->v[i].file);
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
		mount_add(m, n, host, ctr);
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
		if (list_dir(dirs[d], &names, err) < 0)
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
	if (strncmp(path, prefix, n) || parse_uint(path + n, 1u << 20, &v) < 0)
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

static size_t inv_find_minor(const struct ward_gpu_inventory *inv, unsigned minor)
{
	for (size_t i = 0; i < inv->n; i++)
		if (!inv->gpus[i].mig && inv->gpus[i].minor == minor)
			return i;
	return SIZE_MAX;
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
static int mig_build(const struct ward_gpu_inventory *inv, const struct caps *caps, int caps_major,
		     const struct cdi_dev *d, struct ward_gpu *g, char *why, size_t why_len)
{
	json_t *nodes = json_object_get(d->edits, "deviceNodes"), *n;
	long parent_minor = -1, cap_minor[2] = {-1, -1};
	size_t n_caps = 0, i, pi;
	const struct ward_gpu *parent;
	long gi_id = -1, ci_gi = -1;

	if (!valid_uuid(d->name, "MIG-")) {
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
	pi = inv_find_minor(inv, (unsigned)parent_minor);
	if (pi == SIZE_MAX) {
		snprintf(why, why_len, "parent /dev/nvidia%ld is not a GPU of this host",
			 parent_minor);
		return -1;
	}
	parent = &inv->gpus[pi];
	/* One cap must be gpu<N>/gi<I>/access, the other gpu<N>/gi<I>/ci<C>/access. */
	for (size_t k = 0; k < 2; k++) {
		const char *nm = cap_name(caps, (unsigned)cap_minor[k]);
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
		if (node_verify(inv->dev_root, name, WARD_GPU_MAJOR, (unsigned)parent_minor,
				&g->nodes[0], why, why_len) < 0)
			goto fail;
		g->n_nodes = 1;
		for (size_t k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "nvidia-caps/nvidia-cap%ld", cap_minor[k]);
			if (node_verify(inv->dev_root, name, (unsigned)caps_major,
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
	if (!strncmp(name, "gpu", 3) && isdigit((unsigned char)name[3]))
		ref = name + 3;
	if (!strncasecmp(ref, "GPU-", 4) || isdigit((unsigned char)ref[0])) {
		const struct ward_gpu *g = ward_gpu_find(inv, ref);
		if (g && !g->mig)
			return (struct ward_gpu *)g;
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

static int apply_cdi(struct ward_gpu_inventory *inv, const struct cdi *cdi, const struct caps *caps,
		     int caps_major, struct ward_err *err)
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

/* ------------------------------------------------------------------------------------------ */
/* Inventory */

static void load_uvm(struct ward_gpu_inventory *inv, int uvm_major)
{
	char why[600];
	if (uvm_major < 0) {
		ward_debug("nvidia-uvm is not loaded: no CUDA in containers");
		return;
	}
	if (node_verify(inv->dev_root, "nvidia-uvm", (unsigned)uvm_major, 0, &inv->uvm, why,
			sizeof(why)) < 0) {
		ward_warn("nvidia-uvm left out: %s", why);
		return;
	}
	if (node_verify(inv->dev_root, "nvidia-uvm-tools", (unsigned)uvm_major, 1, &inv->uvm_tools,
			why, sizeof(why)) < 0)
		ward_warn("nvidia-uvm-tools left out: %s", why);
}

struct ward_gpu_inventory *ward_gpu_inventory_load(const struct ward_gpu_roots *roots,
						   struct ward_err *err)
{
	static char *const default_cdi[] = {"/etc/cdi", "/var/run/cdi", NULL};
	const char *proc = roots && roots->proc ? roots->proc : "/proc";
	const char *dev = roots && roots->dev ? roots->dev : "/dev";
	char *const *cdi_dirs = roots && roots->cdi_dirs ? roots->cdi_dirs : default_cdi;
	struct ward_gpu_inventory *inv = xcalloc(1, sizeof(*inv));
	cleanup_free char *drv = path_join(proc, "driver/nvidia");
	cleanup_free char *gpus_dir = path_join(proc, "driver/nvidia/gpus");
	struct majors majors;
	struct caps caps = {0};
	struct cdi cdi = {0};
	struct stat st;
	char why[600];

	inv->proc_root = xstrdup(proc);
	inv->dev_root = xstrdup(dev);
	if (stat(drv, &st) < 0) {
		if (errno == ENOENT)
			return inv; /* no NVIDIA driver: no GPUs */
		ward_fail_errno(err, "%s", drv);
		goto fail;
	}
	if (read_proc_devices(proc, &majors, err) < 0)
		goto fail;
	inv->caps_major = majors.caps > 0 ? (unsigned)majors.caps : 0;
	if (load_whole_gpus(inv, gpus_dir, err) < 0)
		goto fail;
	if (node_verify(dev, "nvidiactl", WARD_GPU_MAJOR, WARD_GPU_CTL_MINOR, &inv->ctl, why,
			sizeof(why)) < 0) {
		if (inv->n)
			ward_warn("all %zu GPUs left out: %s", inv->n, why);
		for (size_t i = 0; i < inv->n; i++)
			gpu_clear(&inv->gpus[i]);
		inv->n = 0;
		return inv;
	}
	load_uvm(inv, majors.uvm);
	if (read_mig_minors(proc, &caps, err) < 0)
		goto fail;
	if (cdi_load(inv, cdi_dirs, &cdi, err) < 0 ||
	    apply_cdi(inv, &cdi, &caps, majors.caps, err) < 0)
		goto fail;
	caps_free(&caps);
	cdi_free(&cdi);
	return inv;
fail:
	caps_free(&caps);
	cdi_free(&cdi);
	ward_gpu_inventory_free(inv);
	return NULL;
}

const struct ward_gpu *ward_gpu_find(const struct ward_gpu_inventory *inv, const char *ref)
{
	struct pci_addr want, have;
	unsigned idx;

	if (!inv || !ref || !*ref)
		return NULL;
	if (!strncasecmp(ref, "GPU-", 4) || !strncasecmp(ref, "MIG-", 4)) {
		for (size_t i = 0; i < inv->n; i++)
			if (!strcasecmp(inv->gpus[i].uuid, ref))
				return &inv->gpus[i];
		return NULL;
	}
	if (parse_uint(ref, 1u << 20, &idx) == 0) {
		for (size_t i = 0; i < inv->n; i++)
			if (!inv->gpus[i].mig && inv->gpus[i].index == (int)idx)
				return &inv->gpus[i];
		return NULL;
	}
	if (parse_pci(ref, &want) == 0) {
		for (size_t i = 0; i < inv->n; i++)
			if (!inv->gpus[i].mig && parse_pci(inv->gpus[i].bus_id, &have) == 0 &&
			    !pci_cmp(&want, &have))
				return &inv->gpus[i];
	}
	return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Requests */

void ward_gpu_request_clear(struct ward_gpu_request *req)
{
	if (!req)
		return;
	strv_free(req->refs);
	free(req->source);
	memset(req, 0, sizeof(*req));
}

/* "nvidia.com/gpu=a, nvidia.com/gpu=b" -> refs. */
static int parse_cdi_value(const char *key, json_t *v, char ***refs, struct ward_err *err)
{
	const char *s = json_string_value(v);
	cleanup_free char *copy = NULL;
	char *tok, *next;

	if (!s)
		return ward_fail(err, 0, "annotation %s: expected a string", key);
	copy = xstrdup(s);
	if (!*trim(copy))
		return ward_fail(err, 0, "annotation %s: empty", key);
	/* Every entry must parse (as in CDI's own parser): no strtok, which skips empty ones. */
	for (tok = copy; tok; tok = next) {
		char *t, *eq, *name;
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		t = trim(tok);
		eq = strchr(t, '=');
		if (!*t)
			return ward_fail(err, 0, "annotation %s: empty device name", key);
		if (!eq)
			return ward_fail(err, 0,
					 "annotation %s: \"%s\": expected a qualified CDI name "
					 "(nvidia.com/gpu=<name>)",
					 key, t);
		*eq = '\0';
		name = eq + 1;
		if (strcmp(t, CDI_KIND))
			return ward_fail(err, 0,
					 "annotation %s: CDI kind \"%s\" is not supported (only "
					 "%s)",
					 key, t, CDI_KIND);
		if (!*name)
			return ward_fail(err, 0, "annotation %s: empty device name", key);
		/* NVIDIA's type-index naming: gpu0 is index 0. */
		if (!strncmp(name, "gpu", 3) && name[3]) {
			bool digits = true;
			for (const char *p = name + 3; *p; p++)
				digits &= isdigit((unsigned char)*p) != 0;
			if (digits)
				name += 3;
		}
		*refs = strv_append(*refs, name);
	}
	return 0;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int request_from_annotations(json_t *root, struct ward_gpu_request *req,
				    struct ward_err *err)
{
	json_t *ann = json_object_get(root, "annotations"), *v;
	const char *key, **keys;
	size_t n = 0;
	int r = 0;

	if (!ann)
		return 0;
	if (!json_is_object(ann))
		return ward_fail(err, 0, "annotations: expected an object");
	keys = xcalloc(json_object_size(ann) + 1, sizeof(*keys));
	json_object_foreach(ann, key, v) if (!strncmp(key, CDI_ANNOTATION, strlen(CDI_ANNOTATION)))
	    keys[n++] = key;
	qsort(keys, n, sizeof(*keys), cmp_cstr);
	for (size_t i = 0; i < n && r == 0; i++) {
		r = parse_cdi_value(keys[i], json_object_get(ann, keys[i]), &req->refs, err);
		if (!req->source)
			req->source = xstrdup(keys[i]);
	}
	if (n && r == 0)
		req->compute = true;
	free(keys);
	return r;
}

static int request_from_devices(json_t *root, struct ward_gpu_request *req, struct ward_err *err)
{
	json_t *devs = json_object_get(json_object_get(root, "linux"), "devices"), *d;
	size_t i;

	if (!devs)
		return 0;
	if (!json_is_array(devs))
		return ward_fail(err, 0, "linux.devices: expected an array");
	json_array_foreach(devs, i, d)
	{
		json_t *type = json_object_get(d, "type"), *ma = json_object_get(d, "major");
		json_t *mi = json_object_get(d, "minor");
		json_int_t minor;
		char ref[32];

		if (!json_is_object(d))
			return ward_fail(err, 0, "linux.devices[%zu]: expected an object", i);
		if (!json_is_string(type) || strcmp(json_string_value(type), "c") ||
		    !json_is_integer(ma) || json_integer_value(ma) != WARD_GPU_MAJOR)
			continue;
		if (!json_is_integer(mi) || json_integer_value(mi) < 0)
			return ward_fail(err, 0, "linux.devices[%zu].minor: expected an integer",
					 i);
		minor = json_integer_value(mi);
		if (minor >= GPU_MAX_MINOR) /* nvidia-modeset, nvidiactl */
			continue;
		snprintf(ref, sizeof(ref), "minor:%lld", (long long)minor);
		req->refs = strv_append(req->refs, ref);
	}
	if (req->refs) {
		req->source = xstrdup("linux.devices");
		req->compute = true; /* CDI injection already applied by the engine */
	}
	return 0;
}

static int request_from_env(json_t *root, struct ward_gpu_request *req, struct ward_err *err)
{
	json_t *env = json_object_get(json_object_get(root, "process"), "env"), *e;
	const char *devices = NULL, *caps = NULL;
	cleanup_free char *copy = NULL;
	char *save = NULL, *tok;
	size_t i, ld = strlen(GPU_ENV_DEVICES), lc = strlen(GPU_ENV_CAPS);

	if (!env)
		return 0;
	if (!json_is_array(env))
		return ward_fail(err, 0, "process.env: expected an array");
	json_array_foreach(env, i, e)
	{
		const char *s = json_string_value(e);
		if (!s)
			return ward_fail(err, 0, "process.env[%zu]: expected a string", i);
		/* The last definition wins, as with docker and NVIDIA's toolkit. */
		if (!strncmp(s, GPU_ENV_DEVICES, ld) && s[ld] == '=')
			devices = s + ld + 1;
		else if (!strncmp(s, GPU_ENV_CAPS, lc) && s[lc] == '=')
			caps = s + lc + 1;
	}
	if (!devices)
		return 0; /* no legacy "CUDA_VERSION means all": GPUs are asked for explicitly */
	req->source = xstrdup(GPU_ENV_DEVICES);
	copy = xstrdup(devices);
	if (strcmp(trim(copy), "none") && strcmp(trim(copy), "void")) {
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *t = trim(tok);
			if (*t)
				req->refs = strv_append(req->refs, t);
		}
	}
	if (!caps || !*caps) {
		req->compute = true; /* the toolkit's default is "utility,compute" */
	} else {
		cleanup_free char *c = xstrdup(caps);
		for (tok = strtok_r(c, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *t = trim(tok);
			if (!strcmp(t, "all") || !strcmp(t, "compute"))
				req->compute = true;
		}
	}
	return 0;
}

int ward_gpu_request_parse(const char *config_json_text, struct ward_gpu_request *req,
			   struct ward_err *err)
{
	json_error_t je;
	json_t *root;
	int r;

	memset(req, 0, sizeof(*req));
	root = json_loads(config_json_text ? config_json_text : "", 0, &je);
	if (!root)
		return ward_fail(err, 0, "config.json:%d: %s", je.line, je.text);
	r = ward_gpu_request_from_json(root, req, err);
	json_decref(root);
	return r;
}

int ward_gpu_request_from_json(const void *spec, struct ward_gpu_request *req, struct ward_err *err)
{
	json_t *root = (json_t *)spec;
	int r;

	memset(req, 0, sizeof(*req));
	if (!json_is_object(root))
		return ward_fail(err, 0, "config.json: expected a JSON object");
	r = request_from_annotations(root, req, err);
	if (r == 0 && !req->source)
		r = request_from_devices(root, req, err);
	if (r == 0 && !req->source)
		r = request_from_env(root, req, err);
	if (r < 0) {
		ward_gpu_request_clear(req);
		return -1;
	}
	if (!req->refs)
		req->refs = xcalloc(1, sizeof(char *));
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Resolution */

static const struct ward_gpu *find_ref(const struct ward_gpu_inventory *inv, const char *ref)
{
	unsigned minor;
	if (!strncmp(ref, "minor:", 6)) {
		size_t i;
		if (parse_uint(ref + 6, GPU_MAX_MINOR, &minor) < 0)
			return NULL;
		i = inv_find_minor(inv, minor);
		return i == SIZE_MAX ? NULL : &inv->gpus[i];
	}
	return ward_gpu_find(inv, ref);
}

int ward_gpu_resolve(const struct ward_gpu_inventory *inv, const struct ward_gpu_request *req,
		     const char *tenant, char *const *tenant_gpus, size_t **out, size_t *n_out,
		     struct ward_err *err)
{
	size_t n = inv ? inv->n : 0, count = 0;
	cleanup_free bool *owned = xcalloc(n + 1, sizeof(bool));
	cleanup_free bool *picked = xcalloc(n + 1, sizeof(bool));
	cleanup_free size_t *res = xcalloc(n + 1, sizeof(size_t));

	*out = NULL;
	*n_out = 0;
	/* Tenant GPUs not on this host are simply absent. */
	for (size_t t = 0; tenant_gpus && tenant_gpus[t]; t++) {
		const struct ward_gpu *g = ward_gpu_find(inv, tenant_gpus[t]);
		if (g)
			owned[g - inv->gpus] = true;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ward_gpu *g = &inv->gpus[i];
		if (g->mig && !owned[i]) {
			const struct ward_gpu *p = ward_gpu_find(inv, g->parent_uuid);
			owned[i] = p && owned[p - inv->gpus];
		}
	}
	for (size_t r = 0; req->refs && req->refs[r]; r++) {
		const char *ref = req->refs[r];
		const struct ward_gpu *g;
		size_t i;

		if (!strcmp(ref, "all")) {
			for (i = 0; i < n; i++)
				if (owned[i] && !picked[i]) {
					picked[i] = true;
					res[count++] = i;
				}
			continue;
		}
		g = find_ref(inv, ref);
		if (!g)
			return ward_fail(err, 0, "GPU \"%s\": no such GPU on this host", ref);
		i = (size_t)(g - inv->gpus);
		if (!owned[i])
			return ward_fail(err, 0, "GPU \"%s\": not assigned to tenant \"%s\"",
					 g->uuid, tenant ? tenant : "");
		if (!picked[i]) {
			picked[i] = true;
			res[count++] = i;
		}
	}
	if (count) {
		*out = steal_ptr(res);
		*n_out = count;
	}
	return 0;
}
