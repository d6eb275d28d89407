/* AppArmor: host support, loading ward-default from the copy embedded below, and the exec
 * label of container processes (written to this thread's attr file, applied at execve). */
#include "apparmor.h"

#include <stdint.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "sys.h"
#include "util.h"

#define AA_ENABLED  "/sys/module/apparmor/parameters/enabled"
#define AA_FS	    "/sys/kernel/security/apparmor"
#define AA_PROFILES AA_FS "/profiles"
#define PARSER	    "apparmor_parser"

/* The profile text, runtime/apparmor/ward-default, linked into .rodata (the path is
 * relative to the directory make runs in; the Makefile rebuilds this object when the file
 * changes). A NUL follows it. */
__asm__(".pushsection .rodata.ward_apparmor_default, \"a\", @progbits\n"
	".hidden ward_apparmor_default_start\n"
	".hidden ward_apparmor_default_end\n"
	"ward_apparmor_default_start:\n"
	".incbin \"runtime/apparmor/ward-default\"\n"
	"ward_apparmor_default_end:\n"
	".byte 0\n"
	".popsection\n");
extern const char ward_apparmor_default_start[] __attribute__((visibility("hidden")));
extern const char ward_apparmor_default_end[] __attribute__((visibility("hidden")));

const char *ward_apparmor_default_text(size_t *len)
{
	*len = (size_t)(ward_apparmor_default_end - ward_apparmor_default_start);
	return ward_apparmor_default_start;
}

bool ward_apparmor_enabled(void)
{
	char buf[4] = "";
	struct stat st;
	cleanup_fd int fd = open(AA_ENABLED, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0 || buf[0] != 'Y')
		return false;
	return stat(AA_FS, &st) == 0 && S_ISDIR(st.st_mode);
}

bool ward_apparmor_is_unconfined(const char *profile)
{
	return !profile || !*profile || !strcmp(profile, "unconfined");
}

/* A name that "exec NAME" carries unambiguously: no spaces, no control characters. */
static int check_name(const char *profile, struct ward_err *err)
{
	size_t n = strlen(profile);
	if (n > 255)
		return ward_fail(err, 0, "AppArmor profile name is longer than 255 bytes");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)profile[i] <= ' ' || profile[i] == 0x7f)
			return ward_fail(err, 0,
					 "AppArmor profile name contains a space or a control "
					 "character");
	return 0;
}

bool ward_apparmor_list_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *l = list; l && *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		/* "name (mode)": the name is everything before the last " (" */
		const char *mode = NULL;
		for (const char *p = l; p + 1 < l + len; p++)
			if (p[0] == ' ' && p[1] == '(')
				mode = p;
		if (mode && (size_t)(mode - l) == n && !strncmp(l, name, n))
			return true;
		l = end ? end + 1 : l + len;
	}
	return false;
}

static int is_loaded(const char *profile, bool *loaded, struct ward_err *err)
{
	size_t len;
	cleanup_free char *list = read_file_at(AT_FDCWD, AA_PROFILES, &len, err);
	if (!list)
		return ward_wrap(err, "list the loaded AppArmor profiles");
	*loaded = ward_apparmor_list_has(list, profile);
	return 0;
}

/* apparmor_parser from PATH (absolute entries only), else the usual sbin directories. */
static char *find_parser(void)
{
	const char *path = getenv("PATH");
	cleanup_free char *dirs = xasprintf("%s:/usr/sbin:/sbin:/usr/local/sbin", path ? path : "");
	char *save = NULL;

	for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *cand;
		struct stat st;
		if (d[0] != '/')
			continue;
		cand = xasprintf("%s/%s", d, PARSER);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
	}
	return NULL;
}

/* The parser's output as one line for an error message (at most the last 300 bytes). */
static char *output_line(int fd)
{
	char buf[301];
	off_t end = lseek(fd, 0, SEEK_END);
	off_t from = end > 300 ? end - 300 : 0;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, from);
	size_t len = n > 0 ? (size_t)n : 0;

	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\n')
			buf[i] = ';';
	return xstrdup(buf);
}

