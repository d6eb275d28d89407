/* Unit tests: GPU inventory from fixture /proc, /dev (real char nodes) and CDI trees, lookup,
 * request parsing from config.json, and resolution against a tenant's GPUs. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gpu.h"
#include "json.h"
#include "log.h"
#include "tap.h"
#include "util.h"

#define UUID_A "GPU-11111111-1111-4111-8111-111111111111" /* 0000:3b:00.0, minor 2, index 0 */
#define UUID_B "GPU-22222222-2222-4222-8222-222222222222" /* 0000:86:00.0, minor 0, index 1 */
#define UUID_C "GPU-33333333-3333-4333-8333-333333333333" /* 0000:af:00.0, minor 1, index 2 */
#define MIG_A  "MIG-aaaaaaaa-aaaa-5aaa-8aaa-aaaaaaaaaaaa" /* on A: gi1 caps 12, 13 */
#define MIG_B  "MIG-bbbbbbbb-bbbb-5bbb-8bbb-bbbbbbbbbbbb" /* on A: gi2 caps 21, 22 */
#define MIG_C  "MIG-cccccccc-cccc-5ccc-8ccc-cccccccccccc" /* bad: caps of different GIs */
#define MIG_D  "MIG-dddddddd-dddd-5ddd-8ddd-dddddddddddd" /* bad: parent not on the host */
#define MIG_E  "MIG-eeeeeeee-eeee-5eee-8eee-eeeeeeeeeeee" /* bad: cap node has wrong major */

static char tmp[] = "/tmp/ward-test-gpu.XXXXXX";
static char logpath[256];
static long log_off;
static int fixture_no;

static void die(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

static void mkdirs(const char *path)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			die(buf);
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		die(buf);
}

static void parent_dirs(const char *path)
{
	char buf[512];
	char *slash;
	snprintf(buf, sizeof(buf), "%s", path);
	slash = strrchr(buf, '/');
	if (slash && slash != buf) {
		*slash = '\0';
		mkdirs(buf);
	}
}

/* Write root/rel. */
static void wr(const char *root, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void wr(const char *root, const char *rel, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	parent_dirs(path);
	f = fopen(path, "we");
	if (!f)
		die(path);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void rm(const char *root, const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (unlink(path) < 0)
		die(path);
}

static int chr(const char *root, const char *rel, unsigned major, unsigned minor)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	parent_dirs(path);
	unlink(path);
	return mknod(path, S_IFCHR | 0600, makedev(major, minor));
}

/* Warnings logged since the last call. */
static char *log_since(void)
{
	struct ward_err err = {0};
	size_t len = 0;
	char *all = read_file_at(AT_FDCWD, logpath, &len, &err), *r;
	if (!all)
		return xstrdup("");
	r = xstrdup(all + log_off);
	log_off = (long)len;
	free(all);
	return r;
}

static void info(const char *root, const char *bus_dir, const char *bus, const char *uuid,
		 unsigned minor, const char *model)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "proc/driver/nvidia/gpus/%s/information", bus_dir);
	wr(root, rel,
	   "Model: \t\t %s\nIRQ:   \t\t 150\nGPU UUID: \t %s\nVideo BIOS: \t ??.??.??.??.??\n"
	   "Bus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\n"
	   "Bus Location: \t %s\nDevice Minor: \t %u\nGPU Excluded:\t No\n",
	   model, uuid, bus, minor);
}

static const char *mig_dev_json(const char *name, unsigned parent, unsigned gi_cap, unsigned ci_cap)
{
	static char buf[4][1024];
	static int k;
	char *b = buf[k++ % 4];
	snprintf(b, 1024,
		 "{\"name\": \"%s\", \"containerEdits\": {\"deviceNodes\": ["
		 "{\"path\": \"/dev/nvidia%u\", \"type\": \"c\", \"major\": 195, \"minor\": %u},"
		 "{\"path\": \"/dev/nvidia-caps/nvidia-cap%u\"},"
		 "{\"path\": \"/dev/nvidia-caps/nvidia-cap%u\", \"hostPath\": \"/evil/x\"},"
		 "{\"path\": \"/dev/nvidiactl\"}],"
		 "\"hooks\": [{\"hookName\": \"createContainer\", \"path\": \"/bin/false\"}],"
		 "\"mounts\": [{\"hostPath\": \"/host/mig/%s\", \"containerPath\": \"/mig\"}]}}",
		 name, parent, parent, gi_cap, ci_cap, name);
	return b;
}

/* A host with three GPUs (A, B, C), uvm, MIG caps and two CDI directories. Returns the
 * fixture root (static buffer). */
