/* A stub libcuda.so.1 for GPU-free tests: the handful of CUDA driver API calls the scrubber
 * (gpu-hooks/wipe.c) makes, backed by files. Never shipped.
 *
 * Configuration lives beside the library (found with dladdr), because the scrub process has
 * an empty environment:
 *   <dir>/stub/gpus        one line per device: "<uuid> <bytes>"
 *   <dir>/stub/mem-<uuid>  the device memory: a file of <bytes> (created sparse if missing)
 *   <dir>/stub/knobs       optional lines:
 *       oom_after N        cuMemAlloc_v2 fails with OUT_OF_MEMORY after N allocations
 *       fail SYMBOL CODE   SYMBOL returns CODE (after logging the call)
 *       sleep_in SYMBOL S  SYMBOL sleeps S seconds first
 *       busy_bytes N       N bytes held by "another process": the tail of the memory file,
 *                          never handed out, not free
 *       wrong_uuid 1       cuDeviceGetUuid(_v2) returns a different UUID
 *       memset_noop 1      cuMemsetD*_v2 succeed without writing
 *   <dir>/stub/log         appended, one line per call
 * CUDA_VISIBLE_DEVICES (comma-separated UUIDs, UUID prefixes or indices) selects devices as
 * CUDA does; unset: all. A retained primary context takes CTX_RESERVE bytes at the start of
 * the memory file, which the stub zeroes (its "context structures" overwrite it), so
 * free = size - busy_bytes - CTX_RESERVE - allocated. Allocations are first-fit ranges of the
 * rest of the file; calls before cuInit return CUDA_ERROR_NOT_INITIALIZED, memory calls
 * without a current context CUDA_ERROR_INVALID_CONTEXT, out-of-range pointers
 * CUDA_ERROR_INVALID_VALUE. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct {
	char bytes[16];
} CUuuid;

#define CUDA_SUCCESS		   0
#define CUDA_ERROR_INVALID_VALUE   1
#define CUDA_ERROR_OUT_OF_MEMORY   2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE	   100
#define CUDA_ERROR_INVALID_DEVICE  101
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_FILE_NOT_FOUND  301
#define CUDA_ERROR_UNKNOWN	   999

#define CTX_RESERVE (1024 * 1024)
#define ALIGN	    4096
#define PTR_BASE    0x7f0000000000ULL
#define MAX_DEVS    8
#define MAX_KNOBS   16

struct range {
	uint64_t off, len;
	bool used;
};

struct stub_ctx {
	int dev;
};

struct dev {
	char uuid[64];
	uint64_t size;
	int memfd;
	unsigned refs; /* primary context retain count */
	struct stub_ctx ctx;
	struct range *r; /* sorted, covering [CTX_RESERVE, size - busy) */
	size_t nr;
	uint64_t allocated;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static bool inited;
static char dir[PATH_MAX]; /* <dir>/stub */
static struct dev devs[MAX_DEVS];
static int ndevs;
static struct {
	long oom_after, n_allocs;
	uint64_t busy;
	bool wrong_uuid, memset_noop;
	struct {
		char sym[64];
		int code, sleep_s;
	} k[MAX_KNOBS];
	int nk;
} knobs = {.oom_after = -1};
static __thread struct stub_ctx *current;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	char path[PATH_MAX + 8], line[1024];
	va_list ap;
	if (!dir[0])
		return;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	snprintf(path, sizeof(path), "%s/log", dir);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	ssize_t w = write(fd, line, (size_t)n);
	(void)w;
	close(fd);
}

