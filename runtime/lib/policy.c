/* effective spec = policy(pod spec, tenant). One function per rule, applied in order by
 * ward_policy_apply; each either changes the copy (and says so in the notes) or refuses
 * with the rule's name. No syscalls here: host facts come from struct ward_policy_host. */
#include "policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "dev.h"
#include "json.h"
#include "policy_fields.h"
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
	json_t *spec;
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

/* o[key] as an object (created when absent); NULL with err if it has another type. */
static json_t *obj_at(struct run *r, json_t *o, const char *key, const char *path)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		v = json_object();
		json_object_set_new(o, key, v);
	}
	if (!json_is_object(v)) {
		ward_fail(r->err, 0, "config.json: %s: expected an object", path);
		return NULL;
	}
	return v;
}

static json_t *arr_at(struct run *r, json_t *o, const char *key, const char *path, bool create)
{
	json_t *v = json_object_get(o, key);
	if (!v && create) {
		v = json_array();
		json_object_set_new(o, key, v);
	}
	if (v && !json_is_array(v)) {
		ward_fail(r->err, 0, "config.json: %s: expected an array", path);
		return NULL;
	}
	return v;
}

#define str_at ward_json_str_at /* the JSON reader's (json.h) */

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

/* ---- annotations ------------------------------------------------------------------- */

static int rule_annotations(struct run *r, json_t *ann)
{
	const char *seccomp_req = str_at(ann, "ward.dev/seccomp");
	char ids[160];

	if (seccomp_req && !strcmp(seccomp_req, "unconfined") &&
	    strcmp(r->in->tenant->seccomp, "unconfined"))
		return refuse(r, "seccomp",
			      "annotation ward.dev/seccomp=unconfined: the tenant's profile is "
			      "\"%s\"; pods cannot run unconfined",
			      r->in->tenant->seccomp);
	/* What only the policy may write. */
	json_object_del(ann, WARD_ANN_POD_SECCOMP);
	json_object_del(ann, WARD_ANN_ROOTFS_IDMAP);
	json_object_del(ann, WARD_ANN_IDS);
	json_object_del(ann, WARD_ANN_GPUS);
	json_object_set_new(ann, WARD_ANN_TENANT, json_string(r->in->tenant->name));
	snprintf(ids, sizeof(ids), "%s %u %u", r->in->ids_owner ? r->in->ids_owner : "fixed",
		 r->in->ids.start, r->in->ids.size);
	json_object_set_new(ann, WARD_ANN_IDS, json_string(ids));
	return 0;
}

/* ---- namespaces and the user namespace --------------------------------------------- */

static json_t *find_ns(json_t *nss, const char *type)
{
	size_t i;
	json_t *e;
	json_array_foreach(nss, i, e)
	{
		const char *t = str_at(e, "type");
		if (t && !strcmp(t, type))
			return e;
	}
	return NULL;
}

static int ns_shares_host(struct run *r, json_t *ns, const char *proc, bool *host)
{
	const char *path = ns ? str_at(ns, "path") : NULL;
	int rc;

	*host = !ns;
	if (!path)
		return 0;
	rc = r->in->host->ns_is_host(r->in->host->arg, path, proc, r->err);
	if (rc < 0)
		return ward_wrap(r->err, "linux.namespaces: %s", path);
	*host = rc == 1;
	return 0;
}

static int rule_host_namespaces(struct run *r, json_t *nss)
{
	const struct ward_tenant *t = r->in->tenant;
	bool host;

	for (size_t i = 0; i < ARRAY_SIZE(host_ns); i++) {
		json_t *ns = find_ns(nss, host_ns[i].type);
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
		json_t *ns = find_ns(nss, *k);
		if (!ns && !strcmp(*k, "mount"))
			return refuse(r, "namespaces",
				      "linux.namespaces: no mount namespace (the runtime's own, "
				      "inherited): the container's mounts would be made in the "
				      "host's mount namespace; only a trusted tenant may");
		if (!ns) {
			json_array_append_new(nss, json_pack("{s:s}", "type", *k));
			note(r, "added a %s namespace", *k);
			continue;
		}
		if (ns_shares_host(r, ns, !strcmp(*k, "mount") ? "mnt" : "cgroup", &host) < 0)
			return -1;
		if (host)
			return refuse(r, "namespaces",
				      "joining the host's %s namespace is not allowed", *k);
	}
	return 0;
}

