/* `ward check`: probe the host, then judge the configured policy against it. Every probe
 * does the real thing ward does later (unshare, idmap a mount clone, load and attach a device
 * program) and undoes it; nothing is left behind. */
#include "hostcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apparmor.h"
#include "bpfdev.h"
#include "cgroup.h"
#include "cgroup_res.h"
#include "gpu.h"
#include "idpool.h"
#include "mount.h"
#include "sys.h"
#include "util.h"

#define AA_PROFILES "/sys/kernel/security/apparmor/profiles"
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

const char *const ward_host_seccomp_action_names[WARD_HOST_N_SECCOMP_ACTIONS] = {
    "SCMP_ACT_ERRNO", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_NOTIFY"};
static const uint32_t seccomp_action_values[WARD_HOST_N_SECCOMP_ACTIONS] = {
    SECCOMP_RET_ERRNO, SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_USER_NOTIF};
static const char *const seccomp_action_disables[WARD_HOST_N_SECCOMP_ACTIONS] = {
    "seccomp profiles (every ward profile denies with ERRNO)",
    "seccomp profiles that kill the process", "nothing (ward has no seccomp notify listener)"};

const char *const ward_host_seccomp_flag_names[WARD_HOST_N_SECCOMP_FLAGS] = {
    "SECCOMP_FILTER_FLAG_TSYNC",       "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",  "SECCOMP_FILTER_FLAG_NEW_LISTENER",
    "SECCOMP_FILTER_FLAG_TSYNC_ESRCH", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"};
/* The flags to pass to probe each one (WAIT_KILLABLE_RECV is only valid with NEW_LISTENER). */
static const unsigned long seccomp_flag_probe[WARD_HOST_N_SECCOMP_FLAGS] = {
    1ul << 0, 1ul << 1, 1ul << 2, 1ul << 3, 1ul << 4, (1ul << 3) | (1ul << 5)};

const char *const ward_host_controller_names[WARD_HOST_N_CONTROLLERS] = {
    "memory", "cpu", "pids", "io", "cpuset", "hugetlb"};
static const char *const controller_disables[WARD_HOST_N_CONTROLLERS] = {
    "memory limits (linux.resources.memory, tenant memory budgets)",
    "cpu shares/quota (linux.resources.cpu shares, quota, period)",
    "pids limits (linux.resources.pids)",
    "block I/O limits (linux.resources.blockIO)",
    "cpu and memory-node pinning (linux.resources.cpu.cpus/mems)",
    "hugepage limits (linux.resources.hugepageLimits)"};
/* Their names in /proc/cgroups (cgroup v1 names). */
static const char *const controller_v1_names[WARD_HOST_N_CONTROLLERS] = {
    "memory", "cpu", "pids", "blkio", "cpuset", "hugetlb"};

/* ---- small helpers ----------------------------------------------------------------- */

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	va_start(ap, f);
	s = xvasprintf(f, ap);
	va_end(ap);
	return s;
}

/* First line of a small file, trailing newline removed; NULL (errno set) if unreadable. */
static char *read_line(const char *path)
{
	struct ward_err e;
	char *s = read_file_at(AT_FDCWD, path, NULL, &e);
	if (!s) {
		errno = e.errnum;
		return NULL;
	}
	s[strcspn(s, "\n")] = '\0';
	return s;
}

static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; p && (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* "6.1" from "6.1.0-18-amd64"; major*1000+minor for comparisons. */
static int kernel_version(const char *release)
{
	int major = 0, minor = 0;
	if (sscanf(release, "%d.%d", &major, &minor) < 2)
		return 0;
	return major * 1000 + minor;
}

/* ---- user namespaces ---------------------------------------------------------------- */

/* A user namespace mapping root to our uid/gid, held by an fd (mount.c's helper). Returns
 * the fd, or -1 with *why set. */
static int throwaway_userns(char **why)
{
	struct ward_idmap u = {0, (uint32_t)getuid(), 1}, g = {0, (uint32_t)getgid(), 1};
	struct ward_idmaps um = {&u, 1}, gm = {&g, 1};
	struct ward_err e = {0};
	int fd = ward_userns_with_maps(&um, &gm, &e);
	if (fd < 0)
		*why = xstrdup(e.msg);
	return fd;
}

static void probe_userns(struct ward_host *h, int userns_fd, const char *why)
{
	cleanup_free char *max = read_line("/proc/sys/user/max_user_namespaces");
	int64_t n;

	h->max_user_namespaces = max && parse_i64(max, &n) == 0 ? (long)n : -1;
	if (h->max_user_namespaces == 0) {
		h->userns_detail = xstrdup("/proc/sys/user/max_user_namespaces is 0");
		return;
	}
	if (userns_fd < 0) {
		h->userns_detail = fmt("a child cannot create one: %s", why);
		return;
	}
	h->userns = true;
	if (h->max_user_namespaces > 0)
		h->userns_detail =
		    fmt("max_user_namespaces %ld, a child unshared one", h->max_user_namespaces);
	else
		h->userns_detail = xstrdup("a child unshared one");
}

/* ---- idmapped mounts per filesystem ---------------------------------------------------- */

/* The first kernel with idmapped mounts for these filesystems (FS_ALLOW_IDMAP). */
static const struct {
	const char *fstype;
	int since; /* major*1000+minor */
} idmap_since[] = {
    {"ext4", 5012},  {"xfs", 5012},  {"vfat", 5012},  {"msdos", 5012},
    {"btrfs", 5015}, {"f2fs", 5018}, {"erofs", 5019}, {"overlay", 5019},
    {"tmpfs", 6003}, {"ceph", 6007}, {"fuse", 6012},
};

/* Unescape mountinfo's octal escapes (\040) in place. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* Mount point and fstype of the mount that fd is on (from fdinfo's mnt_id). */
static void mount_of(int fd, char **mount_point, char **fstype)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	long mnt_id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if ((f = fopen(path, "re"))) {
		while (getline(&line, &cap, f) > 0)
			if (sscanf(line, "mnt_id: %ld", &mnt_id) == 1)
				break;
		fclose(f);
	}
	if (mnt_id >= 0 && (f = fopen("/proc/self/mountinfo", "re"))) {
		while (getline(&line, &cap, f) > 0) {
			long id;
			char mp[4096], *sep = strstr(line, " - "), type[128];
			if (sscanf(line, "%ld %*d %*s %*s %4095s", &id, mp) != 2 || id != mnt_id ||
			    !sep || sscanf(sep + 3, "%127s", type) != 1)
				continue;
			unescape(mp);
			*mount_point = xstrdup(mp);
			*fstype = xstrdup(type);
			break;
		}
		fclose(f);
	}
	free(line);
}

static char *idmap_why(const char *fstype, int err, const char *kernel)
{
	int have = kernel_version(kernel);
	if (err == EINVAL && fstype) {
		for (size_t i = 0; i < ARRAY_SIZE(idmap_since); i++) {
			if (strcmp(idmap_since[i].fstype, fstype))
				continue;
			if (have && have < idmap_since[i].since)
				return fmt("kernel %d.%d lacks %s idmap (added in %d.%d)",
					   have / 1000, have % 1000, fstype,
					   idmap_since[i].since / 1000,
					   idmap_since[i].since % 1000);
			break;
		}
		return fmt("%s does not support idmapped mounts on kernel %s (mount_setattr: %s)",
			   fstype, kernel, strerror(err));
	}
	return fmt("mount_setattr MOUNT_ATTR_IDMAP: %s", strerror(err));
}

static void probe_fs(struct ward_host_fs *f, int userns_fd, const char *userns_why,
		     const char *kernel)
{
	cleanup_free char *p = xstrdup(f->path);
	cleanup_fd int fd = -1;
	cleanup_fd int tree = -1;
	struct stat st;

	/* A directory ward creates later: probe where it will be created. */
	while (stat(p, &st) < 0 && strcmp(p, "/")) {
		char *slash = strrchr(p, '/');
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	f->probed = xstrdup(p);
	fd = open(p, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		f->detail = fmt("open %s: %s", p, strerror(errno));
		return;
	}
	mount_of(fd, &f->mount_point, &f->fstype);
	if (userns_fd < 0) {
		f->detail = fmt("no user namespace to map to (%s)", userns_why);
		return;
	}
	tree = sys_open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0) {
		f->detail = fmt("open_tree %s: %s", p, strerror(errno));
		return;
	}
	if (sys_mount_idmap_fd(tree, 0, userns_fd) < 0) {
		f->detail = idmap_why(f->fstype, errno, kernel);
		return;
	}
	f->idmap = true;
}

static void add_fs(struct ward_host *h, const char *path, const char *role, bool only_if_exists)
{
	struct stat st;
	if (!path || !*path || (only_if_exists && stat(path, &st) < 0))
		return;
	for (size_t i = 0; i < h->n_fs; i++) {
		if (strcmp(h->fs[i].path, path))
			continue;
		char *r = fmt("%s, %s", h->fs[i].role, role);
		free(h->fs[i].role);
		h->fs[i].role = r;
		return;
	}
	h->fs = xrealloc(h->fs, (h->n_fs + 1) * sizeof(*h->fs));
	h->fs[h->n_fs++] = (struct ward_host_fs){.path = xstrdup(path), .role = xstrdup(role)};
}

/* ---- seccomp -------------------------------------------------------------------------- */

static void probe_seccomp(struct ward_host *h)
{
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
		h->seccomp_detail =
		    fmt("prctl(PR_GET_SECCOMP): %s (kernel without seccomp)", strerror(errno));
		return;
	}
	/* A NULL filter: EFAULT means the mode and the flags passed the kernel's checks. */
	if (sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, NULL) == 0 || errno != EFAULT) {
		h->seccomp_detail =
		    fmt("seccomp(SECCOMP_SET_MODE_FILTER): %s (kernel without seccomp filters)",
			strerror(errno));
		return;
	}
	h->seccomp = true;
	for (size_t i = 0; i < WARD_HOST_N_SECCOMP_ACTIONS; i++) {
		uint32_t action = seccomp_action_values[i];
		h->seccomp_actions[i] = sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
	}
	for (size_t i = 0; i < WARD_HOST_N_SECCOMP_FLAGS; i++)
		h->seccomp_flags[i] =
		    sys_seccomp(SECCOMP_SET_MODE_FILTER, seccomp_flag_probe[i], NULL) < 0 &&
		    errno == EFAULT;
}

