/* cgprobe: what a workload inside a container does to meet its cgroup limits. Linked
 * statically: the test rootfs is busybox only (tests/vm copies it into bundles).
 *
 *   cgprobe hugetlb N   map N anonymous 2 MiB huge pages (MAP_HUGETLB | MAP_HUGE_2MB) and
 *                       write to each. Prints "mapped N", exit 0, when every page was faulted
 *                       in; "mmap: ERROR", exit 1, when the mapping is refused (no free huge
 *                       pages, or the reservation limit hugetlb.2MB.rsvd.max); "SIGBUS at page
 *                       I", exit 2, when a page cannot be faulted in (hugetlb.2MB.max).
 *   cgprobe memhog MIB  allocate MIB MiB of anonymous memory, write to every page, print
 *                       "allocated MIB" and wait (until killed: an OOM kill shows as SIGKILL).
 *                       "mmap: ERROR", exit 1, when the allocation is refused. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif

#define MIB	 (1UL << 20)
#define HUGE_2MB (2 * MIB)

static sigjmp_buf env;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

static int hugetlb(long n)
{
	struct sigaction sa = {.sa_handler = on_sigbus};
	volatile long i = 0;
	char *p = mmap(NULL, (size_t)n * HUGE_2MB, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB, -1, 0);
	if (p == MAP_FAILED) {
		printf("mmap: %s\n", strerror(errno));
		return 1;
	}
	sigaction(SIGBUS, &sa, NULL);
	if (sigsetjmp(env, 1)) {
		printf("SIGBUS at page %ld\n", (long)i);
		return 2;
	}
	for (i = 0; i < n; i++)
		memset(p + (size_t)i * HUGE_2MB, 0x5a, HUGE_2MB);
	printf("mapped %ld\n", n);
	return 0;
}

static int memhog(long mib)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)mib * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED) {
		printf("mmap: %s\n", strerror(errno));
		return 1;
	}
	for (size_t off = 0; off < (size_t)mib * MIB; off += (size_t)page)
		p[off] = 1;
	printf("allocated %ld\n", mib);
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	char *end;
	long n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3 || (n = strtol(argv[2], &end, 10)) <= 0 || *end || n > 65536) {
		fprintf(stderr, "usage: cgprobe hugetlb N | cgprobe memhog MIB\n");
		return 3;
	}
	if (!strcmp(argv[1], "hugetlb"))
		return hugetlb(n);
	if (!strcmp(argv[1], "memhog"))
		return memhog(n);
	fprintf(stderr, "cgprobe: unknown probe \"%s\"\n", argv[1]);
	return 3;
}