static int check_map_array(struct run *r, json_t *maps, const char *what)
{
	uint64_t lo = r->in->ids.start, hi = (uint64_t)r->in->ids.start + r->in->ids.size;
	size_t i;
	json_t *e;

	json_array_foreach(maps, i, e)
	{
		json_t *h = json_object_get(e, "hostID"), *s = json_object_get(e, "size");
		uint64_t hv, sv;
		if (!json_is_integer(h) || !json_is_integer(s) || json_integer_value(h) < 0 ||
		    json_integer_value(s) < 0)
			return ward_fail(r->err, 0,
					 "config.json: %s[%zu]: hostID and size must be "
					 "non-negative integers",
					 what, i);
		hv = (uint64_t)json_integer_value(h);
		sv = (uint64_t)json_integer_value(s);
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

static int rule_user_namespace(struct run *r, json_t *lx, json_t *nss)
{
	json_t *ns = find_ns(nss, "user");
	const char *path = ns ? str_at(ns, "path") : NULL;
	json_t *um, *gm;

	if (!ns && r->in->pod_userns) {
		/* One user namespace per pod (as Kubernetes' user-namespace pods): a member
		 * joins its sandbox's, so it has rights over the pod's ipc/uts/pid. */
		ns = json_pack("{s:s,s:s}", "type", "user", "path", r->in->pod_userns);
		json_array_append_new(nss, ns);
		path = r->in->pod_userns;
		note(r, "joins the pod's user namespace (the sandbox's, %s)", path);
	}
	if (!ns) {
		json_t *map =
		    json_pack("[{s:i,s:I,s:I}]", "containerID", 0, "hostID",
			      (json_int_t)r->in->ids.start, "size", (json_int_t)r->in->ids.size);
		json_array_append_new(nss, json_pack("{s:s}", "type", "user"));
		json_object_set(lx, "uidMappings", map);
		json_object_set_new(lx, "gidMappings", map);
		note(r, "added a user namespace: container IDs 0-%u map to host IDs %u-%u",
		     r->in->ids.size - 1, r->in->ids.start, r->in->ids.start + r->in->ids.size - 1);
		return 0;
	}
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
			json_object_set_new(lx, "uidMappings",
					    json_pack("[{s:i,s:I,s:I}]", "containerID", 0, "hostID",
						      (json_int_t)uid[0], "size",
						      (json_int_t)(uid[1] - uid[0])));
			json_object_set_new(lx, "gidMappings",
					    json_pack("[{s:i,s:I,s:I}]", "containerID", 0, "hostID",
						      (json_int_t)gid[0], "size",
						      (json_int_t)(gid[1] - gid[0])));
		}
		return 0;
	}
	um = arr_at(r, lx, "uidMappings", "linux.uidMappings", false);
	gm = arr_at(r, lx, "gidMappings", "linux.gidMappings", false);
	if ((json_object_get(lx, "uidMappings") && !um) ||
	    (json_object_get(lx, "gidMappings") && !gm))
		return -1;
	if (!um || !json_array_size(um) || !gm || !json_array_size(gm)) {
		json_t *map =
		    json_pack("[{s:i,s:I,s:I}]", "containerID", 0, "hostID",
			      (json_int_t)r->in->ids.start, "size", (json_int_t)r->in->ids.size);
		json_object_set(lx, "uidMappings", map);
		json_object_set_new(lx, "gidMappings", map);
		note(r, "mapped the pod's user namespace to host IDs %u-%u", r->in->ids.start,
		     r->in->ids.start + r->in->ids.size - 1);
		return 0;
	}
	if (check_map_array(r, um, "linux.uidMappings") < 0 ||
	    check_map_array(r, gm, "linux.gidMappings") < 0)
		return -1;
	note(r, "kept the pod's own ID mappings (inside its range)");
	return 0;
}

/* ---- mounts ------------------------------------------------------------------------ */

static bool opts_have(json_t *opts, const char *o)
{
	size_t i;
	json_t *e;
	json_array_foreach(opts, i, e) if (json_is_string(e) &&
					   !strcmp(json_string_value(e), o)) return true;
	return false;
}

static void opts_del(json_t *opts, const char *o)
{
	for (size_t i = json_array_size(opts); i-- > 0;) {
		json_t *e = json_array_get(opts, i);
		if (json_is_string(e) && !strcmp(json_string_value(e), o))
			json_array_remove(opts, i);
	}
}

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
	json_t *ann = json_object_get(r->spec, "annotations");
	const char *sb = str_at(ann, WARD_ANN_SANDBOX_ID);
	const char *uid =
	    r->in->pod_uid ? r->in->pod_uid : str_at(ann, "io.kubernetes.cri.sandbox-uid");
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

/* The container's own directory in podman's/CRI-O's containers/storage (ward.json
 * "containers_storage": <root|runroot>/overlay-containers/<id>/userdata: its resolv.conf,
 * hosts, hostname, .containerenv) or Docker's (<docker_root>/containers/<id>), keyed by the
 * id ward is creating: never another container's. */
static bool engine_own_path(struct run *r, const char *path)
{
	const struct ward_config *c = r->in->cfg;
	const char *id = r->in->container_id;
	const char *dirs[] = {c->storage_root, c->storage_runroot};
	char p[4096];

	if (!name_ok(id))
		return false;
	for (size_t k = 0; k < ARRAY_SIZE(dirs); k++)
		if (dirs[k] &&
		    (size_t)snprintf(p, sizeof(p), "%s/overlay-containers/%s/userdata", dirs[k],
				     id) < sizeof(p) &&
		    path_under(path, p))
			return true;
	return c->docker_root &&
	       (size_t)snprintf(p, sizeof(p), "%s/containers/%s", c->docker_root, id) < sizeof(p) &&
	       path_under(path, p);
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
			      "directory",
			      i, dest, src);
	if (path_under(src, r->in->bundle) || pod_own_path(r, src) || engine_own_path(r, src))
		allowed = true;
	for (size_t k = 0; !allowed && t->host_paths[k]; k++)
		allowed = path_under(src, t->host_paths[k]);
	if (!allowed)
		return refuse(r, "host_paths",
			      "mounts[%zu] (%s): source %s is not under an allowed host path", i,
			      dest, src);
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

