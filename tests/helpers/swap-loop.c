/* swap-loop A B: exchange the names A and B (renameat2 RENAME_EXCHANGE) in a loop until
 * killed, as a hostile pod that can write inside an allowed host path does to swap a
 * directory with a symlink while another pod binds it (tests/security/host-paths.bats). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: swap-loop A B\n");
		return 2;
	}
	for (;;)
		if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) <
		    0) {
			perror("renameat2");
			return 1;
		}
}
