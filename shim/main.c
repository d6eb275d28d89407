/* containerd-shim-ward-v2: containerd's runtime v2 shim for ward.
 *   <shim> [flags] start    find or start the pod's shim, print its address
 *   <shim> [flags] delete   clean up one container, print a DeleteResponse
 *   <shim> [flags]          the serving process (started by `start`, listener on fd 3)
 * Flags: -namespace NS -address ADDR -publish-binary PATH -id ID -bundle DIR -debug -v */
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
		printf("containerd-shim-ward-v2:\n  Version:  %s\n  Revision: %s\n", WARD_VERSION,
		       WARD_COMMIT);
		return 0;
	case SHIM_INFO:
		fputs("containerd-shim-ward-v2: -info is not implemented\n", stderr);
		return 1;
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