static int rule_mounts(struct run *r)
{
	const struct ward_tenant *t = r->in->tenant;
	json_t *mounts = arr_at(r, r->spec, "mounts", "mounts", false), *m;
	size_t i;

	if (!mounts)
		return json_object_get(r->spec, "mounts") ? -1 : 0;
	json_array_foreach(mounts, i, m)
	{
		const char *dest = str_at(m, "destination"), *type = str_at(m, "type");
		const char *src = str_at(m, "source");
		char norm[4096];
		const char *place;
		json_t *opts;
		bool bind, unmappable = false;

		if (!json_is_object(m) || !dest)
			return ward_fail(r->err, 0,
					 "config.json: mounts[%zu]: expected an object with a "
					 "destination",
					 i);
		opts = arr_at(r, m, "options", "mounts[].options", true);
		if (!opts)
			return -1;
		bind = opts_have(opts, "bind") || opts_have(opts, "rbind") ||
		       (type && !strcmp(type, "bind"));
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
		if (type && !strcmp(type, "sysfs") && !opts_have(opts, "ro")) {
			opts_del(opts, "rw");
			json_array_append_new(opts, json_string("ro"));
			note(r, "mounts[%zu] (%s): sysfs is read-only", i, dest);
		}
		/* A mount that stays a peer of the host's would carry the pod's own mounts back to
		 * the host (Kubernetes' Bidirectional, which it allows privileged pods only). */
		if (opts_have(opts, "shared") || opts_have(opts, "rshared"))
			return refuse(
			    r, "mounts",
			    "mounts[%zu] (%s): shared propagation (\"%s\") would carry the "
			    "pod's mounts to the host; rslave (Kubernetes' HostToContainer) "
			    "is allowed",
			    i, dest, opts_have(opts, "rshared") ? "rshared" : "shared");
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
				json_object_set_new(m, "source", json_string(canon));
			}
			if (S_ISCHR(mode) || S_ISBLK(mode))
				return refuse(
				    r, "devices",
				    "mounts[%zu] (%s): binding the device node %s; devices "
				    "come through linux.devices",
				    i, dest, canon);
		}
		if (json_object_get(m, "uidMappings") || json_object_get(m, "gidMappings")) {
			json_t *um = json_object_get(m, "uidMappings"),
			       *gm = json_object_get(m, "gidMappings");
			if ((um && !json_is_array(um)) || (gm && !json_is_array(gm)))
				return ward_fail(
				    r->err, 0,
				    "config.json: mounts[%zu]: uidMappings and gidMappings "
				    "must be arrays",
				    i);
			if ((um && check_map_array(r, um, "mounts[].uidMappings") < 0) ||
			    (gm && check_map_array(r, gm, "mounts[].gidMappings") < 0))
				return ward_wrap(r->err, "mounts[%zu] (%s)", i, dest);
			continue;
		}
		if (t->idmap_mounts && unmappable && !opts_have(opts, "idmap") &&
		    !opts_have(opts, "ridmap")) {
			note(r,
			     "mounts[%zu] (%s): not idmapped: its tmpfs cannot be on this kernel "
			     "(Linux 6.3 can); its files keep their host owners",
			     i, dest);
		} else if (t->idmap_mounts && !opts_have(opts, "idmap") &&
			   !opts_have(opts, "ridmap")) {
			json_array_append_new(
			    opts, json_string(opts_have(opts, "rbind") ? "ridmap" : "idmap"));
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
	json_t *root = json_object_get(r->spec, "root");
	const char *path = json_is_object(root) ? str_at(root, "path") : NULL;
	const struct ward_tenant *t = r->in->tenant;
	bool allowed;
	cleanup_free char *abs = NULL;
	cleanup_free char *canon = NULL;
	mode_t mode = 0;

	if (!path || !*path)
		return 0; /* the spec parser names what is missing */
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

static int rule_devices(struct run *r, json_t *lx)
{
	const struct ward_tenant *t = r->in->tenant;
	json_t *devs = arr_at(r, lx, "devices", "linux.devices", false), *res, *rules, *d;
	size_t i;

	if (!devs && json_object_get(lx, "devices"))
		return -1;
	rules = json_pack("[{s:b,s:s}]", "allow", 0, "access", "rwm");
	for (i = 0; devs && i < json_array_size(devs);) {
		const char *path = str_at(d = json_array_get(devs, i), "path");
		const char *type = str_at(d, "type");
		json_t *ma = json_object_get(d, "major"), *mi = json_object_get(d, "minor");
		char htype;
		int64_t hmaj, hmin;

		if (!path || !type || !json_is_integer(ma) || !json_is_integer(mi)) {
			i++;
			continue; /* the spec parser names what is wrong */
		}
		if (default_device(path, type[0], json_integer_value(ma), json_integer_value(mi))) {
			i++;
			continue;
		}
		if (!strv_has(t->devices, path)) {
			if (r->privileged) {
				note(
				    r,
				    "linux.devices: dropped host device %s (privileged pods get no "
				    "host devices)",
				    path);
				json_array_remove(devs, i);
				continue;
			}
			json_decref(rules);
			return refuse(r, "devices",
				      "linux.devices[%zu]: %s (%s %lld:%lld) is not one of the "
				      "tenant's devices",
				      i, path, type, (long long)json_integer_value(ma),
				      (long long)json_integer_value(mi));
		}
		if (r->in->host->device(r->in->host->arg, path, &htype, &hmaj, &hmin, r->err) < 0) {
			json_decref(rules);
			return ward_wrap(r->err, "tenant \"%s\": devices: %s", t->name, path);
		}
		if (htype != type[0] || hmaj != json_integer_value(ma) ||
		    hmin != json_integer_value(mi)) {
			json_decref(rules);
			return refuse(r, "devices",
				      "linux.devices[%zu]: %s is %c %lld:%lld on the host, the pod "
				      "asks for %s %lld:%lld",
				      i, path, htype, (long long)hmaj, (long long)hmin, type,
				      (long long)json_integer_value(ma),
				      (long long)json_integer_value(mi));
		}
		json_array_append_new(rules, json_pack("{s:b,s:s,s:I,s:I,s:s}", "allow", 1, "type",
						       type, "major", (json_int_t)hmaj, "minor",
						       (json_int_t)hmin, "access", "rwm"));
		note(r, "linux.devices: %s allowed (tenant device)", path);
		i++;
	}
	res = obj_at(r, lx, "resources", "linux.resources");
	if (!res) {
		json_decref(rules);
		return -1;
	}
	json_object_set_new(res, "devices", rules);
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

static int rule_gpus(struct run *r, json_t *lx)
{
	const struct ward_gpu_request *req = r->in->gpu_req;
	const struct ward_gpu_inventory *inv = r->in->gpu_inv;
	json_t *devs = json_object_get(lx, "devices"), *d;
	struct ward_err e = {0};
	size_t i;

	for (i = 0; json_is_array(devs) && i < json_array_size(devs);) {
		json_t *ma = json_object_get(d = json_array_get(devs, i), "major");
		const char *type = str_at(d, "type");
		if (type && type[0] == 'c' && json_is_integer(ma) &&
		    nvidia_major(inv, json_integer_value(ma))) {
			note(r, "linux.devices: %s left to the GPU hook", str_at(d, "path"));
			json_array_remove(devs, i);
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

static void allow_node(json_t *rules, const struct ward_gpu_node *n)
{
	json_array_append_new(rules, json_pack("{s:b,s:s,s:I,s:I,s:s}", "allow", 1, "type", "c",
					       "major", (json_int_t)n->major, "minor",
					       (json_int_t)n->minor, "access", "rw"));
}

static void hook_args(json_t *args, const char *flag, const char *value)
{
	json_array_append_new(args, json_string(flag));
	json_array_append_new(args, json_string(value));
}

static json_t *gpu_hook(struct run *r, const char *cmd, const char *uuids, bool compute)
{
	const struct ward_gpu_config *g = &r->in->cfg->gpu;
	json_t *args = json_pack("[s,s]", "ward-gpu-hook", cmd);
	char num[32];

	hook_args(args, "--root", r->in->state_root ? r->in->state_root : "/run/ward");
	hook_args(args, "--lib-dir", r->in->cfg->lib_dir); /* the host-wide GPU ledger */
	hook_args(args, "--container", r->in->container_id);
	hook_args(args, "--tenant", r->in->tenant->name);
	hook_args(args, "--audit-dir", r->in->cfg->audit_dir);
	hook_args(args, "--proc-root", g->proc_root);
	hook_args(args, "--dev-root", g->dev_root);
	for (size_t i = 0; g->cdi_dirs && g->cdi_dirs[i]; i++)
		hook_args(args, "--cdi-dir", g->cdi_dirs[i]);
	if (!strcmp(cmd, "inject")) {
		if (r->root)
			hook_args(args, "--rootfs", r->root);
		hook_args(args, "--gpus", uuids);
		if (compute)
			json_array_append_new(args, json_string("--compute"));
	} else {
		hook_args(args, "--libcuda", g->libcuda);
		snprintf(num, sizeof(num), "%u", g->wipe_timeout);
		hook_args(args, "--wipe-timeout", num);
		snprintf(num, sizeof(num), "%u", g->wipe_slack_mb);
		hook_args(args, "--wipe-slack-mb", num);
		snprintf(num, sizeof(num), "%u", g->wipe_held_max_mb);
		hook_args(args, "--wipe-held-max-mb", num);
	}
	/* A fixed environment: nothing of the container's reaches the hook (NVIDIAScape). */
	return json_pack("{s:s,s:o,s:[s]}", "path", g->hook, "args", args, "env",
			 "PATH=/usr/sbin:/usr/bin:/sbin:/bin");
}

/* A container with GPUs gets the hook's /proc/driver (its GPUs only) instead of none. */
static void unmask_proc_driver(struct run *r, json_t *lx)
{
	json_t *m = json_object_get(lx, "maskedPaths"), *e;
	size_t i;

	json_array_foreach(m, i, e) if (json_is_string(e) &&
					!strcmp(json_string_value(e), "/proc/driver"))
	{
		json_array_remove(m, i);
		note(r, "linux.maskedPaths: /proc/driver left to the GPU hook (its GPUs only)");
		break;
	}
}

/* After rule_devices (which rewrites linux.resources.devices): rw, never mknod, for the
 * granted GPUs' nodes; the hooks that bind them (createRuntime, first) and that wipe the
 * GPUs when the container is deleted (poststop, last); the lease in the annotations. */
static int grant_gpus(struct run *r, json_t *lx, json_t *ann)
{
	const struct ward_gpu_inventory *inv = r->in->gpu_inv;
	json_t *res, *rules, *hooks, *list;
	cleanup_free char *uuids = NULL;
	bool compute;

	if (!r->n_gpus)
		return 0;
	compute = r->in->gpu_req->compute && inv->uvm.major;
	if (!(res = obj_at(r, lx, "resources", "linux.resources")))
		return -1;
	rules = json_object_get(res, "devices");
	allow_node(rules, &inv->ctl);
	if (compute) {
		allow_node(rules, &inv->uvm);
		if (inv->uvm_tools.major)
			allow_node(rules, &inv->uvm_tools);
	}
	for (size_t i = 0; i < r->n_gpus; i++) {
		const struct ward_gpu *g = &inv->gpus[r->gpus[i]];
		char *u = xasprintf("%s%s%s", uuids ? uuids : "", uuids ? "," : "", g->uuid);
		free(uuids);
		uuids = u;
		for (size_t k = 0; k < g->n_nodes; k++)
			allow_node(rules, &g->nodes[k]);
		note(r, "GPU %s (%s, /dev/nvidia%u) leased to the container", g->uuid, g->bus_id,
		     g->minor);
	}
	if (!(hooks = obj_at(r, r->spec, "hooks", "hooks")))
		return -1;
	if (!(list = arr_at(r, hooks, "createRuntime", "hooks.createRuntime", true)))
		return -1;
	json_array_append_new(list, gpu_hook(r, "inject", uuids, compute));
	if (!(list = arr_at(r, hooks, "poststop", "hooks.poststop", true)))
		return -1;
	json_array_append_new(list, gpu_hook(r, "release", uuids, compute));
	json_object_set_new(ann, WARD_ANN_GPUS, json_string(uuids));
	return 0;
}

/* ---- process: capabilities, privileges, rlimits, AppArmor --------------------------- */

static bool caps_in_any_set(json_t *caps, const char *cap)
{
	for (size_t s = 0; cap_sets[s]; s++) {
		json_t *set = json_object_get(caps, cap_sets[s]), *e;
		size_t i;
		json_array_foreach(set, i, e) if (json_is_string(e) &&
						  !strcmp(json_string_value(e), cap)) return true;
	}
	return false;
}

bool ward_policy_is_privileged(json_t *pod)
{
	json_t *caps = json_object_get(json_object_get(pod, "process"), "capabilities");
	return json_is_object(caps) && caps_in_any_set(caps, "CAP_SYS_ADMIN");
}

static int rule_capabilities(struct run *r, json_t *proc)
{
	const struct ward_tenant *t = r->in->tenant;
	json_t *caps = json_object_get(proc, "capabilities");

	if (!caps)
		return 0;
	if (!json_is_object(caps))
		return ward_fail(r->err, 0,
				 "config.json: process.capabilities: expected an object");
	if (json_array_size(json_object_get(caps, "inheritable"))) {
		json_t *amb = json_object_get(caps, "ambient");
		json_object_set_new(caps, "inheritable", json_array());
		note(r, "process.capabilities.inheritable: cleared (CVE-2022-29162)");
		/* The kernel keeps an ambient capability only while it is inheritable. */
		if (json_array_size(amb)) {
			cleanup_free char *names = json_dumps(amb, JSON_COMPACT);
			note(r,
			     "warning: process.capabilities.ambient: %s dropped: the tenant policy "
			     "cleared the inheritable set (CVE-2022-29162), and a capability is "
			     "ambient only while it is inheritable; grant it through the effective "
			     "and permitted sets (a container root) instead",
			     names);
			json_object_set_new(caps, "ambient", json_array());
		}
	}
	if (r->privileged)
		return 0; /* every capability, inside the user namespace */
	for (size_t s = 0; cap_sets[s]; s++) {
		json_t *set = json_object_get(caps, cap_sets[s]);
		if (!set)
			continue;
		if (!json_is_array(set))
			return ward_fail(r->err, 0,
					 "config.json: process.capabilities.%s: expected an array",
					 cap_sets[s]);
		for (size_t i = json_array_size(set); i-- > 0;) {
			const char *cap = json_string_value(json_array_get(set, i));
			if (!cap || strv_has(t->capabilities, cap))
				continue;
			if (!list_has(cri_default_caps, cap))
				return refuse(r, "capabilities",
					      "process.capabilities.%s: %s is not allowed",
					      cap_sets[s], cap);
			if (!strcmp(cap_sets[s], "bounding"))
				note(r,
				     "process.capabilities: dropped %s (not in the tenant's set)",
				     cap);
			json_array_remove(set, i); /* frees cap */
		}
	}
	return 0;
}

/* An rlimit the tenant has no cap for stays within the runtime's own hard limit: the
 * runtime raises a container's hard limits from the host side (as runc does), where its
 * root could not, so an uncapped request would otherwise get whatever it names (e.g.
 * RLIMIT_RTPRIO 99: real-time scheduling without CAP_SYS_NICE, starving other tenants). */
static int uncapped_rlimits(struct run *r, json_t *rl)
{
	const struct ward_tenant *t = r->in->tenant;
	size_t i;
	json_t *e;

	json_array_foreach(rl, i, e)
	{
		const char *type = str_at(e, "type");
		uint64_t lim[2], hard, soft;
		bool capped = false;

		for (size_t k = 0; type && k < t->n_rlimits; k++)
			capped = capped || !strcmp(type, t->rlimits[k].type);
		if (!type || capped)
			continue;
		if (!r->in->host->rlimit || r->in->host->rlimit(r->in->host->arg, type, lim) < 0)
			return refuse(
			    r, "rlimits",
			    "process.rlimits[%zu]: %s: the runtime's own limit is unknown, "
			    "so it cannot be kept within it (give the tenant a cap in "
			    "\"rlimits\")",
			    i, type);
		hard = json_is_integer(json_object_get(e, "hard"))
			   ? (uint64_t)json_integer_value(json_object_get(e, "hard"))
			   : UINT64_MAX;
		soft = json_is_integer(json_object_get(e, "soft"))
			   ? (uint64_t)json_integer_value(json_object_get(e, "soft"))
			   : UINT64_MAX;
		if (hard <= lim[1] && soft <= lim[1])
			continue;
		hard = hard < lim[1] ? hard : lim[1];
		soft = soft < hard ? soft : hard;
		json_object_set_new(e, "hard", json_integer((json_int_t)hard));
		json_object_set_new(e, "soft", json_integer((json_int_t)soft));
		note(r,
		     "process.rlimits: %s kept within the runtime's hard limit %llu (the tenant "
		     "has no cap for it)",
		     type, (unsigned long long)lim[1]);
	}
	return 0;
}

static int rule_rlimits(struct run *r, json_t *proc)
{
	const struct ward_tenant *t = r->in->tenant;
	json_t *rl = arr_at(r, proc, "rlimits", "process.rlimits", t->n_rlimits > 0);

	if (!rl)
		return json_object_get(proc, "rlimits") ? -1 : 0;
	for (size_t k = 0; k < t->n_rlimits; k++) {
		const struct ward_rlimit_cap *cap = &t->rlimits[k];
		bool found = false;
		size_t i;
		json_t *e;
		json_array_foreach(rl, i, e)
		{
			const char *type = str_at(e, "type");
			if (!type || strcmp(type, cap->type))
				continue;
			found = true;
			for (const char *const *f = (const char *const[]){"hard", "soft", NULL}; *f;
			     f++) {
				json_t *v = json_object_get(e, *f);
				if (json_is_integer(v) &&
				    (uint64_t)json_integer_value(v) > cap->max) {
					json_object_set_new(e, *f,
							    json_integer((json_int_t)cap->max));
					note(r, "process.rlimits: %s %s capped at %llu", cap->type,
					     *f, (unsigned long long)cap->max);
				} else if (json_is_real(v) ||
					   (json_is_integer(v) && json_integer_value(v) < 0)) {
					/* RLIM_INFINITY written as a huge number */
					json_object_set_new(e, *f,
							    json_integer((json_int_t)cap->max));
					note(r, "process.rlimits: %s %s capped at %llu", cap->type,
					     *f, (unsigned long long)cap->max);
				}
			}
		}
		if (!found) {
			/* A cap only lowers a limit, never raises one: the pod's process
			 * inherits the runtime's limit, and only one above the cap is lowered
			 * to it (a userns root could not raise it back anyway). */
			uint64_t lim[2]; /* soft, hard, as the runtime has them */
			if (!r->in->host->rlimit ||
			    r->in->host->rlimit(r->in->host->arg, cap->type, lim) < 0) {
				note(r, "process.rlimits: %s not set: the inherited limit stays",
				     cap->type);
				continue;
			}
			if (lim[1] <= cap->max)
				continue;
			json_array_append_new(
			    rl, json_pack("{s:s,s:I,s:I}", "type", cap->type, "hard",
					  (json_int_t)cap->max, "soft",
					  (json_int_t)(lim[0] < cap->max ? lim[0] : cap->max)));
			note(r, "process.rlimits: the inherited %s hard limit %llu lowered to %llu",
			     cap->type, (unsigned long long)lim[1], (unsigned long long)cap->max);
		}
	}
	return uncapped_rlimits(r, rl);
}

static int rule_apparmor(struct run *r, json_t *proc)
{
	const struct ward_tenant *t = r->in->tenant;
	/* copies: deleting the key frees the pod's string */
	cleanup_free char *pod =
	    str_at(proc, "apparmorProfile") ? xstrdup(str_at(proc, "apparmorProfile")) : NULL;
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
	if (!strcmp(want, "unconfined")) {
		json_object_del(proc, "apparmorProfile");
		return 0;
	}
	if (!r->in->apparmor_enabled) {
		if (r->in->cfg->apparmor == WARD_NEED_REQUIRED)
			return refuse(r, "apparmor",
				      "ward.json says AppArmor is required, and this host's kernel "
				      "does not enable AppArmor");
		json_object_del(proc, "apparmorProfile");
		note(r,
		     WARD_NOTE_NO_APPARMOR ": running without the \"%s\" profile (ward.json "
					   "apparmor: optional)",
		     want);
		return 0;
	}
	json_object_set_new(proc, "apparmorProfile", json_string(want));
	return 0;
}

static int rule_process(struct run *r)
{
	json_t *proc = json_object_get(r->spec, "process");

	if (!proc)
		return 0; /* create refuses a spec without one; policy explain shows it */
	if (!json_is_object(proc))
		return ward_fail(r->err, 0, "config.json: process: expected an object");
	if (rule_capabilities(r, proc) < 0 || rule_rlimits(r, proc) < 0 ||
	    rule_apparmor(r, proc) < 0)
		return -1;
	if (!r->in->tenant->allow_new_privileges &&
	    !json_is_true(json_object_get(proc, "noNewPrivileges"))) {
		json_object_set_new(proc, "noNewPrivileges", json_true());
		note(r, "process.noNewPrivileges: forced on");
	}
	return 0;
}

/* ---- seccomp --------------------------------------------------------------------- */

static int rule_seccomp(struct run *r, json_t *lx, json_t *ann)
{
	const char *text = r->privileged ? r->in->seccomp_priv_json : r->in->seccomp_json;
	const char *name =
	    r->privileged ? r->in->tenant->seccomp_privileged : r->in->tenant->seccomp;
	json_t *pod = json_object_get(lx, "seccomp"), *tenant;
	json_error_t je;

	if (!text) {
		note(r, "seccomp: the tenant is unconfined; the pod's own filter (if any) applies");
		return 0;
	}
	tenant = json_loads(text, 0, &je);
	if (!json_is_object(tenant)) {
		json_decref(tenant);
		return ward_fail(r->err, 0, "tenant \"%s\": seccomp profile \"%s\": %s",
				 r->in->tenant->name, name, je.text);
	}
	if (pod && !json_is_null(pod)) {
		char *dump = json_dumps(pod, JSON_COMPACT);
		json_object_set_new(ann, WARD_ANN_POD_SECCOMP, json_string(dump));
		free(dump);
		note(r,
		     "seccomp: the pod's own filter is kept and stacked on the tenant's "
		     "profile \"%s\" (both apply)",
		     name);
	} else {
		note(r, "seccomp: the tenant's profile \"%s\"", name);
	}
	json_object_set_new(lx, "seccomp", tenant);
	return 0;
}

/* ---- paths, sysctls, cgroup ---------------------------------------------------------- */

static int add_paths(struct run *r, json_t *lx, const char *key, const char *const *paths)
{
	json_t *a = arr_at(r, lx, key, key, true);
	unsigned added = 0;

	if (!a)
		return -1;
	for (size_t i = 0; paths[i]; i++) {
		size_t j;
		json_t *e;
		bool have = false;
		json_array_foreach(a, j, e) have |=
		    json_is_string(e) && !strcmp(json_string_value(e), paths[i]);
		if (!have) {
			json_array_append_new(a, json_string(paths[i]));
			added++;
		}
	}
	if (added)
		note(r, "linux.%s: added %u of ward's defaults", key, added);
	return 0;
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

static int rule_sysctl(struct run *r, json_t *lx, json_t *nss)
{
	json_t *sc = json_object_get(lx, "sysctl"), *v;
	const char *k;
	bool net = false, ipc = false, uts = false;

	if (!sc)
		return 0;
	if (!json_is_object(sc))
		return ward_fail(r->err, 0, "config.json: linux.sysctl: expected an object");
	for (int kind = 0; kind < 3; kind++) {
		const char *type = kind == 0 ? "network" : kind == 1 ? "ipc" : "uts";
		json_t *ns = find_ns(nss, type);
		bool host = true;
		if (ns_shares_host(r, ns, kind == 0 ? "net" : type, &host) < 0)
			return -1;
		*(kind == 0 ? &net : kind == 1 ? &ipc : &uts) = !host;
	}
	json_object_foreach(sc, k, v)
	{
		if (strchr(k, '/') || strstr(k, "..") || !sysctl_namespaced(k, net, ipc, uts))
			return refuse(r, "sysctl",
				      "linux.sysctl: \"%s\" is not a sysctl of the pod's own "
				      "namespaces",
				      k);
		if (!json_is_string(v) || strchr(json_string_value(v), '\n'))
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
	json_t *ann = json_object_get(r->spec, "annotations");
	const char *uid =
	    r->in->pod_uid ? r->in->pod_uid : str_at(ann, "io.kubernetes.cri.sandbox-uid");
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

static int rule_cgroup(struct run *r, json_t *lx)
{
	cleanup_free char *cp =
	    str_at(lx, "cgroupsPath") ? xstrdup(str_at(lx, "cgroupsPath")) : NULL;
	cleanup_free char *mapped = NULL;
	cleanup_free char *path = NULL;
	struct ward_err e = {0};
	const char *rel;

	if (json_object_get(lx, "cgroupsPath") && !cp)
		return ward_fail(r->err, 0, "config.json: linux.cgroupsPath: expected a string");
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
	if (kubelet_pod_cgroup(r, rel)) {
		path = xasprintf("/%s", rel);
		json_object_set_new(lx, "cgroupsPath", json_string(path));
		note(r, "linux.cgroupsPath: %s (this pod's kubelet pod cgroup, kept)", path);
		return 0;
	}
	path = xasprintf("/ward/%s/%s", r->in->tenant->name, rel);
	json_object_set_new(lx, "cgroupsPath", json_string(path));
	if (mapped)
		note(r, "linux.cgroupsPath: %s (systemd %s, below the tenant's cgroup)", path, cp);
	else
		note(r, "linux.cgroupsPath: %s (below the tenant's cgroup)", path);
	return 0;
}

/* ---- the pod's hooks ---------------------------------------------------------------- */

static const char *const hook_kinds[] = {
    "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
    NULL};

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
 * CDI hooks). The GPU hook is added after this rule (the audit lines: container.c). */
static int rule_hooks(struct run *r)
{
	const struct ward_tenant *t = r->in->tenant;
	json_t *hooks = json_object_get(r->spec, "hooks"), *list;
	const char *kind;

	if (!hooks || json_is_null(hooks))
		return 0;
	if (!json_is_object(hooks))
		return ward_fail(r->err, 0, "config.json: hooks: expected an object");
	json_object_foreach(hooks, kind, list)
	{
		size_t i;
		json_t *h;

		if (!list_has(hook_kinds, kind))
			return refuse(r, "hooks",
				      "hooks.%s: not an OCI hook kind (prestart, createRuntime, "
				      "createContainer, startContainer, poststart, poststop)",
				      kind);
		if (!json_is_array(list))
			return ward_fail(r->err, 0, "config.json: hooks.%s: expected an array",
					 kind);
		json_array_foreach(list, i, h)
		{
			const char *path = str_at(h, "path");
			json_t *env = json_object_get(h, "env"), *e;
			size_t j;

			if (!path)
				return ward_fail(
				    r->err, 0,
				    "config.json: hooks.%s[%zu]: expected an object with "
				    "a path",
				    kind, i);
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
			json_array_foreach(env, j, e) if (json_is_string(e) &&
							  hook_env_unsafe(json_string_value(e)))
			{
				const char *kv = json_string_value(e);
				return refuse(r, "hooks",
					      "hooks.%s[%zu] (%s): env[%zu]: %.*s is not passed to "
					      "a program that runs as host root",
					      kind, i, path, j, (int)strcspn(kv, "="), kv);
			}
			note(r, "hooks.%s[%zu]: %s kept (in the tenant's hook allow-list)", kind, i,
			     path);
		}
	}
	return 0;
}

/* ---- the audit hook --------------------------------------------------------------------- */

static json_t *audit_hook(const struct ward_config *cfg, const char *event, const char *root,
			  const char *seccomp)
{
	json_t *args = json_pack("[s,s]", "ward-audit-hook", event);

	hook_args(args, "--root", root ? root : "/run/ward");
	hook_args(args, "--audit-dir", cfg->audit_dir);
	hook_args(args, "--seccomp", seccomp ? seccomp : "pod");
	/* A fixed environment, as the GPU hooks: nothing of the container's reaches it. */
	return json_pack("{s:s,s:o,s:[s]}", "path", cfg->audit_hook, "args", args, "env",
			 "PATH=/usr/sbin:/usr/bin:/sbin:/bin");
}

/* hooks.KIND of spec, an array (created if missing). */
static json_t *hook_list(json_t *spec, const char *kind, struct ward_err *err)
{
	json_t *hooks = json_object_get(spec, "hooks"), *list;

	if (!hooks) {
		hooks = json_object();
		json_object_set_new(spec, "hooks", hooks);
	}
	if (!json_is_object(hooks)) {
		ward_fail(err, 0, "config.json: hooks: expected an object");
		return NULL;
	}
	if (!(list = json_object_get(hooks, kind))) {
		list = json_array();
		json_object_set_new(hooks, kind, list);
	}
	if (!json_is_array(list)) {
		ward_fail(err, 0, "config.json: hooks.%s: expected an array", kind);
		return NULL;
	}
	return list;
}

int ward_policy_audit_hooks(const struct ward_config *cfg, json_t *spec, const char *state_root,
			    const char *seccomp, struct ward_err *err)
{
	json_t *cr = hook_list(spec, "createRuntime", err), *ps, *pst;

	if (!cr || !(ps = hook_list(spec, "poststart", err)) ||
	    !(pst = hook_list(spec, "poststop", err)))
		return -1;
	/* After the pod's own hooks (which keep their indexes in error messages) and the GPU
	 * hook: the create line is written once everything but the container's program is in
	 * place. */
	json_array_append_new(cr, audit_hook(cfg, "create", state_root, seccomp));
	json_array_append_new(ps, audit_hook(cfg, "start", state_root, seccomp));
	/* Last at delete: after the GPU release (and its wipe events). */
	json_array_append_new(pst, audit_hook(cfg, "delete", state_root, seccomp));
	return 0;
}

/* ---- the whole ------------------------------------------------------------------------ */

json_t *ward_policy_apply(const struct ward_policy_in *in, json_t *pod, char ***notes,
			  struct ward_err *err)
{
	struct run r = {.in = in, .notes = notes, .err = err};
	json_t *lx, *nss, *ann;

	if (notes && !*notes)
		*notes = xcalloc(1, sizeof(char *));
	if (!json_is_object(pod)) {
		ward_fail(err, 0, "config.json: expected a JSON object");
		return NULL;
	}
	/* Default deny: a field with no decision, or a refused one, stops here. */
	if (ward_policy_check_fields(pod, in->tenant->name, err) < 0)
		return NULL;
	r.spec = json_deep_copy(pod);
	r.privileged = ward_policy_is_privileged(pod);
	if (r.privileged && !in->tenant->privileged) {
		refuse(
		    &r, "privileged",
		    "the pod asks for CAP_SYS_ADMIN (a privileged pod), which the tenant does not "
		    "allow");
		goto fail;
	}
	if (r.privileged)
		note(&r,
		     "privileged pod: every capability inside its user namespace, the \"%s\" "
		     "seccomp profile, no host devices or namespaces",
		     in->tenant->seccomp_privileged);
	if (!(ann = obj_at(&r, r.spec, "annotations", "annotations")) ||
	    !(lx = obj_at(&r, r.spec, "linux", "linux")) ||
	    !(nss = arr_at(&r, lx, "namespaces", "linux.namespaces", true)))
		goto fail;
	if (rule_annotations(&r, ann) < 0 || rule_hooks(&r) < 0 || rule_root(&r) < 0 ||
	    rule_host_namespaces(&r, nss) < 0 || rule_user_namespace(&r, lx, nss) < 0 ||
	    rule_mounts(&r) < 0 || rule_gpus(&r, lx) < 0 || rule_devices(&r, lx) < 0 ||
	    grant_gpus(&r, lx, ann) < 0 || rule_process(&r) < 0 || rule_seccomp(&r, lx, ann) < 0 ||
	    add_paths(&r, lx, "maskedPaths", ward_policy_masked_paths) < 0 ||
	    add_paths(&r, lx, "readonlyPaths", ward_policy_readonly_paths) < 0 ||
	    rule_sysctl(&r, lx, nss) < 0 || rule_cgroup(&r, lx) < 0)
		goto fail;
	if (r.n_gpus)
		unmask_proc_driver(&r, lx);
	if (in->tenant->idmap_rootfs) {
		json_object_set_new(ann, WARD_ANN_ROOTFS_IDMAP, json_string("true"));
		note(&r, "root: idmapped to the pod's user namespace");
	}
	free(r.gpus);
	free(r.root);
	return r.spec;
fail:
	free(r.gpus);
	free(r.root);
	json_decref(r.spec);
	return NULL;
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
