/* The fake host the policy tests run against (struct ward_policy_host, policy.h): shared by
 * tests/unit/test_policy.c, tests/unit/test_policy_fields.c and tests/fuzz/fuzz_policy.c.
 *
 *   namespaces   /proc/1/... is the host's, anything else the pod's own
 *   user ns      a path with "inside" maps the pod's range (1000000), anything else another
 *   host paths   every path is a directory, "." and ".." folded as realpath would; a path
 *                with "missing" does not exist (ENOENT), /srv/a/link is a symlink to /etc,
 *                /srv/a/disk a block device, /srv/a/file a regular file
 *   devices      /dev/fuse is c 10:229, any other c 195:0
 *   rlimits      (FAKE_POLICY_HOST_RLIMITS) the runtime's: NOFILE soft 1024, hard
 *                fake_nofile_hard (20000, as containerd's on these machines); RTPRIO 0;
 *                every other RLIMIT_* unlimited
 *   storage      containers/storage: container "c1"'s layer is "l1" (fake_storage_layer) */
#ifndef WARD_TESTS_POLICY_HOST_H
#define WARD_TESTS_POLICY_HOST_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "path.h"
#include "policy.h"
#include "spec.h"
#include "spec_json.h"
#include "util.h"

static inline int fake_ns_is_host(void *arg, const char *path, const char *kind,
				  struct ward_err *err)
{
	(void)arg;
	(void)kind;
	(void)err;
	return !strncmp(path, "/proc/1/", 8);
}

static inline int fake_envelope(void *arg, const char *path, uint64_t uid[2], uint64_t gid[2],
				struct ward_err *err)
{
	(void)arg;
	(void)err;
	/* "/ns/inside" maps the pod's range, anything else someone else's */
	uint64_t base = strstr(path, "inside") ? 1000000 : 2000000;
	uid[0] = gid[0] = base;
	uid[1] = gid[1] = base + 65536;
	return 0;
}

static inline char *fake_resolve(void *arg, const char *path, mode_t *mode, struct ward_err *err)
{
	(void)arg;
	if (strstr(path, "missing")) {
		ward_fail(err, ENOENT, "%s", path);
		return NULL;
	}
	*mode = S_IFDIR | 0755;
	if (!strcmp(path, "/srv/a/link"))
		return xstrdup("/etc"); /* a symlink out of the allowed prefix */
	if (!strcmp(path, "/srv/a/disk"))
		*mode = S_IFBLK | 0600;
	else if (!strcmp(path, "/srv/a/file"))
		*mode = S_IFREG | 0644;
	/* As realpath would: "." and ".." folded. */
	return ward_path_clean(path);
}

static inline int fake_device(void *arg, const char *path, char *type, int64_t *major,
			      int64_t *minor, struct ward_err *err)
{
	(void)arg;
	(void)err;
	*type = 'c';
	*major = !strcmp(path, "/dev/fuse") ? 10 : 195;
	*minor = !strcmp(path, "/dev/fuse") ? 229 : 0;
	return 0;
}

static uint64_t fake_nofile_hard __attribute__((unused)) = 20000;
static inline int fake_rlimit(void *arg, const char *type, uint64_t lim[2])
{
	(void)arg;
	if (!strcmp(type, "RLIMIT_NOFILE")) {
		lim[0] = 1024;
		lim[1] = fake_nofile_hard;
	} else if (!strcmp(type, "RLIMIT_RTPRIO")) {
		lim[0] = lim[1] = 0; /* as a host's root has it */
	} else if (!strncmp(type, "RLIMIT_", 7)) {
		lim[0] = lim[1] = UINT64_MAX; /* unlimited (RLIM_INFINITY) */
	} else {
		return -1;
	}
	return 0;
}

/* containers/storage: container "c1" has layer "l1", no other container a layer; a graph
 * root with "broken" in it cannot be read. */
static inline int fake_storage_layer(void *arg, const char *graph_root, const char *run_root,
				     const char *id, char **layer, struct ward_err *err)
{
	(void)arg;
	(void)run_root;
	*layer = NULL;
	if (strstr(graph_root, "broken"))
		return ward_fail(err, EIO, "containers/storage %s: unreadable", graph_root);
	if (!strcmp(id, "c1"))
		*layer = xstrdup("l1");
	return 0;
}

/* The first members of the policy's input (struct ward_policy_in) for container "c1" of
 * tenant in pod "a", with the host IDs 1000000+65536; the test sets the rest (.host, the
 * seccomp profiles, ...). */
#define FAKE_POLICY_IN(cfg_, tenant_)                                                              \
	.cfg = (cfg_), .tenant = ward_config_tenant((cfg_), (tenant_)), .container_id = "c1",      \
	.bundle = "/b", .ids = {1000000, 65536}, .ids_owner = "pod:a/c1"

/* The fake host, with the runtime's rlimits. */
#define FAKE_POLICY_HOST_RLIMITS                                                                   \
	{                                                                                          \
		fake_ns_is_host, fake_envelope, fake_resolve, fake_device, NULL, fake_rlimit,      \
		    fake_storage_layer                                                             \
	}

/* The policy at its JSON edge, as create runs it (the every-field gate, one decoding into
 * the typed spec, the policy, the whole-document checks), its effective spec serialized as
 * the state keeps it: the tests' JSON fixtures in, JSON out. */
static inline json_t *policy_apply_to_json(const struct ward_policy_in *in, json_t *pod,
					   char ***notes, struct ward_err *err)
{
	struct ward_spec *s = ward_policy_apply_json(in, pod, notes, NULL, err);
	json_t *o = s ? ward_spec_to_json(s) : NULL;

	ward_spec_free(s);
	return o;
}

#endif
