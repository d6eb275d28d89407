/* effective spec = policy(pod spec, tenant), on the typed spec (spec.h). One function per
 * rule, applied in order by ward_policy_apply; each either changes the copy (and says so in
 * the notes) or refuses with the rule's name. No syscalls here: host facts come from
 * struct ward_policy_host. JSON only at the edges: ward_policy_apply_json (the pod's
 * config.json through the every-field gate and the decoder); the tenant's seccomp profile
 * text goes through the spec's seccomp decoder. */
#include "policy.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "bpfdev.h"
#include "dev.h"
#include "policy_fields.h"
#include "seccomp_profiles.h"
#include "spec.h"
#include "tenant.h"
#include "util.h"

const char *const ward_policy_masked_paths[] = {
    "/proc/acpi",
    "/proc/asound",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/proc/driver",
    "/sys/firmware",
    "/sys/devices/virtual/tpm",
    "/sys/devices/virtual/powercap",
    NULL,
};
const char *const ward_policy_readonly_paths[] = {
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL,
};

/* containerd's default capability set: a pod that has these but whose tenant does not
 * allow them loses them quietly (every CRI pod asks for them); anything else refused. */
static const char *const cri_default_caps[] = {
    "CAP_CHOWN",
    "CAP_DAC_OVERRIDE",
    "CAP_FSETID",
    "CAP_FOWNER",
    "CAP_MKNOD",
    "CAP_NET_RAW",
    "CAP_SETGID",
    "CAP_SETUID",
    "CAP_SETFCAP",
    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT",
    "CAP_KILL",
    "CAP_AUDIT_WRITE",
    NULL,
};
static const char *const cap_sets[] = {"bounding",  "effective", "inheritable",
				       "permitted", "ambient",	 NULL};

/* Filesystem types a pod may mount (all namespaced or virtual); "bind"/"none" are binds. */
static const char *const mount_types[] = {"proc",   "sysfs",   "tmpfs", "devpts", "mqueue",
					  "cgroup", "cgroup2", "bind",	"none",	  NULL};

/* Host paths no pod may bind, whatever its tenant allows. */
static const char *const denied_host_paths[] = {"/proc",     "/sys",	  "/dev",	   "/boot",
						"/etc/ward", "/run/ward", "/var/lib/ward", NULL};
/* Directories of container runtimes: their sockets are the host. */
static const char *const runtime_dirs[] = {
    "/run/containerd",	"/run/docker",		"/run/crio", "/var/run/docker.sock",
    "/run/docker.sock", "/run/dockershim.sock", NULL};

/* host namespace kinds a pod may share, with their spec type and the k8s word for it */
static const struct {
	const char *type, *rule, *proc, *what;
} host_ns[] = {
    {"network", "network", "net", "hostNetwork"},
    {"pid", "pid", "pid", "hostPID"},
    {"ipc", "ipc", "ipc", "hostIPC"},
    {"uts", "uts", "uts", "the host's hostname"},
};

struct run {
	const struct ward_policy_in *in;
	struct ward_spec *spec; /* the copy the rules edit: the effective spec */
	char ***notes;
	struct ward_err *err;
	bool privileged;
	size_t *gpus; /* indexes into in->gpu_inv->gpus: the GPUs granted */
	size_t n_gpus;
	char *root; /* root.path, absolute and canonical (for the GPU hook) */
};

static void note(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct run *r, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (!r->notes)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	*r->notes = strv_append(*r->notes, s);
	free(s);
}

