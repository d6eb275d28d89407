/* containerd-shim-ward-v2 bootstrap, as containerd-shim-runc-v2 does it (reference §1):
 * `start` finds or starts the pod's serving process and prints its address, `delete` cleans
 * up one container after the fact, no action = the serving process itself. */
#include "bootstrap.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "github.com/containerd/containerd/api/types/introspection.pb-c.h"
#include "github.com/containerd/containerd/runtime/v2/task/shim.pb-c.h"
#include "log.h"
#include "serve.h"
#include "sha256.h"
#include "spec.h"
#include "state.h"
#include "util.h"

/* ---------------------------------------------------------------------------------------
 * Grouping and the socket name */

char *shim_group_id(const char *config_json, size_t len, const char *id, struct ward_err *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(config_json, len, 0, &jerr);
	json_t *sb;
	char *r;

	if (!root) {
		ward_fail(err, 0, "config.json: line %d: %s", jerr.line, jerr.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		ward_fail(err, 0, "config.json: not a JSON object");
		return NULL;
	}
	sb = json_object_get(json_object_get(root, "annotations"), SHIM_SANDBOX_ANNOTATION);
	if (sb && !json_is_string(sb)) {
		json_decref(root);
		ward_fail(err, 0, "config.json: annotations.%s: not a string",
			  SHIM_SANDBOX_ANNOTATION);
		return NULL;
	}
	r = xstrdup(sb && *json_string_value(sb) ? json_string_value(sb) : id);
	json_decref(root);
	return r;
}

int shim_socket_path(const char *dir, const char *address, const char *ns, const char *group,
		     char *out, size_t cap, struct ward_err *err)
{
	char hex[65];
	/* filepath.Join(address, ns, group) as the runc shim hashes it (address may be empty) */
	cleanup_free char *key =
	    *address ? xasprintf("%s/%s/%s", address, ns, group) : xasprintf("%s/%s", ns, group);
	ward_sha256_hex(key, strlen(key), hex);
	if ((size_t)snprintf(out, cap, "%s/%s", dir ? dir : SHIM_SOCKET_DIR, hex) >= cap)
		return ward_fail(err, ENAMETOOLONG, "socket path");
	return 0;
}

static int unix_addr(const char *path, struct sockaddr_un *sa, struct ward_err *err)
{
	*sa = (struct sockaddr_un){.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa->sun_path))
		return ward_fail(err, ENAMETOOLONG, "socket %s", path);
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* 1: something listens at path, 0: nothing does. */
static int socket_alive(const char *path)
{
	struct sockaddr_un sa;
	struct ward_err e = {0};
	cleanup_fd int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || unix_addr(path, &sa, &e) < 0)
		return 0;
	return connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
}

/* Bind and listen at path, mode 0600 from the start (umask around bind). */
static int listen_at(const char *path, struct ward_err *err)
{
	struct sockaddr_un sa;
	int fd, rc;
	mode_t old;

	if (unix_addr(path, &sa, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ward_fail_errno(err, "socket");
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0) {
		ward_fail_errno(err, "bind %s", path);
		close(fd);
		return -1;
	}
	if (chmod(path, 0600) < 0 || listen(fd, 128) < 0) {
		ward_fail_errno(err, "listen on %s", path);
		unlink(path);
		close(fd);
		return -1;
	}
	return fd;
}

static int mkdir_0711(const char *path, struct ward_err *err)
{
	if (mkdir(path, 0711) < 0 && errno != EEXIST)
		return ward_fail_errno(err, "mkdir %s", path);
	return 0;
}

/* mkdir -p with mode 0711 for every missing component (an absolute path). */
static int mkdir_p_0711(const char *path, struct ward_err *err)
{
	cleanup_free char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir_0711(p, err) < 0)
			return -1;
		*s = '/';
	}
	return mkdir_0711(p, err);
}

