#include "selfexe.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

#define WARD_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static bool is_sealed(int fd)
{
	int seals = fcntl(fd, F_GET_SEALS);
	return seals >= 0 && (seals & WARD_SEALS) == WARD_SEALS;
}

int ward_selfexe_ensure_sealed(char **argv, char **envp, struct ward_err *err)
{
	cleanup_fd int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	cleanup_fd int mfd = -1;
	struct stat st;
	off_t off = 0;

	if (self < 0)
		return ward_fail_errno(err, "open /proc/self/exe");
	if (is_sealed(self))
		return 0;
	if (fstat(self, &st) < 0)
		return ward_fail_errno(err, "stat /proc/self/exe");
	mfd = memfd_create("ward", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return ward_fail_errno(err, "memfd_create");
	while (off < st.st_size) {
		ssize_t n = sendfile(mfd, self, &off, (size_t)(st.st_size - off));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ward_fail_errno(err, "copy ward binary into memfd");
	}
	if (fcntl(mfd, F_ADD_SEALS, WARD_SEALS) < 0)
		return ward_fail_errno(err, "seal memfd");
	syscall(SYS_execveat, mfd, "", argv, envp, AT_EMPTY_PATH);
	return ward_fail_errno(err, "re-exec sealed ward binary");
}