static const char *make_host(void)
{
	static char root[300];
	snprintf(root, sizeof(root), "%s/host%d", tmp, ++fixture_no);
	mkdirs(root);
	/* bus-id order differs from directory-name order and from minor order */
	info(root, "0000:AF:00.0", "0000:AF:00.0", UUID_C, 1, "NVIDIA A100-SXM4-40GB");
	info(root, "0000:3b:00.0", "0000:3B:00.0", UUID_A, 2, "NVIDIA H100 80GB HBM3");
	info(root, "0000:86:00.0", "0000:86:00.0", UUID_B, 0, "NVIDIA H100 80GB HBM3");
	wr(root, "proc/devices",
	   "Character devices:\n  1 mem\n  4 tty\n195 nvidia\n509 nvidia-uvm\n235 nvidia-caps\n\n"
	   "Block devices:\n  8 sd\n259 blkext\n");
	wr(root, "proc/driver/nvidia-caps/mig-minors",
	   "config 1\nmonitor 2\ngpu2/gi1/access 12\ngpu2/gi1/ci0/access 13\n"
	   "gpu2/gi2/access 21\ngpu2/gi2/ci0/access 22\ngpu0/gi1/access 30\n"
	   "gpu0/gi1/ci0/access 31\n");
	wr(root, "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module\n");
	wr(root, "proc/driver/nvidia/params", "ModifyDeviceFiles: 1\n");
	if (chr(root, "dev/nvidia0", 195, 0) < 0 || chr(root, "dev/nvidia1", 195, 1) < 0 ||
	    chr(root, "dev/nvidia2", 195, 2) < 0 || chr(root, "dev/nvidiactl", 195, 255) < 0 ||
	    chr(root, "dev/nvidia-uvm", 509, 0) < 0 ||
	    chr(root, "dev/nvidia-uvm-tools", 509, 1) < 0)
		return NULL;
	{
		const unsigned caps[] = {12, 13, 21, 22, 30};
		char rel[64];
		for (size_t i = 0; i < ARRAY_SIZE(caps); i++) {
			snprintf(rel, sizeof(rel), "dev/nvidia-caps/nvidia-cap%u", caps[i]);
			if (chr(root, rel, 235, caps[i]) < 0)
				return NULL;
		}
		if (chr(root, "dev/nvidia-caps/nvidia-cap31", 236, 31) < 0) /* wrong major */
			return NULL;
	}
	/* First CDI dir: MIG_B is broken here and fixed by the later dir. */
	wr(root, "etc/cdi/nvidia.json",
	   "{\"cdiVersion\": \"0.5.0\", \"kind\": \"nvidia.com/gpu\",\n"
	   " \"devices\": [%s, %s, %s, %s,\n"
	   "  {\"name\": \"0\", \"containerEdits\": {\"deviceNodes\": [{\"path\": "
	   "\"/dev/nvidia2\"}],"
	   "   \"mounts\": [{\"hostPath\": \"/host/lib0\", \"containerPath\": \"/lib0\"}]}},\n"
	   "  {\"name\": \"gpu1\", \"containerEdits\": {"
	   "   \"mounts\": [{\"hostPath\": \"/host/lib1\", \"containerPath\": \"/lib1\"}]}},\n"
	   "  {\"name\": \"" UUID_C "\", \"containerEdits\": {"
	   "   \"mounts\": [{\"hostPath\": \"/host/libc\", \"containerPath\": \"/libc\"}]}},\n"
	   "  {\"name\": \"all\", \"containerEdits\": {\"deviceNodes\": [{\"path\": "
	   "\"/dev/nvidia0\"}]}}\n"
	   " ],\n"
	   " \"containerEdits\": {\"env\": [\"NVIDIA_VISIBLE_DEVICES=void\"],\n"
	   "   \"hooks\": [{\"hookName\": \"createContainer\", \"path\": "
	   "\"/usr/bin/nvidia-ctk\"}],\n"
	   "   \"deviceNodes\": [{\"path\": \"/dev/nvidiactl\"}],\n"
	   "   \"mounts\": [{\"hostPath\": \"/usr/lib/libcuda.so.1\", \"containerPath\": "
	   "\"/usr/lib/libcuda.so.1\", \"options\": [\"ro\"]}]}}\n",
	   mig_dev_json(MIG_A, 2, 12, 13), mig_dev_json(MIG_B, 2, 21, 13),
	   mig_dev_json(MIG_C, 2, 12, 22), mig_dev_json(MIG_D, 7, 12, 13));
	wr(root, "etc/cdi/fpga.json",
	   "{\"cdiVersion\": \"0.6.0\", \"kind\": \"vendor.com/fpga\", \"devices\": "
	   "[{\"name\": \"MIG-ffffffff\", \"containerEdits\": {}}]}");
	wr(root, "etc/cdi/nvidia.yaml", "cdiVersion: 0.5.0\n");
	wr(root, "etc/cdi/README", "not a spec\n");
	mkdirs(root); /* second dir, later wins */
	wr(root, "run/cdi/nvidia.json",
	   "{\"cdiVersion\": \"0.5.0\", \"kind\": \"nvidia.com/gpu\",\n"
	   " \"devices\": [%s, %s],\n"
	   " \"containerEdits\": {\"mounts\": [{\"hostPath\": \"/usr/lib/libcuda.so.1\", "
	   "\"containerPath\": \"/usr/lib/libcuda.so.1\"}]}}\n",
	   mig_dev_json("mig-BBBBBBBB-bbbb-5bbb-8bbb-bbbbbbbbbbbb", 2, 22, 21),
	   mig_dev_json(MIG_E, 0, 30, 31));
	return root;
}

static struct ward_gpu_inventory *load(const char *root, struct ward_err *err)
{
	char proc[400], dev[400], etc[400], run[400];
	char *dirs[] = {etc, run, NULL};
	struct ward_gpu_roots roots = {proc, dev, dirs};
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(dev, sizeof(dev), "%s/dev", root);
	snprintf(etc, sizeof(etc), "%s/etc/cdi", root);
	snprintf(run, sizeof(run), "%s/run/cdi", root);
	return ward_gpu_inventory_load(&roots, err);
}

static bool has_mount(const struct ward_gpu_mount *m, size_t n, const char *host, const char *ctr)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].host_path, host) && !strcmp(m[i].container_path, ctr))
			return true;
	return false;
}

