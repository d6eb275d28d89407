/* NVIDIA GPU inventory: the host's GPUs from <proc>/driver/nvidia, <proc>/devices and
 * <proc>/driver/nvidia-caps/mig-minors, their device nodes under the dev root, and the MIG
 * devices and library mounts gpu_cdi.c adds from CDI specs (see gpu.h). Pure text parsing
 * plus lstat of device nodes: no NVML, no CUDA, nothing opened but plain files and
 * directories. Every node ward hands out is named by ward, taken from the dev root and
 * verified with lstat against the expected major:minor. Also the small helpers the other
 * gpu_*.c files share (gpu_internal.h). */
#include "gpu_inventory.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gpu_cdi.h"
#include "gpu_internal.h"
#include "log.h"
#include "util.h"

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

void gpu_clear(struct ward_gpu *g)
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
void gpu_mount_add(struct ward_gpu_mount **m, size_t *n, const char *host, const char *ctr)
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

char *gpu_trim(char *s)
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
int gpu_parse_uint(const char *s, unsigned max, unsigned *out)
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
bool gpu_valid_uuid(const char *s, const char *prefix)
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
int gpu_node_verify(const char *dev_root, const char *name, unsigned major, unsigned minor,
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
int gpu_list_dir(const char *path, char ***names, struct ward_err *err)
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

/* The next line that is not blank, trimmed; *lineno counts every line. NULL at the end. */
static char *next_content_line(char **cursor, int *lineno)
{
	char *line;
	while ((line = next_line(cursor))) {
		char *s = gpu_trim(line);
		++*lineno;
		if (*s)
			return s;
	}
	return NULL;
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
	char *cur = text, *s;
	bool chr = false;
	int lineno = 0;

	m->nvidia = m->uvm = m->caps = -1;
	if (!text)
		return -1;
	while ((s = next_content_line(&cur, &lineno))) {
		char *name;
		unsigned major;
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
		name = gpu_trim(name);
		if (gpu_parse_uint(s, 4095, &major) < 0 || !*name)
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
	while ((line = next_content_line(&cur, &lineno))) {
		char *colon, *key, *val;
		colon = strchr(line, ':');
		if (!colon)
			return ward_fail(err, 0, "%s:%d: expected \"Key: value\"", path, lineno);
		*colon = '\0';
		key = gpu_trim(line);
		val = gpu_trim(colon + 1);
		if (!strcmp(key, "GPU UUID")) {
			if (out->uuid || out->unknown_uuid)
				return ward_fail(err, 0, "%s:%d: duplicate GPU UUID", path, lineno);
			if (val[0] == '?') {
				out->unknown_uuid = true; /* GPU not initialised */
			} else if (!gpu_valid_uuid(val, "GPU-")) {
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
			if (gpu_parse_uint(val, GPU_MAX_MINOR - 1, &out->minor) < 0)
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

void gpu_add(struct ward_gpu_inventory *inv, struct ward_gpu *g)
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

	if (gpu_list_dir(gpus_dir, &names, err) < 0)
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
		if (gpu_node_verify(inv->dev_root, name, WARD_GPU_MAJOR, f->minor, &node, why,
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

struct gpu_caps {
	struct cap_minor *v;
	size_t n;
};

static void caps_free(struct gpu_caps *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].name);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int read_mig_minors(const char *proc, struct gpu_caps *caps, struct ward_err *err)
{
	cleanup_free char *path = path_join(proc, "driver/nvidia-caps/mig-minors");
	cleanup_free char *text = NULL;
	char *cur, *s;
	int lineno = 0;

	memset(caps, 0, sizeof(*caps));
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0; /* no MIG support loaded */
	text = read_file_at(AT_FDCWD, path, NULL, err);
	if (!text)
		return -1;
	cur = text;
	while ((s = next_content_line(&cur, &lineno))) {
		char *num;
		unsigned minor;
		num = strrchr(s, ' ');
		if (!num)
			num = strrchr(s, '\t');
		if (!num)
			return ward_fail(err, 0, "%s:%d: expected \"<name> <minor>\"", path,
					 lineno);
		*num++ = '\0';
		s = gpu_trim(s);
		if (!*s || strchr(s, ' ') || strchr(s, '\t') ||
		    gpu_parse_uint(num, 1u << 20, &minor) < 0)
			return ward_fail(err, 0, "%s:%d: expected \"<name> <minor>\"", path,
					 lineno);
		caps->v = xrealloc(caps->v, (caps->n + 1) * sizeof(*caps->v));
		caps->v[caps->n].name = xstrdup(s);
		caps->v[caps->n].minor = minor;
		caps->n++;
	}
	return 0;
}

const char *gpu_cap_name(const struct gpu_caps *c, unsigned minor)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].minor == minor)
			return c->v[i].name;
	return NULL;
}

size_t gpu_find_minor(const struct ward_gpu_inventory *inv, unsigned minor)
{
	for (size_t i = 0; i < inv->n; i++)
		if (!inv->gpus[i].mig && inv->gpus[i].minor == minor)
			return i;
	return SIZE_MAX;
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
	if (gpu_node_verify(inv->dev_root, "nvidia-uvm", (unsigned)uvm_major, 0, &inv->uvm, why,
			    sizeof(why)) < 0) {
		ward_warn("nvidia-uvm left out: %s", why);
		return;
	}
	if (gpu_node_verify(inv->dev_root, "nvidia-uvm-tools", (unsigned)uvm_major, 1,
			    &inv->uvm_tools, why, sizeof(why)) < 0)
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
	struct gpu_caps caps = {0};
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
	if (gpu_node_verify(dev, "nvidiactl", WARD_GPU_MAJOR, WARD_GPU_CTL_MINOR, &inv->ctl, why,
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
	if (gpu_cdi_load(inv, cdi_dirs, &caps, majors.caps, err) < 0)
		goto fail;
	caps_free(&caps);
	return inv;
fail:
	caps_free(&caps);
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
	if (gpu_parse_uint(ref, 1u << 20, &idx) == 0) {
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