/* Knobs "fail SYM CODE" / "sleep_in SYM S" for this call; logs the call. */
static CUresult enter(const char *sym, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static CUresult enter(const char *sym, const char *fmt, ...)
{
	char args[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	logf_("%s(%s)", sym, args);
	for (int i = 0; i < knobs.nk; i++) {
		if (strcmp(knobs.k[i].sym, sym) != 0)
			continue;
		if (knobs.k[i].sleep_s > 0)
			sleep((unsigned)knobs.k[i].sleep_s);
		if (knobs.k[i].code)
			return knobs.k[i].code;
	}
	return CUDA_SUCCESS;
}

static CUresult leave(const char *sym, CUresult rc)
{
	if (rc != CUDA_SUCCESS)
		logf_("%s -> %d", sym, rc);
	return rc;
}

static void find_dir(void)
{
	Dl_info info;
	char real[PATH_MAX];
	if (!dladdr((void *)&find_dir, &info) || !info.dli_fname || !realpath(info.dli_fname, real))
		return;
	char *slash = strrchr(real, '/');
	if (!slash)
		return;
	*slash = '\0';
	snprintf(dir, sizeof(dir), "%.*s/stub", (int)(sizeof(dir) - 6), real);
}

static FILE *open_cfg(const char *name)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return fopen(path, "re");
}

static void load_knobs(void)
{
	FILE *f = open_cfg("knobs");
	char key[64], a[64];
	long long v;
	if (!f)
		return;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "fail %63s %lld", a, &v) == 2 && knobs.nk < MAX_KNOBS) {
			snprintf(knobs.k[knobs.nk].sym, sizeof(knobs.k[0].sym), "%s", a);
			knobs.k[knobs.nk++].code = (int)v;
		} else if (sscanf(line, "sleep_in %63s %lld", a, &v) == 2 && knobs.nk < MAX_KNOBS) {
			snprintf(knobs.k[knobs.nk].sym, sizeof(knobs.k[0].sym), "%s", a);
			knobs.k[knobs.nk++].sleep_s = (int)v;
		} else if (sscanf(line, "%63s %lld", key, &v) == 2) {
			if (!strcmp(key, "oom_after"))
				knobs.oom_after = v;
			else if (!strcmp(key, "busy_bytes"))
				knobs.busy = (uint64_t)v;
			else if (!strcmp(key, "wrong_uuid"))
				knobs.wrong_uuid = v != 0;
			else if (!strcmp(key, "memset_noop"))
				knobs.memset_noop = v != 0;
		}
	}
	fclose(f);
}

/* Is device d (index among all, uuid u) selected by CUDA_VISIBLE_DEVICES entry e? */
static bool entry_matches(const char *e, size_t len, int d, const char *u)
{
	if (len == 0)
		return false;
	if (isdigit((unsigned char)e[0])) {
		char *end;
		long idx = strtol(e, &end, 10);
		return (size_t)(end - e) == len && idx == d;
	}
	return len <= strlen(u) && strncasecmp(e, u, len) == 0; /* CUDA takes prefixes */
}

static CUresult load_gpus(void)
{
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");
	struct dev all[MAX_DEVS];
	int nall = 0;
	FILE *f = open_cfg("gpus");
	if (!f)
		return CUDA_ERROR_NO_DEVICE;
	char line[256], u[64];
	unsigned long long size;
	while (nall < MAX_DEVS && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %llu", u, &size) == 2) {
			memset(&all[nall], 0, sizeof(all[0]));
			snprintf(all[nall].uuid, sizeof(all[0].uuid), "%s", u);
			all[nall++].size = size;
		}
	fclose(f);

	/* Order of CUDA_VISIBLE_DEVICES; an entry that matches nothing ends the list. */
	ndevs = 0;
	if (!vis) {
		for (int i = 0; i < nall; i++)
			devs[ndevs++] = all[i];
	} else {
		const char *e = vis;
		while (*e && ndevs < MAX_DEVS) {
			size_t len = strcspn(e, ",");
			int hit = -1;
			for (int i = 0; i < nall; i++)
				if (entry_matches(e, len, i, all[i].uuid))
					hit = hit == -1 ? i : -2; /* ambiguous prefix: invalid */
			if (hit < 0)
				break;
			devs[ndevs++] = all[hit];
			e += len + (e[len] == ',');
		}
	}
	for (int i = 0; i < ndevs; i++) {
		char name[PATH_MAX + 80];
		if (snprintf(name, sizeof(name), "%s/mem-%s", dir, devs[i].uuid) >=
		    (int)sizeof(name))
			return CUDA_ERROR_FILE_NOT_FOUND;
		devs[i].memfd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (devs[i].memfd < 0 || ftruncate(devs[i].memfd, (off_t)devs[i].size) < 0)
			return CUDA_ERROR_FILE_NOT_FOUND;
		devs[i].ctx.dev = i;
	}
	return ndevs ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

static void reset_heap(struct dev *d)
{
	uint64_t end = d->size > knobs.busy + CTX_RESERVE ? d->size - knobs.busy : CTX_RESERVE;
	free(d->r);
	d->r = calloc(1, sizeof(*d->r));
	d->nr = 1;
	d->r[0] = (struct range){.off = CTX_RESERVE, .len = end - CTX_RESERVE};
	d->allocated = 0;
}

static uint64_t dev_free(const struct dev *d)
{
	uint64_t held = knobs.busy + CTX_RESERVE + d->allocated;
	return d->size > held ? d->size - held : 0;
}

static int write_pattern(int fd, uint64_t off, uint64_t len, uint32_t v)
{
	static uint32_t buf[(1 << 20) / 4];
	for (size_t i = 0; i < sizeof(buf) / 4; i++)
		buf[i] = v;
	while (len) {
		size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
		ssize_t w = pwrite(fd, buf, n, (off_t)off);
		if (w <= 0)
			return -1;
		off += (uint64_t)w;
		len -= (uint64_t)w;
	}
	return 0;
}

/* --- Exported API ---------------------------------------------------------------------- */

CUresult cuInit(unsigned flags)
{
	CUresult rc;
	pthread_mutex_lock(&mu);
	if (!dir[0]) {
		find_dir();
		load_knobs();
	}
	const char *lp = getenv("LD_PRELOAD"), *foo = getenv("FOO"),
		   *cvd = getenv("CUDA_VISIBLE_DEVICES");
	logf_("env LD_PRELOAD=%s FOO=%s CUDA_VISIBLE_DEVICES=%s", lp ? lp : "(unset)",
	      foo ? foo : "(unset)", cvd ? cvd : "(unset)");
	rc = enter("cuInit", "%u", flags);
	if (rc == CUDA_SUCCESS && flags != 0)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && !inited) {
		rc = load_gpus();
		if (rc == CUDA_SUCCESS) {
			for (int i = 0; i < ndevs; i++)
				reset_heap(&devs[i]);
			inited = true;
		}
	}
	pthread_mutex_unlock(&mu);
	return leave("cuInit", rc);
}

CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 12040;
	return CUDA_SUCCESS;
}

#define BEGIN(sym, ...)                                                                            \
	pthread_mutex_lock(&mu);                                                                   \
	CUresult rc = enter(sym, __VA_ARGS__);                                                     \
	if (rc == CUDA_SUCCESS && !inited)                                                         \
		rc = CUDA_ERROR_NOT_INITIALIZED;
#define END(sym)                                                                                   \
	pthread_mutex_unlock(&mu);                                                                 \
	return leave(sym, rc)

CUresult cuDeviceGetCount(int *count)
{
	BEGIN("cuDeviceGetCount", "%p", (void *)count);
	if (rc == CUDA_SUCCESS && !count)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		*count = ndevs;
	END("cuDeviceGetCount");
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	BEGIN("cuDeviceGet", "%d", ordinal);
	if (rc == CUDA_SUCCESS && !dev)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && (ordinal < 0 || ordinal >= ndevs))
		rc = CUDA_ERROR_INVALID_DEVICE;
	if (rc == CUDA_SUCCESS)
		*dev = ordinal;
	END("cuDeviceGet");
}

static CUresult get_uuid(CUuuid *out, CUdevice d)
{
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if (d < 0 || d >= ndevs)
		return CUDA_ERROR_INVALID_DEVICE;
	const char *s = strchr(devs[d].uuid, '-'); /* after "GPU"/"MIG" */
	s = s ? s + 1 : devs[d].uuid;
	int n = 0;
	for (; *s && n < 32; s++) {
		if (*s == '-')
			continue;
		char hex[3] = {s[0], s[1], 0};
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]))
			return CUDA_ERROR_UNKNOWN;
		out->bytes[n / 2] = (char)strtoul(hex, NULL, 16);
		n += 2;
		s++;
	}
	if (n != 32)
		return CUDA_ERROR_UNKNOWN;
	if (knobs.wrong_uuid)
		out->bytes[15] ^= 0x5a;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice d)
{
	BEGIN("cuDeviceGetUuid", "%d", d);
	if (rc == CUDA_SUCCESS)
		rc = get_uuid(uuid, d);
	END("cuDeviceGetUuid");
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice d)
{
	BEGIN("cuDeviceGetUuid_v2", "%d", d);
	if (rc == CUDA_SUCCESS)
		rc = get_uuid(uuid, d);
	END("cuDeviceGetUuid_v2");
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice d)
{
	BEGIN("cuDevicePrimaryCtxRetain", "%d", d);
	if (rc == CUDA_SUCCESS && !pctx)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && (d < 0 || d >= ndevs))
		rc = CUDA_ERROR_INVALID_DEVICE;
	if (rc == CUDA_SUCCESS && devs[d].refs == 0 &&
	    write_pattern(devs[d].memfd, 0, CTX_RESERVE, 0) < 0)
		rc = CUDA_ERROR_UNKNOWN;
	if (rc == CUDA_SUCCESS) {
		devs[d].refs++;
		*pctx = (CUcontext)(void *)&devs[d].ctx;
	}
	END("cuDevicePrimaryCtxRetain");
}