/* ---- AppArmor ----------------------------------------------------------------------- */

/* ward_apparmor_enabled decides; the files are read again only to say why not. */
static void probe_apparmor(struct ward_host *h)
{
	static const char param[] = "/sys/module/apparmor/parameters/enabled";
	static const char fs[] = "/sys/kernel/security/apparmor";
	cleanup_free char *v = NULL;
	struct ward_err e;
	struct stat st;

	if (ward_apparmor_enabled()) {
		h->apparmor = true;
		h->apparmor_profiles = read_file_at(AT_FDCWD, AA_PROFILES, NULL, &e);
		return;
	}
	v = read_line(param);
	if (!v)
		h->apparmor_detail = fmt("not in this kernel: %s: %s", param, strerror(errno));
	else if (strcmp(v, "Y"))
		h->apparmor_detail =
		    fmt("disabled at boot or another LSM is active: %s is \"%s\"", param, v);
	else if (stat(fs, &st) < 0)
		h->apparmor_detail =
		    fmt("securityfs is not mounted at /sys/kernel/security: %s: %s", fs,
			strerror(errno));
	else
		h->apparmor_detail = fmt("%s is not a directory", fs);
}

/* ---- cgroup v2 and the device program --------------------------------------------------- */

/* Why the v2 hierarchy lacks a controller, from /proc/cgroups. */
static char *controller_why(const char *v1_name)
{
	FILE *f = fopen("/proc/cgroups", "re");
	char name[64];
	int hier, num, enabled;
	char *why = NULL;

	if (!f)
		return xstrdup("not offered in cgroup.controllers");
	if (fscanf(f, "%*[^\n]\n") >= 0) {
		while (fscanf(f, "%63s %d %d %d", name, &hier, &num, &enabled) == 4) {
			if (strcmp(name, v1_name))
				continue;
			if (!enabled)
				why = xstrdup("disabled on the kernel command line");
			else if (hier != 0)
				why = xstrdup("bound to a cgroup v1 hierarchy: hybrid host");
			break;
		}
	}
	fclose(f);
	if (!why)
		why = fmt("this kernel has no %s controller", v1_name);
	return why;
}

