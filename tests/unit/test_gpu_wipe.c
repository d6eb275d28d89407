/* ward_gpu_wipe (gpu-hooks/wipe.c) against the stub libcuda.so.1 (tests/gpu/stub-libcuda.c):
 * each case copies the stub into its own temp dir, so it has its own stub/ config, device
 * memory file and call log. The device memory is planted with a secret first; the checks
 * read the whole file back. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"
#include "wipe.h"

#define MiB	    (1024ULL * 1024)
#define GiB	    (1024ULL * MiB)
#define CTX_RESERVE (1 * MiB)		  /* the stub's */
#define SECRET	    0x5345435245542121ULL /* "SECRET!!": no zero byte */

#define UUID_A "GPU-8c2d6f3e-5b1a-4c2e-9d7f-0a1b2c3d4e5f"
#define UUID_B "GPU-11111111-2222-3333-4444-555555555555"
#define UUID_M "MIG-aaaabbbb-cccc-dddd-eeee-ffff00001111"

/* $(BUILD)/tests/gpu/libcuda.so.1, beside this program ($(BUILD)/tests/test_gpu_wipe) */
static char stub_src[4096];

struct fx {
	char dir[64];
	char lib[128];
	char stub[128];
};

static void put(const struct fx *f, const char *name, const char *text)
{
	char path[256];
	struct ward_err err;
	snprintf(path, sizeof(path), "%s/%s", f->stub, name);
	if (write_file_at(AT_FDCWD, path, O_CREAT | O_TRUNC, 0644, text, strlen(text), &err) < 0) {
		printf("Bail out! %s\n", err.msg);
		exit(1);
	}
}

static char *get(const struct fx *f, const char *name)
{
	char path[256];
	struct ward_err err;
	snprintf(path, sizeof(path), "%s/%s", f->stub, name);
	char *s = read_file_at(AT_FDCWD, path, NULL, &err);
	return s ? s : xstrdup("");
}

static void plant(const struct fx *f, const char *uuid, uint64_t len)
{
	static uint64_t buf[MiB / 8];
	char path[256];
	snprintf(path, sizeof(path), "%s/mem-%s", f->stub, uuid);
	cleanup_fd int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	for (size_t i = 0; i < ARRAY_SIZE(buf); i++)
		buf[i] = SECRET;
	for (uint64_t off = 0; fd >= 0 && off < len; off += sizeof(buf))
		if (pwrite(fd, buf, sizeof(buf), (off_t)off) != (ssize_t)sizeof(buf))
			break;
}

/* Non-zero bytes in the device memory file of uuid. */
static uint64_t nonzero(const struct fx *f, const char *uuid)
{
	static uint64_t buf[MiB / 8];
	char path[256];
	uint64_t n = 0;
	ssize_t k;
	snprintf(path, sizeof(path), "%s/mem-%s", f->stub, uuid);
	cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UINT64_MAX;
	while ((k = read(fd, buf, sizeof(buf))) > 0)
		for (size_t i = 0; i < (size_t)k / 8; i++)
			if (buf[i])
				for (int b = 0; b < 8; b++)
					n += (buf[i] >> (8 * b) & 0xff) != 0;
	return n;
}

/* A fresh dir with a copy of the stub, one or two devices, the secret planted all over. */
static struct fx setup(uint64_t size, const char *knobs)
{
	struct fx f;
	struct ward_err err;
	char gpus[256];
	snprintf(f.dir, sizeof(f.dir), "/tmp/ward-test-gpu-wipe.XXXXXX");
	if (!mkdtemp(f.dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		exit(1);
	}
	snprintf(f.lib, sizeof(f.lib), "%s/libcuda.so.1", f.dir);
	snprintf(f.stub, sizeof(f.stub), "%s/stub", f.dir);
	size_t len;
	cleanup_free char *so = read_file_at(AT_FDCWD, stub_src, &len, &err);
	if (!so || write_file_at(AT_FDCWD, f.lib, O_CREAT | O_TRUNC, 0755, so, len, &err) < 0 ||
	    mkdir(f.stub, 0755) < 0) {
		printf("Bail out! stub %s: %s\n", stub_src, err.msg);
		exit(1);
	}
	snprintf(gpus, sizeof(gpus), "%s %llu\n%s %llu\n%s %llu\n", UUID_B,
		 (unsigned long long)(16 * MiB + CTX_RESERVE), UUID_A, (unsigned long long)size,
		 UUID_M, (unsigned long long)(16 * MiB + CTX_RESERVE));
	put(&f, "gpus", gpus);
	put(&f, "knobs", knobs ? knobs : "");
	plant(&f, UUID_A, size < 256 * MiB ? size : 256 * MiB);
	plant(&f, UUID_B, 16 * MiB + CTX_RESERVE);
	return f;
}

static void teardown(const struct fx *f)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", f->dir);
}