/* "tenant "a": RULE: message" */
static int refuse(struct run *r, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(struct run *r, const char *rule, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_failv(r->err, 0, fmt, ap);
	va_end(ap);
	return ward_wrap(r->err, "tenant \"%s\": %s", r->in->tenant->name, rule);
}

static bool strv_has(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static bool list_has(const char *const *v, const char *s)
{
	return strv_has((char *const *)v, s);
}

bool ward_policy_cap_droppable(const char *cap)
{
	return list_has(cri_default_caps, cap);
}

/* path is `prefix` or below it (component-wise). */
static bool path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (n == 1 && prefix[0] == '/')
		return true;
	return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* path (absolute, or relative to "/") with "." and ".." folded away, as it resolves inside
 * the container's root (where ".." stops at "/"); -1 if it does not fit. */
static int lexical_path(const char *path, char *out, size_t size)
{
	size_t n = 0;
	const char *p = path;

	if (size < 2)
		return -1;
	out[0] = '/';
	out[1] = '\0';
	n = 1;
	while (*p) {
		size_t len;
		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if (len == 1 && p[0] == '.') {
			/* nothing */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 1 && out[n - 1] != '/')
				n--;
			if (n > 1)
				n--; /* the slash before the dropped component */
			out[n] = '\0';
		} else {
			if (n + (n > 1) + len + 1 > size)
				return -1;
			if (n > 1)
				out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
			out[n] = '\0';
		}
		p += len;
	}
	return 0;
}

/* ---- small edits of the typed spec --------------------------------------------------- */

/* Remove element i of an array of n elements of size bytes (the caller frees it first). */
static void arr_remove(void *v, size_t *n, size_t i, size_t size)
{
	memmove((char *)v + i * size, (char *)v + (i + 1) * size, (*n - i - 1) * size);
	(*n)--;
}

/* Append one element to a growing array: a pointer to the new (zeroed) slot. */
static void *arr_push(void **v, size_t *n, size_t size)
{
	char *p = xrealloc(*v, (*n + 1) * size);
	memset(p + *n * size, 0, size);
	*v = p;
	return p + (*n)++ * size;
}

/* Remove entry i of a NULL-terminated vector (owned strings), the rest moved down. */
static void strv_remove_at(char **v, size_t i)
{
	free(v[i]);
	memmove(&v[i], &v[i + 1], (strv_len(&v[i + 1]) + 1) * sizeof(char *));
}

/* Remove every entry equal to s from a NULL-terminated vector (owned strings). */
static void strv_del(char **v, const char *s)
{
	size_t w = 0;

	for (size_t i = 0; v && v[i]; i++) {
		if (!strcmp(v[i], s)) {
			free(v[i]);
			continue;
		}
		v[w++] = v[i];
	}
	if (v)
		v[w] = NULL;
}

static struct ward_namespace *find_ns(struct ward_linux *l, int type)
{
	for (size_t i = 0; i < l->n_namespaces; i++)
		if (l->namespaces[i].type == type)
			return &l->namespaces[i];
	return NULL;
}

static void add_ns(struct ward_linux *l, int type, const char *path)
{
	struct ward_namespace *ns =
	    arr_push((void **)&l->namespaces, &l->n_namespaces, sizeof(*l->namespaces));
	ns->type = type;
	ns->path = path ? xstrdup(path) : NULL;
}

/* One mapping: container 0 -> host start, size IDs. */
static void set_map(struct ward_idmaps *m, uint64_t start, uint64_t size)
{
	free(m->v);
	m->v = xcalloc(1, sizeof(*m->v));
	m->v[0] = (struct ward_idmap){0, (uint32_t)start, (uint32_t)size};
	m->n = 1;
}

/* ---- annotations ------------------------------------------------------------------- */

/* The pod's annotations stay the pod's (inert); ward's record (own.h) is the policy's to
 * write: whatever the pod's spec carried there (an older ward's annotations read back by
 * the parser) is dropped first. */
static int rule_annotations(struct run *r)
{
	const char *seccomp_req = ward_spec_annotation(r->spec, "ward.dev/seccomp");

	if (seccomp_req && !strcmp(seccomp_req, "unconfined") &&
	    strcmp(r->in->tenant->seccomp, "unconfined"))
		return refuse(r, "seccomp",
			      "annotation ward.dev/seccomp=unconfined: the tenant's profile is "
			      "\"%s\"; pods cannot run unconfined",
			      r->in->tenant->seccomp);
	ward_own_clear(&r->spec->own);
	ward_seccomp_free(r->spec->linux.seccomp_pod);
	r->spec->linux.seccomp_pod = NULL;
	r->spec->own.present = true;
	ward_spec_set_annotation(r->spec, WARD_ANN_TENANT, r->in->tenant->name);
	r->spec->own.ids = xasprintf("%s %u %u", r->in->ids_owner ? r->in->ids_owner : "fixed",
				     r->in->ids.start, r->in->ids.size);
	return 0;
}

/* ---- namespaces and the user namespace --------------------------------------------- */

static int ns_shares_host(struct run *r, const struct ward_namespace *ns, const char *proc,
			  bool *host)
{
	int rc;

	*host = !ns;
	if (!ns || !ns->path)
		return 0;
	rc = r->in->host->ns_is_host(r->in->host->arg, ns->path, proc, r->err);
	if (rc < 0)
		return ward_wrap(r->err, "linux.namespaces: %s", ns->path);
	*host = rc == 1;
	return 0;
}

static int rule_host_namespaces(struct run *r)
{
	const struct ward_tenant *t = r->in->tenant;
	struct ward_linux *l = &r->spec->linux;
	bool host;

	for (size_t i = 0; i < ARRAY_SIZE(host_ns); i++) {
		struct ward_namespace *ns = find_ns(l, ward_ns_type_from_name(host_ns[i].type));
		if (ns_shares_host(r, ns, host_ns[i].proc, &host) < 0)
			return -1;
		if (!host)
			continue;
		if (r->privileged)
			return refuse(
			    r, "privileged",
			    "privileged pods never share a host namespace; the pod shares "
			    "the host's %s namespace (%s)",
			    host_ns[i].type, host_ns[i].what);
		if (!strv_has(t->host_namespaces, host_ns[i].type))
			return refuse(r, "host_namespaces",
				      "the pod shares the host's %s namespace (%s), which the "
				      "tenant does not allow",
				      host_ns[i].type, host_ns[i].what);
		note(r, "shares the host's %s namespace (allowed by host_namespaces)",
		     host_ns[i].type);
	}
	/* A private mount and cgroup namespace for every pod. None for the mount namespace
	 * (the runtime's, inherited): the container's mounts would be the host's (trusted
	 * tenants only, who skip these rules). */
	for (const char *const *k = (const char *const[]){"mount", "cgroup", NULL}; *k; k++) {
		int type = ward_ns_type_from_name(*k);
		struct ward_namespace *ns = find_ns(l, type);
		if (!ns && type == CLONE_NEWNS)
			return refuse(r, "namespaces",
				      "linux.namespaces: no mount namespace (the runtime's own, "
				      "inherited): the container's mounts would be made in the "
				      "host's mount namespace; only a trusted tenant may");
		if (!ns) {
			add_ns(l, type, NULL);
			note(r, "added a %s namespace", *k);
			continue;
		}
		if (ns_shares_host(r, ns, type == CLONE_NEWNS ? "mnt" : "cgroup", &host) < 0)
			return -1;
		if (host)
			return refuse(r, "namespaces",
				      "joining the host's %s namespace is not allowed", *k);
	}
	return 0;
}

static int check_maps(struct run *r, const struct ward_idmaps *maps, const char *what)
{
	uint64_t lo = r->in->ids.start, hi = (uint64_t)r->in->ids.start + r->in->ids.size;

	for (size_t i = 0; i < maps->n; i++) {
		uint64_t hv = maps->v[i].host_id, sv = maps->v[i].size;
		if (hv < lo || hv + sv > hi || sv == 0)
			return refuse(r, "ids",
				      "%s[%zu]: host IDs %llu-%llu are outside the pod's range "
				      "%llu-%llu",
				      what, i, (unsigned long long)hv,
				      (unsigned long long)(hv + sv - 1), (unsigned long long)lo,
				      (unsigned long long)(hi - 1));
	}
	return 0;
}

static int rule_user_namespace(struct run *r)
{
	struct ward_linux *l = &r->spec->linux;
	struct ward_namespace *ns = find_ns(l, CLONE_NEWUSER);
	const char *path;

	if (!ns && r->in->pod_userns) {
		/* One user namespace per pod (as Kubernetes' user-namespace pods): a member
		 * joins its sandbox's, so it has rights over the pod's ipc/uts/pid. */
		add_ns(l, CLONE_NEWUSER, r->in->pod_userns);
		ns = find_ns(l, CLONE_NEWUSER);
		note(r, "joins the pod's user namespace (the sandbox's, %s)", r->in->pod_userns);
	}
	if (!ns) {
		add_ns(l, CLONE_NEWUSER, NULL);
		set_map(&l->uid_mappings, r->in->ids.start, r->in->ids.size);
		set_map(&l->gid_mappings, r->in->ids.start, r->in->ids.size);
		note(r, "added a user namespace: container IDs 0-%u map to host IDs %u-%u",
		     r->in->ids.size - 1, r->in->ids.start, r->in->ids.start + r->in->ids.size - 1);
		return 0;
	}
	path = ns->path;
	if (path) {
		uint64_t uid[2], gid[2];
		bool host;
		if (ns_shares_host(r, ns, "user", &host) < 0)
			return -1;
		if (host)
			return refuse(r, "ids", "joining the host's user namespace is not allowed");
		if (r->in->host->userns_envelope(r->in->host->arg, path, uid, gid, r->err) < 0)
			return ward_wrap(r->err, "linux.namespaces: user namespace %s", path);
		if (uid[0] < r->in->ids.start || gid[0] < r->in->ids.start ||
		    uid[1] > (uint64_t)r->in->ids.start + r->in->ids.size ||
		    gid[1] > (uint64_t)r->in->ids.start + r->in->ids.size || uid[1] <= uid[0])
			return refuse(r, "ids",
				      "the user namespace %s maps host IDs %llu-%llu, outside the "
				      "pod's range %u-%u",
				      path, (unsigned long long)uid[0],
				      (unsigned long long)uid[1] - 1, r->in->ids.start,
				      r->in->ids.start + r->in->ids.size - 1);
		if (r->in->pod_userns && !strcmp(path, r->in->pod_userns)) {
			/* The joined namespace's mapping, for what the runtime makes on its
			 * behalf (the owner of an overlay root's writable layer). */
			set_map(&l->uid_mappings, uid[0], uid[1] - uid[0]);
			set_map(&l->gid_mappings, gid[0], gid[1] - gid[0]);
			return 0;
		}
		/* The kernel ignores a joiner's own maps, but the runtime acts on them (the
		 * bundle's group, an overlay root's writable layer's owner): inside the pod's
		 * range, as every other map. */
		return check_maps(r, &l->uid_mappings, "linux.uidMappings") < 0 ||
			       check_maps(r, &l->gid_mappings, "linux.gidMappings") < 0
			   ? -1
			   : 0;
	}
	if (!l->uid_mappings.n || !l->gid_mappings.n) {
		set_map(&l->uid_mappings, r->in->ids.start, r->in->ids.size);
		set_map(&l->gid_mappings, r->in->ids.start, r->in->ids.size);
		note(r, "mapped the pod's user namespace to host IDs %u-%u", r->in->ids.start,
		     r->in->ids.start + r->in->ids.size - 1);
		return 0;
	}
	if (check_maps(r, &l->uid_mappings, "linux.uidMappings") < 0 ||
	    check_maps(r, &l->gid_mappings, "linux.gidMappings") < 0)
		return -1;
	note(r, "kept the pod's own ID mappings (inside its range)");
	return 0;
}

/* ---- mounts ------------------------------------------------------------------------ */

static bool name_ok(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, "..") && strcmp(s, ".");
}

/* Paths of the pod's own in the CRI plugin's and the kubelet's directories: its sandbox's
 * under containerd's root and state (ward.json "containerd", and the state the bundle sits
 * in), its uid's under the kubelet's root dir. Never another pod's. */
static bool pod_own_path(struct run *r, const char *path)
{
	const struct ward_config *c = r->in->cfg;
	const char *sb = ward_spec_annotation(r->spec, WARD_ANN_SANDBOX_ID);
	const char *uid =
	    r->in->pod_uid ? r->in->pod_uid : ward_spec_annotation(r->spec, WARD_ANN_CRI_POD_UID);
	const char *dirs[] = {c->containerd_state, c->containerd_root,
			      r->in->bundle_containerd_state};
	char p[4096];

	/* a name too long for p is nobody's (a cut one could be a prefix of another's) */
	for (size_t k = 0; name_ok(sb) && k < ARRAY_SIZE(dirs); k++)
		if (dirs[k] &&
		    (size_t)snprintf(p, sizeof(p), "%s/io.containerd.grpc.v1.cri/sandboxes/%s",
				     dirs[k], sb) < sizeof(p) &&
		    path_under(path, p))
			return true;
	return name_ok(uid) && c->kubelet_root_dir &&
	       (size_t)snprintf(p, sizeof(p), "%s/pods/%s", c->kubelet_root_dir, uid) < sizeof(p) &&
	       path_under(path, p);
}

/* What an engine binds from a container's own directory: these files, and these
 * directories with what is below them. Never the directory itself or anything else in it:
 * the engine writes hosts and resolv.conf there again, as host root and by name (podman
 * for each new member of a pod), so a container that could replace one with a symbolic
 * link would have it write a host file. */
static const char *const engine_files[] = {"hosts", "hostname", "resolv.conf", ".containerenv",
					   NULL};
static const char *const engine_trees[] = {"shm", "run/secrets", "mounts/shm", "mounts/secrets",
					   NULL};

/* path is one of engine_files or under one of engine_trees in dir. */
static bool engine_entry(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	char p[4096];

	if (strncmp(path, dir, n) || path[n] != '/')
		return false;
	for (size_t k = 0; engine_files[k]; k++)
		if (!strcmp(path + n + 1, engine_files[k]))
			return true;
	for (size_t k = 0; engine_trees[k]; k++)
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, engine_trees[k]) < sizeof(p) &&
		    path_under(path, p))
			return true;
	return false;
}