static CUresult ctx_release(CUdevice d)
{
	if (d < 0 || d >= ndevs)
		return CUDA_ERROR_INVALID_DEVICE;
	if (devs[d].refs == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (--devs[d].refs == 0) {
		/* Destroying the context frees its allocations, as CUDA does. */
		if (devs[d].allocated)
			logf_("primary context %d destroyed with %llu bytes allocated", d,
			      (unsigned long long)devs[d].allocated);
		reset_heap(&devs[d]);
		if (current == &devs[d].ctx)
			current = NULL;
	}
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
	BEGIN("cuDevicePrimaryCtxRelease_v2", "%d", d);
	if (rc == CUDA_SUCCESS)
		rc = ctx_release(d);
	END("cuDevicePrimaryCtxRelease_v2");
}

CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
	BEGIN("cuDevicePrimaryCtxRelease", "%d", d);
	if (rc == CUDA_SUCCESS)
		rc = ctx_release(d);
	END("cuDevicePrimaryCtxRelease");
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	BEGIN("cuCtxSetCurrent", "%p", (void *)ctx);
	struct stub_ctx *c = (struct stub_ctx *)(void *)ctx;
	if (rc == CUDA_SUCCESS && c &&
	    (c->dev < 0 || c->dev >= ndevs || c != &devs[c->dev].ctx || !devs[c->dev].refs))
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS)
		current = c;
	END("cuCtxSetCurrent");
}

CUresult cuCtxSynchronize(void)
{
	BEGIN("cuCtxSynchronize", "%s", "");
	if (rc == CUDA_SUCCESS && !current)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	END("cuCtxSynchronize");
}

CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
	BEGIN("cuMemGetInfo_v2", "%p, %p", (void *)free_b, (void *)total);
	if (rc == CUDA_SUCCESS && (!free_b || !total))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && !current)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS) {
		struct dev *d = &devs[current->dev];
		*free_b = dev_free(d);
		*total = d->size;
		logf_("cuMemGetInfo_v2 -> free %zu total %zu", *free_b, *total);
	}
	END("cuMemGetInfo_v2");
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
	BEGIN("cuMemAlloc_v2", "%zu", bytes);
	if (rc == CUDA_SUCCESS && (!dptr || !bytes))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && !current)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS && knobs.oom_after >= 0 && knobs.n_allocs >= knobs.oom_after)
		rc = CUDA_ERROR_OUT_OF_MEMORY;
	if (rc == CUDA_SUCCESS) {
		struct dev *d = &devs[current->dev];
		uint64_t len = ((uint64_t)bytes + ALIGN - 1) / ALIGN * ALIGN;
		size_t i = 0;
		while (i < d->nr && (d->r[i].used || d->r[i].len < len))
			i++;
		if (len > dev_free(d) || i == d->nr) {
			rc = CUDA_ERROR_OUT_OF_MEMORY;
		} else {
			if (d->r[i].len > len) { /* split: the rest stays free after it */
				d->r = realloc(d->r, (d->nr + 1) * sizeof(*d->r));
				memmove(&d->r[i + 1], &d->r[i], (d->nr - i) * sizeof(*d->r));
				d->nr++;
				d->r[i + 1].off = d->r[i].off + len;
				d->r[i + 1].len = d->r[i].len - len;
				d->r[i].len = len;
			}
			d->r[i].used = true;
			d->allocated += len;
			knobs.n_allocs++;
			*dptr = PTR_BASE + d->r[i].off;
			logf_("cuMemAlloc_v2 -> 0x%llx", *dptr);
		}
	}
	END("cuMemAlloc_v2");
}

