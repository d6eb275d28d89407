/* ward-audit-hook: the lifecycle half of ward's audit trail (see man 8 ward-audit-hook).
 *
 *   create   OCI createRuntime hook (registered first): a "create" line
 *   start    OCI poststart hook: a "start" line
 *   delete   OCI poststop hook (registered last): an "exit" line, then a "delete" line
 *
 * ward's policy pass registers it for every container with a fixed environment and
 * --root (ward's state root) --audit-dir DIR --seccomp NAME. The fields come from ward's
 * own effective config.json in <root>/<id>/ (never from the bundle, which the pod wrote)
 * and the state JSON on stdin (id, pid, bundle). A line that cannot be written fails the
 * hook: at create, the create fails; at start, the container is stopped; at delete, ward
 * warns. Errors are one line on stderr ("ward-audit-hook: ..."), exit status 1. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "err.h"
#include "hooks.h"
#include "spec.h"
#include "state.h"
#include "util.h"

struct opts {
	const char *root, *audit_dir, *seccomp;
};

static void usage(FILE *f)
{
	fputs("usage: ward-audit-hook create|start|delete --root DIR --audit-dir DIR "
	      "[--seccomp NAME]\n"
	      "       (the OCI state JSON on stdin)\n",
	      f);
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	    {"root", required_argument, NULL, 'r'},
	    {"audit-dir", required_argument, NULL, 'a'},
	    {"seccomp", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	*o = (struct opts){.root = WARD_DEFAULT_ROOT, .audit_dir = WARD_AUDIT_DEFAULT_DIR};
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->root = optarg;
			break;
		case 'a':
			o->audit_dir = optarg;
			break;
		case 's':
			o->seccomp = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
}

/* ward's effective config.json of the container, from its state dir. */
static json_t *effective_spec(const char *root, const char *id, struct ward_err *err)
{
	cleanup_fd int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_fd int dirfd = -1;
	cleanup_free char *text = NULL;
	json_error_t je;
	json_t *spec;
	size_t len;

	if (rootfd < 0 ||
	    (dirfd = openat(rootfd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		ward_fail_errno(err, "state of container \"%s\" in %s", id, root);
		return NULL;
	}
	if (!(text = read_file_at(dirfd, WARD_CONFIG_JSON, &len, err))) {
		ward_wrap(err, "container \"%s\"", id);
		return NULL;
	}
	spec = json_loadb(text, len, 0, &je);
	if (!json_is_object(spec)) {
		json_decref(spec);
		ward_fail(err, 0, "container \"%s\": effective config.json: %s", id, je.text);
		return NULL;
	}
	return spec;
}

static int emit(const struct opts *o, const char *tenant, json_t *base, const char *event,
		struct ward_err *err)
{
	json_t *ev = json_pack("{s:s}", "event", event);
	int rc;

	json_object_update(ev, base);
	rc = ward_audit_write_dir(o->audit_dir, tenant, ev, err);
	json_decref(ev);
	return rc;
}

static int run(const char *cmd, const struct opts *o, struct ward_err *err)
{
	json_t *st, *spec, *base;
	const char *id, *tenant;
	json_t *pid;
	int rc;

	if (!(st = ward_hook_read_state(0, false, err)))
		return -1;
	id = json_string_value(json_object_get(st, "id"));
	if (!(spec = effective_spec(o->root, id, err))) {
		json_decref(st);
		return -1;
	}
	base = json_pack("{s:s}", "container", id);
	if (json_is_string(json_object_get(st, "bundle")))
		json_object_set(base, "bundle", json_object_get(st, "bundle"));
	tenant = ward_audit_spec_fields(base, spec);
	json_object_set_new(base, "seccomp", json_string(o->seccomp ? o->seccomp : "pod"));
	pid = json_object_get(st, "pid");
	if (json_is_integer(pid) && json_integer_value(pid) > 0)
		json_object_set(base, "pid", pid);

	if (!strcmp(cmd, "create") || !strcmp(cmd, "start")) {
		rc = emit(o, tenant, base, cmd, err);
	} else {
		/* The init's exit status, when the process that reaped it (`ward run`, the
		 * shim) passed it to `ward delete`; else null: nobody knows it. */
		json_t *xi = json_object_get(json_object_get(st, WARD_OWN_KEY), "exitStatus");
		const char *xs = json_string_value(
		    json_object_get(json_object_get(st, "annotations"), WARD_ANN_EXIT_STATUS));
		uint64_t xv;
		json_t *ex = json_deep_copy(base);
		if (json_is_integer(xi)) /* ward's own field; an older ward's annotation */
			json_object_set(ex, "exit_status", xi);
		else
			json_object_set_new(ex, "exit_status",
					    xs && parse_u64(xs, &xv) == 0
						? json_integer((json_int_t)xv)
						: json_null());
		rc = emit(o, tenant, ex, "exit", err);
		json_decref(ex);
		if (rc == 0)
			rc = emit(o, tenant, base, "delete", err);
	}
	json_decref(base);
	json_decref(spec);
	json_decref(st);
	return rc;
}

int main(int argc, char **argv)
{
	struct ward_err err = {0};
	struct opts o;
	const char *cmd;

	/* Nothing of the caller's: no cwd inside a container, a umask of our own. */
	if (chdir("/") < 0)
		return 1;
	umask(077);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "create") && strcmp(cmd, "start") && strcmp(cmd, "delete")) {
		fprintf(stderr, "ward-audit-hook: unknown event \"%s\"\n", cmd);
		usage(stderr);
		return 2;
	}
	if (parse(argc - 1, argv + 1, &o) < 0)
		return 2;
	if (run(cmd, &o, &err) < 0) {
		fprintf(stderr, "ward-audit-hook: %s\n", err.msg);
		return 1;
	}
	return 0;
}