static void test_inventory(void)
{
	struct ward_err err = {0};
	const char *root = make_host();
	struct ward_gpu_inventory *inv;
	char *warn, want[512];

	free(log_since());
	inv = load(root, &err);
	warn = log_since();
	CHECK(inv != NULL, "the fixture host loads");
	if (!inv) {
		printf("# %s\n", err.msg);
		free(warn);
		return;
	}
	CHECK(inv->n == 5, "three whole GPUs and two MIG devices");
	if (inv->n != 5) {
		for (size_t i = 0; i < inv->n; i++)
			printf("#   %s\n", inv->gpus[i].uuid);
		printf("# warnings: %s\n", warn);
	}
	if (inv->n >= 3) {
		const struct ward_gpu *a = &inv->gpus[0], *b = &inv->gpus[1], *c = &inv->gpus[2];
		CHECK(!strcmp(a->uuid, UUID_A) && !strcmp(b->uuid, UUID_B) &&
			  !strcmp(c->uuid, UUID_C),
		      "whole GPUs in bus-id order");
		CHECK(a->index == 0 && b->index == 1 && c->index == 2,
		      "index = position in bus-id order");
		CHECK(a->minor == 2 && b->minor == 0 && c->minor == 1, "minors from Device Minor");
		CHECK(!strcmp(a->bus_id, "0000:3b:00.0") && !strcmp(c->bus_id, "0000:af:00.0"),
		      "bus ids lower-cased");
		CHECK(!strcmp(a->model, "NVIDIA H100 80GB HBM3") &&
			  !strcmp(c->model, "NVIDIA A100-SXM4-40GB"),
		      "models");
		CHECK(!a->mig && !a->parent_uuid, "whole GPUs are not MIG");
		snprintf(want, sizeof(want), "%s/dev/nvidia2", root);
		CHECK(a->n_nodes == 1 && !strcmp(a->nodes[0].path, "/dev/nvidia2") &&
			  !strcmp(a->nodes[0].host_path, want) && a->nodes[0].major == 195 &&
			  a->nodes[0].minor == 2,
		      "a whole GPU has its /dev/nvidiaN node, host path under the dev root");
		CHECK(has_mount(a->mounts, a->n_mounts, "/host/lib0", "/lib0") && a->n_mounts == 1,
		      "CDI device named by index contributes its mounts");
		CHECK(has_mount(b->mounts, b->n_mounts, "/host/lib1", "/lib1") && b->n_mounts == 1,
		      "CDI device named gpuN contributes its mounts");
		CHECK(has_mount(c->mounts, c->n_mounts, "/host/libc", "/libc") && c->n_mounts == 1,
		      "CDI device named by uuid contributes its mounts");
	}
	if (inv->n == 5) {
		const struct ward_gpu *m = &inv->gpus[3], *m2 = &inv->gpus[4];
		CHECK(!strcmp(m->uuid, MIG_A) && m->mig && m->index == -1,
		      "MIG device from CDI, after the whole GPUs");
		CHECK(!strcmp(m->parent_uuid, UUID_A) && !strcmp(m->bus_id, "0000:3b:00.0") &&
			  m->minor == 2,
		      "MIG device: parent uuid, bus id and minor");
		CHECK(m->n_nodes == 3 && !strcmp(m->nodes[0].path, "/dev/nvidia2") &&
			  !strcmp(m->nodes[1].path, "/dev/nvidia-caps/nvidia-cap12") &&
			  !strcmp(m->nodes[2].path, "/dev/nvidia-caps/nvidia-cap13") &&
			  m->nodes[1].major == 235 && m->nodes[2].minor == 13,
		      "MIG device: parent node and its GI and CI cap nodes");
		snprintf(want, sizeof(want), "%s/dev/nvidia-caps/nvidia-cap13", root);
		CHECK(m->n_nodes == 3 && !strcmp(m->nodes[2].host_path, want),
		      "cap host node from the dev root, not the CDI hostPath");
		CHECK(has_mount(m->mounts, m->n_mounts, "/host/mig/" MIG_A, "/mig"),
		      "MIG device mounts");
		CHECK(!strcmp(m2->uuid, "mig-BBBBBBBB-bbbb-5bbb-8bbb-bbbbbbbbbbbb") &&
			  m2->n_nodes == 3 && m2->nodes[1].minor == 22 && m2->nodes[2].minor == 21,
		      "a later CDI directory wins (broken MIG_B fixed in run/cdi, CI cap first)");
	}
	CHECK(inv->n_mounts == 1 && has_mount(inv->mounts, inv->n_mounts, "/usr/lib/libcuda.so.1",
					      "/usr/lib/libcuda.so.1"),
	      "spec-level mounts, once although both specs list them");
	CHECK(inv->ctl.major == 195 && inv->ctl.minor == 255 &&
		  !strcmp(inv->ctl.path, "/dev/nvidiactl"),
	      "nvidiactl");
	CHECK(inv->uvm.major == 509 && inv->uvm.minor == 0 && inv->uvm_tools.major == 509 &&
		  inv->uvm_tools.minor == 1 &&
		  !strcmp(inv->uvm_tools.path, "/dev/nvidia-uvm-tools"),
	      "uvm nodes with the dynamic major");
	CHECK(inv->caps_major == 235, "nvidia-caps major from /proc/devices");
	CHECK_STR_CONTAINS(warn, "nvidia.yaml: CDI YAML specs are not supported",
			   "YAML spec skipped with a warning naming the file");
	CHECK_STR_CONTAINS(warn, MIG_C " left out: nvidia-cap12 and nvidia-cap22 are not",
			   "MIG with caps of different GIs left out");
	CHECK_STR_CONTAINS(warn, MIG_D " left out: parent /dev/nvidia7 is not a GPU",
			   "MIG with an unknown parent left out");
	CHECK_STR_CONTAINS(warn, MIG_E " left out:", "MIG with a wrong-major cap node left out");
	CHECK_STR_CONTAINS(warn, "nvidia-cap31: device 236:31, expected 235:31",
			   "saying which node and why");
	CHECK(!strstr(warn, MIG_B) && !strstr(warn, "ffffffff"),
	      "no warning for the overridden device or other kinds");
	CHECK(!strcmp(inv->proc_root + strlen(root), "/proc") &&
		  !strcmp(inv->dev_root + strlen(root), "/dev"),
	      "roots recorded");

	/* lookups */
	CHECK(ward_gpu_find(inv, UUID_B) == &inv->gpus[1], "find: uuid");
	CHECK(ward_gpu_find(inv, "gpu-22222222-2222-4222-8222-222222222222") == &inv->gpus[1],
	      "find: uuid, case-insensitive");
	CHECK(!ward_gpu_find(inv, "GPU-22222222"), "find: no uuid prefixes");
	CHECK(!ward_gpu_find(inv, UUID_B "0"), "find: no longer uuids");
	CHECK(ward_gpu_find(inv, "2") == &inv->gpus[2], "find: index");
	CHECK(!ward_gpu_find(inv, "3") && !ward_gpu_find(inv, "-1") && !ward_gpu_find(inv, "+1") &&
		  !ward_gpu_find(inv, " 1"),
	      "find: no such index, no signs or spaces");
	CHECK(ward_gpu_find(inv, "0000:86:00.0") == &inv->gpus[1], "find: full bus id");
	CHECK(ward_gpu_find(inv, "0000:AF:00.0") == &inv->gpus[2], "find: bus id, upper case");
	CHECK(ward_gpu_find(inv, "3b:00.0") == &inv->gpus[0], "find: short bus id");
	CHECK(ward_gpu_find(inv, "00000000:3b:00.0") == &inv->gpus[0],
	      "find: NVML's 8-digit domain");
	CHECK(!ward_gpu_find(inv, "0001:3b:00.0") && !ward_gpu_find(inv, "3b:00.1") &&
		  !ward_gpu_find(inv, "3b:00"),
	      "find: other domain, function or a partial bus id");
	if (inv->n == 5) {
		CHECK(ward_gpu_find(inv, "mig-aaaaaaaa-aaaa-5aaa-8aaa-aaaaaaaaaaaa") ==
			  &inv->gpus[3],
		      "find: MIG uuid, case-insensitive");
		CHECK(ward_gpu_find(inv, MIG_B) == &inv->gpus[4], "find: MIG uuid as CDI spelt it");
	}
	CHECK(!ward_gpu_find(inv, "") && !ward_gpu_find(inv, NULL) && !ward_gpu_find(inv, "gpu1") &&
		  !ward_gpu_find(inv, MIG_C),
	      "find: empty, gpuN and left-out devices find nothing");
	ward_gpu_inventory_free(inv);
	free(warn);
}