/* The allocation holding [p, p + len), or NULL. */
static struct range *lookup(struct dev *d, CUdeviceptr p, uint64_t len)
{
	if (p < PTR_BASE)
		return NULL;
	uint64_t off = p - PTR_BASE;
	for (size_t i = 0; i < d->nr; i++)
		if (d->r[i].used && off >= d->r[i].off && off - d->r[i].off < d->r[i].len &&
		    len <= d->r[i].len - (off - d->r[i].off))
			return &d->r[i];
	return NULL;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
	BEGIN("cuMemFree_v2", "0x%llx", p);
	if (rc == CUDA_SUCCESS && !current)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS) {
		struct dev *d = &devs[current->dev];
		struct range *r = lookup(d, p, 0);
		if (!r || r->off != p - PTR_BASE) {
			rc = CUDA_ERROR_INVALID_VALUE;
		} else {
			size_t i = (size_t)(r - d->r);
			r->used = false;
			d->allocated -= r->len;
			/* coalesce with free neighbours */
			if (i + 1 < d->nr && !d->r[i + 1].used) {
				d->r[i].len += d->r[i + 1].len;
				memmove(&d->r[i + 1], &d->r[i + 2],
					(d->nr - i - 2) * sizeof(*d->r));
				d->nr--;
			}
			if (i > 0 && !d->r[i - 1].used) {
				d->r[i - 1].len += d->r[i].len;
				memmove(&d->r[i], &d->r[i + 1], (d->nr - i - 1) * sizeof(*d->r));
				d->nr--;
			}
		}
	}
	END("cuMemFree_v2");
}

static CUresult memset_common(CUdeviceptr p, uint32_t v, uint64_t bytes)
{
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	struct dev *d = &devs[current->dev];
	if (!lookup(d, p, bytes))
		return CUDA_ERROR_INVALID_VALUE;
	if (knobs.memset_noop)
		return CUDA_SUCCESS;
	return write_pattern(d->memfd, p - PTR_BASE, bytes, v) < 0 ? CUDA_ERROR_UNKNOWN
								   : CUDA_SUCCESS;
}

CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned ui, size_t n)
{
	BEGIN("cuMemsetD32_v2", "0x%llx, 0x%x, %zu", p, ui, n);
	if (rc == CUDA_SUCCESS && (p % 4 || n > SIZE_MAX / 4))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = memset_common(p, ui, (uint64_t)n * 4);
	END("cuMemsetD32_v2");
}

CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char uc, size_t n)
{
	BEGIN("cuMemsetD8_v2", "0x%llx, 0x%x, %zu", p, uc, n);
	if (rc == CUDA_SUCCESS && n % 4) /* the stub keeps it simple */
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS)
		rc = memset_common(p, 0x01010101u * uc, n);
	END("cuMemsetD8_v2");
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
	BEGIN("cuMemcpyDtoH_v2", "%p, 0x%llx, %zu", dst, src, bytes);
	if (rc == CUDA_SUCCESS && !dst)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && !current)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS && !lookup(&devs[current->dev], src, bytes))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS &&
	    pread(devs[current->dev].memfd, dst, bytes, (off_t)(src - PTR_BASE)) != (ssize_t)bytes)
		rc = CUDA_ERROR_UNKNOWN;
	END("cuMemcpyDtoH_v2");
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
	BEGIN("cuMemcpyHtoD_v2", "0x%llx, %p, %zu", dst, src, bytes);
	if (rc == CUDA_SUCCESS && !src)
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS && !current)
		rc = CUDA_ERROR_INVALID_CONTEXT;
	if (rc == CUDA_SUCCESS && !lookup(&devs[current->dev], dst, bytes))
		rc = CUDA_ERROR_INVALID_VALUE;
	if (rc == CUDA_SUCCESS &&
	    pwrite(devs[current->dev].memfd, src, bytes, (off_t)(dst - PTR_BASE)) != (ssize_t)bytes)
		rc = CUDA_ERROR_UNKNOWN;
	END("cuMemcpyHtoD_v2");
}

static const char *err_string(CUresult rc)
{
	switch (rc) {
	case CUDA_SUCCESS:
		return "no error";
	case CUDA_ERROR_INVALID_VALUE:
		return "invalid argument";
	case CUDA_ERROR_OUT_OF_MEMORY:
		return "out of memory";
	case CUDA_ERROR_NOT_INITIALIZED:
		return "initialization error";
	case CUDA_ERROR_NO_DEVICE:
		return "no CUDA-capable device is detected";
	case CUDA_ERROR_INVALID_DEVICE:
		return "invalid device ordinal";
	case CUDA_ERROR_INVALID_CONTEXT:
		return "invalid device context";
	case CUDA_ERROR_FILE_NOT_FOUND:
		return "file not found";
	case CUDA_ERROR_UNKNOWN:
		return "unknown error";
	default:
		return NULL;
	}
}

CUresult cuGetErrorString(CUresult rc, const char **str)
{
	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	*str = err_string(rc);
	return *str ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