/* apparmor_parser --replace with the embedded text on stdin, output kept for the error. */
static int load_default(struct ward_err *err)
{
	size_t len;
	const char *text = ward_apparmor_default_text(&len);
	cleanup_free char *parser = find_parser();
	cleanup_free char *out_text = NULL;
	cleanup_fd int in = -1;
	cleanup_fd int out = -1;
	char *argv[] = {NULL, "--replace", "--skip-cache", NULL};
	char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t sigs;
	pid_t pid;
	int rc, status;

	if (!parser)
		return ward_fail(err, ENOENT,
				 "load the " WARD_APPARMOR_DEFAULT " profile: " PARSER
				 " is not installed (not in PATH, /usr/sbin or /sbin; Debian and "
				 "Ubuntu package: apparmor)");
	in = memfd_create("ward-default", MFD_CLOEXEC);
	out = memfd_create("apparmor_parser-output", MFD_CLOEXEC);
	if (in < 0 || out < 0)
		return ward_fail_errno(err, "load the " WARD_APPARMOR_DEFAULT " profile: memfd");
	if (write_all(in, text, len) < 0 || lseek(in, 0, SEEK_SET) < 0)
		return ward_fail_errno(err, "load the " WARD_APPARMOR_DEFAULT " profile: memfd");

	argv[0] = parser;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in, STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out, STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out, STDERR_FILENO);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	sigemptyset(&sigs);
	posix_spawnattr_setsigmask(&attr, &sigs);
	sigfillset(&sigs);
	posix_spawnattr_setsigdefault(&attr, &sigs);
	rc = posix_spawn(&pid, parser, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0)
		return ward_fail(err, rc, "load the " WARD_APPARMOR_DEFAULT " profile: run %s",
				 parser);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return ward_fail_errno(
			    err, "load the " WARD_APPARMOR_DEFAULT " profile: wait for %s", parser);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	out_text = output_line(out);
	if (WIFSIGNALED(status))
		return ward_fail(err, 0,
				 "load the " WARD_APPARMOR_DEFAULT
				 " profile: %s --replace was killed by signal %d: %s",
				 parser, WTERMSIG(status), out_text);
	return ward_fail(err, 0,
			 "load the " WARD_APPARMOR_DEFAULT
			 " profile: %s --replace exited with status %d: %s",
			 parser, WEXITSTATUS(status), out_text);
}

/* /run/ward/apparmor-ward-default.<hash of the built-in text>: this ward's profile is the
 * one the kernel holds. A ward upgrade with another profile finds no stamp and replaces the
 * loaded profile once; a reboot clears /run and the kernel's profiles together. */
static void default_stamp(char *buf, size_t len)
{
	size_t n;
	const char *t = ward_apparmor_default_text(&n);
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)t[i]) * 1099511628211ull;
	snprintf(buf, len, "/run/ward/apparmor-%s.%016llx", WARD_APPARMOR_DEFAULT,
		 (unsigned long long)h);
}

static void write_stamp(const char *stamp)
{
	int fd;
	if (mkdir("/run/ward", 0711) < 0 && errno != EEXIST)
		return;
	fd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0)
		close(fd);
}

int ward_apparmor_ensure_loaded(const char *profile, struct ward_err *err)
{
	char stamp[128];
	bool loaded;

	if (check_name(profile, err) < 0 || is_loaded(profile, &loaded, err) < 0)
		return -1;
	if (loaded && strcmp(profile, WARD_APPARMOR_DEFAULT) == 0) {
		default_stamp(stamp, sizeof(stamp));
		if (access(stamp, F_OK) == 0)
			return 0;
		ward_debug("replacing the loaded AppArmor profile %s with this ward's",
			   WARD_APPARMOR_DEFAULT);
		if (load_default(err) < 0)
			return -1;
		write_stamp(stamp);
		return 0;
	}
	if (loaded)
		return 0;
	if (strcmp(profile, WARD_APPARMOR_DEFAULT) != 0)
		return ward_fail(err, ENOENT,
				 "AppArmor profile \"%s\" is not loaded (ward loads only %s by "
				 "itself; load this one with apparmor_parser)",
				 profile, WARD_APPARMOR_DEFAULT);
	ward_debug("loading the AppArmor profile %s", WARD_APPARMOR_DEFAULT);
	if (load_default(err) < 0 || is_loaded(profile, &loaded, err) < 0)
		return -1;
	if (!loaded)
		return ward_fail(err, 0,
				 "AppArmor profile %s is not listed in %s after apparmor_parser "
				 "loaded it",
				 profile, AA_PROFILES);
	default_stamp(stamp, sizeof(stamp));
	write_stamp(stamp);
	return 0;
}

