/* tenant: a stand-in GPU tenant for tests/gpu/real-gpu.sh. Loads libcuda.so.1 with its own
 * prototypes (no CUDA toolkit), works on device 0 of what CUDA_VISIBLE_DEVICES shows.
 *
 *   tenant uuid                 print device 0's UUID ("GPU-...")
 *   tenant fill PATTERN         allocate all it can, write the 64-bit PATTERN (hex) everywhere,
 *                               exit without freeing (the driver reclaims at exit)
 *   tenant scan PATTERN         allocate all it can, read it all back, count PATTERN words
 *   tenant bw [MiB]             cuMemsetD32_v2 bandwidth on one buffer (default 1024 MiB)
 *
 * Prints "key=value" lines. LIBCUDA overrides the library name. Exit 0, or 1 on a failure. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct {
	unsigned char bytes[16];
} CUuuid;

static CUresult (*cuInit)(unsigned);
static CUresult (*cuDeviceGet)(CUdevice *, int);
static CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
static CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*cuCtxSetCurrent)(CUcontext);
static CUresult (*cuCtxSynchronize)(void);
static CUresult (*cuMemGetInfo)(size_t *, size_t *);
static CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
static CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);

#define MiB   (1024ULL * 1024)
#define PIECE (64 * MiB)

#define CK(call)                                                                                   \
	do {                                                                                       \
		CUresult _rc = (call);                                                             \
		if (_rc) {                                                                         \
			fprintf(stderr, "tenant: %s: CUDA error %d\n", #call, _rc);                \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static void *sym(void *lib, const char *name)
{
	void *f = dlsym(lib, name);
	if (!f) {
		fprintf(stderr, "tenant: libcuda lacks %s\n", name);
		exit(1);
	}
	return f;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void load(void)
{
	const char *name = getenv("LIBCUDA") ? getenv("LIBCUDA") : "libcuda.so.1";
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "tenant: %s\n", dlerror());
		exit(1);
	}
	*(void **)&cuInit = sym(lib, "cuInit");
	*(void **)&cuDeviceGet = sym(lib, "cuDeviceGet");
	*(void **)&cuDeviceGetUuid = dlsym(lib, "cuDeviceGetUuid_v2")
					 ? sym(lib, "cuDeviceGetUuid_v2")
					 : sym(lib, "cuDeviceGetUuid");
	*(void **)&cuDevicePrimaryCtxRetain = sym(lib, "cuDevicePrimaryCtxRetain");
	*(void **)&cuCtxSetCurrent = sym(lib, "cuCtxSetCurrent");
	*(void **)&cuCtxSynchronize = sym(lib, "cuCtxSynchronize");
	*(void **)&cuMemGetInfo = sym(lib, "cuMemGetInfo_v2");
	*(void **)&cuMemAlloc = sym(lib, "cuMemAlloc_v2");
	*(void **)&cuMemsetD32 = sym(lib, "cuMemsetD32_v2");
	*(void **)&cuMemcpyHtoD = sym(lib, "cuMemcpyHtoD_v2");
	*(void **)&cuMemcpyDtoH = sym(lib, "cuMemcpyDtoH_v2");
}

static CUdevice open_dev(void)
{
	CUdevice dev;
	CUcontext ctx;
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	return dev;
}

struct chunk {
	CUdeviceptr p;
	size_t len;
};

/* Everything allocatable: 1 GiB chunks, halving on failure down to 2 MiB. */
static struct chunk *alloc_all(size_t *n, size_t *bytes)
{
	size_t cap = 1024, len = 1024 * MiB;
	struct chunk *c = malloc(cap * sizeof(*c));
	*n = *bytes = 0;
	while (c && len >= 2 * MiB) {
		CUdeviceptr p;
		if (cuMemAlloc(&p, len) != 0) {
			len /= 2;
			continue;
		}
		if (*n == cap)
			c = realloc(c, (cap *= 2) * sizeof(*c));
		if (!c)
			break;
		c[(*n)++] = (struct chunk){p, len};
		*bytes += len;
	}
	if (!c) {
		fprintf(stderr, "tenant: out of host memory\n");
		exit(1);
	}
	return c;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	load();
	CUdevice dev = open_dev();
	size_t free_b, total;
	CK(cuMemGetInfo(&free_b, &total));
	printf("total=%zu\nfree=%zu\n", total, free_b);

	if (!strcmp(argv[1], "uuid")) {
		CUuuid u;
		const unsigned char *b = u.bytes;
		CK(cuDeviceGetUuid(&u, dev));
		printf("uuid=GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%"
		       "02x\n",
		       b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		       b[12], b[13], b[14], b[15]);
		return 0;
	}
	if (!strcmp(argv[1], "bw")) {
		size_t len = (argc > 2 ? strtoull(argv[2], NULL, 10) : 1024) * MiB;
		CUdeviceptr p;
		int reps = 10;
		CK(cuMemAlloc(&p, len));
		CK(cuMemsetD32(p, 0, len / 4)); /* warm up */
		CK(cuCtxSynchronize());
		double t0 = now();
		for (int i = 0; i < reps; i++)
			CK(cuMemsetD32(p, (unsigned)i, len / 4));
		CK(cuCtxSynchronize());
		double s = now() - t0;
		printf("memset_bytes=%zu\nmemset_seconds=%.4f\nmemset_gbps=%.2f\n", len * reps, s,
		       (double)len * reps / s / 1e9);
		return 0;
	}
	if (argc < 3)
		return 2;
	uint64_t pat = strtoull(argv[2], NULL, 16);
	uint64_t *buf = malloc(PIECE);
	size_t n, bytes;
	if (!buf)
		return 1;
	struct chunk *c = alloc_all(&n, &bytes);
	printf("allocated=%zu\nchunks=%zu\n", bytes, n);
	if (!strcmp(argv[1], "fill")) {
		for (size_t i = 0; i < PIECE / 8; i++)
			buf[i] = pat;
		for (size_t i = 0; i < n; i++)
			for (size_t off = 0; off < c[i].len; off += PIECE)
				CK(cuMemcpyHtoD(c[i].p + off, buf,
						c[i].len - off < PIECE ? c[i].len - off : PIECE));
		CK(cuCtxSynchronize());
		printf("filled=%zu\n", bytes);
		return 0; /* no cuMemFree: the process exit leaves it to the driver */
	}
	if (!strcmp(argv[1], "scan")) {
		uint64_t found = 0, nonzero = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t off = 0; off < c[i].len; off += PIECE) {
				size_t k = c[i].len - off < PIECE ? c[i].len - off : PIECE;
				CK(cuMemcpyDtoH(buf, c[i].p + off, k));
				for (size_t w = 0; w < k / 8; w++) {
					found += buf[w] == pat;
					nonzero += buf[w] != 0;
				}
			}
		printf("scanned=%zu\npattern_words=%llu\nnonzero_words=%llu\n", bytes,
		       (unsigned long long)found, (unsigned long long)nonzero);
		return 0;
	}
	return 2;
}