static int bpf_load_defaults(char **why)
{
	struct ward_err e = {0};
	int fd = ward_bpfdev_load(NULL, 0, &e);
	if (fd < 0)
		*why = xstrdup(e.msg);
	return fd;
}

/* <v2>/ward-check.<pid>: a throwaway cgroup for the core files and the device program. */
static void probe_cgroup(struct ward_host *h)
{
	struct ward_err e = {0};
	const char *root = ward_cgroup_v2_root(&e);
	cleanup_free char *probe = NULL;
	cleanup_free char *why = NULL;
	cleanup_fd int prog = -1;
	cleanup_fd int dfd = -1;
	struct statfs sf;
	struct stat st;

	if (!root) {
		h->cgroup_detail = xstrdup(e.msg);
	} else {
		h->cgroup_root = xstrdup(root);
		h->cgroup_hybrid =
		    statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type != CGROUP2_SUPER_MAGIC;
		probe = fmt("%s/cgroup.controllers", root);
		h->cgroup_available = read_line(probe);
		if (!h->cgroup_available)
			h->cgroup_available = xstrdup("");
		for (size_t i = 0; i < WARD_HOST_N_CONTROLLERS; i++) {
			h->controllers[i] =
			    has_word(h->cgroup_available, ward_host_controller_names[i]);
			if (!h->controllers[i])
				h->controller_detail[i] = controller_why(controller_v1_names[i]);
		}
		free(probe);
		probe = fmt("%s/ward-check.%d", root, (int)getpid());
		if (mkdir(probe, 0700) < 0) {
			h->cgroup_detail =
			    fmt("cannot create a test cgroup %s: %s", probe, strerror(errno));
			free(probe);
			probe = NULL;
			h->cgroup_freeze = h->cgroup_kill = -1;
		} else {
			dfd = open(probe, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			h->cgroup_freeze = fstatat(dfd, "cgroup.freeze", &st, 0) == 0;
			h->cgroup_kill = fstatat(dfd, "cgroup.kill", &st, 0) == 0;
		}
	}

	prog = bpf_load_defaults(&why);
	if (prog < 0) {
		h->bpf_detail = steal_ptr(why);
	} else if (dfd < 0) {
		h->bpf_devices = true;
		h->bpf_detail = xstrdup("loaded; not attached (no test cgroup)");
	} else if (ward_bpfdev_apply(dfd, NULL, 0, &e) < 0) {
		h->bpf_detail = fmt("loaded, but attaching it to %s failed: %s", probe, e.msg);
	} else {
		h->bpf_devices = true;
		h->bpf_detail = xstrdup("loaded and attached to a test cgroup");
	}
	if (probe) {
		close(dfd);
		dfd = -1;
		if (rmdir(probe) < 0 && !h->cgroup_detail)
			h->cgroup_detail = fmt("left behind %s: %s", probe, strerror(errno));
	}
}

/* ---- the ID pool ------------------------------------------------------------------------ */

static void probe_pool(struct ward_host *h, const struct ward_host_paths *paths)
{
	struct ward_idpool p = {
	    .lib_dir = paths->lib_dir,
	    .base = paths->config ? paths->config->pool_base : WARD_POOL_DEFAULT_BASE,
	    .size = paths->config ? paths->config->pool_size : WARD_POOL_DEFAULT_SIZE,
	};
	struct ward_err e = {0};
	cleanup_free char *dump = NULL;
	cleanup_free char *dir = NULL;
	cleanup_free char *notes = NULL; /* what the dump noted, "; "-joined */
	json_t *j, *note;
	size_t i;

	h->lib_dir = xstrdup(paths->lib_dir ? paths->lib_dir : "");
	h->pool_allocs = -1;
	dump = ward_idpool_dump(&p, &e);
	if (!dump) {
		/* "ID pool: open ...": the item is already called that */
		h->pool_detail =
		    xstrdup(strncmp(e.msg, "ID pool: ", 9) ? e.msg : e.msg + strlen("ID pool: "));
		return;
	}
	j = json_loads(dump, 0, NULL);
	h->pool_allocs = (long)json_array_size(json_object_get(j, "allocations"));
	json_array_foreach(json_object_get(j, "notes"), i, note)
	{
		char *n =
		    fmt("%s%s%s", notes ? notes : "", notes ? "; " : "", json_string_value(note));
		free(notes);
		notes = n;
	}
	json_decref(j);
	/* Writable where it is or where it will be created (EROFS even for root). */
	dir = xstrdup(paths->lib_dir);
	while (access(dir, F_OK) < 0 && strcmp(dir, "/")) {
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (access(dir, W_OK) < 0) {
		h->pool_detail = fmt("%s is not writable: %s", dir, strerror(errno));
		return;
	}
	h->pool_ok = true;
	h->pool_detail = notes; /* with ok: what needs no fixing */
	notes = NULL;
}

static void probe_hooks_gpus(struct ward_host *h, const struct ward_config *c)
{
	struct ward_gpu_inventory *inv;
	struct ward_err e = {0};

	h->gpus = -1;
	h->gpu_uuids = xcalloc(1, sizeof(char *));
	if (!c)
		return;
	h->audit_hook = xstrdup(c->audit_hook);
	h->audit_hook_ok = access(c->audit_hook, X_OK) == 0;
	h->gpu_hook = xstrdup(c->gpu.hook);
	h->gpu_hook_ok = access(c->gpu.hook, X_OK) == 0;
	struct ward_gpu_roots roots = {
	    .proc = c->gpu.proc_root, .dev = c->gpu.dev_root, .cdi_dirs = c->gpu.cdi_dirs};
	inv = ward_gpu_inventory_load(&roots, &e);
	if (!inv) {
		h->gpu_detail = xstrdup(e.msg);
		return;
	}
	h->gpus = (long)inv->n;
	for (size_t i = 0; i < inv->n; i++)
		h->gpu_uuids = strv_append(h->gpu_uuids, inv->gpus[i].uuid);
	ward_gpu_inventory_free(inv);
}

/* ---- probe ------------------------------------------------------------------------------ */

void ward_host_probe(const struct ward_host_paths *paths, struct ward_host *h)
{
	struct utsname u;
	cleanup_free char *userns_why = NULL;
	cleanup_fd int userns_fd = -1;

	memset(h, 0, sizeof(*h));
	h->root = geteuid() == 0;
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	userns_fd = throwaway_userns(&userns_why);
	probe_userns(h, userns_fd, userns_why);

	add_fs(h, paths->state_root, "state root", false);
	add_fs(h, paths->lib_dir, "ID pool", false);
	/* containerd's dirs as ward.json "containerd" names them (k3s, RKE2, ...) */
	add_fs(h, paths->config ? paths->config->containerd_root : "/var/lib/containerd",
	       "containerd snapshots", true);
	add_fs(h, paths->config ? paths->config->containerd_state : "/run/containerd",
	       "containerd state", true);
	add_fs(h, "/tmp", "temporary files", false);
	for (size_t i = 0; i < h->n_fs; i++)
		probe_fs(&h->fs[i], userns_fd, userns_why, h->kernel);

	probe_seccomp(h);
	probe_apparmor(h);
	probe_cgroup(h);
	probe_pool(h, paths);
	probe_hooks_gpus(h, paths->config);
}

void ward_host_free(struct ward_host *h)
{
	for (size_t i = 0; i < h->n_fs; i++) {
		struct ward_host_fs *f = &h->fs[i];
		free_all(f->path, f->role, f->probed, f->fstype, f->mount_point, f->detail);
	}
	for (size_t i = 0; i < WARD_HOST_N_CONTROLLERS; i++)
		free(h->controller_detail[i]);
	free_all(h->userns_detail, h->fs, h->seccomp_detail, h->apparmor_detail,
		 h->apparmor_profiles, h->cgroup_root, h->cgroup_detail, h->cgroup_available,
		 h->bpf_detail, h->lib_dir, h->pool_detail, h->audit_hook, h->gpu_hook,
		 h->gpu_detail);
	strv_free(h->gpu_uuids);
	memset(h, 0, sizeof(*h));
}

/* ---- verdict (pure) --------------------------------------------------------------------- */

static void add(char ***v, char *msg)
{
	*v = strv_append(*v, msg);
	free(msg);
}

static bool controller_available(const struct ward_host *h, const char *name)
{
	for (size_t i = 0; i < WARD_HOST_N_CONTROLLERS; i++)
		if (!strcmp(ward_host_controller_names[i], name))
			return h->controllers[i];
	/* rdma, misc, ...: as the hierarchy offers them */
	return h->cgroup_available && has_word(h->cgroup_available, name);
}

/* Kubernetes on a host without the cpu controller in cgroup v2 (hybrid): containerd's CRI
 * plugin gives every pod sandbox cpu.shares 2, so with missing_controllers "error" no pod
 * runs at all. Said first among the warnings: it decides whether the host can serve pods. */
static void kubernetes_warning(struct ward_verdict *v, const struct ward_config *c,
			       const char *missing)
{
	size_t n;

	if (c->missing_controllers_warn)
		add(&v->warnings,
		    fmt("Kubernetes: pods run, but the limits they ask for that need the missing "
			"cgroup v2 controllers (%s) are not enforced (missing_controllers is "
			"\"warn\"): each is logged and listed as \"unenforced\" in the container's "
			"stats; tenants' isolation (user namespace, seccomp, host paths, devices) "
			"is "
			"unaffected, but one pod can take the CPU or memory of others",
			missing));
	else
		add(&v->warnings,
		    fmt("Kubernetes: every pod is refused on this host: containerd's CRI plugin "
			"gives each pod sandbox cpu.shares 2, which needs the cpu controller, and "
			"it is not in cgroup v2 (missing: %s; missing_controllers is \"error\"). "
			"Either boot with cgroup v2 only (systemd.unified_cgroup_hierarchy=1), or "
			"set \"missing_controllers\": \"warn\" in ward.json: pods then run "
			"without the limits those controllers enforce (logged, listed as "
			"\"unenforced\" in their stats); tenants' isolation is unaffected",
			missing));
	/* first among the warnings */
	n = strv_len(v->warnings);
	char *k = v->warnings[n - 1];
	memmove(v->warnings + 1, v->warnings, (n - 1) * sizeof(*v->warnings));
	v->warnings[0] = k;
}

static const char *controller_why_of(const struct ward_host *h, const char *name)
{
	for (size_t i = 0; i < WARD_HOST_N_CONTROLLERS; i++)
		if (!strcmp(ward_host_controller_names[i], name) && h->controller_detail[i])
			return h->controller_detail[i];
	return "not offered in cgroup.controllers";
}

static void budget_verdict(const struct ward_host *h, const struct ward_config *c,
			   const struct ward_tenant *t, struct ward_verdict *v)
{
	struct ward_res_plan plan = {0};
	struct ward_err e = {0};
	char **seen = NULL;

	if (!t->cgroup_json)
		return;
	if (ward_cgroup_res_plan(t->cgroup_json, &plan, &e) < 0) {
		add(&v->errors,
		    fmt("tenant \"%s\" (%s): cgroup budget: %s", t->name, t->file, e.msg));
		return;
	}
	for (size_t i = 0; i < plan.n; i++) {
		const struct ward_res_entry *r = &plan.v[i];
		const char *field = r->field, *why;
		char *what;
		bool dup = false;

		if (!r->controller || (r->flags & WARD_RES_DEFAULT) ||
		    controller_available(h, r->controller))
			continue;
		for (size_t j = 0; seen && seen[j]; j++)
			dup = dup || !strcmp(seen[j], r->controller);
		if (dup)
			continue; /* one line per tenant and controller */
		seen = strv_append(seen, r->controller);
		if (!strncmp(field, "linux.resources.", 16))
			field += 16;
		what = fmt("tenant \"%s\" (%s): budget cgroup.%s", t->name, t->file, field);
		why = controller_why_of(h, r->controller);
		if (c->missing_controllers_warn)
			add(&v->warnings,
			    fmt("%s is not applied: the %s controller is missing from "
				"the cgroup v2 hierarchy (%s); missing_controllers is "
				"\"warn\"",
				what, r->controller, why));
		else
			add(&v->errors,
			    fmt("%s needs the %s controller, missing from the cgroup v2 "
				"hierarchy (%s) (set \"missing_controllers\": \"warn\" in "
				"ward.json to run without it)",
				what, r->controller, why));
		free(what);
	}
	strv_free(seen);
	ward_cgroup_res_plan_free(&plan);
}

static void apparmor_verdict(const struct ward_host *h, const struct ward_config *c,
			     struct ward_verdict *v)
{
	const char *why = h->apparmor_detail ? h->apparmor_detail : "?";

	if (!h->apparmor && c->apparmor == WARD_NEED_REQUIRED) {
		cleanup_free char *file =
		    c->dir ? fmt("%s/ward.json", c->dir) : xstrdup("built-in configuration");
		add(&v->errors,
		    fmt("AppArmor is \"required\" (%s) but not enabled on this host: %s", file,
			why));
		return;
	}
	for (size_t i = 0; i < c->n_tenants; i++) {
		const struct ward_tenant *t = &c->tenants[i];
		if (ward_apparmor_is_unconfined(t->apparmor))
			continue;
		if (!h->apparmor) {
			/* "optional": one warning is enough */
			add(&v->warnings, fmt("AppArmor is not enabled (%s): tenants' AppArmor "
					      "profiles (\"%s\") are not applied",
					      why, t->apparmor));
			return;
		}
		if (!h->apparmor_profiles ||
		    ward_apparmor_list_has(h->apparmor_profiles, t->apparmor))
			continue;
		if (!strcmp(t->apparmor, WARD_APPARMOR_DEFAULT))
			add(&v->warnings,
			    fmt("tenant \"%s\": AppArmor profile %s is not loaded yet; ward loads "
				"its built-in copy with apparmor_parser on first use",
				t->name, t->apparmor));
		else
			add(&v->errors, fmt("tenant \"%s\" (%s): AppArmor profile \"%s\" is not "
					    "loaded (load it with apparmor_parser -r)",
					    t->name, t->file, t->apparmor));
	}
}

void ward_host_verdict(const struct ward_host *h, const struct ward_config *c,
		       const char *config_error, struct ward_verdict *v)
{
	bool seccomp_ok = h->seccomp && h->seccomp_actions[0] && h->seccomp_actions[1];
	cleanup_free char *missing = NULL;

	memset(v, 0, sizeof(*v));
	if (!c) {
		add(&v->errors,
		    fmt("configuration: %s", config_error ? config_error : "not loaded"));
		return;
	}
	if (!h->root)
		add(&v->warnings,
		    xstrdup("not running as root: the idmap, BPF and cgroup probes need "
			    "root, so their \"no\" may only mean that"));
	if (!h->userns)
		add(&v->errors, fmt("user namespaces are unavailable (%s): ward runs every "
				    "container in one",
				    h->userns_detail ? h->userns_detail : "?"));
	if (!h->cgroup_root)
		add(&v->errors, fmt("no cgroup v2 hierarchy (%s): ward places every container in "
				    "cgroup v2",
				    h->cgroup_detail ? h->cgroup_detail : "?"));
	if (!h->bpf_devices)
		add(&v->errors,
		    fmt("device BPF programs are unavailable (%s): ward attaches one to "
			"every container's cgroup",
			h->bpf_detail ? h->bpf_detail : "?"));
	if (!h->pool_ok)
		add(&v->errors, fmt("ID pool: %s: ward allocates every pod's host IDs there",
				    h->pool_detail ? h->pool_detail : "?"));

	apparmor_verdict(h, c, v);

	for (size_t i = 0; i < c->n_tenants; i++) {
		const struct ward_tenant *t = &c->tenants[i];
		/* the profile this tenant's pods get (privileged pods always get one) */
		const char *profile = strcmp(t->seccomp, "unconfined") ? t->seccomp
				      : t->privileged		       ? t->seccomp_privileged
								       : NULL;
		if (!seccomp_ok && profile)
			add(&v->errors,
			    fmt("tenant \"%s\" (%s): seccomp profile \"%s\" cannot be loaded: %s",
				t->name, t->file, profile,
				!h->seccomp ? (h->seccomp_detail ? h->seccomp_detail : "no seccomp")
				: !h->seccomp_actions[0]
				    ? "the kernel lacks SECCOMP_RET_ERRNO"
				    : "the kernel lacks SECCOMP_RET_KILL_PROCESS"));
		budget_verdict(h, c, t, v);
		if (t->gpus && t->gpus[0] && h->gpu_hook && !h->gpu_hook_ok)
			add(&v->errors, fmt("tenant \"%s\" (%s) has GPUs and the GPU hook %s is "
					    "missing or not executable (ward.json gpu.hook)",
					    t->name, t->file, h->gpu_hook));
		if (t->gpus && t->gpus[0] && h->gpus < 0)
			add(&v->errors, fmt("tenant \"%s\" (%s) has GPUs and the GPU inventory "
					    "cannot be read: %s",
					    t->name, t->file, h->gpu_detail ? h->gpu_detail : "?"));
	}

	/* Controllers no budget needs: pods asking for those limits are refused (or, with
	 * "warn", run without them). */
	if (h->cgroup_root) {
		for (size_t i = 0; i < WARD_HOST_N_CONTROLLERS; i++) {
			if (h->controllers[i])
				continue;
			char *m = missing ? fmt("%s, %s", missing, ward_host_controller_names[i])
					  : xstrdup(ward_host_controller_names[i]);
			free(missing);
			missing = m;
		}
		if (missing)
			add(&v->warnings,
			    fmt("cgroup v2 controllers missing: %s; %s", missing,
				c->missing_controllers_warn
				    ? "pod limits that need them are not applied "
				      "(missing_controllers "
				      "is \"warn\")"
				    : "pods asking for limits that need them are refused "
				      "(missing_controllers is \"error\")"));
		if (!controller_available(h, "cpu"))
			kubernetes_warning(v, c, missing);
		if (h->cgroup_freeze == 0)
			add(&v->warnings,
			    xstrdup("cgroup.freeze is missing: ward pause/resume fail"));
		if (h->cgroup_kill == 0)
			add(&v->warnings,
			    xstrdup("cgroup.kill is missing: ward kills a container's "
				    "processes one by one"));
	}
	for (size_t i = 0; i < h->n_fs; i++) {
		const struct ward_host_fs *f = &h->fs[i];
		if (!f->idmap)
			add(&v->warnings,
			    fmt("no idmapped mounts on %s (%s, %s): %s; files there show as "
				"nobody inside containers",
				f->fstype ? f->fstype : "?", f->path, f->role,
				f->detail ? f->detail : "?"));
	}
}

void ward_verdict_free(struct ward_verdict *v)
{
	strv_free(v->errors);
	strv_free(v->warnings);
	v->errors = v->warnings = NULL;
}

/* ---- rendering -------------------------------------------------------------------------- */

struct buf {
	char *s;
	size_t len;
};

static void out(struct buf *b, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void out(struct buf *b, const char *f, ...)
{
	va_list ap;
	char *s;
	va_start(ap, f);
	s = xvasprintf(f, ap);
	va_end(ap);
	b->s = xrealloc(b->s, b->len + strlen(s) + 1);
	memcpy(b->s + b->len, s, strlen(s) + 1);
	b->len += strlen(s);
	free(s);
}

/* "NAME: yes (detail)" or "NAME: no (detail); disables DISABLES" */
static void item(struct buf *b, const char *name, bool ok, const char *detail, const char *disables)
{
	out(b, "%s: %s", name, ok ? "yes" : "no");
	if (detail && *detail)
		out(b, " (%s)", detail);
	if (!ok && disables)
		out(b, "; disables %s", disables);
	out(b, "\n");
}

char *ward_host_text(const struct ward_host *h, const struct ward_verdict *v,
		     const char *config_desc)
{
	struct buf b = {xstrdup(""), 0};
	size_t n_err = strv_len(v->errors), n_warn = strv_len(v->warnings);

	out(&b, "kernel: %s\nconfiguration: %s\n", h->kernel, config_desc);
	item(&b, "user namespaces", h->userns, h->userns_detail,
	     "every container (ward always creates one)");
	for (size_t i = 0; i < h->n_fs; i++) {
		const struct ward_host_fs *f = &h->fs[i];
		char name[8192];
		snprintf(name, sizeof(name), "idmapped mounts: %s (%s) for %s %s%s%s",
			 f->fstype ? f->fstype : "?", f->mount_point ? f->mount_point : "?",
			 f->role, f->path,
			 strcmp(f->path, f->probed ? f->probed : "") ? ", probed at " : "",
			 strcmp(f->path, f->probed ? f->probed : "") ? f->probed : "");
		item(&b, name, f->idmap, f->detail,
		     "idmapped rootfs and bind mounts there (files show as nobody in containers)");
	}
	item(&b, "seccomp filters", h->seccomp, h->seccomp_detail,
	     "every seccomp profile (tenants' and pods')");
	if (h->seccomp) {
		char line[1024] = "", missing[1024] = "";
		for (size_t i = 0; i < WARD_HOST_N_SECCOMP_ACTIONS; i++) {
			char name[96];
			snprintf(name, sizeof(name), "seccomp action %s",
				 ward_host_seccomp_action_names[i]);
			item(&b, name, h->seccomp_actions[i], NULL, seccomp_action_disables[i]);
		}
		for (size_t i = 0; i < WARD_HOST_N_SECCOMP_FLAGS; i++) {
			char *dst = h->seccomp_flags[i] ? line : missing;
			size_t l = strlen(dst);
			snprintf(dst + l, sizeof(line) - l, "%s%s", l ? " " : "",
				 ward_host_seccomp_flag_names[i] + strlen("SECCOMP_FILTER_FLAG_"));
		}
		out(&b, "seccomp filter flags: %s", *line ? line : "none");
		if (*missing)
			out(&b, "; missing: %s (disables these linux.seccomp.flags)", missing);
		out(&b, "\n");
	}
	item(&b, "AppArmor", h->apparmor, h->apparmor_detail,
	     "AppArmor profiles for containers (tenant \"apparmor\", process.apparmorProfile)");
	if (h->cgroup_root) {
		out(&b, "cgroup v2: yes (%s%s)\n", h->cgroup_root,
		    h->cgroup_hybrid ? "; hybrid host: cgroup v1 hierarchies too" : "");
		for (size_t i = 0; i < WARD_HOST_N_CONTROLLERS; i++) {
			char name[64];
			snprintf(name, sizeof(name), "cgroup controller %s",
				 ward_host_controller_names[i]);
			item(&b, name, h->controllers[i], h->controller_detail[i],
			     controller_disables[i]);
		}
		if (h->cgroup_freeze < 0)
			out(&b, "cgroup.freeze, cgroup.kill: unknown (%s)\n",
			    h->cgroup_detail ? h->cgroup_detail : "?");
		else {
			item(&b, "cgroup.freeze", h->cgroup_freeze, NULL, "ward pause and resume");
			item(&b, "cgroup.kill", h->cgroup_kill, NULL,
			     "killing a container's processes at once (ward signals them one by "
			     "one)");
		}
	} else {
		item(&b, "cgroup v2", false, h->cgroup_detail, "every container (ward needs v2)");
	}
	item(&b, "BPF device programs", h->bpf_devices, h->bpf_detail,
	     "device access control (ward create attaches a program to every container)");
	{
		char detail[1200];
		if (h->pool_ok)
			snprintf(detail, sizeof(detail), "%s, %ld allocation%s%s%s", h->lib_dir,
				 h->pool_allocs, h->pool_allocs == 1 ? "" : "s",
				 h->pool_detail ? "; " : "", h->pool_detail ? h->pool_detail : "");
		else
			snprintf(detail, sizeof(detail), "%s",
				 h->pool_detail ? h->pool_detail : "?");
		item(&b, "ID pool", h->pool_ok, detail, "host ID ranges for pods (every create)");
	}
	if (h->audit_hook)
		item(&b, "audit hook", h->audit_hook_ok, h->audit_hook,
		     "the audit lines of engines that register it as an OCI hook (ward "
		     "writes its own)");
	if (h->gpu_hook)
		item(&b, "GPU hook", h->gpu_hook_ok, h->gpu_hook, "GPUs for containers");
	if (h->gpus >= 0)
		out(&b, "GPUs: %ld\n", h->gpus);
	else if (h->gpu_detail)
		out(&b, "GPUs: unknown (%s)\n", h->gpu_detail);
	for (size_t i = 0; i < n_warn; i++)
		out(&b, "warning: %s\n", v->warnings[i]);
	for (size_t i = 0; i < n_err; i++)
		out(&b, "cannot enforce: %s\n", v->errors[i]);
	if (n_err)
		out(&b,
		    "verdict: the configured policy CANNOT be enforced on this host (%zu "
		    "problem%s, %zu warning%s)\n",
		    n_err, n_err == 1 ? "" : "s", n_warn, n_warn == 1 ? "" : "s");
	else
		out(&b,
		    "verdict: the configured policy can be enforced on this host (%zu "
		    "warning%s)\n",
		    n_warn, n_warn == 1 ? "" : "s");
	return b.s;
}

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *tri(int v)
{
	return v < 0 ? json_null() : json_boolean(v);
}

char *ward_host_json(const struct ward_host *h, const struct ward_verdict *v,
		     const char *config_desc)
{
	json_t *fs = json_array(), *actions = json_object(), *flags = json_object(),
	       *ctrl = json_object(), *o;
	char *text;

	for (size_t i = 0; i < h->n_fs; i++) {
		const struct ward_host_fs *f = &h->fs[i];
		json_array_append_new(fs,
				      json_pack("{s:s,s:s,s:o,s:o,s:o,s:b,s:o}", "path", f->path,
						"role", f->role, "probed", str_or_null(f->probed),
						"fstype", str_or_null(f->fstype), "mount_point",
						str_or_null(f->mount_point), "idmap", f->idmap,
						"detail", str_or_null(f->detail)));
	}
	for (size_t i = 0; i < WARD_HOST_N_SECCOMP_ACTIONS; i++)
		json_object_set_new(actions, ward_host_seccomp_action_names[i],
				    json_boolean(h->seccomp_actions[i]));
	for (size_t i = 0; i < WARD_HOST_N_SECCOMP_FLAGS; i++)
		json_object_set_new(flags, ward_host_seccomp_flag_names[i],
				    json_boolean(h->seccomp_flags[i]));
	for (size_t i = 0; i < WARD_HOST_N_CONTROLLERS; i++)
		json_object_set_new(ctrl, ward_host_controller_names[i],
				    json_boolean(h->controllers[i]));

	o = json_pack(
	    "{s:s,s:s,s:{s:b,s:I,s:o},s:o,s:{s:b,s:o,s:o,s:o},s:{s:b,s:o},"
	    "s:{s:b,s:o,s:b,s:o,s:o,s:o,s:o},s:{s:b,s:o},s:{s:b,s:s,s:I,s:o},"
	    "s:{s:o,s:b,s:o,s:b},s:o,s:o,s:o,s:b}",
	    "kernel", h->kernel, "configuration", config_desc,
	    /* user namespaces */
	    "user_namespaces", "ok", h->userns, "max_user_namespaces",
	    (json_int_t)h->max_user_namespaces, "detail", str_or_null(h->userns_detail),
	    /* idmap */
	    "idmap", fs,
	    /* seccomp */
	    "seccomp", "ok", h->seccomp, "detail", str_or_null(h->seccomp_detail), "actions",
	    actions, "flags", flags,
	    /* apparmor */
	    "apparmor", "ok", h->apparmor, "detail", str_or_null(h->apparmor_detail),
	    /* cgroup */
	    "cgroup", "ok", h->cgroup_root != NULL, "root", str_or_null(h->cgroup_root), "hybrid",
	    h->cgroup_hybrid, "controllers", ctrl, "freeze", tri(h->cgroup_freeze), "kill",
	    tri(h->cgroup_kill), "detail", str_or_null(h->cgroup_detail),
	    /* bpf */
	    "bpf_devices", "ok", h->bpf_devices, "detail", str_or_null(h->bpf_detail),
	    /* id pool */
	    "id_pool", "ok", h->pool_ok, "lib_dir", h->lib_dir ? h->lib_dir : "", "allocations",
	    (json_int_t)h->pool_allocs, "detail", str_or_null(h->pool_detail),
	    /* hooks and GPUs */
	    "hooks", "audit", str_or_null(h->audit_hook), "audit_ok", h->audit_hook_ok, "gpu",
	    str_or_null(h->gpu_hook), "gpu_ok", h->gpu_hook_ok, "gpus",
	    h->gpus >= 0 ? strv_json(h->gpu_uuids) : json_null(),
	    /* verdict */
	    "warnings", strv_json(v->warnings), "errors", strv_json(v->errors), "enforceable",
	    v->errors == NULL);
	if (!o)
		return NULL;
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(o);
	return text;
}