static int wipe(const struct fx *f, struct ward_wipe_opts *o, struct ward_wipe_report *r)
{
	struct ward_err err = {0};
	o->libcuda = f->lib;
	if (!o->uuid)
		o->uuid = UUID_A;
	if (!o->proc_root)
		o->proc_root = "/proc";
	int ret = ward_gpu_wipe(o, r, &err);
	printf("# ret=%d ok=%d total=%llu free_start=%llu bytes=%llu residue=%llu %.3fs %.2f GB/s "
	       "busy_pid=%d reason=%s%s%s\n",
	       ret, r->ok, (unsigned long long)r->total, (unsigned long long)r->free_start,
	       (unsigned long long)r->bytes, (unsigned long long)r->residue, r->seconds, r->gbps,
	       (int)r->busy_pid, r->reason, ret < 0 ? " err=" : "", ret < 0 ? err.msg : "");
	return ret;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Every successful allocation freed, and the context released, before the child reported. */
static bool all_freed(const char *log)
{
	return count(log, "cuMemAlloc_v2 -> 0x") == count(log, "cuMemFree_v2(") &&
	       count(log, "cuMemFree_v2 ->") == 0 &&
	       count(log, "cuDevicePrimaryCtxRetain(") ==
		   count(log, "cuDevicePrimaryCtxRelease_v2(") &&
	       !strstr(log, "destroyed with");
}

static void test_wipes_everything(void)
{
	/* 48 MiB free: chunks of 32 and 16 MiB after halving from 1 GiB. */
	uint64_t size = 48 * MiB + CTX_RESERVE;
	struct fx f = setup(size, NULL);
	struct ward_wipe_opts o = {0};
	struct ward_wipe_report r;
	CHECK(nonzero(&f, UUID_A) == size, "fixture: the secret fills the device memory");
	CHECK(wipe(&f, &o, &r) == 0 && r.ok, "wipe succeeds on an idle device");
	CHECK(nonzero(&f, UUID_A) == 0, "every byte of the device memory is zero afterwards");
	CHECK(r.total == size && r.free_start == 48 * MiB, "total and free at start reported");
	CHECK(r.bytes == 48 * MiB && r.bytes + 64 * MiB >= r.free_start, "bytes cover free");
	CHECK(r.residue == 2 * 3 * 64 * 1024, "residue: every sample byte of both chunks");
	CHECK(r.seconds > 0 && r.gbps > 0, "time and throughput measured");
	printf("# stub throughput: %.2f GB/s\n", r.gbps);
	cleanup_free char *log = get(&f, "log");
	CHECK(count(log, "cuMemAlloc_v2 -> 0x") == 2, "two chunks (32 + 16 MiB)");
	CHECK(all_freed(log), "all chunks freed, context released");
	CHECK(nonzero(&f, UUID_B) == 16 * MiB + CTX_RESERVE, "the other GPU is untouched");

	CHECK(wipe(&f, &o, &r) == 0 && r.ok && r.residue == 0, "second wipe: no residue");
	teardown(&f);
}

static void test_oom_after(void)
{
	uint64_t size = 48 * MiB + CTX_RESERVE;
	struct fx f = setup(size, "oom_after 1\n");
	struct ward_wipe_opts o = {0};
	struct ward_wipe_report r;
	/* 16 MiB left uncovered: within the default 64 MiB slack, and reported honestly. */
	CHECK(wipe(&f, &o, &r) == 0 && r.ok, "oom_after 1: within slack: ok");
	CHECK(r.bytes == 32 * MiB && r.free_start == 48 * MiB, "oom_after 1: bytes = 32 MiB");
	CHECK(nonzero(&f, UUID_A) == 16 * MiB, "oom_after 1: exactly the uncovered 16 MiB remain");
	cleanup_free char *log = get(&f, "log");
	CHECK(strstr(log, "cuMemAlloc_v2(2097152)") != NULL, "chunks shrank to the 2 MiB floor");
	CHECK(all_freed(log), "oom_after 1: everything freed");

	o.slack_bytes = 4 * MiB;
	CHECK(wipe(&f, &o, &r) == 0 && !r.ok, "oom_after 1, 4 MiB slack: fails");
	CHECK_STR_CONTAINS(r.reason, "covered 32 MiB of 48 MiB", "reason names the coverage");
	teardown(&f);

	f = setup(size, "oom_after 2\n");
	o.slack_bytes = 1;
	CHECK(wipe(&f, &o, &r) == 0 && r.ok && r.bytes == 48 * MiB, "oom_after 2: covers all");
	CHECK(nonzero(&f, UUID_A) == 0, "oom_after 2: every byte zero");
	teardown(&f);
}

static void test_busy_bytes(void)
{
	/* 2 GiB held by "another process" (sparse tail of the file) */
	uint64_t size = 16 * MiB + CTX_RESERVE + 2 * GiB;
	struct fx f = setup(size, "busy_bytes 2147483648\n");
	struct ward_wipe_opts o = {0};
	struct ward_wipe_report r;
	CHECK(wipe(&f, &o, &r) == 0 && !r.ok, "busy_bytes 2 GiB: not ok");
	CHECK_STR_CONTAINS(r.reason, "held by another process", "reason: memory held");
	cleanup_free char *log = get(&f, "log");
	CHECK(all_freed(log), "busy_bytes: everything freed");
	teardown(&f);

	f = setup(48 * MiB + CTX_RESERVE, "busy_bytes 33554432\n");
	o.held_max = 16 * MiB;
	CHECK(wipe(&f, &o, &r) == 0 && !r.ok, "busy_bytes 32 MiB > held_max 16 MiB: not ok");
	CHECK_STR_CONTAINS(r.reason, "33 MiB of 49 MiB device memory not free", "reason: sizes");
	o.held_max = 64 * MiB;
	CHECK(wipe(&f, &o, &r) == 0 && r.ok, "busy_bytes 32 MiB < held_max 64 MiB: ok");
	teardown(&f);
}

static void test_failures(void)
{
	static const struct {
		const char *knobs, *reason, *name;
	} cases[] = {
	    {"wrong_uuid 1\n", "visible device is GPU-", "wrong_uuid: not ok"},
	    {"memset_noop 1\n", "verification: ", "memset_noop: verification fails"},
	    {"fail cuInit 3\n", "cuInit: initialization error (CUDA error 3)", "cuInit fails"},
	    {"fail cuCtxSynchronize 999\n", "cuCtxSynchronize: unknown error",
	     "cuCtxSynchronize fails"},
	    {"fail cuMemcpyDtoH_v2 1\n", "cuMemcpyDtoH_v2: invalid argument", "DtoH fails"},
	    {"fail cuMemAlloc_v2 999\n", "cuMemAlloc_v2: unknown error", "cuMemAlloc fails"},
	    {"fail cuMemsetD32_v2 700\n", "cuMemsetD32_v2: unknown error (CUDA error 700)",
	     "cuMemsetD32 fails, unknown code"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fx f = setup(48 * MiB + CTX_RESERVE, cases[i].knobs);
		struct ward_wipe_opts o = {0};
		struct ward_wipe_report r;
		char name[160];
		CHECK(wipe(&f, &o, &r) == 0 && !r.ok, cases[i].name);
		snprintf(name, sizeof(name), "%s: reason", cases[i].name);
		CHECK_STR_CONTAINS(r.reason, cases[i].reason, name);
		cleanup_free char *log = get(&f, "log");
		snprintf(name, sizeof(name), "%s: every allocation freed", cases[i].name);
		CHECK(all_freed(log), name);
		teardown(&f);
	}
}

static void test_busy_pid(void)
{
	struct fx f = setup(48 * MiB + CTX_RESERVE, NULL);
	char node[160];
	int sync[2];
	snprintf(node, sizeof(node), "%s/nvidia7", f.dir);
	if (mknod(node, S_IFCHR | 0600, makedev(195, 7)) < 0) {
		printf("ok %d # SKIP mknod: %s\n", ++tap_n, strerror(errno));
		teardown(&f);
		return;
	}
	if (pipe2(sync, O_CLOEXEC) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(node, O_PATH | O_CLOEXEC);
		(void)!write(sync[1], fd >= 0 ? "y" : "n", 1);
		pause();
		_exit(0);
	}
	char c = 0;
	close(sync[1]);
	(void)!read(sync[0], &c, 1);
	close(sync[0]);
	CHECK(c == 'y', "fixture: child holds the node");

	dev_t other = makedev(195, 8), mine = makedev(195, 7);
	struct ward_wipe_opts o = {.rdevs = &other, .n_rdevs = 1};
	struct ward_wipe_report r;
	o.timeout_s = 60;
	CHECK(wipe(&f, &o, &r) == 0 && r.ok, "a process on another GPU's node: not busy");
	put(&f, "log", "");
	plant(&f, UUID_A, 48 * MiB + CTX_RESERVE);
	o.rdevs = &mine;
	CHECK(wipe(&f, &o, &r) == 0 && !r.ok, "a process on the GPU's node: not ok");
	CHECK(r.busy_pid == pid, "busy_pid is that process");
	CHECK_STR_CONTAINS(r.reason, "still on the GPU", "reason: process on the GPU");
	cleanup_free char *log = get(&f, "log");
	CHECK(log[0] == '\0', "libcuda never called");
	CHECK(nonzero(&f, UUID_A) == 48 * MiB + CTX_RESERVE, "device memory untouched");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	teardown(&f);
}

static void test_timeout(void)
{
	struct fx f = setup(48 * MiB + CTX_RESERVE, "sleep_in cuMemsetD32_v2 30\n");
	struct ward_wipe_opts o = {.timeout_s = 1};
	struct ward_wipe_report r;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	int ret = wipe(&f, &o, &r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	CHECK(ret == -1 && !r.ok, "timeout: fails");
	CHECK_STR_CONTAINS(r.reason, "timed out after 1 s (killed)", "timeout: reason");
	CHECK(s < 10, "timeout: returns promptly (not after the 30 s sleep)");
	CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "timeout: child reaped");
	cleanup_free char *log = get(&f, "log");
	CHECK(strstr(log, "cuMemsetD32_v2(") && !strstr(log, "cuCtxSynchronize"),
	      "timeout: killed inside cuMemsetD32_v2");
	teardown(&f);
}

static void test_environment(void)
{
	struct fx f = setup(48 * MiB + CTX_RESERVE, NULL);
	struct ward_wipe_opts o = {0};
	struct ward_wipe_report r;
	setenv("LD_PRELOAD", "/nonexistent.so", 1);
	setenv("FOO", "bar", 1);
	setenv("CUDA_VISIBLE_DEVICES", UUID_B, 1);
	CHECK(wipe(&f, &o, &r) == 0 && r.ok, "env: wipe ok with a hostile parent env");
	unsetenv("LD_PRELOAD");
	unsetenv("FOO");
	unsetenv("CUDA_VISIBLE_DEVICES");
	cleanup_free char *log = get(&f, "log");
	CHECK_STR_CONTAINS(log,
			   "env LD_PRELOAD=(unset) FOO=(unset) CUDA_VISIBLE_DEVICES=" UUID_A "\n",
			   "env: only CUDA_VISIBLE_DEVICES=<uuid> reaches libcuda");
	CHECK(nonzero(&f, UUID_A) == 0 && nonzero(&f, UUID_B) == 16 * MiB + CTX_RESERVE,
	      "env: the target GPU was wiped, not the parent's CUDA_VISIBLE_DEVICES");
	teardown(&f);
}

static void test_pinning(void)
{
	struct fx f = setup(48 * MiB + CTX_RESERVE, NULL);
	struct ward_wipe_opts o = {.uuid = UUID_B};
	struct ward_wipe_report r;
	CHECK(wipe(&f, &o, &r) == 0 && r.ok && r.bytes == 16 * MiB, "second GPU: wiped");
	CHECK(nonzero(&f, UUID_B) == 0 && nonzero(&f, UUID_A) == 48 * MiB + CTX_RESERVE,
	      "second GPU: only its memory zeroed");

	o.uuid = "gpu-11111111-2222-3333-4444-555555555555";
	CHECK(wipe(&f, &o, &r) == -1 && !r.ok, "lowercase prefix rejected");
	o.uuid = "GPU-11111111-2222-3333-4444-55555555555";
	CHECK(wipe(&f, &o, &r) == -1 && !r.ok, "short UUID rejected");
	CHECK_STR_CONTAINS(r.reason, "bad GPU UUID", "bad UUID: reason");
	o.uuid = "GPU-11111111-2222-3333-4444-5555555555AA";
	CHECK(wipe(&f, &o, &r) == 0 && !r.ok, "unknown UUID: not ok");
	CHECK_STR_CONTAINS(r.reason, "cuInit: no CUDA-capable device is detected (CUDA error 100)",
			   "unknown UUID: no device visible");

	o.uuid = UUID_M;
	CHECK(wipe(&f, &o, &r) == 0 && r.ok, "MIG device: wiped");
	o.uuid = "MIG-AAAABBBB-CCCC-DDDD-EEEE-FFFF00001111";
	CHECK(wipe(&f, &o, &r) == 0 && r.ok, "MIG device, upper-case UUID: compared ok");
	teardown(&f);

	f = setup(48 * MiB + CTX_RESERVE, NULL);
	snprintf(f.lib, sizeof(f.lib), "%s/missing/libcuda.so.1", f.dir);
	o.uuid = UUID_A;
	CHECK(wipe(&f, &o, &r) == 0 && !r.ok, "missing libcuda: not ok");
	CHECK_STR_CONTAINS(r.reason, "dlopen ", "missing libcuda: reason");
	teardown(&f);
}

int main(int argc, char **argv)
{
	const char *slash = strrchr(argv[0], '/');
	if (argc > 1)
		snprintf(stub_src, sizeof(stub_src), "%s", argv[1]);
	else
		snprintf(stub_src, sizeof(stub_src), "%.*sgpu/libcuda.so.1",
			 slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_wipes_everything();
	test_oom_after();
	test_busy_bytes();
	test_failures();
	test_busy_pid();
	test_timeout();
	test_environment();
	test_pinning();
	TAP_DONE();
}