/* The container's own files in podman's/CRI-O's containers/storage (ward.json
 * "containers_storage": <root|runroot>/overlay-containers/<id>/userdata: its resolv.conf,
 * hosts, hostname, .containerenv, shm), for the ids the caller vouched for (userdata_ids:
 * the container's own when its bundle is that directory, its podman pod's infra's), or
 * Docker's (<docker_root>/containers/<id>), keyed by the id ward is creating: never another
 * container's, and only engine_entry's names. */
static bool engine_own_path(struct run *r, const char *path)
{
	const struct ward_config *c = r->in->cfg;
	const char *id = r->in->container_id;
	const char *dirs[] = {c->storage_root, c->storage_runroot};
	char p[4096];

	for (size_t i = 0; i < ARRAY_SIZE(r->in->userdata_ids); i++)
		for (size_t k = 0; name_ok(r->in->userdata_ids[i]) && k < ARRAY_SIZE(dirs); k++)
			if (dirs[k] &&
			    (size_t)snprintf(p, sizeof(p), "%s/overlay-containers/%s/userdata",
					     dirs[k], r->in->userdata_ids[i]) < sizeof(p) &&
			    engine_entry(path, p))
				return true;
	return name_ok(id) && c->docker_root &&
	       (size_t)snprintf(p, sizeof(p), "%s/containers/%s", c->docker_root, id) < sizeof(p) &&
	       engine_entry(path, p);
}

/* src under root/sub (an engine's per-container directories; its volumes are not). */
static bool engine_dir(const char *root, const char *sub, const char *src)
{
	char p[4096];

	return root && (size_t)snprintf(p, sizeof(p), "%s/%s", root, sub) < sizeof(p) &&
	       path_under(src, p);
}

/* Under a container runtime's directory: the fixed ones, podman's and Docker's
 * per-container directories, and containerd's root and state (configured, or the one the
 * bundle sits in). */
static bool in_runtime_dir(struct run *r, const char *src)
{
	const struct ward_config *c = r->in->cfg;

	for (size_t k = 0; runtime_dirs[k]; k++)
		if (path_under(src, runtime_dirs[k]))
			return true;
	return engine_dir(c->storage_root, "overlay-containers", src) ||
	       engine_dir(c->storage_runroot, "overlay-containers", src) ||
	       engine_dir(c->docker_root, "containers", src) ||
	       (c->containerd_root && path_under(src, c->containerd_root)) ||
	       (c->containerd_state && path_under(src, c->containerd_state)) ||
	       (r->in->bundle_containerd_state && path_under(src, r->in->bundle_containerd_state));
}

/* What a refusal of a source in containers/storage's per-container directories adds. */
static const char *storage_why(struct run *r, const char *src)
{
	const struct ward_config *c = r->in->cfg;

	if (!engine_dir(c->storage_root, "overlay-containers", src) &&
	    !engine_dir(c->storage_runroot, "overlay-containers", src))
		return "";
	return " (containers/storage: a container's userdata is its own when its bundle is that "
	       "directory; a podman pod member's also its infra container's, a live ward "
	       "container of the same tenant and pod)";
}

static int check_host_path(struct run *r, size_t i, const char *dest, const char *src, mode_t mode)
{
	const struct ward_config *c = r->in->cfg;
	const struct ward_tenant *t = r->in->tenant;
	bool allowed = false;

	if (!strcmp(src, "/"))
		return refuse(r, "host_paths",
			      "mounts[%zu] (%s): binding the host's / is never allowed", i, dest);
	for (size_t k = 0; denied_host_paths[k]; k++)
		if (path_under(src, denied_host_paths[k]))
			return refuse(
			    r, "host_paths",
			    "mounts[%zu] (%s): source %s is under %s, which no pod may bind", i,
			    dest, src, denied_host_paths[k]);
	if (path_under(src, c->lib_dir) || (c->state_root && path_under(src, c->state_root)) ||
	    (c->dir && path_under(src, c->dir)) ||
	    (c->audit_dir && (path_under(src, c->audit_dir) || path_under(c->audit_dir, src))))
		return refuse(r, "host_paths", "mounts[%zu] (%s): source %s is ward's own data", i,
			      dest, src);
	if (in_runtime_dir(r, src) && (S_ISSOCK(mode) || S_ISDIR(mode)) && !pod_own_path(r, src) &&
	    !engine_own_path(r, src))
		return refuse(r, "host_paths",
			      "mounts[%zu] (%s): source %s is a container runtime's socket or "
			      "directory%s",
			      i, dest, src, storage_why(r, src));
	if (path_under(src, r->in->bundle) || pod_own_path(r, src) || engine_own_path(r, src))
		allowed = true;
	for (size_t k = 0; !allowed && t->host_paths[k]; k++)
		allowed = path_under(src, t->host_paths[k]);
	if (!allowed)
		return refuse(r, "host_paths",
			      "mounts[%zu] (%s): source %s is not under an allowed host path%s", i,
			      dest, src, storage_why(r, src));
	return 0;
}

/* Where the kernel's own filesystems may be mounted: one each, where ward masks them. */
static const char *fixed_place(const char *type)
{
	static const struct {
		const char *type, *place;
	} t[] = {{"proc", "/proc"},
		 {"sysfs", "/sys"},
		 {"cgroup", "/sys/fs/cgroup"},
		 {"cgroup2", "/sys/fs/cgroup"},
		 {"devpts", "/dev/pts"},
		 {"mqueue", "/dev/mqueue"}};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (!strcmp(t[i].type, type))
			return t[i].place;
	return NULL;
}

/* A mount's own uidMappings/gidMappings, named "mounts[i] (dest): uidMappings[j]". */
static int check_mount_maps(struct run *r, size_t i, const struct ward_mount *m)
{
	cleanup_free char *uids = xasprintf("mounts[%zu] (%s): uidMappings", i, m->destination);
	cleanup_free char *gids = xasprintf("mounts[%zu] (%s): gidMappings", i, m->destination);

	return check_maps(r, &m->uid_mappings, uids) < 0 ||
		       check_maps(r, &m->gid_mappings, gids) < 0
		   ? -1
		   : 0;
}

static int rule_mounts(struct run *r)
{
	const struct ward_tenant *t = r->in->tenant;

	for (size_t i = 0; i < r->spec->n_mounts; i++) {
		struct ward_mount *m = &r->spec->mounts[i];
		const char *dest = m->destination, *type = m->type, *src = m->source;
		char norm[4096];
		const char *place;
		bool bind, unmappable = false;

		bind = ward_mount_is_bind(m);
		if (type && *type && !list_has(mount_types, type))
			return refuse(
			    r, "mounts",
			    "mounts[%zu] (%s): filesystem type \"%s\" is not allowed "
			    "(allowed: proc, sysfs, tmpfs, devpts, mqueue, cgroup, cgroup2, "
			    "bind)",
			    i, dest, type);
		if (type && (place = fixed_place(type)) &&
		    (lexical_path(dest, norm, sizeof(norm)) < 0 || strcmp(norm, place)))
			return refuse(
			    r, "mounts",
			    "mounts[%zu] (%s): a %s filesystem is mounted only at %s (another "
			    "one would not carry the masks)",
			    i, dest, type, place);
		if (type && !strcmp(type, "sysfs") && !strv_has(m->options, "ro")) {
			strv_del(m->options, "rw");
			m->options = strv_append(m->options, "ro");
			note(r, "mounts[%zu] (%s): sysfs is read-only", i, dest);
		}
		/* A mount that stays a peer of the host's would carry the pod's own mounts back to
		 * the host (Kubernetes' Bidirectional, which it allows privileged pods only). */
		if (strv_has(m->options, "shared") || strv_has(m->options, "rshared"))
			return refuse(
			    r, "mounts",
			    "mounts[%zu] (%s): shared propagation (\"%s\") would carry the "
			    "pod's mounts to the host; rslave (Kubernetes' HostToContainer) "
			    "is allowed",
			    i, dest, strv_has(m->options, "rshared") ? "rshared" : "shared");
		/* mount.c idmaps any mount that carries its own maps (a tmpfs too, not only a
		 * bind): every line maps host IDs inside the pod's range. */
		if (check_mount_maps(r, i, m) < 0)
			return -1;
		if (!bind)
			continue;
		if (lexical_path(dest, norm, sizeof(norm)) < 0 || path_under(norm, "/proc") ||
		    path_under(norm, "/sys"))
			return refuse(r, "mounts",
				      "mounts[%zu]: binding a host path onto %s would cover the "
				      "container's procfs or sysfs",
				      i, dest);
		if (!src || !*src)
			return ward_fail(r->err, 0,
					 "config.json: mounts[%zu] (%s): a bind mount "
					 "needs a source",
					 i, dest);
		{
			cleanup_free char *abs =
			    src[0] == '/' ? xstrdup(src) : xasprintf("%s/%s", r->in->bundle, src);
			cleanup_free char *canon = NULL;
			mode_t mode = 0;
			canon = r->in->host->resolve(r->in->host->arg, abs, &mode, r->err);
			if (!canon)
				return ward_wrap(r->err, "mounts[%zu] (%s): source", i, dest);
			if (r->in->idmappable && !r->in->idmappable(r->in->host->arg, abs))
				unmappable = true;
			if (check_host_path(r, i, dest, canon, mode) < 0)
				return -1;
			if (strcmp(canon, src)) {
				note(r, "mounts[%zu] (%s): source %s resolved to %s", i, dest, src,
				     canon);
				free(m->source);
				m->source = steal_ptr(canon);
				src = m->source;
			}
			if (S_ISCHR(mode) || S_ISBLK(mode))
				return refuse(
				    r, "devices",
				    "mounts[%zu] (%s): binding the device node %s; devices "
				    "come through linux.devices",
				    i, dest, src);
		}
		if (m->uid_mappings.n || m->gid_mappings.n)
			continue; /* its own maps, checked above */
		if (t->idmap_mounts && unmappable && !strv_has(m->options, "idmap") &&
		    !strv_has(m->options, "ridmap")) {
			note(r,
			     "mounts[%zu] (%s): not idmapped: its tmpfs cannot be on this kernel "
			     "(Linux 6.3 can); its files keep their host owners",
			     i, dest);
		} else if (t->idmap_mounts && !strv_has(m->options, "idmap") &&
			   !strv_has(m->options, "ridmap")) {
			m->options = strv_append(
			    m->options, strv_has(m->options, "rbind") ? "ridmap" : "idmap");
			note(r, "mounts[%zu] (%s): idmapped to the pod's user namespace", i, dest);
		}
	}
	return 0;
}