static void test_bad_nodes(void)
{
	struct ward_err err = {0};
	const char *root = make_host();
	struct ward_gpu_inventory *inv;
	char *warn;

	if (!root)
		return;
	chr(root, "dev/nvidia0", 10, 0); /* B: wrong major */
	rm(root, "dev/nvidia1");	 /* C: a regular file */
	wr(root, "dev/nvidia1", "x");
	rm(root, "dev/nvidia-uvm");
	free(log_since());
	inv = load(root, &err);
	warn = log_since();
	CHECK(inv != NULL, "a host with bad nodes still loads");
	if (inv) {
		CHECK(inv->n == 3 && !strcmp(inv->gpus[0].uuid, UUID_A) && inv->gpus[0].index == 0,
		      "only GPU A (and its MIG devices) remain");
		CHECK(!ward_gpu_find(inv, UUID_B) && !ward_gpu_find(inv, "1"),
		      "the wrong-major GPU is left out");
		CHECK(!ward_gpu_find(inv, UUID_C) && !ward_gpu_find(inv, "2"),
		      "the GPU whose node is a regular file is left out (its index stays unused)");
		CHECK(inv->uvm.major == 0 && !inv->uvm.path && inv->uvm_tools.major == 0,
		      "missing nvidia-uvm: uvm left out");
	}
	CHECK_STR_CONTAINS(warn, UUID_B, "warning names the wrong-major GPU");
	CHECK_STR_CONTAINS(warn, "nvidia0: device 10:0, expected 195:0", "and why");
	CHECK_STR_CONTAINS(warn, "nvidia1: not a character device", "regular file: why");
	CHECK_STR_CONTAINS(warn, "nvidia-uvm left out:", "uvm: warning");
	ward_gpu_inventory_free(inv);
	free(warn);

	/* uvm not loaded at all: no node, no warning */
	root = make_host();
	wr(root, "proc/devices", "Character devices:\n195 nvidia-frontend\n235 nvidia-caps\n");
	inv = load(root, &err);
	warn = log_since();
	CHECK(inv && inv->n == 5 && inv->uvm.major == 0 && !strstr(warn, "uvm") &&
		  inv->caps_major == 235,
	      "nvidia-uvm not in /proc/devices: no uvm, silently; nvidia-frontend accepted");
	ward_gpu_inventory_free(inv);
	free(warn);

	/* no nvidia-caps: no MIG */
	root = make_host();
	wr(root, "proc/devices", "Character devices:\n195 nvidia\n509 nvidia-uvm\n");
	inv = load(root, &err);
	warn = log_since();
	CHECK(inv && inv->n == 3 && inv->caps_major == 0, "nvidia-caps not loaded: no MIG devices");
	CHECK_STR_CONTAINS(warn, MIG_A " left out: nvidia-caps is not in /proc/devices",
			   "with a warning saying why");
	ward_gpu_inventory_free(inv);
	free(warn);

	/* uvm-tools bad alone */
	root = make_host();
	chr(root, "dev/nvidia-uvm-tools", 509, 7);
	inv = load(root, &err);
	warn = log_since();
	CHECK(inv && inv->uvm.major == 509 && inv->uvm_tools.major == 0,
	      "a bad nvidia-uvm-tools leaves only it out");
	CHECK_STR_CONTAINS(warn, "nvidia-uvm-tools left out", "with a warning");
	ward_gpu_inventory_free(inv);
	free(warn);

	/* no nvidiactl: nothing is usable */
	root = make_host();
	rm(root, "dev/nvidiactl");
	inv = load(root, &err);
	warn = log_since();
	CHECK(inv && inv->n == 0, "without nvidiactl every GPU is left out");
	CHECK_STR_CONTAINS(warn, "all 3 GPUs left out", "with a warning");
	ward_gpu_inventory_free(inv);
	free(warn);

	/* a symlink to a good node is not accepted */
	root = make_host();
	{
		char a[512], b[512];
		snprintf(a, sizeof(a), "%s/dev/nvidia0", root);
		snprintf(b, sizeof(b), "%s/dev/real0", root);
		if (rename(a, b) < 0 || symlink("real0", a) < 0)
			die("symlink");
	}
	inv = load(root, &err);
	free(log_since());
	CHECK(inv && !ward_gpu_find(inv, UUID_B) && ward_gpu_find(inv, UUID_A),
	      "a symlinked node is left out (lstat)");
	ward_gpu_inventory_free(inv);

	/* CDI specs only from root-owned, non-writable files and directories */
	root = make_host();
	{
		char a[512];
		snprintf(a, sizeof(a), "%s/run/cdi/nvidia.json", root);
		if (chmod(a, 0666) < 0)
			die("chmod");
		snprintf(a, sizeof(a), "%s/etc/cdi", root);
		if (chown(a, 1000, 0) < 0)
			die("chown");
	}
	inv = load(root, &err);
	warn = log_since();
	CHECK(inv && inv->n == 3 && inv->n_mounts == 0 && inv->gpus[0].n_mounts == 0,
	      "an other-writable spec and a non-root CDI directory are not used");
	CHECK_STR_CONTAINS(warn, "run/cdi/nvidia.json: not owned by root or writable by others",
			   "warning names the spec");
	CHECK_STR_CONTAINS(warn, "etc/cdi: not owned by root or writable by others",
			   "warning names the directory");
	ward_gpu_inventory_free(inv);
	free(warn);

	/* an excluded GPU takes no index */
	root = make_host();
	{
		char rel[256];
		snprintf(rel, sizeof(rel), "proc/driver/nvidia/gpus/0000:86:00.0/information");
		wr(root, rel,
		   "Model: X\nGPU UUID: %s\nBus Location: 0000:86:00.0\nDevice Minor: 0\n"
		   "GPU Excluded: Yes\n",
		   UUID_B);
	}
	inv = load(root, &err);
	warn = log_since();
	CHECK(inv && inv->n == 4 && !ward_gpu_find(inv, UUID_B) &&
		  ward_gpu_find(inv, "1") == ward_gpu_find(inv, UUID_C),
	      "an excluded GPU is left out and takes no index");
	CHECK_STR_CONTAINS(warn, "excluded by the driver", "with a warning");
	ward_gpu_inventory_free(inv);
	free(warn);
}

