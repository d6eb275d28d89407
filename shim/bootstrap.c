/* containerd-shim-ward-v2 bootstrap, as containerd-shim-runc-v2 does it (reference §1):
 * `start` finds or starts the pod's serving process and prints its address, `delete` cleans
 * up one container after the fact, no action = the serving process itself. */
#include "bootstrap.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
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

#include "log.h"
#include "serve.h"
#include "sha256.h"
#include "util.h"

/* ---------------------------------------------------------------------------------------
 * Command line: Go flag style. "-name value", "-name=value", "--name" all work; flags stop at
 * the first argument without a leading dash (the action) or at "--". */

static const char *const value_flags[] = {"namespace", "address", "publish-binary", "id",
					  "bundle",    "socket",  "debug-socket"};

static bool is_value_flag(const char *name, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(value_flags); i++)
		if (strlen(value_flags[i]) == n && strncmp(value_flags[i], name, n) == 0)
			return true;
	return false;
}

static void set_value(struct shim_opts *o, const char *name, const char *v)
{
	if (strcmp(name, "namespace") == 0)
		o->namespace = v;
	else if (strcmp(name, "address") == 0)
		o->address = v;
	else if (strcmp(name, "publish-binary") == 0)
		o->publish_binary = v;
	else if (strcmp(name, "id") == 0)
		o->id = v;
	else if (strcmp(name, "bundle") == 0)
		o->bundle = v;
	else if (strcmp(name, "socket") == 0)
		o->socket = v;
}

/* Go's strconv.ParseBool. */
static int parse_bool(const char *v, bool *out)
{
	static const char *const t[] = {"1", "t", "T", "true", "TRUE", "True"};
	static const char *const f[] = {"0", "f", "F", "false", "FALSE", "False"};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		if (strcmp(v, t[i]) == 0)
			return *out = true, 0;
		if (strcmp(v, f[i]) == 0)
			return *out = false, 0;
	}
	return -1;
}