/* containers/storage (podman, CRI-O; ward.json "containers_storage"): under its graph
 * root's overlay/ the one root a container may have is its own layer's merged dir (the
 * layer containers.json lists for the id ward is creating), whatever the tenant's
 * root_paths say: never another container's, an image's layer or the l/ links. *own tells
 * whether root.path (canon: what the held fd is) is that one. */
static int storage_root(struct run *r, const char *path, const char *canon, bool *own)
{
	const char *g = r->in->cfg->storage_root, *id = r->in->container_id;
	cleanup_free char *layer = NULL;
	char p[4096];

	*own = false;
	if (!g || (size_t)snprintf(p, sizeof(p), "%s/overlay", g) >= sizeof(p) ||
	    !path_under(canon, p))
		return 0;
	if (name_ok(id) && r->in->host->storage_layer &&
	    r->in->host->storage_layer(r->in->host->arg, g, r->in->cfg->storage_runroot, id, &layer,
				       r->err) < 0)
		return ward_wrap(r->err, "config.json: root.path");
	*own = name_ok(layer) &&
	       (size_t)snprintf(p, sizeof(p), "%s/overlay/%s/merged", g, layer) < sizeof(p) &&
	       !strcmp(canon, p);
	if (*own)
		return 0;
	return refuse(r, "root_paths",
		      "root.path %s is %s, in containers/storage (%s) but not the merged dir of "
		      "container %s's own layer (%s)",
		      path, canon, g, id ? id : "", layer ? layer : "none listed");
}

/* The root filesystem becomes the container root's (it is idmapped): never a host system
 * directory. The bundle's own rootfs, containerd's and CRI-O's are what runtimes get. */
static int rule_root(struct run *r)
{
	static const char *const system_dirs[] = {"/etc",   "/usr",   "/bin",  "/sbin", "/lib",
						  "/lib32", "/lib64", "/root", "/home", "/var",
						  "/opt",   "/srv",   "/run",  "/tmp",	NULL};
	/* as the pod wrote it: relative to the bundle, or absolute */
	const char *path = r->spec->root_path;
	const struct ward_tenant *t = r->in->tenant;
	bool allowed;
	cleanup_free char *abs = NULL;
	cleanup_free char *canon = NULL;
	mode_t mode = 0;

	if (!path || !*path)
		return 0; /* the spec parser names what is missing */
	/* the name the held fd is found by (hostfds.c names it so) */
	abs = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", r->in->bundle, path);
	canon = r->in->host->resolve(r->in->host->arg, abs, &mode, r->err);
	if (!canon)
		return ward_wrap(r->err, "config.json: root.path");
	if (!strcmp(canon, "/"))
		return refuse(r, "root", "root.path %s is the host's /", path);
	for (size_t k = 0; denied_host_paths[k]; k++)
		if (path_under(canon, denied_host_paths[k]))
			return refuse(r, "root", "root.path %s is under %s", path,
				      denied_host_paths[k]);
	for (size_t k = 0; system_dirs[k]; k++)
		if (!strcmp(canon, system_dirs[k]))
			return refuse(r, "root", "root.path %s is the host's %s", path, canon);
	/* The root becomes the pod's own (idmapped): only the bundle's, or one under a prefix
	 * the tenant names (CRI-O, podman). canon is what the held fd is, not the name. */
	if (storage_root(r, path, canon, &allowed) < 0)
		return -1;
	allowed = allowed || path_under(canon, r->in->bundle);
	for (size_t k = 0; !allowed && t->root_paths && t->root_paths[k]; k++)
		allowed = path_under(canon, t->root_paths[k]);
	if (!allowed)
		return refuse(r, "root_paths",
			      "root.path %s is %s, which is neither inside the bundle (%s) nor "
			      "under a path in the tenant's root_paths",
			      path, canon, r->in->bundle);
	r->root = steal_ptr(canon);
	/* the effective spec's root.path is absolute, as the spec decoder makes it */
	if (path[0] != '/') {
		char *joined = path_join(r->in->bundle, path);
		free(r->spec->root_path);
		r->spec->root_path = joined;
	}
	return 0;
}

/* ---- devices --------------------------------------------------------------------- */

static bool default_device(const char *path, char type, int64_t major, int64_t minor)
{
	for (unsigned i = 0; i < ward_n_default_devices; i++) {
		const struct ward_default_dev *d = &ward_default_devices[i];
		if (!strcmp(d->path, path) && d->type == type && d->major == major &&
		    d->minor == minor)
			return true;
	}
	return false;
}

static void remove_device(struct ward_linux *l, size_t i)
{
	free(l->devices[i].path);
	arr_remove(l->devices, &l->n_devices, i, sizeof(*l->devices));
}

/* An allow (or, for allow false, deny) rule of the device program. */
static void device_rule(struct ward_resources *res, bool allow, char type, int64_t major,
			int64_t minor, unsigned access)
{
	struct ward_bpfdev_rule *d =
	    arr_push((void **)&res->devices, &res->n_devices, sizeof(*res->devices));
	*d = (struct ward_bpfdev_rule){allow, type, major, minor, access};
}

#define ACCESS_RW  (WARD_BPFDEV_READ | WARD_BPFDEV_WRITE)
#define ACCESS_RWM (WARD_BPFDEV_MKNOD | ACCESS_RW)

/* linux.resources.devices becomes: deny everything, then the tenant's devices the pod
 * lists (their host numbers checked). */
static int rule_devices(struct run *r)
{
	const struct ward_tenant *t = r->in->tenant;
	struct ward_linux *l = &r->spec->linux;
	struct ward_resources *res = &l->resources;

	free(res->devices);
	res->devices = NULL;
	res->n_devices = 0;
	res->has_devices = true;
	l->has_resources = true;
	device_rule(res, false, 'a', WARD_BPFDEV_ANY, WARD_BPFDEV_ANY, ACCESS_RWM);
	for (size_t i = 0; i < l->n_devices;) {
		const struct ward_device *d = &l->devices[i];
		char htype;
		int64_t hmaj, hmin;

		/* a FIFO is no host device (the spec gives it no numbers) */
		if (d->type == 'p' || default_device(d->path, d->type, d->major, d->minor)) {
			i++;
			continue;
		}
		if (!strv_has(t->devices, d->path)) {
			if (r->privileged) {
				note(
				    r,
				    "linux.devices: dropped host device %s (privileged pods get no "
				    "host devices)",
				    d->path);
				remove_device(l, i);
				continue;
			}
			return refuse(r, "devices",
				      "linux.devices[%zu]: %s (%c %lld:%lld) is not one of the "
				      "tenant's devices",
				      i, d->path, d->type, (long long)d->major,
				      (long long)d->minor);
		}
		if (r->in->host->device(r->in->host->arg, d->path, &htype, &hmaj, &hmin, r->err) <
		    0)
			return ward_wrap(r->err, "tenant \"%s\": devices: %s", t->name, d->path);
		if (htype != d->type || hmaj != d->major || hmin != d->minor)
			return refuse(r, "devices",
				      "linux.devices[%zu]: %s is %c %lld:%lld on the host, the pod "
				      "asks for %c %lld:%lld",
				      i, d->path, htype, (long long)hmaj, (long long)hmin, d->type,
				      (long long)d->major, (long long)d->minor);
		device_rule(res, true, d->type, hmaj, hmin, ACCESS_RWM);
		note(r, "linux.devices: %s allowed (tenant device)", d->path);
		i++;
	}
	return 0;
}

