/* Wiping a GPU's memory through the CUDA driver API (see wipe.h for the contract).
 *
 * The parent (ward-gpu-hook) never loads libcuda: it checks for processes on the GPU, forks a
 * child with a fixed environment, and reads a fixed-size report back over a pipe, killing the
 * child if it runs past the timeout. The child loads libcuda.so.1 with our own prototypes
 * (no CUDA headers), scrubs, and writes the report. The parent must be single-threaded when
 * it calls ward_gpu_wipe (the child does much more than async-signal-safe work). */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"
#include "wipe.h"

/* --- Our own declarations of the CUDA driver API (cuda.h is never included) ------------- */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct {
	char bytes[16];
} CUuuid;

#define CUDA_SUCCESS		 0
#define CUDA_ERROR_OUT_OF_MEMORY 2

struct cuda {
	CUresult (*Init)(unsigned flags);
	CUresult (*DeviceGetCount)(int *count);
	CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
	CUresult (*DeviceGetUuid)(CUuuid *uuid, CUdevice dev);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);
	CUresult (*CtxSetCurrent)(CUcontext ctx);
	CUresult (*CtxSynchronize)(void);
	CUresult (*MemGetInfo)(size_t *free, size_t *total);
	CUresult (*MemAlloc)(CUdeviceptr *dptr, size_t bytes);
	CUresult (*MemFree)(CUdeviceptr dptr);
	CUresult (*MemsetD32)(CUdeviceptr dst, unsigned ui, size_t n);
	CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
	CUresult (*GetErrorString)(CUresult rc, const char **str); /* optional */
	const char *uuid_sym;
};

#define MiB (1024ULL * 1024)
#define GiB (1024ULL * MiB)

#define CHUNK_FIRST (1 * GiB)
/* Down to 64 KiB: what is left uncovered is smaller than any allocation the driver makes. */
#define CHUNK_FLOOR (64 * 1024)
#define SAMPLE	    (64 * 1024)

#define DEFAULT_TIMEOUT_S 600
#define DEFAULT_SLACK	  (64 * MiB)
#define DEFAULT_HELD_MAX  (1 * GiB)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void reasonf(struct ward_wipe_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void reasonf(struct ward_wipe_report *r, const char *fmt, ...)
{
	va_list ap;
	if (r->reason[0]) /* the first failure is the interesting one */
		return;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

static void set_reason(struct ward_wipe_report *r, const char *msg)
{
	size_t n = strnlen(msg, sizeof(r->reason) - 1);
	memcpy(r->reason, msg, n);
	r->reason[n] = '\0';
}

/* --- Busy check (parent, before anything touches the device) ----------------------------- */

static bool rdev_listed(const struct ward_wipe_opts *o, dev_t rdev)
{
	for (size_t i = 0; i < o->n_rdevs; i++)
		if (o->rdevs[i] == rdev)
			return true;
	return false;
}

/* First process (other than us) with an fd on one of o->rdevs, or 0. Processes that vanish or
 * cannot be read while we look are skipped; the proc root itself must be readable. */
static int find_busy_pid(const struct ward_wipe_opts *o, pid_t *busy, struct ward_err *err)
{
	const char *proc = o->proc_root ? o->proc_root : "/proc";
	*busy = 0;
	if (o->n_rdevs == 0)
		return 0;
	cleanup_fd int pfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return ward_fail_errno(err, "open %s", proc);
	int dfd = dup(pfd);
	if (dfd < 0)
		return ward_fail_errno(err, "dup %s", proc);
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return ward_fail_errno(err, "read %s", proc);
	}
	pid_t self = getpid();
	struct dirent *de;
	while (!*busy && (de = readdir(d))) {
		uint64_t pid;
		if (!isdigit((unsigned char)de->d_name[0]) || parse_u64(de->d_name, &pid) < 0 ||
		    (pid_t)pid == self)
			continue;
		char path[sizeof(de->d_name) + 8];
		snprintf(path, sizeof(path), "%s/fd", de->d_name);
		cleanup_fd int fdd = openat(pfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fdd < 0)
			continue;
		int fdd2 = dup(fdd);
		DIR *fds = fdd2 < 0 ? NULL : fdopendir(fdd2);
		if (!fds) {
			if (fdd2 >= 0)
				close(fdd2);
			continue;
		}
		struct dirent *fe;
		while ((fe = readdir(fds))) {
			struct stat st;
			if (fe->d_name[0] == '.')
				continue;
			/* Follows the magic link: the stat of the open file itself. */
			if (fstatat(fdd, fe->d_name, &st, 0) == 0 && S_ISCHR(st.st_mode) &&
			    rdev_listed(o, st.st_rdev)) {
				*busy = (pid_t)pid;
				break;
			}
		}
		closedir(fds);
	}
	closedir(d);
	return 0;
}