int ward_apparmor_prepare(const char *profile, struct ward_err *err)
{
	if (ward_apparmor_is_unconfined(profile))
		return 0;
	if (!ward_apparmor_enabled())
		return ward_fail(err, 0, "AppArmor is not enabled on this host");
	return ward_apparmor_ensure_loaded(profile, err);
}

/* ---- the exec label ---- */

static int check_procfs(int fd, const char *what, struct ward_err *err)
{
	struct statfs sfs;
	if (fstatfs(fd, &sfs) < 0)
		return ward_fail_errno(err, "fstatfs %s", what);
	if (sfs.f_type != PROC_SUPER_MAGIC)
		return ward_fail(err, EXDEV, "%s is not on procfs (filesystem type 0x%lx)", what,
				 (unsigned long)sfs.f_type);
	return 0;
}

/* path below the procfs root, without crossing into another mount (a file or a directory
 * mounted over the attribute) and without magic links. openat2 refused (a seccomp filter
 * that predates it): plain openat, the caller checks the result is still procfs. */
static int open_in_proc(int proc, const char *path)
{
	struct open_how how = {
	    .flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS,
	};
	for (int i = 0; i < 16; i++) {
		int fd = sys_openat2(proc, path, &how);
		if (fd >= 0 || errno != EAGAIN) {
			if (fd < 0 && (errno == ENOSYS || errno == EPERM))
				return openat(proc, path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
			return fd;
		}
	}
	return -1;
}

int ward_apparmor_exec_label(const char *profile, struct ward_err *err)
{
	static const char *const attrs[] = {"thread-self/attr/apparmor/exec",
					    "thread-self/attr/exec"};
	const char *attr = NULL;
	cleanup_fd int proc = -1;
	cleanup_fd int fd = -1;
	cleanup_free char *cmd = NULL;
	char back[300];
	size_t n = strlen(profile ? profile : "");
	ssize_t got;

	if (ward_apparmor_is_unconfined(profile))
		return 0;
	if (check_name(profile, err) < 0)
		return -1;
	proc = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (proc < 0)
		return ward_fail_errno(err, "AppArmor exec label: open /proc");
	if (check_procfs(proc, "/proc", err) < 0)
		return ward_wrap(err, "AppArmor exec label");
	for (size_t i = 0; i < ARRAY_SIZE(attrs) && fd < 0; i++) {
		attr = attrs[i];
		fd = open_in_proc(proc, attr);
		if (fd < 0 && errno != ENOENT)
			break;
	}
	if (fd < 0) {
		if (errno == EXDEV)
			return ward_fail(err, EXDEV,
					 "AppArmor exec label: /proc/%s: a mount covers it", attr);
		return ward_fail_errno(err, "AppArmor exec label: open /proc/%s", attr);
	}
	if (check_procfs(fd, attr, err) < 0)
		return ward_wrap(err, "AppArmor exec label");

	cmd = xasprintf("exec %s", profile);
	got = write(fd, cmd, strlen(cmd));
	if (got < 0)
		return ward_fail_errno(err, "set AppArmor exec label \"%s\"", profile);
	if ((size_t)got != strlen(cmd))
		return ward_fail(err, EIO, "set AppArmor exec label \"%s\": short write", profile);
	/* What the kernel now holds for our next execve: "ward-default (enforce)\n". */
	got = pread(fd, back, sizeof(back) - 1, 0);
	if (got < 0)
		return ward_fail_errno(err, "read back the AppArmor exec label");
	back[got] = '\0';
	if (strncmp(back, profile, n) != 0 || (back[n] != ' ' && back[n] != '\n' && back[n]))
		return ward_fail(err, 0, "AppArmor exec label is \"%.*s\" after setting \"%s\"",
				 (int)strcspn(back, "\n"), back, profile);
	return 0;
}