/* ---- GPUs ------------------------------------------------------------------------------ */

/* NVIDIA nodes the orchestrator put in linux.devices (containerd's CDI injection) are GPU
 * requests, parsed by ward_gpu_request_parse; the nodes themselves are dropped here: the
 * GPU hook binds the granted ones from the host. */
static bool nvidia_major(const struct ward_gpu_inventory *inv, int64_t major)
{
	return major == WARD_GPU_MAJOR || (inv && inv->uvm.major && major == inv->uvm.major) ||
	       (inv && inv->caps_major && major == inv->caps_major);
}

static int rule_gpus(struct run *r)
{
	const struct ward_gpu_request *req = r->in->gpu_req;
	const struct ward_gpu_inventory *inv = r->in->gpu_inv;
	struct ward_linux *l = &r->spec->linux;
	struct ward_err e = {0};

	for (size_t i = 0; i < l->n_devices;) {
		if (l->devices[i].type == 'c' && nvidia_major(inv, l->devices[i].major)) {
			note(r, "linux.devices: %s left to the GPU hook", l->devices[i].path);
			remove_device(l, i);
			continue;
		}
		i++;
	}
	if (!req || !req->refs || !req->refs[0])
		return 0; /* /proc/driver is masked (ward_policy_masked_paths) */
	if (!inv)
		return refuse(r, "gpus", "%s asks for GPUs and this host has none", req->source);
	if (ward_gpu_resolve(inv, req, r->in->tenant->name, r->in->tenant->gpus, &r->gpus,
			     &r->n_gpus, &e) < 0)
		return refuse(r, "gpus", "%s: %s", req->source, e.msg);
	return 0;
}

static void allow_node(struct ward_resources *res, const struct ward_gpu_node *n)
{
	device_rule(res, true, 'c', n->major, n->minor, ACCESS_RW);
}

static void hook_args(char ***args, const char *flag, const char *value)
{
	*args = strv_append(*args, flag);
	*args = strv_append(*args, value);
}

static void gpu_hook(struct run *r, struct ward_hook *h, const char *cmd, const char *uuids,
		     bool compute)
{
	const struct ward_gpu_config *g = &r->in->cfg->gpu;
	char **args = strv_append(xcalloc(1, sizeof(char *)), "ward-gpu-hook");
	char num[32];

	args = strv_append(args, cmd);
	hook_args(&args, "--root", r->in->state_root ? r->in->state_root : "/run/ward");
	hook_args(&args, "--lib-dir", r->in->cfg->lib_dir); /* the host-wide GPU ledger */
	hook_args(&args, "--container", r->in->container_id);
	hook_args(&args, "--tenant", r->in->tenant->name);
	hook_args(&args, "--audit-dir", r->in->cfg->audit_dir);
	hook_args(&args, "--proc-root", g->proc_root);
	hook_args(&args, "--dev-root", g->dev_root);
	for (size_t i = 0; g->cdi_dirs && g->cdi_dirs[i]; i++)
		hook_args(&args, "--cdi-dir", g->cdi_dirs[i]);
	if (!strcmp(cmd, "inject")) {
		if (r->root)
			hook_args(&args, "--rootfs", r->root);
		hook_args(&args, "--gpus", uuids);
		if (compute)
			args = strv_append(args, "--compute");
	} else {
		hook_args(&args, "--libcuda", g->libcuda);
		snprintf(num, sizeof(num), "%u", g->wipe_timeout);
		hook_args(&args, "--wipe-timeout", num);
		snprintf(num, sizeof(num), "%u", g->wipe_slack_mb);
		hook_args(&args, "--wipe-slack-mb", num);
		snprintf(num, sizeof(num), "%u", g->wipe_held_max_mb);
		hook_args(&args, "--wipe-held-max-mb", num);
	}
	/* A fixed environment: nothing of the container's reaches the hook (NVIDIAScape). */
	*h = (struct ward_hook){.path = xstrdup(g->hook), .args = args};
	h->env = strv_append(xcalloc(1, sizeof(char *)), "PATH=/usr/sbin:/usr/bin:/sbin:/bin");
}

static struct ward_hook *add_hook(struct ward_spec *s, enum ward_hook_kind k)
{
	return arr_push((void **)&s->hooks[k].v, &s->hooks[k].n, sizeof(*s->hooks[k].v));
}

/* A container with GPUs gets the hook's /proc/driver (its GPUs only) instead of none. */
static void unmask_proc_driver(struct run *r)
{
	char **m = r->spec->linux.masked_paths;

	if (!strv_has(m, "/proc/driver"))
		return;
	strv_del(m, "/proc/driver");
	note(r, "linux.maskedPaths: /proc/driver left to the GPU hook (its GPUs only)");
}

/* After rule_devices (which rewrites linux.resources.devices): rw, never mknod, for the
 * granted GPUs' nodes; the hooks that bind them (createRuntime, first) and that wipe the
 * GPUs when the container is deleted (poststop, last); the lease in ward's record. */
static int grant_gpus(struct run *r)
{
	const struct ward_gpu_inventory *inv = r->in->gpu_inv;
	struct ward_resources *res = &r->spec->linux.resources;
	cleanup_free char *uuids = NULL;
	bool compute;

	if (!r->n_gpus)
		return 0;
	compute = r->in->gpu_req->compute && inv->uvm.major;
	allow_node(res, &inv->ctl);
	if (compute) {
		allow_node(res, &inv->uvm);
		if (inv->uvm_tools.major)
			allow_node(res, &inv->uvm_tools);
	}
	for (size_t i = 0; i < r->n_gpus; i++) {
		const struct ward_gpu *g = &inv->gpus[r->gpus[i]];
		char *u = xasprintf("%s%s%s", uuids ? uuids : "", uuids ? "," : "", g->uuid);
		free(uuids);
		uuids = u;
		for (size_t k = 0; k < g->n_nodes; k++)
			allow_node(res, &g->nodes[k]);
		note(r, "GPU %s (%s, /dev/nvidia%u) leased to the container", g->uuid, g->bus_id,
		     g->minor);
	}
	gpu_hook(r, add_hook(r->spec, WARD_HOOK_CREATE_RUNTIME), "inject", uuids, compute);
	gpu_hook(r, add_hook(r->spec, WARD_HOOK_POSTSTOP), "release", uuids, compute);
	free(r->spec->own.gpus);
	r->spec->own.gpus = steal_ptr(uuids);
	return 0;
}

/* ---- process: capabilities, privileges, rlimits, AppArmor --------------------------- */

/* Set s of c, in the order of cap_sets. */
static char **cap_set(const struct ward_capabilities *c, size_t s)
{
	char **sets[] = {c->bounding, c->effective, c->inheritable, c->permitted, c->ambient};
	return sets[s];
}

/* True if the pod asks for CAP_SYS_ADMIN in any capability set. */
static bool is_privileged(const struct ward_spec *pod)
{
	const struct ward_process *p = pod->process;

	for (size_t s = 0; p && p->has_capabilities && cap_sets[s]; s++)
		if (strv_has(cap_set(&p->capabilities, s), "CAP_SYS_ADMIN"))
			return true;
	return false;
}

/* The names of a set as JSON writes them compactly: ["CAP_A","CAP_B"]. */
static char *caps_text(char *const *v)
{
	size_t len = sizeof("[]");
	char *s, *at;

	for (size_t i = 0; v && v[i]; i++)
		len += strlen(v[i]) + 3; /* the quotes and a comma */
	s = at = xmalloc(len);
	*at++ = '[';
	for (size_t i = 0; v && v[i]; i++)
		at += sprintf(at, "%s\"%s\"", i ? "," : "", v[i]);
	strcpy(at, "]");
	return s;
}

static int rule_capabilities(struct run *r, struct ward_process *proc)
{
	const struct ward_tenant *t = r->in->tenant;
	struct ward_capabilities *caps = &proc->capabilities;

	if (!proc->has_capabilities)
		return 0;
	if (strv_len(caps->inheritable)) {
		strv_free(caps->inheritable);
		caps->inheritable = xcalloc(1, sizeof(char *));
		note(r, "process.capabilities.inheritable: cleared (CVE-2022-29162)");
		/* The kernel keeps an ambient capability only while it is inheritable. */
		if (strv_len(caps->ambient)) {
			cleanup_free char *names = caps_text(caps->ambient);
			note(r,
			     "warning: process.capabilities.ambient: %s dropped: the tenant policy "
			     "cleared the inheritable set (CVE-2022-29162), and a capability is "
			     "ambient only while it is inheritable; grant it through the effective "
			     "and permitted sets (a container root) instead",
			     names);
			strv_free(caps->ambient);
			caps->ambient = xcalloc(1, sizeof(char *));
		}
	}
	if (r->privileged)
		return 0; /* every capability, inside the user namespace */
	for (size_t s = 0; cap_sets[s]; s++) {
		char **set = cap_set(caps, s);
		if (!set)
			continue;
		for (size_t i = strv_len(set); i-- > 0;) {
			const char *cap = set[i];
			if (strv_has(t->capabilities, cap))
				continue;
			if (!list_has(cri_default_caps, cap))
				return refuse(r, "capabilities",
					      "process.capabilities.%s: %s is not allowed",
					      cap_sets[s], cap);
			if (!strcmp(cap_sets[s], "bounding"))
				note(r,
				     "process.capabilities: dropped %s (not in the tenant's set)",
				     cap);
			strv_remove_at(set, i);
		}
	}
	return 0;
}