/* start's stdin, at most 1 MiB: nothing when it is a terminal or closed. */
static int read_stdin(uint8_t **out, size_t *len, struct ward_err *err)
{
	size_t cap = 4096, n = 0;
	uint8_t *buf;
	struct stat st;

	*out = NULL;
	*len = 0;
	if (fstat(0, &st) < 0 || isatty(0))
		return 0;
	buf = xmalloc(cap);
	for (;;) {
		ssize_t r;
		if (n == cap) {
			if (cap >= (1u << 20)) {
				free(buf);
				return ward_fail(err, EFBIG, "stdin: more than 1 MiB");
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		r = read(0, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return ward_fail_errno(err, "read stdin");
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* Write <bundle>/address atomically (containerd 1.6/1.7 reconnect from it). */
static int write_address(int bundlefd, const char *addr, struct ward_err *err)
{
	if (write_file_at(bundlefd, ".address.tmp", O_CREAT | O_TRUNC | O_NOFOLLOW, 0644, addr,
			  strlen(addr), err) < 0)
		return ward_wrap(err, "write the address file");
	if (renameat(bundlefd, ".address.tmp", bundlefd, "address") < 0) {
		ward_fail_errno(err, "rename address file");
		unlinkat(bundlefd, ".address.tmp", 0);
		return -1;
	}
	return 0;
}

/* The serving process gets oom_score_adj = containerd's + 1 (containerd is start's parent),
 * so the OOM killer prefers the shim to containerd. Best effort. */
static void child_oom_score_adj(void)
{
	char path[64], buf[32];
	int adj;
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)getppid());
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	adj = atoi(buf) + 1;
	if (adj > 1000)
		adj = 1000;
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "%d", adj);
	(void)!write(fd, buf, (size_t)n);
	close(fd);
}

/* Fork and exec the serving process: new session, cwd = bundle, stdio on /dev/null (it must
 * not hold start's stdout: containerd reads that to EOF), listener as SHIM_LISTEN_FD. Returns
 * once the exec succeeded. */
static int spawn_daemon(const struct shim_opts *o, char **self_argv, int lfd, struct ward_err *err)
{
	int pfd[2], child_errno = 0;
	pid_t pid;
	cleanup_free char **argv = xcalloc((size_t)o->action_index + 1, sizeof(char *));

	for (int i = 0; i < o->action_index; i++)
		argv[i] = self_argv[i];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return ward_fail_errno(err, "pipe");
	pid = fork();
	if (pid < 0) {
		ward_fail_errno(err, "fork");
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		int nul;
		close(pfd[0]);
		if (setsid() < 0 || chdir(o->bundle) < 0)
			goto fail;
		if (lfd == SHIM_LISTEN_FD) {
			if (fcntl(lfd, F_SETFD, 0) < 0)
				goto fail;
		} else if (pfd[1] == SHIM_LISTEN_FD || dup2(lfd, SHIM_LISTEN_FD) < 0) {
			goto fail;
		}
		nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
			goto fail;
		/* nothing else of start's caller leaks into the long-lived daemon */
		close_fds_except(SHIM_LISTEN_FD + 1, &pfd[1], 1);
		child_oom_score_adj();
		execv("/proc/self/exe", argv);
	fail:
		child_errno = errno;
		(void)!write(pfd[1], &child_errno, sizeof(child_errno));
		_exit(127);
	}
	close(pfd[1]);
	ssize_t n;
	do
		n = read(pfd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n > 0) {
		waitpid(pid, NULL, 0);
		return ward_fail(err, child_errno, "start the serving process");
	}
	return 0;
}

/* start, with the socket directory locked: reuse the group's live shim or start one. */
static int start_locked(const struct shim_opts *o, char **self_argv, int bundlefd, const char *path,
			const char *addr, struct ward_err *err)
{
	struct stat st;
	cleanup_fd int lfd = -1;

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return ward_fail(err, EEXIST, "%s is not a socket", path);
		if (!socket_alive(path)) {
			/* a shim that died without removing its socket */
			if (unlink(path) < 0 && errno != ENOENT)
				return ward_fail_errno(err, "remove stale socket %s", path);
		} else {
			/* the pod's shim already serves: it takes this container too */
			if (write_address(bundlefd, addr, err) < 0)
				return -1;
			fputs(addr, stdout);
			return fflush(stdout) == 0 ? 0 : ward_fail_errno(err, "stdout");
		}
	}
	lfd = listen_at(path, err);
	if (lfd < 0)
		return -1;
	if (spawn_daemon(o, self_argv, lfd, err) < 0 || write_address(bundlefd, addr, err) < 0) {
		/* the daemon, if it started, serves a socket nobody knows: remove it */
		unlink(path);
		return -1;
	}
	fputs(addr, stdout);
	return fflush(stdout) == 0 ? 0 : ward_fail_errno(err, "stdout");
}

/* Apply what containerd sent on stdin. Sets *sockdir and *address (pointing into in or o). */
static int apply_start_input(const struct shim_opts *o, const struct shim_start_input *in,
			     const char **sockdir, const char **address, struct ward_err *err)
{
	const char *env = getenv("TTRPC_ADDRESS");

	*sockdir = SHIM_SOCKET_DIR;
	*address = o->address;
	if (!in->bootstrap_params)
		return 0;
	/* 2.3+ deprecates $TTRPC_ADDRESS: the daemon (which inherits our environment) finds
	 * containerd's ttrpc socket for events there all the same */
	if ((!env || !*env) && in->ttrpc_address &&
	    setenv("TTRPC_ADDRESS", in->ttrpc_address, 1) < 0)
		return ward_fail_errno(err, "setenv TTRPC_ADDRESS");
	if (!**address && in->grpc_address)
		*address = in->grpc_address;
	if (in->socket_dir) {
		const char *d = in->socket_dir;
		if (d[0] != '/' || strstr(d, "/../") || strlen(d) >= 108 - 66 ||
		    (strlen(d) >= 3 && strcmp(d + strlen(d) - 3, "/..") == 0))
			return ward_fail(err, 0,
					 "BootstrapParams.socket_dir \"%s\": not a usable "
					 "absolute path",
					 d);
		*sockdir = d;
	}
	return 0;
}

int shim_start(const struct shim_opts *o, char **self_argv, struct ward_err *err)
{
	char path[108];
	size_t len, in_len;
	cleanup_fd int bundlefd = open(o->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_fd int dirfd = -1;
	cleanup_free char *config = NULL, *group = NULL, *addr = NULL;
	cleanup_free uint8_t *stdin_buf = NULL;
	struct shim_start_input in;
	const char *sockdir, *address;
	int rc;

	if (read_stdin(&stdin_buf, &in_len, err) < 0)
		return -1;
	if (shim_decode_start_input(stdin_buf, in_len, o->id, o->namespace, &in, err) < 0)
		return -1;
	rc = apply_start_input(o, &in, &sockdir, &address, err);
	if (rc < 0) {
		shim_start_input_free(&in);
		return -1;
	}
	if (bundlefd < 0) {
		rc = ward_fail_errno(err, "bundle %s", o->bundle);
		goto out;
	}
	config = ward_spec_read_at(bundlefd, "config.json", &len, err);
	if (!config) {
		rc = ward_wrap(err, "bundle %s", o->bundle);
		goto out;
	}
	group = shim_group_id(config, len, o->id, err);
	if (!group) {
		rc = ward_wrap(err, "bundle %s", o->bundle);
		goto out;
	}
	rc = shim_socket_path(sockdir, address, o->namespace, group, path, sizeof(path), err);
	if (rc < 0)
		goto out;
	addr = xasprintf("unix://%s", path);

	if (strcmp(sockdir, SHIM_SOCKET_DIR) == 0)
		rc = mkdir_0711("/run/containerd", err) < 0 || mkdir_0711(SHIM_SOCKET_DIR, err) < 0
			 ? -1
			 : 0;
	else
		rc = mkdir_p_0711(sockdir, err);
	if (rc < 0)
		goto out;
	/* One `start` at a time decides whether the group's shim exists (containerd starts
	 * containers of one pod concurrently). */
	dirfd = open(sockdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		rc = ward_fail_errno(err, "open %s", sockdir);
		goto out;
	}
	if (flock(dirfd, LOCK_EX) < 0) {
		rc = ward_fail_errno(err, "lock %s", sockdir);
		goto out;
	}
	rc = start_locked(o, self_argv, bundlefd, path, addr, err);
out:
	shim_start_input_free(&in);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * The serving process */

/* stderr to the bundle's `log` fifo when containerd made one (it copies it to its log). */
static void open_log_fifo(const struct shim_opts *o)
{
	cleanup_fd int bundlefd = open(o->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd, fl;
	if (bundlefd < 0)
		return;
	/* O_NONBLOCK: fail (ENXIO) rather than hang when no reader is there */
	fd = openat(bundlefd, "log", O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	if (fd != 2) {
		dup2(fd, 2);
		close(fd);
	}
}

int shim_daemon(struct shim_opts *o, struct ward_err *err)
{
	int listening = 0, rc;
	socklen_t sl = sizeof(listening);
	struct sockaddr_un sa = {0};
	socklen_t al = sizeof(sa);

	if (getsockopt(SHIM_LISTEN_FD, SOL_SOCKET, SO_ACCEPTCONN, &listening, &sl) < 0 ||
	    !listening)
		return ward_fail(err, 0,
				 "no listening socket on fd %d: the serving process is started "
				 "by `start`",
				 SHIM_LISTEN_FD);
	if (fcntl(SHIM_LISTEN_FD, F_SETFD, FD_CLOEXEC) < 0)
		return ward_fail_errno(err, "listening socket");
	if (getsockname(SHIM_LISTEN_FD, (struct sockaddr *)&sa, &al) < 0 ||
	    sa.sun_family != AF_UNIX || sa.sun_path[0] == '\0')
		return ward_fail(err, errno, "listening socket: not a unix socket with a path");
	snprintf(o->socket_path, sizeof(o->socket_path), "%s", sa.sun_path);

	/* one malloc arena: the events publisher thread would otherwise get its own heap */
	mallopt(M_ARENA_MAX, 1);
	/* container processes whose parent (ward) exits become ours, to reap and report */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return ward_fail_errno(err, "PR_SET_CHILD_SUBREAPER");
	signal(SIGPIPE, SIG_IGN);
	open_log_fifo(o);
	ward_log_open(NULL, true, o->debug);
	ward_info("containerd-shim-ward-v2: serving %s (namespace %s, first container %s)",
		  o->socket_path, o->namespace, o->id);

	rc = shim_serve(SHIM_LISTEN_FD, o);
	unlink(o->socket_path);
	ward_info("containerd-shim-ward-v2: exiting (%d)", rc);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * delete */

/* ward has no state dir for a valid id under root (nor the root itself): `ward delete
 * --force` would find nothing to delete, and exit 0. containerd runs `delete` after every
 * task's Delete, when the Task API has already deleted the container. */
static bool ward_knows_nothing(const char *root, const char *id)
{
	cleanup_fd int rootfd = -1;

	if (!ward_id_valid(id)) /* ward says why */
		return false;
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return errno == ENOENT;
	return faccessat(rootfd, id, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* `ward --root R delete --force ID`, its stdout on our stderr (stdout is the response);
 * nothing when ward has no state of ID. */
static int ward_force_delete(const struct shim_opts *o, struct ward_err *err)
{
	cleanup_free char *ward = shim_ward_binary();
	cleanup_free char *root = shim_ward_root(o->namespace);
	char *const argv[] = {ward, "--root", root, "delete", "--force", (char *)o->id, NULL};
	int status;
	if (ward_knows_nothing(root, o->id))
		return 0;
	pid_t pid = fork();

	if (pid < 0)
		return ward_fail_errno(err, "fork");
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(2, 1) < 0)
			_exit(127);
		execvp(ward, argv);
		fprintf(stderr, "containerd-shim-ward-v2: exec %s: %s\n", ward, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return ward_fail_errno(err, "wait for %s", ward);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ward_fail(err, 0, "%s --root %s delete --force %s: %s %d", ward, root, o->id,
				 WIFEXITED(status) ? "exit status" : "signal",
				 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 0;
}

static uint32_t read_init_pid(int bundlefd)
{
	struct ward_err e = {0};
	uint64_t v;
	cleanup_free char *s = read_file_at(bundlefd, "init.pid", NULL, &e);
	if (!s)
		return 0;
	s[strcspn(s, "\n")] = '\0';
	return parse_u64(s, &v) == 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
}

int shim_delete(const struct shim_opts *o, struct ward_err *err)
{
	struct ward_err w = {0};
	cleanup_fd int bundlefd = open(o->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *rootfs = xasprintf("%s/rootfs", o->bundle);
	cleanup_free char *bundle_copy = xstrdup(o->bundle);
	uint32_t pid = 0;
	struct timespec now;
	uint8_t buf[64];
	size_t n;

	if (ward_force_delete(o, &w) < 0)
		fprintf(stderr, "containerd-shim-ward-v2: warning: %s\n", w.msg);
	if (bundlefd >= 0) {
		pid = read_init_pid(bundlefd);
		/* whatever the Task API's Create mounted on the rootfs */
		for (int i = 0; i < 64; i++)
			if (umount2(rootfs, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
				break;
		/* <bundle>/address, if the bundle is this container's (containerd's bundle
		 * directory is named after the container) */
		if (strcmp(basename(bundle_copy), o->id) == 0 &&
		    unlinkat(bundlefd, "address", 0) < 0 && errno != ENOENT)
			fprintf(stderr, "containerd-shim-ward-v2: warning: remove %s/address: %s\n",
				o->bundle, strerror(errno));
	} else {
		fprintf(stderr, "containerd-shim-ward-v2: warning: bundle %s: %s\n", o->bundle,
			strerror(errno));
	}

	clock_gettime(CLOCK_REALTIME, &now);
	/* as the runc shim reports a forced delete: SIGKILL's status */
	n = shim_encode_delete_response(buf, sizeof(buf), pid, 128 + SIGKILL, now.tv_sec,
					(int32_t)now.tv_nsec);
	if (write_all(1, buf, n) < 0)
		return ward_fail_errno(err, "write the DeleteResponse");
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * What `delete` and `-info` print (protoc-c) */

size_t shim_encode_delete_response(uint8_t *buf, size_t cap, uint32_t pid, uint32_t exit_status,
				   int64_t sec, int32_t nsec)
{
	Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	Containerd__Task__V2__DeleteResponse r = CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
	ts.seconds = sec;
	ts.nanos = nsec;
	r.pid = pid;
	r.exit_status = exit_status;
	r.exited_at = &ts;
	if (containerd__task__v2__delete_response__get_packed_size(&r) > cap)
		return 0;
	return containerd__task__v2__delete_response__pack(&r, buf);
}

uint8_t *shim_encode_runtime_info(const char *name, const char *version, const char *revision,
				  const uint8_t *options, size_t options_len,
				  const char *features_json, size_t features_len, size_t *len)
{
	Containerd__Types__RuntimeInfo info = CONTAINERD__TYPES__RUNTIME_INFO__INIT;
	Containerd__Types__RuntimeVersion v = CONTAINERD__TYPES__RUNTIME_VERSION__INIT;
	Google__Protobuf__Any features = GOOGLE__PROTOBUF__ANY__INIT;
	Google__Protobuf__Any *opts = NULL;

	info.name = (char *)name;
	v.version = (char *)version;
	v.revision = (char *)revision;
	info.version = &v;
	if (options) {
		opts = google__protobuf__any__unpack(NULL, options_len, options);
		info.options = opts;
	}
	if (features_json) {
		features.type_url = SHIM_FEATURES_TYPE_URL;
		features.value.data = (uint8_t *)features_json;
		features.value.len = features_len;
		info.features = &features;
	}
	*len = containerd__types__runtime_info__get_packed_size(&info);
	uint8_t *buf = xmalloc(*len + 1);
	containerd__types__runtime_info__pack(&info, buf);
	if (opts)
		google__protobuf__any__free_unpacked(opts, NULL);
	return buf;
}

/* ---------------------------------------------------------------------------------------
 * -info */

/* `ward features` on a pipe; NULL (and a warning on stderr) when it fails. */
static char *ward_features(size_t *len)
{
	cleanup_free char *ward = shim_ward_binary();
	struct ward_err e = {0};
	char *out;
	int pfd[2], status;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return NULL;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return NULL;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(pfd[1], 1) < 0)
			_exit(127);
		execlp(ward, ward, "features", (char *)NULL);
		fprintf(stderr, "containerd-shim-ward-v2: exec %s: %s\n", ward, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	out = read_all_fd(pfd[0], len, &e);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			free(out);
			return NULL;
		}
	if (!out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "containerd-shim-ward-v2: warning: %s features failed\n", ward);
		free(out);
		return NULL;
	}
	json_error_t jerr;
	json_t *j = json_loadb(out, *len, 0, &jerr);
	if (!json_is_object(j)) {
		fprintf(stderr,
			"containerd-shim-ward-v2: warning: %s features: not a JSON object\n", ward);
		json_decref(j);
		free(out);
		return NULL;
	}
	json_decref(j);
	return out;
}

int shim_info(struct ward_err *err)
{
	cleanup_free uint8_t *opts = NULL, *resp = NULL;
	cleanup_free char *features = NULL;
	struct shim_start_input in = {0};
	size_t opts_len, features_len = 0, resp_len;

	/* the runtime options Any (as the runc shim does, echoed back in RuntimeInfo.options) */
	if (read_stdin(&opts, &opts_len, err) < 0)
		return -1;
	if (opts_len && shim_decode_start_input(opts, opts_len, NULL, NULL, &in, err) < 0)
		return ward_wrap(err, "runtime options");
	shim_start_input_free(&in);
	features = ward_features(&features_len);
	resp = shim_encode_runtime_info(SHIM_RUNTIME_NAME, WARD_VERSION, WARD_COMMIT,
					opts_len ? opts : NULL, opts_len, features, features_len,
					&resp_len);
	if (write_all(1, resp, resp_len) < 0)
		return ward_fail_errno(err, "write the RuntimeInfo");
	return 0;
}