/* --- The child: load libcuda, scrub, report ----------------------------------------------- */

struct scrub {
	const struct cuda *cu;
	struct ward_wipe_report *r;
	CUdevice dev;
	bool ctx_retained;
	CUdeviceptr *ptrs; /* every allocation, recorded before it is touched */
	size_t *sizes;
	size_t n, cap;
	unsigned char *buf; /* SAMPLE bytes of host memory */
	uint64_t rng;
};

/* Record a CUDA failure ("cuMemAlloc_v2: out of memory (2)"); returns -1. */
static int cu_fail(struct scrub *s, const char *what, CUresult rc)
{
	const char *str = NULL;
	if (!s->cu->GetErrorString || s->cu->GetErrorString(rc, &str) != CUDA_SUCCESS || !str)
		str = "unknown error";
	reasonf(s->r, "%s: %s (CUDA error %d)", what, str, rc);
	return -1;
}

#define CU(s, call, name)                                                                          \
	do {                                                                                       \
		CUresult _rc = (call);                                                             \
		if (_rc != CUDA_SUCCESS)                                                           \
			return cu_fail((s), (name), _rc);                                          \
	} while (0)

static uint64_t rng_next(struct scrub *s)
{
	/* xorshift64*: only picks sample offsets */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 2685821657736338717ULL;
}

/* Offsets of the samples of a chunk: first, last and one random (4-byte aligned) 64 KiB. */
static void sample_offsets(struct scrub *s, size_t size, size_t off[3])
{
	off[0] = 0;
	off[1] = size - SAMPLE;
	off[2] = (size_t)(rng_next(s) % (size - SAMPLE + 1)) & ~(size_t)3;
}

static int read_samples(struct scrub *s, size_t i, uint64_t *nonzero)
{
	size_t off[3];
	sample_offsets(s, s->sizes[i], off);
	*nonzero = 0;
	for (int k = 0; k < 3; k++) {
		CU(s, s->cu->MemcpyDtoH(s->buf, s->ptrs[i] + off[k], SAMPLE), "cuMemcpyDtoH_v2");
		for (size_t b = 0; b < SAMPLE; b++)
			*nonzero += s->buf[b] != 0;
	}
	return 0;
}

static void format_uuid(const CUuuid *u, char out[37])
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

static int select_device(struct scrub *s, const char *want)
{
	int count = 0;
	CU(s, s->cu->Init(0), "cuInit");
	CU(s, s->cu->DeviceGetCount(&count), "cuDeviceGetCount");
	if (count != 1) {
		reasonf(s->r, "CUDA_VISIBLE_DEVICES=%s: %d devices visible, want exactly 1", want,
			count);
		return -1;
	}
	CU(s, s->cu->DeviceGet(&s->dev, 0), "cuDeviceGet");
	CUuuid u;
	char got[37];
	CU(s, s->cu->DeviceGetUuid(&u, s->dev), s->cu->uuid_sym);
	format_uuid(&u, got);
	/* The prefix ("GPU-"/"MIG-") is not in the 16 bytes; wipe.c checked its shape. */
	if (strcasecmp(got, want + 4) != 0) {
		reasonf(s->r, "visible device is %.4s%s, not %s", want, got, want);
		return -1;
	}
	CUcontext ctx = NULL;
	CU(s, s->cu->DevicePrimaryCtxRetain(&ctx, s->dev), "cuDevicePrimaryCtxRetain");
	s->ctx_retained = true;
	CU(s, s->cu->CtxSetCurrent(ctx), "cuCtxSetCurrent");
	return 0;
}

/* Allocate the free memory in chunks (halving on out-of-memory), probe each chunk for
 * residue, then queue a memset of zeros over it. */