/* An rlimit the tenant has no cap for stays within the runtime's own hard limit: the
 * runtime raises a container's hard limits from the host side (as runc does), where its
 * root could not, so an uncapped request would otherwise get whatever it names (e.g.
 * RLIMIT_RTPRIO 99: real-time scheduling without CAP_SYS_NICE, starving other tenants). */
static int uncapped_rlimits(struct run *r, struct ward_process *proc)
{
	const struct ward_tenant *t = r->in->tenant;

	for (size_t i = 0; i < proc->n_rlimits; i++) {
		struct ward_rlimit *e = &proc->rlimits[i];
		uint64_t lim[2], hard, soft;
		bool capped = false;

		for (size_t k = 0; k < t->n_rlimits; k++)
			capped = capped || !strcmp(e->type, t->rlimits[k].type);
		if (capped)
			continue;
		if (!r->in->host->rlimit || r->in->host->rlimit(r->in->host->arg, e->type, lim) < 0)
			return refuse(
			    r, "rlimits",
			    "process.rlimits[%zu]: %s: the runtime's own limit is unknown, "
			    "so it cannot be kept within it (give the tenant a cap in "
			    "\"rlimits\")",
			    i, e->type);
		hard = e->hard;
		soft = e->soft;
		if (hard <= lim[1] && soft <= lim[1])
			continue;
		hard = hard < lim[1] ? hard : lim[1];
		soft = soft < hard ? soft : hard;
		e->hard = hard;
		e->soft = soft;
		note(r,
		     "process.rlimits: %s kept within the runtime's hard limit %llu (the tenant "
		     "has no cap for it)",
		     e->type, (unsigned long long)lim[1]);
	}
	return 0;
}

static int rule_rlimits(struct run *r, struct ward_process *proc)
{
	const struct ward_tenant *t = r->in->tenant;

	for (size_t k = 0; k < t->n_rlimits; k++) {
		const struct ward_rlimit_cap *cap = &t->rlimits[k];
		bool found = false;
		for (size_t i = 0; i < proc->n_rlimits; i++) {
			struct ward_rlimit *e = &proc->rlimits[i];
			if (strcmp(e->type, cap->type))
				continue;
			found = true;
			if (e->hard > cap->max) {
				e->hard = cap->max;
				note(r, "process.rlimits: %s %s capped at %llu", cap->type, "hard",
				     (unsigned long long)cap->max);
			}
			if (e->soft > cap->max) {
				e->soft = cap->max;
				note(r, "process.rlimits: %s %s capped at %llu", cap->type, "soft",
				     (unsigned long long)cap->max);
			}
		}
		if (!found) {
			/* A cap only lowers a limit, never raises one: the pod's process
			 * inherits the runtime's limit, and only one above the cap is lowered
			 * to it (a userns root could not raise it back anyway). */
			uint64_t lim[2]; /* soft, hard, as the runtime has them */
			struct ward_rlimit *e;
			if (!r->in->host->rlimit ||
			    r->in->host->rlimit(r->in->host->arg, cap->type, lim) < 0) {
				note(r, "process.rlimits: %s not set: the inherited limit stays",
				     cap->type);
				continue;
			}
			if (lim[1] <= cap->max)
				continue;
			e = arr_push((void **)&proc->rlimits, &proc->n_rlimits,
				     sizeof(*proc->rlimits));
			*e = (struct ward_rlimit){.type = xstrdup(cap->type),
						  .hard = cap->max,
						  .soft = lim[0] < cap->max ? lim[0] : cap->max};
			note(r, "process.rlimits: the inherited %s hard limit %llu lowered to %llu",
			     cap->type, (unsigned long long)lim[1], (unsigned long long)cap->max);
		}
	}
	return uncapped_rlimits(r, proc);
}

static int rule_apparmor(struct run *r, struct ward_process *proc)
{
	const struct ward_tenant *t = r->in->tenant;
	/* a copy: replacing the profile frees the pod's string */
	cleanup_free char *pod = proc->apparmor_profile ? xstrdup(proc->apparmor_profile) : NULL;
	const char *want = t->apparmor;

	if (pod && *pod && strcmp(pod, want)) {
		if (t->allow_pod_apparmor)
			want = pod;
		else
			note(r,
			     "process.apparmorProfile: \"%s\" replaced by the tenant's \"%s\" "
			     "(allow_pod_apparmor is off)",
			     pod, want);
	}
	free(proc->apparmor_profile);
	proc->apparmor_profile = NULL;
	if (!strcmp(want, "unconfined"))
		return 0;
	if (!r->in->apparmor_enabled) {
		if (r->in->cfg->apparmor == WARD_NEED_REQUIRED)
			return refuse(r, "apparmor",
				      "ward.json says AppArmor is required, and this host's kernel "
				      "does not enable AppArmor");
		note(r,
		     WARD_NOTE_NO_APPARMOR ": running without the \"%s\" profile (ward.json "
					   "apparmor: optional)",
		     want);
		return 0;
	}
	proc->apparmor_profile = xstrdup(want);
	return 0;
}

static int rule_process(struct run *r)
{
	struct ward_process *proc = r->spec->process;

	if (!proc)
		return 0; /* create refuses a spec without one; policy explain shows it */
	if (rule_capabilities(r, proc) < 0 || rule_rlimits(r, proc) < 0 ||
	    rule_apparmor(r, proc) < 0)
		return -1;
	if (!r->in->tenant->allow_new_privileges && !proc->no_new_privileges) {
		proc->no_new_privileges = true;
		note(r, "process.noNewPrivileges: forced on");
	}
	return 0;
}

/* ---- seccomp --------------------------------------------------------------------- */

/* The tenant's profile for this pod: its privileged one for a privileged pod (r->privileged,
 * decided on the pod's capabilities before the policy cleared any set). */
static const char *seccomp_name(const struct run *r)
{
	return r->privileged ? r->in->tenant->seccomp_privileged : r->in->tenant->seccomp;
}

/* The tenant's profile (its JSON text, decoded by the spec's seccomp decoder) becomes
 * linux.seccomp; the pod's own filter, if any, is kept in ward's record and loaded too. */
static int rule_seccomp(struct run *r)
{
	const char *text = r->privileged ? r->in->seccomp_priv_json : r->in->seccomp_json;
	const char *name = seccomp_name(r);
	struct ward_linux *l = &r->spec->linux;
	struct ward_seccomp *tenant;
	cleanup_free char *what = NULL;

	if (!text) {
		note(r, "seccomp: the tenant is unconfined; the pod's own filter (if any) applies");
		return 0;
	}
	what = xasprintf("seccomp profile \"%s\"", name);
	tenant = ward_seccomp_profile_parse(text, what, r->err);
	if (!tenant)
		return ward_wrap(r->err, "tenant \"%s\"", r->in->tenant->name);
	if (l->seccomp) {
		ward_seccomp_free(l->seccomp_pod);
		l->seccomp_pod = l->seccomp;
		note(r,
		     "seccomp: the pod's own filter is kept and stacked on the tenant's "
		     "profile \"%s\" (both apply)",
		     name);
	} else {
		note(r, "seccomp: the tenant's profile \"%s\"", name);
	}
	l->seccomp = tenant;
	return 0;
}

/* ---- paths, sysctls, cgroup ---------------------------------------------------------- */

static void add_paths(struct run *r, char ***v, const char *key, const char *const *paths)
{
	unsigned added = 0;

	if (!*v)
		*v = xcalloc(1, sizeof(char *));
	for (size_t i = 0; paths[i]; i++)
		if (!strv_has(*v, paths[i])) {
			*v = strv_append(*v, paths[i]);
			added++;
		}
	if (added)
		note(r, "linux.%s: added %u of ward's defaults", key, added);
}