static void expect_load_error(const char *root, const char *want, const char *name)
{
	struct ward_err err = {0};
	struct ward_gpu_inventory *inv = load(root, &err);
	CHECK(!inv, name);
	ward_gpu_inventory_free(inv);
	CHECK_STR_CONTAINS(err.msg, want, "  and the error says so");
	free(log_since());
}

static void test_load_errors(void)
{
	struct ward_err err = {0};
	const char *root;
	struct ward_gpu_inventory *inv;
	char rel[] = "proc/driver/nvidia/gpus/0000:86:00.0/information";

	/* no driver */
	{
		char dir[300];
		snprintf(dir, sizeof(dir), "%s/empty", tmp);
		mkdirs(dir);
		inv = load(dir, &err);
		CHECK(inv && inv->n == 0 && inv->ctl.major == 0 && inv->uvm.major == 0,
		      "no /proc/driver/nvidia: empty inventory, no error");
		ward_gpu_inventory_free(inv);
	}

	root = make_host();
	wr(root, rel, "Model: X\nGPU UUID: %s\nthis line is garbage\nBus Location: 0000:86:00.0\n",
	   UUID_B);
	expect_load_error(root, "0000:86:00.0/information:3: expected \"Key: value\"",
			  "a malformed information line is an error");

	root = make_host();
	wr(root, rel, "GPU UUID: %s\nBus Location: 0000:86:00.0\nDevice Minor: 255\n", UUID_B);
	expect_load_error(root, "information:3: Device Minor \"255\"", "minor 255 is an error");

	root = make_host();
	wr(root, rel, "GPU UUID: %s\nBus Location: 0000:86:00.0\nDevice Minor: 0x1\n", UUID_B);
	expect_load_error(root, "information:3: Device Minor \"0x1\"", "a non-decimal minor");

	root = make_host();
	wr(root, rel, "GPU UUID: GPU-xyz\nBus Location: 0000:86:00.0\nDevice Minor: 0\n");
	expect_load_error(root, "information:1: GPU UUID \"GPU-xyz\"", "a malformed uuid");

	root = make_host();
	wr(root, rel, "GPU UUID: %s\nBus Location: 86-00\nDevice Minor: 0\n", UUID_B);
	expect_load_error(root, "information:2: Bus Location \"86-00\"", "a malformed bus id");

	root = make_host();
	wr(root, rel, "GPU UUID: %s\nDevice Minor: 0\n", UUID_B);
	expect_load_error(root, "information: no \"Bus Location:\" line", "a missing key");

	root = make_host();
	wr(root, rel, "GPU UUID: %s\nBus Location: 0000:86:00.0\nDevice Minor: 2\n", UUID_B);
	expect_load_error(root, "share a minor", "two GPUs with one minor");

	root = make_host();
	wr(root, rel, "GPU UUID: %s\nBus Location: 0000:86:00.0\nDevice Minor: 0\n", UUID_A);
	expect_load_error(root, "listed twice", "two GPUs with one uuid");

	root = make_host();
	wr(root, "proc/devices", "Character devices:\n200 nvidia\n509 nvidia-uvm\n");
	expect_load_error(root, "devices:2: nvidia has major 200, expected 195",
			  "nvidia with a major other than 195 is an error");

	root = make_host();
	wr(root, "proc/devices", "Character devices:\nnvidia 195\n");
	expect_load_error(root, "devices:2: expected", "a malformed /proc/devices line");

	root = make_host();
	wr(root, "proc/driver/nvidia-caps/mig-minors", "config 1\ngpu0/gi1/access\n");
	expect_load_error(root, "mig-minors:2: expected", "a malformed mig-minors line");

	root = make_host();
	wr(root, "run/cdi/nvidia.json",
	   "{\"cdiVersion\": \"0.5.0\",\n \"kind\": \"nvidia.com/gpu\",\n,}");
	expect_load_error(root,
			  "run/cdi/nvidia.json:3:", "CDI: a JSON syntax error names file:line");

	root = make_host();
	wr(root, "run/cdi/x.json", "{\"kind\": \"nvidia.com/gpu\", \"devices\": []}");
	expect_load_error(root, "x.json: cdiVersion: required", "CDI: cdiVersion is required");

	root = make_host();
	wr(root, "run/cdi/x.json", "{\"cdiVersion\": \"0.5.0\", \"devices\": []}");
	expect_load_error(root, "x.json: kind: required", "CDI: kind is required");

	root = make_host();
	wr(root, "run/cdi/x.json",
	   "{\"cdiVersion\": \"0.5.0\", \"kind\": \"nvidia.com/gpu\", \"devices\": [{\"name\": "
	   "\"0\", \"containerEdits\": {\"mounts\": [{\"hostPath\": \"lib\", \"containerPath\": "
	   "\"/lib\"}]}}]}");
	expect_load_error(root, "x.json: device 0.containerEdits.mounts[0]",
			  "CDI: a relative mount path is an error");

	root = make_host();
	wr(root, "run/cdi/x.json",
	   "{\"cdiVersion\": \"0.5.0\", \"kind\": \"nvidia.com/gpu\", \"kind\": \"x.com/y\", "
	   "\"devices\": []}");
	expect_load_error(root, "x.json:1: duplicate object key", "CDI: duplicate keys rejected");
}