static int allocate_and_zero(struct scrub *s)
{
	size_t chunk = CHUNK_FIRST;
	while (chunk >= CHUNK_FLOOR) {
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 256;
			s->ptrs = xrealloc(s->ptrs, s->cap * sizeof(*s->ptrs));
			s->sizes = xrealloc(s->sizes, s->cap * sizeof(*s->sizes));
		}
		CUdeviceptr p = 0;
		CUresult rc = s->cu->MemAlloc(&p, chunk);
		if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
			chunk /= 2;
			continue;
		}
		if (rc != CUDA_SUCCESS)
			return cu_fail(s, "cuMemAlloc_v2", rc);
		if (p == 0) {
			reasonf(s->r, "cuMemAlloc_v2 returned a null device pointer");
			return -1;
		}
		s->ptrs[s->n] = p;
		s->sizes[s->n] = chunk;
		s->n++;
		if (s->r->bytes + chunk > s->r->total) {
			reasonf(s->r, "allocated more than the device's %llu bytes",
				(unsigned long long)s->r->total);
			return -1;
		}
		uint64_t nonzero;
		if (read_samples(s, s->n - 1, &nonzero) < 0)
			return -1;
		s->r->residue += nonzero;
		CU(s, s->cu->MemsetD32(p, 0, chunk / 4), "cuMemsetD32_v2");
		s->r->bytes += chunk;
	}
	return 0;
}

static int verify(struct scrub *s)
{
	CU(s, s->cu->CtxSynchronize(), "cuCtxSynchronize");
	for (size_t i = 0; i < s->n; i++) {
		uint64_t nonzero;
		if (read_samples(s, i, &nonzero) < 0)
			return -1;
		if (nonzero) {
			reasonf(
			    s->r,
			    "verification: %llu non-zero bytes in chunk %zu (%zu MiB) after the "
			    "memset",
			    (unsigned long long)nonzero, i, s->sizes[i] / (size_t)MiB);
			return -1;
		}
	}
	return 0;
}

/* Frees every recorded allocation and releases the context, whatever happened before. */
static int release_all(struct scrub *s)
{
	int ret = 0;
	for (size_t i = 0; i < s->n; i++) {
		CUresult rc = s->cu->MemFree(s->ptrs[i]);
		if (rc != CUDA_SUCCESS)
			ret = cu_fail(s, "cuMemFree_v2", rc);
	}
	s->n = 0;
	if (s->ctx_retained) {
		CUresult rc = s->cu->DevicePrimaryCtxRelease(s->dev);
		if (rc != CUDA_SUCCESS)
			ret = cu_fail(s, "cuDevicePrimaryCtxRelease_v2", rc);
		s->ctx_retained = false;
	}
	return ret;
}

static int scrub(struct scrub *s, const struct ward_wipe_opts *o)
{
	size_t free_b = 0, total_b = 0;
	if (select_device(s, o->uuid) < 0)
		return -1;
	CU(s, s->cu->MemGetInfo(&free_b, &total_b), "cuMemGetInfo_v2");
	s->r->free_start = free_b;
	s->r->total = total_b;

	double t0 = now_s();
	int ret = allocate_and_zero(s);
	if (ret == 0)
		ret = verify(s);
	s->r->seconds = now_s() - t0;
	if (s->r->seconds > 0)
		s->r->gbps = (double)s->r->bytes / s->r->seconds / 1e9;
	return ret;
}

static int load_cuda(struct cuda *cu, void *lib, struct ward_wipe_report *r)
{
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
#define SYM(field, name) {name, offsetof(struct cuda, field)}
	    SYM(Init, "cuInit"),
	    SYM(DeviceGetCount, "cuDeviceGetCount"),
	    SYM(DeviceGet, "cuDeviceGet"),
	    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	    SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	    SYM(CtxSetCurrent, "cuCtxSetCurrent"),
	    SYM(CtxSynchronize, "cuCtxSynchronize"),
	    SYM(MemGetInfo, "cuMemGetInfo_v2"),
	    SYM(MemAlloc, "cuMemAlloc_v2"),
	    SYM(MemFree, "cuMemFree_v2"),
	    SYM(MemsetD32, "cuMemsetD32_v2"),
	    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2"),
#undef SYM
	};
	memset(cu, 0, sizeof(*cu));
	for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
		void *f = dlsym(lib, syms[i].name);
		if (!f) {
			reasonf(r, "libcuda: missing symbol %s", syms[i].name);
			return -1;
		}
		memcpy((char *)cu + syms[i].off, &f, sizeof(f));
	}
	void *f = dlsym(lib, "cuDeviceGetUuid_v2");
	cu->uuid_sym = "cuDeviceGetUuid_v2";
	if (!f) {
		f = dlsym(lib, "cuDeviceGetUuid");
		cu->uuid_sym = "cuDeviceGetUuid";
	}
	if (!f) {
		reasonf(r, "libcuda: missing symbol cuDeviceGetUuid(_v2)");
		return -1;
	}
	memcpy(&cu->DeviceGetUuid, &f, sizeof(f));
	f = dlsym(lib, "cuGetErrorString");
	if (f)
		memcpy(&cu->GetErrorString, &f, sizeof(f));
	return 0;
}