static bool sysctl_namespaced(const char *k, bool private_net, bool private_ipc, bool private_uts)
{
	static const char *const ipc[] = {
	    "kernel.shm_rmid_forced", "kernel.shmmax", "kernel.shmall",
	    "kernel.shmmni",	      "kernel.msgmax", "kernel.msgmnb",
	    "kernel.msgmni",	      "kernel.sem",    NULL};
	if (list_has(ipc, k) || !strncmp(k, "fs.mqueue.", 10))
		return private_ipc;
	if (!strcmp(k, "kernel.hostname") || !strcmp(k, "kernel.domainname"))
		return private_uts;
	if (!strncmp(k, "net.", 4))
		return private_net;
	return false;
}

static int rule_sysctl(struct run *r)
{
	struct ward_linux *l = &r->spec->linux;
	bool net = false, ipc = false, uts = false;

	if (!l->sysctl_keys)
		return 0;
	for (int kind = 0; kind < 3; kind++) {
		const char *type = kind == 0 ? "network" : kind == 1 ? "ipc" : "uts";
		struct ward_namespace *ns = find_ns(l, ward_ns_type_from_name(type));
		bool host = true;
		if (ns_shares_host(r, ns, kind == 0 ? "net" : type, &host) < 0)
			return -1;
		*(kind == 0 ? &net : kind == 1 ? &ipc : &uts) = !host;
	}
	for (size_t i = 0; l->sysctl_keys[i]; i++) {
		const char *k = l->sysctl_keys[i];
		if (strchr(k, '/') || strstr(k, "..") || !sysctl_namespaced(k, net, ipc, uts))
			return refuse(r, "sysctl",
				      "linux.sysctl: \"%s\" is not a sysctl of the pod's own "
				      "namespaces",
				      k);
		if (strchr(l->sysctl_values[i], '\n'))
			return ward_fail(r->err, 0,
					 "config.json: linux.sysctl.%s: expected a one-line string",
					 k);
	}
	return 0;
}

/* Why a cgroupsPath component is not a plain name ward may create below the tenant's
 * cgroup, or NULL if it is one. */
static const char *cgroup_name_bad(const char *s, size_t n)
{
	if (n == 0)
		return "is empty";
	if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return "would leave the directory it names";
	if (n > 255)
		return "is longer than 255 bytes";
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return "has a control character";
	return NULL;
}

/* Every cgroupsPath lands below /ward/<tenant>/: a cgroupfs path (absolute or relative) as
 * the components it names, systemd's slice:prefix:name as the path systemd would give it;
 * anything else, and any component that is empty, "." or "..", is refused. */
/* A pod uid as kubelet writes it into cgroup names: letters, digits and '-'. */
static bool pod_uid_ok(const char *uid)
{
	if (!uid || !*uid || strlen(uid) > 128)
		return false;
	for (const char *p = uid; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z') || *p == '-'))
			return false;
	return true;
}

/* rel (no leading '/') is exactly this pod's kubelet pod cgroup plus this container:
 * for a cgroupfs root "/kubepods": kubepods[/burstable|/besteffort]/pod<uid>/<id>; for a
 * systemd root "kubepods.slice" (the cgroupfs spelling kubelet's systemd driver uses):
 * kubepods.slice[/kubepods-<qos>.slice]/kubepods[-<qos>]-pod<uid, '-' as '_'>.slice/
 * cri-containerd-<id>.scope. The uid is the one the pod's sandbox recorded; the tenant
 * has no cgroup budget (a kept cgroup is not below /ward/<tenant>, which holds it). */
static bool kubelet_pod_cgroup(struct run *r, const char *rel)
{
	const char *uid =
	    r->in->pod_uid ? r->in->pod_uid : ward_spec_annotation(r->spec, WARD_ANN_CRI_POD_UID);
	static const char *const qos[] = {"", "burstable", "besteffort"};
	char *const *roots = r->in->cfg->kubelet_cgroup_roots;
	cleanup_free char *uid_ = NULL;

	if (!pod_uid_ok(uid) || r->in->tenant->cgroup_json || !roots)
		return false;
	uid_ = xstrdup(uid);
	for (char *p = uid_; *p; p++)
		if (*p == '-')
			*p = '_';
	for (size_t i = 0; roots[i]; i++)
		for (size_t q = 0; q < ARRAY_SIZE(qos); q++) {
			const char *root = roots[i], *Q = qos[q];
			cleanup_free char *want = NULL;

			if (root[0] == '/')
				want = xasprintf("%s%s%s/pod%s/%s", root + 1, *Q ? "/" : "", Q, uid,
						 r->in->container_id);
			else {
				int b = (int)strlen(root) - 6; /* without ".slice" */
				if (*Q)
					want = xasprintf("%s/%.*s-%s.slice/%.*s-%s-pod%s.slice/"
							 "cri-containerd-%s.scope",
							 root, b, root, Q, b, root, Q, uid_,
							 r->in->container_id);
				else
					want =
					    xasprintf("%s/%.*s-pod%s.slice/cri-containerd-%s.scope",
						      root, b, root, uid_, r->in->container_id);
			}
			if (!strcmp(rel, want))
				return true;
		}
	return false;
}

static int rule_cgroup(struct run *r)
{
	struct ward_linux *l = &r->spec->linux;
	cleanup_free char *cp = l->cgroups_path ? xstrdup(l->cgroups_path) : NULL;
	cleanup_free char *mapped = NULL;
	cleanup_free char *path = NULL;
	struct ward_err e = {0};
	const char *rel;

	if (cp && strchr(cp, ':')) {
		if (cp[0] == '/')
			return refuse(r, "cgroup",
				      "linux.cgroupsPath \"%s\": ':' is allowed only in systemd's "
				      "slice:prefix:name form",
				      cp);
		if (!(mapped = ward_cgroup_systemd_path(cp, &e)))
			return refuse(r, "cgroup", "linux.cgroupsPath \"%s\": %s", cp, e.msg);
	}
	rel = mapped ? mapped : cp;
	while (rel && *rel == '/')
		rel++;
	if (!rel || !*rel)
		rel = r->in->container_id;
	if (strlen(rel) > 2048)
		return refuse(r, "cgroup", "linux.cgroupsPath: longer than 2048 bytes");
	for (const char *p = rel;;) {
		size_t len = strcspn(p, "/");
		const char *why = cgroup_name_bad(p, len);
		if (why)
			return refuse(r, "cgroup",
				      "linux.cgroupsPath \"%s\": component \"%.*s\" %s; the path "
				      "must name a cgroup below the tenant's /ward/%s",
				      cp, len > 64 ? 64 : (int)len, p, why, r->in->tenant->name);
		if (!p[len])
			break;
		p += len + 1;
	}
	free(l->cgroups_path);
	if (kubelet_pod_cgroup(r, rel)) {
		path = xasprintf("/%s", rel);
		l->cgroups_path = xstrdup(path);
		note(r, "linux.cgroupsPath: %s (this pod's kubelet pod cgroup, kept)", path);
		return 0;
	}
	path = xasprintf("/ward/%s/%s", r->in->tenant->name, rel);
	l->cgroups_path = xstrdup(path);
	if (mapped)
		note(r, "linux.cgroupsPath: %s (systemd %s, below the tenant's cgroup)", path, cp);
	else
		note(r, "linux.cgroupsPath: %s (below the tenant's cgroup)", path);
	return 0;
}

/* ---- the pod's hooks ---------------------------------------------------------------- */

/* Absolute, and no component empty, "." or "..". */
static bool hook_path_clean(const char *p)
{
	if (p[0] != '/')
		return false;
	for (p++;; p++) {
		size_t len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && !strncmp(p, "..", 2)))
			return false;
		p += len;
		if (!*p)
			return true;
	}
}

/* path is an entry of the allow-list, or directly in a directory entry ("/dir/"). */
static bool hook_allowed(char *const *allow, const char *path)
{
	for (size_t i = 0; allow && allow[i]; i++) {
		size_t n = strlen(allow[i]);
		if (n && allow[i][n - 1] == '/'
			? !strncmp(path, allow[i], n) && path[n] && !strchr(path + n, '/')
			: !strcmp(path, allow[i]))
			return true;
	}
	return false;
}

/* An environment variable that steers the loader or libc of a program started as root
 * (LD_*, GLIBC_TUNABLES and glibc's other "unsecure" variables): never from a pod. */
static bool hook_env_unsafe(const char *kv)
{
	static const char *const names[] = {
	    "GLIBC_TUNABLES", "GCONV_PATH",   "GETCONF_DIR", "HOSTALIASES", "LOCALDOMAIN",
	    "LOCPATH",	      "MALLOC_TRACE", "NIS_PATH",    "NLSPATH",	    "RESOLV_HOST_CONF",
	    "RES_OPTIONS",    "TMPDIR",	      "TZDIR",	     NULL};
	size_t n = strcspn(kv, "=");

	if (!strncmp(kv, "LD_", 3))
		return true;
	for (size_t i = 0; names[i]; i++)
		if (strlen(names[i]) == n && !strncmp(kv, names[i], n))
			return true;
	return false;
}