/* ------------------------------------------------------------------------------------------ */

/* config.json text -> the request, as create does from its one parse (ward_json_decode). */
static int parse(const char *json, struct ward_gpu_request *req, struct ward_err *err)
{
	json_t *root = json ? ward_json_decode(json, strlen(json), err) : NULL;
	int r;

	if (json && !root) {
		memset(req, 0, sizeof(*req));
		return -1;
	}
	r = ward_gpu_request_from_json(root, req, err);
	json_decref(root);
	return r;
}

static bool refs_are(char **refs, const char *const *want, size_t n)
{
	if (!refs || strv_len(refs) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(refs[i], want[i]))
			return false;
	return true;
}

static void test_request(void)
{
	struct ward_err err = {0};
	struct ward_gpu_request req;
	int r;

	r = parse("{\"annotations\": {\"cdi.k8s.io/z\": \"nvidia.com/gpu=" UUID_A
		  ", nvidia.com/gpu=gpu1,nvidia.com/gpu=" MIG_A "\","
		  "\"cdi.k8s.io/a\": \"nvidia.com/gpu=all\", \"other\": 1},"
		  "\"linux\": {\"devices\": [{\"type\": \"c\", \"major\": 195, \"minor\": 2}]},"
		  "\"process\": {\"env\": [\"NVIDIA_VISIBLE_DEVICES=0\", "
		  "\"NVIDIA_DRIVER_CAPABILITIES=utility\"]}}",
		  &req, &err);
	{
		const char *want[] = {"all", UUID_A, "1", MIG_A};
		CHECK(r == 0 && refs_are(req.refs, want, 4),
		      "CDI annotations: all keys (sorted), gpuN is index N");
		CHECK(r == 0 && !strcmp(req.source, "cdi.k8s.io/a") && req.compute,
		      "CDI: source is the annotation, compute always");
	}
	ward_gpu_request_clear(&req);
	CHECK(!req.refs && !req.source, "clear empties the request");

	r = parse("{\"annotations\": {\"cdi.k8s.io/x\": \"nvidia.com/gpu=0,vendor.com/fpga=1\"}}",
		  &req, &err);
	CHECK(r < 0 && !req.refs, "another vendor's CDI kind is an error");
	CHECK_STR_CONTAINS(err.msg, "annotation cdi.k8s.io/x: CDI kind \"vendor.com/fpga\"",
			   "naming the annotation and the kind");

	r = parse("{\"annotations\": {\"cdi.k8s.io/x\": \"0\"}}", &req, &err);
	CHECK(r < 0, "an unqualified CDI name is an error");
	CHECK_STR_CONTAINS(err.msg, "cdi.k8s.io/x", "naming the annotation");

	r = parse("{\"annotations\": {\"cdi.k8s.io/x\": \"nvidia.com/gpu=0,,nvidia.com/gpu=1\"}}",
		  &req, &err);
	CHECK(r < 0, "an empty CDI list entry is an error");
	r = parse("{\"annotations\": {\"cdi.k8s.io/x\": \"nvidia.com/gpu=\"}}", &req, &err);
	CHECK(r < 0, "an empty CDI device name is an error");
	r = parse("{\"annotations\": {\"cdi.k8s.io/x\": \"\"}}", &req, &err);
	CHECK(r < 0, "an empty CDI annotation is an error");
	r = parse("{\"annotations\": {\"cdi.k8s.io/x\": [\"nvidia.com/gpu=0\"]}}", &req, &err);
	CHECK(r < 0, "a non-string CDI annotation is an error");
	CHECK_STR_CONTAINS(err.msg, "annotation cdi.k8s.io/x: expected a string", "saying so");

	r = parse("{\"annotations\": {\"cdi.k8s.io/x\": \"nvidia.com/gpu=gpu12,nvidia.com/"
		  "gpu=gpux,nvidia.com/gpu=GPU-ab\"}}",
		  &req, &err);
	{
		const char *want[] = {"12", "gpux", "GPU-ab"};
		CHECK(r == 0 && refs_are(req.refs, want, 3),
		      "only gpu<digits> is type-index naming");
	}
	ward_gpu_request_clear(&req);

	r = parse(
	    "{\"annotations\": {\"io.kubernetes.x\": \"nvidia.com/gpu=0\"},"
	    "\"linux\": {\"devices\": ["
	    "{\"path\": \"/dev/nvidia2\", \"type\": \"c\", \"major\": 195, \"minor\": 2},"
	    "{\"path\": \"/dev/nvidiactl\", \"type\": \"c\", \"major\": 195, \"minor\": 255},"
	    "{\"path\": \"/dev/nvidia-modeset\", \"type\": \"c\", \"major\": 195, \"minor\": 254},"
	    "{\"path\": \"/dev/nvidia-uvm\", \"type\": \"c\", \"major\": 509, \"minor\": 0},"
	    "{\"path\": \"/dev/x\", \"type\": \"b\", \"major\": 195, \"minor\": 1},"
	    "{\"path\": \"/dev/nvidia0\", \"type\": \"c\", \"major\": 195, \"minor\": 0}]},"
	    "\"process\": {\"env\": [\"NVIDIA_VISIBLE_DEVICES=all\"]}}",
	    &req, &err);
	{
		const char *want[] = {"minor:2", "minor:0"};
		CHECK(r == 0 && refs_are(req.refs, want, 2),
		      "linux.devices: 195:N char devices with N < 254 (other annotations ignored)");
		CHECK(r == 0 && !strcmp(req.source, "linux.devices") && req.compute,
		      "linux.devices: source, and it beats the env");
	}
	ward_gpu_request_clear(&req);

	r = parse(
	    "{\"linux\": {\"devices\": [{\"type\": \"c\", \"major\": 195, \"minor\": \"2\"}]}}",
	    &req, &err);
	CHECK(r < 0, "linux.devices: a non-integer minor is an error");
	CHECK_STR_CONTAINS(err.msg, "linux.devices[0].minor", "naming the key");

	r = parse("{\"process\": {\"env\": [\"PATH=/bin\", \"NVIDIA_VISIBLE_DEVICES=none\", "
		  "\"NVIDIA_VISIBLE_DEVICES= 0, GPU-x ,junk,,3b:00.0\"]}}",
		  &req, &err);
	{
		const char *want[] = {"0", "GPU-x", "junk", "3b:00.0"};
		CHECK(r == 0 && refs_are(req.refs, want, 4),
		      "env: the last NVIDIA_VISIBLE_DEVICES, garbage kept as refs");
		CHECK(r == 0 && !strcmp(req.source, "NVIDIA_VISIBLE_DEVICES") && req.compute,
		      "env: source; no capabilities means compute");
	}
	ward_gpu_request_clear(&req);

	{
		const char *cases[][2] = {
		    {"utility", "0"}, {"utility,compute", "1"},
		    {"all", "1"},     {"graphics, compute", "1"},
		    {"", "1"},	      {"computer", "0"},
		};
		bool ok = true;
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
			char json[300];
			snprintf(json, sizeof(json),
				 "{\"process\": {\"env\": [\"NVIDIA_VISIBLE_DEVICES=0\", "
				 "\"NVIDIA_DRIVER_CAPABILITIES=%s\"]}}",
				 cases[i][0]);
			r = parse(json, &req, &err);
			if (r < 0 || req.compute != (cases[i][1][0] == '1')) {
				printf("#   capabilities \"%s\": compute %d\n", cases[i][0],
				       req.compute);
				ok = false;
			}
			ward_gpu_request_clear(&req);
		}
		CHECK(ok, "compute from NVIDIA_DRIVER_CAPABILITIES (all, compute, unset, empty)");
	}

	{
		const char *values[] = {"none", "void", "", " none "};
		bool ok = true;
		for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
			char json[300];
			snprintf(json, sizeof(json),
				 "{\"process\": {\"env\": [\"NVIDIA_VISIBLE_DEVICES=%s\"]}}",
				 values[i]);
			r = parse(json, &req, &err);
			ok &= r == 0 && req.refs && !req.refs[0] && req.source;
			ward_gpu_request_clear(&req);
		}
		CHECK(ok, "env: none, void and empty ask for no GPU");
	}

	r = parse("{\"process\": {\"env\": [\"NVIDIA_VISIBLE_DEVICES=all\"]}}", &req, &err);
	CHECK(r == 0 && refs_are(req.refs, (const char *[]){"all"}, 1), "env: all stays all");
	ward_gpu_request_clear(&req);

	r = parse(
	    "{\"process\": {\"env\": [\"CUDA_VERSION=12.4\", \"NVIDIA_VISIBLE_DEVICESX=1\"]}}",
	    &req, &err);
	CHECK(r == 0 && req.refs && !req.refs[0] && !req.source,
	      "no request: empty refs, no source (no legacy CUDA_VERSION default)");
	ward_gpu_request_clear(&req);

	r = parse("{}", &req, &err);
	CHECK(r == 0 && req.refs && !req.refs[0], "an empty config asks for nothing");
	ward_gpu_request_clear(&req);

	r = parse("{\"process\": {\"env\": [\"A=b\", 7]}}", &req, &err);
	CHECK(r < 0 && !req.refs && !req.source, "a non-string env entry is an error");
	CHECK_STR_CONTAINS(err.msg, "process.env[1]: expected a string", "naming the entry");

	r = parse("{\"process\": {\"env\": \"NVIDIA_VISIBLE_DEVICES=all\"}}", &req, &err);
	CHECK(r < 0, "a non-array env is an error");

	r = parse("{\"annotations\": [1]}", &req, &err);
	CHECK(r < 0, "non-object annotations are an error");

	r = parse("{\"process\": ", &req, &err);
	CHECK(r < 0, "invalid JSON is an error");
	CHECK_STR_CONTAINS(err.msg, "invalid JSON at line 1", "with the line");

	r = parse("[1]", &req, &err);
	CHECK(r < 0, "a non-object config is an error");
	r = parse(NULL, &req, &err);
	CHECK(r < 0, "no config is an error");
}