static void success_rule(const struct ward_wipe_opts *o, struct ward_wipe_report *r)
{
	uint64_t slack = o->slack_bytes ? o->slack_bytes : DEFAULT_SLACK;
	uint64_t held_max = o->held_max ? o->held_max : DEFAULT_HELD_MAX;
	uint64_t held = r->total > r->free_start ? r->total - r->free_start : 0;
	if (held > held_max) {
		reasonf(r,
			"%llu MiB of %llu MiB device memory not free at start (held by another "
			"process or context; allowed %llu MiB)",
			(unsigned long long)(held / MiB), (unsigned long long)(r->total / MiB),
			(unsigned long long)(held_max / MiB));
		return;
	}
	if (r->bytes + slack < r->free_start) {
		reasonf(r, "covered %llu MiB of %llu MiB free at start (slack %llu MiB)",
			(unsigned long long)(r->bytes / MiB),
			(unsigned long long)(r->free_start / MiB),
			(unsigned long long)(slack / MiB));
		return;
	}
	r->ok = true;
}

static __attribute__((noreturn)) void child_main(const struct ward_wipe_opts *o, int wfd)
{
	struct ward_wipe_report r = {0};
	struct cuda cu;
	sigset_t none;

	/* Die with the parent; a clean slate of signals, fds, environment and cwd. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	close_fds_except(3, &wfd, 1);
	if (clearenv() != 0 || setenv("CUDA_VISIBLE_DEVICES", o->uuid, 1) != 0 || chdir("/") != 0) {
		reasonf(&r, "prepare the scrub process: %s", strerror(errno));
		goto out;
	}

	void *lib = dlopen(o->libcuda, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *e = dlerror();
		reasonf(&r, "dlopen %s: %s", o->libcuda, e ? e : "failed");
		goto out;
	}
	if (load_cuda(&cu, lib, &r) < 0)
		goto out;

	struct scrub s = {.cu = &cu, .r = &r, .buf = xmalloc(SAMPLE)};
	if (getrandom(&s.rng, sizeof(s.rng), 0) != sizeof(s.rng) || s.rng == 0)
		s.rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL | 1;
	int ret = scrub(&s, o);
	if (release_all(&s) < 0)
		ret = -1;
	free(s.ptrs);
	free(s.sizes);
	free(s.buf);
	if (ret == 0)
		success_rule(o, &r);

out:
	(void)write_all(wfd, &r, sizeof(r)); /* < PIPE_BUF: one atomic write */
	_exit(0);
}

/* --- The parent ----------------------------------------------------------------------------- */

