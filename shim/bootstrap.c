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
#include "spec.h"
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
 * A protobuf writer and reader just big enough for DeleteResponse, RuntimeInfo and start's
 * stdin (the generated code serves the ttrpc API; this keeps the CLI independent of it). */

struct pb {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
	bool grow; /* p is malloc'd and grows (else overflow past cap) */
};

static void pb_byte(struct pb *b, uint8_t c)
{
	if (b->len == b->cap && b->grow) {
		b->cap = b->cap ? 2 * b->cap : 256;
		b->p = xrealloc(b->p, b->cap);
	}
	if (b->len < b->cap)
		b->p[b->len++] = c;
	else
		b->overflow = true;
}

static void pb_raw(struct pb *b, const void *data, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pb_byte(b, ((const uint8_t *)data)[i]);
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

/* A length-delimited field (bytes, or an embedded message: always written). */
static void pb_len(struct pb *b, unsigned field, const void *data, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_raw(b, data, n);
}

/* A proto3 string: not written when empty. */
static void pb_str(struct pb *b, unsigned field, const char *s)
{
	if (s && *s)
		pb_len(b, field, s, strlen(s));
}

size_t shim_encode_delete_response(uint8_t *buf, size_t cap, uint32_t pid, uint32_t exit_status,
				   int64_t sec, int32_t nsec)
{
	uint8_t ts[32];
	struct pb t = {ts, 0, sizeof(ts), false, false};
	struct pb b = {buf, 0, cap, false, false};

	/* google.protobuf.Timestamp{seconds=1 int64, nanos=2 int32}: negative ints are
	 * varints of their 64-bit two's complement */
	pb_uint(&t, 1, (uint64_t)sec);
	pb_uint(&t, 2, (uint64_t)(int64_t)nsec);
	pb_uint(&b, 1, pid);
	pb_uint(&b, 2, exit_status);
	pb_len(&b, 3, ts, t.len);
	return b.overflow || t.overflow ? 0 : b.len;
}

uint8_t *shim_encode_runtime_info(const char *name, const char *version, const char *revision,
				  const uint8_t *options, size_t options_len,
				  const char *features_json, size_t features_len, size_t *len)
{
	struct pb b = {.grow = true}, v = {.grow = true}, f = {.grow = true};

	pb_str(&b, 1, name);
	/* RuntimeVersion{version=1, revision=2} */
	pb_str(&v, 1, version);
	pb_str(&v, 2, revision);
	pb_len(&b, 2, v.p, v.len);
	if (options)
		pb_len(&b, 3, options, options_len);
	if (features_json) {
		/* google.protobuf.Any{type_url=1, value=2} */
		pb_str(&f, 1, SHIM_FEATURES_TYPE_URL);
		pb_len(&f, 2, features_json, features_len);
		pb_len(&b, 4, f.p, f.len);
	}
	/* annotations (5): none */
	free(v.p);
	free(f.p);
	*len = b.len;
	return b.p ? b.p : xcalloc(1, 1);
}

struct pbr {
	const uint8_t *p;
	size_t len, off;
};

static int pbr_varint(struct pbr *r, uint64_t *v)
{
	*v = 0;
	for (unsigned s = 0; s < 64; s += 7) {
		if (r->off >= r->len)
			return -1;
		uint8_t c = r->p[r->off++];
		*v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

/* The next field: 1 with its number and, for length-delimited ones, data/n (wire type 2,
 * else data NULL); 0 at the end; -1 on malformed input. */
static int pbr_next(struct pbr *r, uint32_t *field, const uint8_t **data, size_t *n)
{
	uint64_t key, v;

	if (r->off == r->len)
		return 0;
	if (pbr_varint(r, &key) < 0 || key >> 3 == 0 || key >> 3 > UINT32_MAX >> 3)
		return -1;
	*field = (uint32_t)(key >> 3);
	*data = NULL;
	*n = 0;
	switch (key & 7) {
	case 0:
		return pbr_varint(r, &v) < 0 ? -1 : 1;
	case 1:
	case 5: {
		size_t w = (key & 7) == 1 ? 8 : 4;
		if (r->len - r->off < w)
			return -1;
		r->off += w;
		return 1;
	}
	case 2:
		if (pbr_varint(r, &v) < 0 || v > r->len - r->off)
			return -1;
		*data = r->p + r->off;
		*n = (size_t)v;
		r->off += (size_t)v;
		return 1;
	default: /* groups (3, 4) are not proto3; 6, 7 do not exist */
		return -1;
	}
}

/* A length-delimited field as a C string; NULL (and *bad) when it holds a NUL byte. */
static char *pb_cstr(const uint8_t *data, size_t n, bool *bad)
{
	if (memchr(data, '\0', n)) {
		*bad = true;
		return NULL;
	}
	char *s = xmalloc(n + 1);
	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

static bool pb_eq(const uint8_t *data, size_t n, const char *s)
{
	return data && strlen(s) == n && memcmp(data, s, n) == 0;
}

/* google.protobuf.Any{type_url=1 string, value=2 bytes} into in's options. */
static int decode_any(const uint8_t *p, size_t len, struct shim_start_input *in)
{
	struct pbr r = {p, len, 0};
	const uint8_t *d;
	size_t n;
	uint32_t f;
	int k;
	bool bad = false;

	while ((k = pbr_next(&r, &f, &d, &n)) > 0) {
		if (f == 1 && d) {
			free(in->options_type_url);
			in->options_type_url = pb_cstr(d, n, &bad);
		} else if (f == 2 && d) {
			free(in->options);
			in->options = xmalloc(n ? n : 1);
			memcpy(in->options, d, n);
			in->options_len = n;
		}
	}
	if (k < 0 || bad)
		return -1;
	if (!in->options_type_url)
		in->options_type_url = xstrdup("");
	in->has_options = true;
	return 0;
}

void shim_start_input_free(struct shim_start_input *in)
{
	free(in->options_type_url);
	free(in->options);
	free(in->log_level);
	free(in->containerd_version);
	free(in->ttrpc_address);
	free(in->grpc_address);
	free(in->containerd_binary);
	free(in->socket_dir);
	*in = (struct shim_start_input){0};
}

int shim_decode_start_input(const uint8_t *buf, size_t len, const char *id, const char *ns,
			    struct shim_start_input *in, struct ward_err *err)
{
	struct pbr r = {buf, len, 0};
	const uint8_t *d, *f1 = NULL, *f2 = NULL;
	size_t n, n1 = 0, n2 = 0;
	uint32_t f;
	int k;
	bool bad = false;

	*in = (struct shim_start_input){0};
	if (len == 0)
		return 0;
	/* both messages start with two strings: instance_id/namespace or type_url/value */
	while ((k = pbr_next(&r, &f, &d, &n)) > 0) {
		if (f == 1)
			f1 = d, n1 = n;
		else if (f == 2)
			f2 = d, n2 = n;
	}
	if (k < 0)
		return ward_fail(err, EINVAL, "stdin: not a protobuf message (%zu bytes)", len);
	if (!(id && ns && pb_eq(f1, n1, id) && pb_eq(f2, n2, ns))) {
		if (decode_any(buf, len, in) < 0) {
			shim_start_input_free(in);
			return ward_fail(err, EINVAL, "stdin: not a google.protobuf.Any");
		}
		return 0;
	}
	in->bootstrap_params = true;
	r.off = 0;
	while ((k = pbr_next(&r, &f, &d, &n)) > 0 && !bad) {
		char **slot = NULL;
		if (!d)
			continue; /* every field we know is length-delimited */
		switch (f) {
		case 3:
			slot = &in->log_level;
			break;
		case 4:
			slot = &in->containerd_version;
			break;
		case 5:
			slot = &in->ttrpc_address;
			break;
		case 6:
			slot = &in->grpc_address;
			break;
		case 7:
			slot = &in->containerd_binary;
			break;
		case 9:
			slot = &in->socket_dir;
			break;
		case 8: {
			if (in->has_options)
				break; /* the first extension carrying an Any holds the options */
			/* extension {google.protobuf.Any value = 1} */
			struct pbr e = {d, n, 0};
			const uint8_t *ad;
			size_t an;
			int ek;
			while ((ek = pbr_next(&e, &f, &ad, &an)) > 0)
				if (f == 1 && ad && decode_any(ad, an, in) < 0)
					bad = true;
			if (ek < 0)
				bad = true;
			break;
		}
		}
		if (slot && n) {
			free(*slot);
			*slot = pb_cstr(d, n, &bad);
		}
	}
	if (k < 0 || bad) {
		shim_start_input_free(in);
		return ward_fail(err, EINVAL, "stdin: malformed BootstrapParams");
	}
	return 0;
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