/* A containerd namespace becomes a path component of ward's root. */
static bool safe_component(const char *s)
{
	if (!s || !*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 || strlen(s) > 76)
		return false;
	for (const char *p = s; *p; p++)
		if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') ||
		      ('0' <= *p && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
			return false;
	return true;
}

int shim_parse_args(int argc, char **argv, struct shim_opts *o, char *bundle_buf, size_t cap,
		    struct ward_err *err)
{
	int i;
	const char *env;

	*o = (struct shim_opts){.action = SHIM_SERVE};
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq, *v = NULL;
		size_t n;
		bool b = true;
		if (a[0] != '-' || a[1] == '\0')
			break;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		name = a + (a[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		n = eq ? (size_t)(eq - name) : strlen(name);
		if (is_value_flag(name, n)) {
			if (eq) {
				v = eq + 1;
			} else if (i + 1 < argc) {
				v = argv[++i];
			} else {
				return ward_fail(err, 0, "flag needs an argument: -%.*s", (int)n,
						 name);
			}
			char key[32];
			snprintf(key, sizeof(key), "%.*s", (int)n, name);
			set_value(o, key, v);
			continue;
		}
		if (eq && parse_bool(eq + 1, &b) < 0 &&
		    (strncmp(name, "debug=", 6) == 0 || strncmp(name, "v=", 2) == 0))
			return ward_fail(err, 0, "invalid boolean value \"%s\" for -%.*s", eq + 1,
					 (int)n, name);
		if (n == 5 && strncmp(name, "debug", 5) == 0)
			o->debug = b;
		else if (b &&
			 ((n == 1 && name[0] == 'v') || (n == 7 && !strncmp(name, "version", 7))))
			o->action = SHIM_VERSION;
		else if (b && n == 4 && strncmp(name, "info", 4) == 0 && o->action != SHIM_VERSION)
			o->action = SHIM_INFO;
		/* anything else: an unknown flag of a newer containerd, ignored */
	}
	o->action_index = i;
	if (o->action == SHIM_VERSION || o->action == SHIM_INFO)
		return 0;
	if (i < argc) {
		if (strcmp(argv[i], "start") == 0)
			o->action = SHIM_START;
		else if (strcmp(argv[i], "delete") == 0)
			o->action = SHIM_DELETE;
		else
			return ward_fail(err, 0, "unknown action \"%s\" (start, delete, or none)",
					 argv[i]);
	}

	if (!o->namespace && (env = getenv("NAMESPACE")) && *env)
		o->namespace = env;
	o->ttrpc_address = getenv("TTRPC_ADDRESS");
	o->grpc_address = getenv("GRPC_ADDRESS");
	if ((env = getenv("MAX_SHIM_VERSION")))
		o->max_shim_version = atoi(env);
	if (!o->address && o->grpc_address && *o->grpc_address)
		o->address = o->grpc_address;
	if (!o->address)
		o->address = "";

	if (!o->namespace || !*o->namespace)
		return ward_fail(err, 0, "shim namespace cannot be empty (-namespace)");
	if (!safe_component(o->namespace))
		return ward_fail(err, 0, "invalid namespace \"%s\"", o->namespace);
	if (!o->id || !*o->id)
		return ward_fail(err, 0, "container id cannot be empty (-id)");
	if (o->id[0] == '-' || strchr(o->id, '/') || strlen(o->id) > 1024)
		return ward_fail(err, 0, "invalid container id \"%s\"", o->id);
	if (!o->bundle || !*o->bundle) {
		if (!getcwd(bundle_buf, cap))
			return ward_fail_errno(err, "working directory (the bundle)");
		o->bundle = bundle_buf;
	}
	return 0;
}

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

int shim_socket_path(const char *address, const char *ns, const char *group, char *out, size_t cap,
		     struct ward_err *err)
{
	char hex[65];
	/* filepath.Join(address, ns, group) as the runc shim hashes it (address may be empty) */
	cleanup_free char *key =
	    *address ? xasprintf("%s/%s/%s", address, ns, group) : xasprintf("%s/%s", ns, group);
	ward_sha256_hex(key, strlen(key), hex);
	if ((size_t)snprintf(out, cap, "%s/%s", SHIM_SOCKET_DIR, hex) >= cap)
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

int shim_start(const struct shim_opts *o, char **self_argv, struct ward_err *err)
{
	char path[108];
	size_t len;
	cleanup_fd int bundlefd = open(o->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_fd int dirfd = -1;
	cleanup_fd int lfd = -1;
	cleanup_free char *config = NULL, *group = NULL, *addr = NULL;
	struct stat st;

	if (bundlefd < 0)
		return ward_fail_errno(err, "bundle %s", o->bundle);
	config = read_file_at(bundlefd, "config.json", &len, err);
	if (!config)
		return ward_wrap(err, "bundle %s", o->bundle);
	group = shim_group_id(config, len, o->id, err);
	if (!group)
		return ward_wrap(err, "bundle %s", o->bundle);
	if (shim_socket_path(o->address, o->namespace, group, path, sizeof(path), err) < 0)
		return -1;
	addr = xasprintf("unix://%s", path);

	if (mkdir_0711("/run/containerd", err) < 0 || mkdir_0711(SHIM_SOCKET_DIR, err) < 0)
		return -1;
	/* One `start` at a time decides whether the group's shim exists (containerd starts
	 * containers of one pod concurrently). */
	dirfd = open(SHIM_SOCKET_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return ward_fail_errno(err, "open %s", SHIM_SOCKET_DIR);
	if (flock(dirfd, LOCK_EX) < 0)
		return ward_fail_errno(err, "lock %s", SHIM_SOCKET_DIR);

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

char *shim_ward_root(const char *ns)
{
	return xasprintf("%s/%s", SHIM_WARD_ROOT_DIR, ns);
}

char *shim_ward_binary(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		char *p = xasprintf("%s/ward", dirname(self));
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return xstrdup("ward");
}

/* `ward --root R delete --force ID`, its stdout on our stderr (stdout is the response). */
static int ward_force_delete(const struct shim_opts *o, struct ward_err *err)
{
	cleanup_free char *ward = shim_ward_binary();
	cleanup_free char *root = shim_ward_root(o->namespace);
	char *const argv[] = {ward, "--root", root, "delete", "--force", (char *)o->id, NULL};
	int status;
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
 * A protobuf writer just big enough for DeleteResponse (the generated code serves the
 * ttrpc API; this keeps `delete` independent of it). */

struct pb {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static void pb_byte(struct pb *b, uint8_t c)
{
	if (b->len < b->cap)
		b->p[b->len++] = c;
	else
		b->overflow = true;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	do {
		pb_byte(b, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
		v >>= 7;
	} while (v);
}

/* proto3: zero values are not written. */
static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3 | 0);
	pb_varint(b, v);
}

size_t shim_encode_delete_response(uint8_t *buf, size_t cap, uint32_t pid, uint32_t exit_status,
				   int64_t sec, int32_t nsec)
{
	uint8_t ts[32];
	struct pb t = {ts, 0, sizeof(ts), false};
	struct pb b = {buf, 0, cap, false};

	/* google.protobuf.Timestamp{seconds=1 int64, nanos=2 int32}: negative ints are
	 * varints of their 64-bit two's complement */
	pb_uint(&t, 1, (uint64_t)sec);
	pb_uint(&t, 2, (uint64_t)(int64_t)nsec);
	pb_uint(&b, 1, pid);
	pb_uint(&b, 2, exit_status);
	pb_varint(&b, 3 << 3 | 2);
	pb_varint(&b, t.len);
	for (size_t i = 0; i < t.len; i++)
		pb_byte(&b, ts[i]);
	return b.overflow || t.overflow ? 0 : b.len;
}