/* OCI hooks run on the host, as root, outside every namespace of the container: a pod may
 * name only the programs its tenant's "hooks" allow-list names (the orchestrator's NRI and
 * CDI hooks). The GPU hook is added after this rule (the audit lines: container.c). A key
 * of "hooks" that is not a hook kind never reaches here: the every-field gate
 * (policy_fields.c) refuses it. */
static int rule_hooks(struct run *r)
{
	const struct ward_tenant *t = r->in->tenant;

	for (int k = 0; k < WARD_HOOK__COUNT; k++) {
		const char *kind = ward_hook_names[k];
		for (size_t i = 0; i < r->spec->hooks[k].n; i++) {
			const struct ward_hook *h = &r->spec->hooks[k].v[i];
			const char *path = h->path;

			if (!hook_path_clean(path))
				return refuse(r, "hooks",
					      "hooks.%s[%zu]: %s is not an absolute path without "
					      "\".\", \"..\" or empty components",
					      kind, i, path);
			if (!hook_allowed(t->hooks, path))
				return refuse(r, "hooks",
					      "hooks.%s[%zu]: %s is not in the tenant's hook "
					      "allow-list (tenants.d/%s.json \"hooks\")",
					      kind, i, path, t->name);
			for (size_t j = 0; h->env && h->env[j]; j++)
				if (hook_env_unsafe(h->env[j])) {
					const char *kv = h->env[j];
					return refuse(r, "hooks",
						      "hooks.%s[%zu] (%s): env[%zu]: %.*s is not "
						      "passed to a program that runs as host root",
						      kind, i, path, j, (int)strcspn(kv, "="), kv);
				}
			note(r, "hooks.%s[%zu]: %s kept (in the tenant's hook allow-list)", kind, i,
			     path);
		}
	}
	return 0;
}

/* ---- the whole ------------------------------------------------------------------------ */

/* The policy; *seccomp (if not NULL) the name of the tenant's profile it chose. */
static struct ward_spec *policy_apply(const struct ward_policy_in *in, const struct ward_spec *pod,
				      char ***notes, const char **seccomp, struct ward_err *err)
{
	struct run r = {.in = in, .notes = notes, .err = err};

	if (notes && !*notes)
		*notes = xcalloc(1, sizeof(char *));
	r.privileged = is_privileged(pod);
	if (r.privileged && !in->tenant->privileged) {
		refuse(
		    &r, "privileged",
		    "the pod asks for CAP_SYS_ADMIN (a privileged pod), which the tenant does not "
		    "allow");
		return NULL;
	}
	r.spec = ward_spec_dup(pod);
	if (r.privileged)
		note(&r,
		     "privileged pod: every capability inside its user namespace, the \"%s\" "
		     "seccomp profile, no host devices or namespaces",
		     in->tenant->seccomp_privileged);
	if (rule_annotations(&r) < 0 || rule_hooks(&r) < 0 || rule_root(&r) < 0 ||
	    rule_host_namespaces(&r) < 0 || rule_user_namespace(&r) < 0 || rule_mounts(&r) < 0 ||
	    rule_gpus(&r) < 0 || rule_devices(&r) < 0 || grant_gpus(&r) < 0 ||
	    rule_process(&r) < 0 || rule_seccomp(&r) < 0)
		goto fail;
	add_paths(&r, &r.spec->linux.masked_paths, "maskedPaths", ward_policy_masked_paths);
	add_paths(&r, &r.spec->linux.readonly_paths, "readonlyPaths", ward_policy_readonly_paths);
	if (rule_sysctl(&r) < 0 || rule_cgroup(&r) < 0)
		goto fail;
	if (r.n_gpus)
		unmask_proc_driver(&r);
	if (in->tenant->idmap_rootfs) {
		r.spec->own.rootfs_idmap = true;
		note(&r, "root: idmapped to the pod's user namespace");
	}
	if (seccomp)
		*seccomp = seccomp_name(&r);
	free(r.gpus);
	free(r.root);
	return r.spec;
fail:
	free(r.gpus);
	free(r.root);
	ward_spec_free(r.spec);
	return NULL;
}

struct ward_spec *ward_policy_apply(const struct ward_policy_in *in, const struct ward_spec *pod,
				    char ***notes, struct ward_err *err)
{
	return policy_apply(in, pod, notes, NULL, err);
}

/* The edge: the pod's config.json as read (one parse of its text), the every-field gate on
 * it, the one decoding into the typed spec, the policy, and the whole document's checks on
 * what the policy made. */
struct ward_spec *ward_policy_apply_json(const struct ward_policy_in *in, json_t *pod,
					 char ***notes, const char **seccomp, struct ward_err *err)
{
	struct ward_spec *typed, *eff;

	if (notes && !*notes)
		*notes = xcalloc(1, sizeof(char *));
	if (!json_is_object(pod)) {
		ward_fail(err, 0, "config.json: expected a JSON object");
		return NULL;
	}
	/* Default deny: a field with no decision, or a refused one, stops here. */
	if (ward_policy_check_fields(pod, in->tenant->name, err) < 0)
		return NULL;
	if (!(typed = ward_spec_pod_from_json(pod, in->bundle, err)))
		return NULL;
	eff = policy_apply(in, typed, notes, seccomp, err);
	ward_spec_free(typed);
	if (eff && ward_spec_check(eff, err) < 0) {
		ward_wrap(err, "config.json");
		ward_spec_free(eff);
		return NULL;
	}
	return eff;
}

/* ---- exec ------------------------------------------------------------------------------ */

/* The refusal of an exec: like refuse(), without a run. */
static int exec_refuse(struct ward_err *err, const char *tenant, const char *rule, const char *fmt,
		       ...) __attribute__((format(printf, 4, 5)));
static int exec_refuse(struct ward_err *err, const char *tenant, const char *rule, const char *fmt,
		       ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_failv(err, 0, fmt, ap);
	va_end(ap);
	return ward_wrap(err, "tenant \"%s\": %s", tenant ? tenant : "", rule);
}

/* The profile the pod asked for at create (the policy replaced it): the engine asks it again
 * on every exec (podman does), and gets the container's. */
static void exec_map_apparmor(const struct ward_process *cp, struct ward_process *p,
			      const char *asked, char ***notes)
{
	const char *have = cp->apparmor_profile;

	if (!asked || !*asked || strcmp(p->apparmor_profile, asked) ||
	    (have && !strcmp(asked, have)))
		return;
	if (notes) {
		char *n = xasprintf("exec: AppArmor profile \"%s\" (the one asked at create) "
				    "runs as the container's \"%s\"",
				    asked, have ? have : "unconfined");
		*notes = strv_append(*notes ? *notes : xcalloc(1, sizeof(char *)), n);
		free(n);
	}
	free(p->apparmor_profile);
	p->apparmor_profile = have ? xstrdup(have) : NULL;
}

int ward_policy_exec(const char *tenant, bool policy_made, const struct ward_process *cp,
		     const char *apparmor_asked, struct ward_process *p, char ***notes,
		     struct ward_err *err)
{
	char **bounding = cp ? cp->capabilities.bounding : NULL;
	char **sets[] = {p->capabilities.bounding, p->capabilities.effective,
			 p->capabilities.inheritable, p->capabilities.permitted,
			 p->capabilities.ambient};

	if (!policy_made)
		return 0;
	for (size_t s = 0; s < ARRAY_SIZE(sets); s++) {
		size_t w = 0;
		for (size_t i = 0; sets[s] && sets[s][i]; i++) {
			if (strv_has(bounding, sets[s][i])) {
				sets[s][w++] = sets[s][i];
				continue;
			}
			/* containerd asks for its default set on every exec, as at create: what
			 * the tenant does not allow of it goes quietly, anything else is refused */
			if (!ward_policy_cap_droppable(sets[s][i])) {
				/* the rest of the set stays owned by it */
				memmove(&sets[s][w], &sets[s][i],
					(strv_len(&sets[s][i]) + 1) * sizeof(char *));
				return exec_refuse(err, tenant, "capabilities",
						   "%s is not in the container's bounding set",
						   sets[s][w]);
			}
			if (notes) {
				char *n = xasprintf("exec: dropped %s (not in the container's "
						    "bounding set)",
						    sets[s][i]);
				*notes =
				    strv_append(*notes ? *notes : xcalloc(1, sizeof(char *)), n);
				free(n);
			}
			free(sets[s][i]);
		}
		if (sets[s])
			sets[s][w] = NULL;
	}
	if (cp && cp->no_new_privileges)
		p->no_new_privileges = true;
	if (cp && p->apparmor_profile)
		exec_map_apparmor(cp, p, apparmor_asked, notes);
	if (cp && p->apparmor_profile && cp->apparmor_profile &&
	    strcmp(p->apparmor_profile, cp->apparmor_profile))
		return exec_refuse(err, tenant, "apparmor",
				   "exec processes run under the container's profile \"%s\", "
				   "not \"%s\"",
				   cp->apparmor_profile, p->apparmor_profile);
	return 0;
}
