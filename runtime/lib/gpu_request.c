/* What a container asks for, from its config.json (CDI annotations, linux.devices,
 * NVIDIA_VISIBLE_DEVICES: pure parsing, no host access), and which GPUs of the inventory
 * that is for a tenant (ward_gpu_resolve). See gpu_types.h. */
#include "gpu_request.h"

#include <ctype.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu_internal.h"
#include "gpu_inventory.h"
#include "log.h"
#include "util.h"

#define CDI_ANNOTATION	"cdi.k8s.io/"
#define GPU_ENV_DEVICES "NVIDIA_VISIBLE_DEVICES"
#define GPU_ENV_CAPS	"NVIDIA_DRIVER_CAPABILITIES"

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
	if (!*gpu_trim(copy))
		return ward_fail(err, 0, "annotation %s: empty", key);
	/* Every entry must parse (as in CDI's own parser): no strtok, which skips empty ones. */
	for (tok = copy; tok; tok = next) {
		char *t, *eq, *name;
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		t = gpu_trim(tok);
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
	if (strcmp(gpu_trim(copy), "none") && strcmp(gpu_trim(copy), "void")) {
		for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *t = gpu_trim(tok);
			if (*t)
				req->refs = strv_append(req->refs, t);
		}
	}
	if (!caps || !*caps) {
		req->compute = true; /* the toolkit's default is "utility,compute" */
	} else {
		cleanup_free char *c = xstrdup(caps);
		for (tok = strtok_r(c, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *t = gpu_trim(tok);
			if (!strcmp(t, "all") || !strcmp(t, "compute"))
				req->compute = true;
		}
	}
	return 0;
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
		if (gpu_parse_uint(ref + 6, GPU_MAX_MINOR, &minor) < 0)
			return NULL;
		i = gpu_find_minor(inv, minor);
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
