/* containerd-shim-ward-v2: containerd's runtime v2 shim for ward.
 *   <shim> [flags] start    find or start the pod's shim, print its address
 *   <shim> [flags] delete   clean up one container, print a DeleteResponse
 *   <shim> [flags]          the serving process (started by `start`, listener on fd 3)
 *   <shim> -v               print the version
 *   <shim> -info            print a containerd.types.RuntimeInfo (protobuf) for containerd 2.2+
 * Flags: -namespace NS -address ADDR -publish-binary PATH -id ID -bundle DIR -debug -v -info;
 * unknown flags (newer containerd's -debug-socket, ...) are ignored. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "bootstrap.h"

static int fail(const char *what, const struct ward_err *err)
{
	fprintf(stderr, "containerd-shim-ward-v2: %s%s%s\n", what, *what ? ": " : "", err->msg);
	return 1;
}

int main(int argc, char **argv)
{
	struct shim_opts o;
	struct ward_err err = {0};
	char bundle[PATH_MAX];

	if (shim_parse_args(argc, argv, &o, bundle, sizeof(bundle), &err) < 0)
		return fail("", &err);
	switch (o.action) {
	case SHIM_VERSION:
		/* as the Go shims print it, with the compiler in place of the Go version */
		printf(
		    "containerd-shim-ward-v2:\n  Version:  %s\n  Revision: %s\n  C compiler: %s\n",
		    WARD_VERSION, WARD_COMMIT, __VERSION__);
		return fflush(stdout) == 0 ? 0 : 1;
	case SHIM_INFO:
		return shim_info(&err) < 0 ? fail("info", &err) : 0;
	case SHIM_START:
		return shim_start(&o, argv, &err) < 0 ? fail("start", &err) : 0;
	case SHIM_DELETE:
		return shim_delete(&o, &err) < 0 ? fail("delete", &err) : 0;
	case SHIM_SERVE:
		break;
	}
	int rc = shim_daemon(&o, &err);
	return rc < 0 ? fail("serve", &err) : rc;
}
