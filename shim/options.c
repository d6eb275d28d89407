/* The shim's options: command line, environment, start's stdin, runtime options (see
 * options.h). Every protobuf here is protoc-c's. */
#include "options.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "github.com/containerd/containerd/api/runtime/bootstrap/v1/bootstrap.pb-c.h"
#include "github.com/containerd/containerd/pkg/runtimeoptions/v1/api.pb-c.h"
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
 * start's stdin */

/* A bytes field as a C string; NULL when empty; *bad when it holds a NUL byte. */
static char *cstr(const ProtobufCBinaryData *b, bool *bad)
{
	if (!b->len)
		return NULL;
	if (memchr(b->data, '\0', b->len)) {
		*bad = true;
		return NULL;
	}
	char *s = xmalloc(b->len + 1);
	memcpy(s, b->data, b->len);
	s[b->len] = '\0';
	return s;
}

static bool bytes_eq(const ProtobufCBinaryData *b, const char *s)
{
	return s && strlen(s) == b->len && memcmp(b->data, s, b->len) == 0;
}

typedef Containerd__Runtime__Bootstrap__V1__RawAny RawAny;

static void take_any(const RawAny *a, struct shim_start_input *in, bool *bad)
{
	in->has_options = true;
	in->options_type_url = cstr(&a->type_url, bad);
	if (!in->options_type_url)
		in->options_type_url = xstrdup("");
	in->options = xmalloc(a->value.len ? a->value.len : 1);
	memcpy(in->options, a->value.data, a->value.len);
	in->options_len = a->value.len;
}

void shim_start_input_free(struct shim_start_input *in)
{
	void *owned[] = {in->options_type_url,	 in->options,	    in->log_level,
			 in->containerd_version, in->ttrpc_address, in->grpc_address,
			 in->containerd_binary,	 in->socket_dir};
	for (size_t i = 0; i < ARRAY_SIZE(owned); i++)
		free(owned[i]);
	*in = (struct shim_start_input){0};
}

int shim_decode_start_input(const uint8_t *buf, size_t len, const char *id, const char *ns,
			    struct shim_start_input *in, struct ward_err *err)
{
	*in = (struct shim_start_input){0};
	if (len == 0)
		return 0;
	/* both messages start with two length-delimited fields (type_url/value, or
	 * instance_id/namespace): read as an Any first, as upstream's compat.go does */
	RawAny *any = containerd__runtime__bootstrap__v1__raw_any__unpack(NULL, len, buf);
	bool bad = false;
	if (!any)
		return ward_fail(err, EINVAL, "stdin: not a protobuf message (%zu bytes)", len);
	bool params = bytes_eq(&any->type_url, id) && bytes_eq(&any->value, ns);
	if (!params)
		take_any(any, in, &bad);
	containerd__runtime__bootstrap__v1__raw_any__free_unpacked(any, NULL);
	if (bad) {
		shim_start_input_free(in);
		return ward_fail(err, EINVAL, "stdin: not a google.protobuf.Any");
	}
	if (!params)
		return 0;

	Containerd__Runtime__Bootstrap__V1__BootstrapParams *p =
	    containerd__runtime__bootstrap__v1__bootstrap_params__unpack(NULL, len, buf);
	bad = !p;
	if (p) {
		in->bootstrap_params = true;
		in->log_level = cstr(&p->log_level, &bad);
		in->containerd_version = cstr(&p->containerd_version, &bad);
		in->ttrpc_address = cstr(&p->containerd_ttrpc_address, &bad);
		in->grpc_address = cstr(&p->containerd_grpc_address, &bad);
		in->containerd_binary = cstr(&p->containerd_binary, &bad);
		in->socket_dir = cstr(&p->socket_dir, &bad);
		/* the first extension carrying an Any holds the options */
		for (size_t i = 0; i < p->n_extensions && !in->has_options; i++)
			if (p->extensions[i]->value)
				take_any(p->extensions[i]->value, in, &bad);
		containerd__runtime__bootstrap__v1__bootstrap_params__free_unpacked(p, NULL);
	}
	if (bad) {
		shim_start_input_free(in);
		return ward_fail(err, EINVAL, "stdin: malformed BootstrapParams");
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * CreateTaskRequest.options */

char *shim_options_config_dir(const Google__Protobuf__Any *a)
{
	if (!a || !a->type_url || !strstr(a->type_url, "runtimeoptions.v1.Options"))
		return NULL;
	Runtimeoptions__V1__Options *o =
	    runtimeoptions__v1__options__unpack(NULL, a->value.len, a->value.data);
	if (!o)
		return NULL;
	char *path = o->config_path[0] ? xstrdup(o->config_path) : NULL;
	runtimeoptions__v1__options__free_unpacked(o, NULL);
	struct stat sb;
	if (path && stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		char *dir = xstrdup(dirname(path));
		free(path);
		return dir;
	}
	return path;
}

/* ---------------------------------------------------------------------------------------
 * Where ward is */

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
