/* `ward features`: the OCI features document, built from the tables the code uses. */
#include "features.h"

#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apparmor.h"
#include "caps.h"
#include "hooks.h"
#include "mount.h"
#include "seccomp.h"
#include "spec.h"
#include "util.h"

#ifndef WARD_VERSION
#define WARD_VERSION "dev"
#endif

/* Keys (or prefixes ending in '.') of annotations that change how ward sets things up. */
static const char *const unsafe_annotations[] = {"ward.dev/", NULL};

/* Namespace types ward creates and joins, in the order the document lists them. */
static const int namespace_flags[] = {
    CLONE_NEWCGROUP, CLONE_NEWIPC,  CLONE_NEWNS,   CLONE_NEWNET,
    CLONE_NEWPID,    CLONE_NEWTIME, CLONE_NEWUSER, CLONE_NEWUTS,
};

static json_t *str_array(const char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *enabled(bool on)
{
	return json_pack("{s:b}", "enabled", on);
}

static json_t *linux_features(void)
{
	json_t *ns = json_array(), *caps = json_array(), *seccomp, *cgroup;

	for (size_t i = 0; i < ARRAY_SIZE(namespace_flags); i++) {
		const char *n = ward_ns_type_name(namespace_flags[i]);
		if (n)
			json_array_append_new(ns, json_string(n));
	}
	for (int cap = 0; cap <= ward_caps_last(); cap++) {
		const char *n = ward_caps_name(cap);
		if (n)
			json_array_append_new(caps, json_string(n));
	}
	cgroup = json_pack("{s:b,s:b,s:b,s:b,s:b}", "v1", 0, "v2", 1, "systemd", 0, "systemdUser",
			   0, "rdma", 1); /* rdma.max from linux.resources.rdma */
	seccomp =
	    json_pack("{s:b,s:o,s:o,s:o,s:o,s:o}", "enabled", 1, "actions",
		      str_array(ward_seccomp_action_names), "operators",
		      str_array(ward_seccomp_op_names), "archs", str_array(ward_seccomp_arch_names),
		      "knownFlags", str_array(ward_seccomp_known_flags), "supportedFlags",
		      str_array(ward_seccomp_supported_flags));
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:{s:o}}", "namespaces", ns, "capabilities",
			 caps, "cgroup", cgroup, "seccomp", seccomp, "apparmor",
			 enabled(ward_apparmor_enabled()), "selinux", enabled(false), "intelRdt",
			 enabled(false), "mountExtensions", "idmap",
			 enabled(ward_mount_idmap_supported()));
}

char *ward_features_json(void)
{
	const struct scmp_version *v = seccomp_version();
	json_t *hooks = json_array(), *doc;
	char libseccomp[32];
	char *text, *out;

	for (int k = 0; k < WARD_HOOK__COUNT; k++)
		json_array_append_new(hooks,
				      json_string(ward_hook_kind_name((enum ward_hook_kind)k)));
	snprintf(libseccomp, sizeof(libseccomp), "%u.%u.%u", v->major, v->minor, v->micro);
	doc = json_pack("{s:s,s:s,s:o,s:o,s:o,s:{s:s,s:s},s:o}", "ociVersionMin", "1.0.0",
			"ociVersionMax", WARD_OCI_VERSION, "hooks", hooks, "mountOptions",
			str_array(ward_mount_option_names()), "linux", linux_features(),
			"annotations", "io.github.seccomp.libseccomp.version", libseccomp,
			"dev.ward.version", WARD_VERSION, "potentiallyUnsafeConfigAnnotations",
			str_array(unsafe_annotations));
	if (!doc)
		return NULL;
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	if (!text)
		return NULL;
	out = xasprintf("%s\n", text);
	free(text);
	return out;
}