static bool uuid_shape_ok(const char *u)
{
	static const char tmpl[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	if (!u || (strncmp(u, "GPU-", 4) != 0 && strncmp(u, "MIG-", 4) != 0) ||
	    strlen(u) != 4 + sizeof(tmpl) - 1)
		return false;
	for (size_t i = 0; tmpl[i]; i++)
		if (tmpl[i] == '-' ? u[4 + i] != '-' : !isxdigit((unsigned char)u[4 + i]))
			return false;
	return true;
}

/* Fails both ways the caller may look: err and report->reason. */
static int wipe_fail(struct ward_wipe_report *r, struct ward_err *err, int errnum, const char *what)
{
	r->ok = false;
	ward_fail(err, errnum, "%s", what);
	set_reason(r, err->msg);
	return -1;
}

/* Wait for the child's report until the deadline; kill it past the deadline. Exit is seen
 * through a pidfd, or (no pidfd_open: old kernels, valgrind) by polling waitpid every 20 ms.
 * The child is not reaped before it is killed, so its pid cannot be reused meanwhile. */
static int collect(pid_t pid, int rfd, unsigned timeout_s, struct ward_wipe_report *r,
		   struct ward_err *err)
{
	struct ward_wipe_report got;
	size_t have = 0;
	bool exited = false, reaped = false;
	int status = 0;
	cleanup_fd int pidfd = ward_pidfd_open(pid, 0);
	double deadline = now_s() + timeout_s;
	struct pollfd fds[2] = {{.fd = rfd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
	while (!exited) {
		double left = deadline - now_s();
		if (left <= 0) {
			char msg[128];
			if (pidfd < 0 || ward_pidfd_send_signal(pidfd, SIGKILL) < 0)
				kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			snprintf(msg, sizeof(msg), "scrub timed out after %u s (killed)",
				 timeout_s);
			return wipe_fail(r, err, 0, msg);
		}
		int ms = (int)(left * 1000) + 1;
		int n = poll(fds, 2, pidfd >= 0 || ms < 20 ? ms : 20);
		if (n < 0 && errno != EINTR) {
			int e = errno;
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return wipe_fail(r, err, e, "poll the scrub process");
		}
		if (n > 0 && fds[0].revents) {
			ssize_t k = read(rfd, (char *)&got + have, sizeof(got) - have);
			if (k > 0)
				have += (size_t)k;
			if (k == 0 || have == sizeof(got) ||
			    (k < 0 && errno != EAGAIN && errno != EINTR))
				fds[0].fd = -1; /* EOF or complete: stop polling it */
		}
		if (pidfd >= 0)
			exited = n > 0 && fds[1].revents;
		else
			exited = reaped = waitpid(pid, &status, WNOHANG) == pid;
	}
	/* Exited: whatever it wrote is in the pipe (the read end is non-blocking). */
	while (have < sizeof(got)) {
		ssize_t k = read(rfd, (char *)&got + have, sizeof(got) - have);
		if (k <= 0)
			break;
		have += (size_t)k;
	}
	if (!reaped && waitpid(pid, &status, 0) < 0)
		return wipe_fail(r, err, errno, "wait for the scrub process");
	if (have != sizeof(got)) {
		char msg[128];
		if (WIFSIGNALED(status))
			snprintf(msg, sizeof(msg),
				 "scrub process killed by signal %d (%s), no report",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(msg, sizeof(msg), "scrub process exited with status %d, no report",
				 WEXITSTATUS(status));
		return wipe_fail(r, err, 0, msg);
	}
	got.reason[sizeof(got.reason) - 1] = '\0';
	got.busy_pid = 0;
	*r = got;
	return 0;
}

int ward_gpu_wipe(const struct ward_wipe_opts *o, struct ward_wipe_report *r, struct ward_err *err)
{
	memset(r, 0, sizeof(*r));
	if (!uuid_shape_ok(o->uuid)) {
		char msg[128];
		snprintf(msg, sizeof(msg), "wipe: bad GPU UUID \"%.60s\" (want GPU-/MIG-<uuid>)",
			 o->uuid ? o->uuid : "(null)");
		return wipe_fail(r, err, EINVAL, msg);
	}
	if (!o->libcuda || !*o->libcuda)
		return wipe_fail(r, err, EINVAL, "wipe: no libcuda path");

	pid_t busy = 0;
	if (find_busy_pid(o, &busy, err) < 0) {
		ward_wrap(err, "wipe %s: look for processes on the GPU", o->uuid);
		set_reason(r, err->msg);
		return -1;
	}
	if (busy > 0) {
		r->busy_pid = busy;
		snprintf(r->reason, sizeof(r->reason),
			 "process %d has the GPU's device node open: still on the GPU", (int)busy);
		return 0;
	}

	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return wipe_fail(r, err, errno, "wipe: pipe");
	cleanup_fd int rfd = p[0];
	cleanup_fd int wfd = p[1];
	if (fcntl(rfd, F_SETFL, O_NONBLOCK) < 0)
		return wipe_fail(r, err, errno, "wipe: pipe O_NONBLOCK");

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return wipe_fail(r, err, errno, "wipe: fork");
	if (pid == 0)
		child_main(o, wfd);
	close(steal_fd(wfd));

	if (collect(pid, rfd, o->timeout_s ? o->timeout_s : DEFAULT_TIMEOUT_S, r, err) < 0)
		return ward_wrap(err, "wipe %s", o->uuid);
	return 0;
}