/* ------------------------------------------------------------------------------------------ */

static int resolve(const struct ward_gpu_inventory *inv, const char *tenant, char *const *tgpus,
		   const char *const *refs, size_t **out, size_t *n, struct ward_err *err)
{
	struct ward_gpu_request req = {.refs = (char **)refs, .source = (char *)"test"};
	return ward_gpu_resolve(inv, &req, tenant, tgpus, out, n, err);
}

static bool out_is(const size_t *out, size_t n, const size_t *want, size_t n_want)
{
	if (n != n_want)
		return false;
	for (size_t i = 0; i < n; i++)
		if (out[i] != want[i])
			return false;
	return true;
}

static void test_resolve(void)
{
	struct ward_err err = {0};
	const char *root = make_host();
	struct ward_gpu_inventory *inv = load(root, &err);
	char *tenant_a[] = {"0", UUID_B, "GPU-99999999-9999-4999-8999-999999999999", "7", NULL};
	char *tenant_c[] = {"mig-aaaaaaaa-aaaa-5aaa-8aaa-aaaaaaaaaaaa", NULL};
	char *tenant_d[] = {"af:00.0", NULL};
	size_t *out = NULL, n = 0;
	int r;

	free(log_since());
	CHECK(inv && inv->n == 5, "resolve fixture loads");
	if (!inv || inv->n != 5) {
		ward_gpu_inventory_free(inv);
		return;
	}

	r = resolve(inv, "a", tenant_a, (const char *[]){"all", NULL}, &out, &n, &err);
	CHECK(r == 0 && out_is(out, n, (size_t[]){0, 1, 3, 4}, 4),
	      "all: the tenant's GPUs on this host and the MIG devices of its GPUs");
	free(out);

	r = resolve(inv, "a", tenant_a, (const char *[]){"2", NULL}, &out, &n, &err);
	CHECK(r < 0 && !out && n == 0, "another tenant's GPU is refused");
	CHECK_STR_CONTAINS(err.msg, "GPU \"" UUID_C "\": not assigned to tenant \"a\"",
			   "naming the GPU's uuid and the tenant");

	r = resolve(inv, "a", tenant_a,
		    (const char *[]){"0", "GPU-99999999-9999-4999-8999-999999999999", NULL}, &out,
		    &n, &err);
	CHECK(r < 0 && !out, "a GPU not on this host is an error, even the tenant's");
	CHECK_STR_CONTAINS(err.msg,
			   "GPU \"GPU-99999999-9999-4999-8999-999999999999\": no such GPU on "
			   "this host",
			   "naming the source and the reference");

	r = resolve(inv, "a", tenant_a, (const char *[]){"junk", NULL}, &out, &n, &err);
	CHECK(r < 0, "a garbage reference fails to resolve");
	CHECK_STR_CONTAINS(err.msg, "GPU \"junk\": no such GPU on this host", "saying so");

	r = resolve(inv, "a", tenant_a,
		    (const char *[]){MIG_A, "mig-bbbbbbbb-bbbb-5bbb-8bbb-bbbbbbbbbbbb", NULL}, &out,
		    &n, &err);
	CHECK(r == 0 && out_is(out, n, (size_t[]){3, 4}, 2),
	      "MIG devices of the tenant's GPU are the tenant's");
	free(out);

	r = resolve(inv, "d", tenant_d, (const char *[]){MIG_A, NULL}, &out, &n, &err);
	CHECK(r < 0, "a MIG device of another tenant's GPU is refused");
	CHECK_STR_CONTAINS(err.msg, "GPU \"" MIG_A "\": not assigned to tenant \"d\"", "naming it");

	r = resolve(inv, "c", tenant_c, (const char *[]){"all", NULL}, &out, &n, &err);
	CHECK(r == 0 && out_is(out, n, (size_t[]){3}, 1),
	      "a tenant owning one MIG device: all is that device");
	free(out);
	r = resolve(inv, "c", tenant_c, (const char *[]){"0", NULL}, &out, &n, &err);
	CHECK(r < 0, "owning a MIG device does not give its parent");
	CHECK_STR_CONTAINS(err.msg, "not assigned to tenant \"c\"", "saying so");

	r = resolve(inv, "a", tenant_a,
		    (const char *[]){"minor:0", "0", UUID_A, "0000:3B:00.0", "minor:2", "3b:00.0",
				     "all", "1", NULL},
		    &out, &n, &err);
	CHECK(r == 0 && out_is(out, n, (size_t[]){1, 0, 3, 4}, 4),
	      "duplicates removed, first mention keeps its place");
	free(out);

	r = resolve(inv, "a", tenant_a, (const char *[]){"minor:1", NULL}, &out, &n, &err);
	CHECK(r < 0 && strstr(err.msg, "not assigned"), "minor:N resolves by minor");
	r = resolve(inv, "a", tenant_a, (const char *[]){"minor:9", NULL}, &out, &n, &err);
	CHECK(r < 0 && strstr(err.msg, "no such GPU"), "an unknown minor is an error");
	r = resolve(inv, "a", tenant_a, (const char *[]){"minor:x", NULL}, &out, &n, &err);
	CHECK(r < 0, "a malformed minor ref is an error");

	r = resolve(inv, "a", tenant_a, (const char *[]){NULL}, &out, &n, &err);
	CHECK(r == 0 && n == 0 && !out, "no refs: no GPUs");
	r = resolve(inv, "z", NULL, (const char *[]){"all", NULL}, &out, &n, &err);
	CHECK(r == 0 && n == 0, "a tenant without GPUs: all is nothing");

	/* the request parser's output feeds resolve */
	{
		struct ward_gpu_request req;
		r = parse("{\"annotations\": {\"cdi.k8s.io/g\": "
			  "\"nvidia.com/gpu=gpu1,nvidia.com/gpu=" UUID_A "\"}}",
			  &req, &err);
		CHECK(r == 0, "parse for resolve");
		r = ward_gpu_resolve(inv, &req, "a", tenant_a, &out, &n, &err);
		CHECK(r == 0 && out_is(out, n, (size_t[]){1, 0}, 2), "CDI gpu1 + uuid resolve");
		free(out);
		ward_gpu_request_clear(&req);
	}
	ward_gpu_inventory_free(inv);

	{
		char dir[300];
		snprintf(dir, sizeof(dir), "%s/empty", tmp);
		mkdirs(dir);
		inv = load(dir, &err);
		r = resolve(inv, "a", tenant_a, (const char *[]){"all", NULL}, &out, &n, &err);
		CHECK(r == 0 && n == 0, "no driver: all is nothing");
		r = resolve(inv, "a", tenant_a, (const char *[]){"0", NULL}, &out, &n, &err);
		CHECK(r < 0 && strstr(err.msg, "no such GPU on this host"),
		      "no driver: an explicit GPU is an error");
		ward_gpu_inventory_free(inv);
	}
}

int main(void)
{
	bool nodes;

	if (!mkdtemp(tmp))
		die("mkdtemp");
	snprintf(logpath, sizeof(logpath), "%s/log", tmp);
	if (ward_log_open(logpath, false, false) < 0)
		die("log");
	{
		char probe[300];
		snprintf(probe, sizeof(probe), "%s/probe", tmp);
		nodes = mknod(probe, S_IFCHR | 0600, makedev(195, 0)) == 0;
		unlink(probe);
	}
	test_request();
	if (nodes) {
		test_inventory();
		test_bad_nodes();
		test_load_errors();
		test_resolve();
	} else {
		printf("# SKIP inventory tests: mknod: %s (needs root)\n", strerror(errno));
	}
	{
		char cmd[400];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", tmp);
	}
	TAP_DONE();
}
