/* builtin-gen NAME FILE [NAME FILE ...]: writes to stdout C source defining, for each
 * profile, `const struct ward_seccomp ward_seccomp_builtin_NAME`: the profile already in
 * the typed form runtime/lib/spec.c decodes linux.seccomp into. A build tool (the Makefile
 * runs it into $(BUILD)/seccomp_builtin.c): ward then copies a built-in profile instead
 * of parsing its JSON for every container (~0.2 ms). It accepts only the members the
 * built-in profiles use and fails on anything else, so a profile edit cannot drift from
 * what the decoder would make of it unnoticed; tests/unit/test_seccomp.c compares every
 * built-in with the decoder's result. */
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *file;

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "builtin-gen: %s: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Only the members listed; every value checked where it is read. */
static void only(json_t *o, const char *what, const char *const *keys)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		die("%s: must be an object", what);
	json_object_foreach(o, k, v)
	{
		size_t i = 0;
		while (keys[i] && strcmp(keys[i], k))
			i++;
		if (!keys[i])
			die("%s.%s: not a member builtin-gen knows", what, k);
	}
}

/* A C string literal; the profiles' strings are names and constants. */
static const char *lit(json_t *v, const char *what)
{
	const char *s = json_string_value(v);

	if (!s || !*s)
		die("%s: must be a non-empty string", what);
	for (const char *c = s; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", *c))
			die("%s: \"%s\": only letters, digits and _", what, s);
	return s;
}

static uint64_t u64(json_t *v, const char *what, uint64_t max)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) > max)
		die("%s: must be an integer from 0 to %" PRIu64, what, max);
	return (uint64_t)json_integer_value(v);
}

/* A NULL-terminated char *[] named sym, or nothing when v is absent (NULL). */
static bool strv(const char *sym, json_t *v, const char *what)
{
	size_t i;
	json_t *e;

	if (!v)
		return false;
	if (!json_is_array(v))
		die("%s: must be an array", what);
	if (!json_array_size(v) && !strcmp(what, "syscalls[].names"))
		die("%s: must not be empty", what); /* as the decoder: STRV_NONEMPTY */
	printf("static char *%s[] = {", sym);
	json_array_foreach(v, i, e) printf("\"%s\", ", lit(e, what));
	printf("NULL};\n");
	return true;
}

static void profile(const char *name, json_t *p)
{
	static const char *const top[] = {"defaultAction", "defaultErrnoRet", "architectures",
					  "syscalls", NULL};
	static const char *const rule[] = {"names", "action", "errnoRet", "args", NULL};
	static const char *const arg[] = {"index", "value", "valueTwo", "op", NULL};
	json_t *rules = json_object_get(p, "syscalls"), *r, *a;
	char sym[128];
	size_t i, j;
	bool archs;

	only(p, "profile", top);
	if (!json_is_array(rules))
		die("syscalls: must be an array");
	json_array_foreach(rules, i, r)
	{
		json_t *args = json_object_get(r, "args");
		only(r, "syscalls[]", rule);
		snprintf(sym, sizeof(sym), "%s_names_%zu", name, i);
		if (!strv(sym, json_object_get(r, "names"), "syscalls[].names"))
			die("syscalls[%zu]: names missing", i);
		if (!args)
			continue;
		if (!json_is_array(args))
			die("syscalls[%zu].args: must be an array", i);
		printf("static struct ward_seccomp_arg %s_args_%zu[] = {\n", name, i);
		json_array_foreach(args, j, a)
		{
			json_t *two = json_object_get(a, "valueTwo");
			only(a, "syscalls[].args[]", arg);
			printf("\t{.index = %" PRIu64 ", .value = UINT64_C(%" PRIu64
			       "), .value_two = UINT64_C(%" PRIu64 "), .op = \"%s\"},\n",
			       u64(json_object_get(a, "index"), "args[].index", 5),
			       u64(json_object_get(a, "value"), "args[].value", INT64_MAX),
			       two ? u64(two, "args[].valueTwo", INT64_MAX) : 0,
			       lit(json_object_get(a, "op"), "args[].op"));
		}
		printf("};\n");
	}
	printf("static struct ward_seccomp_rule %s_rules[] = {\n", name);
	json_array_foreach(rules, i, r)
	{
		json_t *err = json_object_get(r, "errnoRet"), *args = json_object_get(r, "args");
		printf("\t{.names = %s_names_%zu, .action = \"%s\"", name, i,
		       lit(json_object_get(r, "action"), "syscalls[].action"));
		if (err)
			printf(", .has_errno_ret = true, .errno_ret = %" PRIu64,
			       u64(err, "syscalls[].errnoRet", UINT32_MAX));
		if (args)
			printf(", .args = %s_args_%zu, .n_args = %zu", name, i,
			       json_array_size(args));
		printf("},\n");
	}
	printf("};\n");
	snprintf(sym, sizeof(sym), "%s_architectures", name);
	archs = strv(sym, json_object_get(p, "architectures"), "architectures");
	printf("const struct ward_seccomp ward_seccomp_builtin_%s = {\n", name);
	printf("\t.default_action = \"%s\",\n",
	       lit(json_object_get(p, "defaultAction"), "defaultAction"));
	if (json_object_get(p, "defaultErrnoRet"))
		printf("\t.has_default_errno_ret = true,\n\t.default_errno_ret = %" PRIu64 ",\n",
		       u64(json_object_get(p, "defaultErrnoRet"), "defaultErrnoRet", UINT32_MAX));
	if (archs)
		printf("\t.architectures = %s,\n", sym);
	printf("\t.syscalls = %s_rules,\n\t.n_syscalls = %zu,\n};\n\n", name,
	       json_array_size(rules));
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc % 2 == 0) {
		fprintf(stderr, "usage: builtin-gen NAME FILE [NAME FILE ...]\n");
		return 2;
	}
	printf("/* Generated by seccomp-profiles/builtin-gen.c: do not edit. */\n"
	       "#include <stdint.h>\n\n#include \"seccomp_profiles.h\"\n\n");
	for (int i = 1; i < argc; i += 2) {
		json_error_t e;
		json_t *p;

		file = argv[i + 1];
		p = json_load_file(file, JSON_REJECT_DUPLICATES, &e);
		if (!p)
			die("line %d: %s", e.line, e.text);
		{
			json_t *name = json_string(argv[i]);
			lit(name, "NAME");
			json_decref(name);
		}
		profile(argv[i], p);
		json_decref(p);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
