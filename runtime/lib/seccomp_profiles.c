/* The profiles' JSON is embedded with .incbin (no xxd needed); the Makefile rebuilds this
 * object when a profile changes. Each blob ends with a NUL byte. Their typed form is made
 * from the same files at build time ($(BUILD)/seccomp_builtin.c, seccomp-profiles/
 * builtin-gen.c). */
#include "seccomp_profiles.h"

#include <fcntl.h>
#include <string.h>

#include "util.h"

#define EMBED(sym, file)                                                                           \
	__asm__(".pushsection .rodata.ward_seccomp_" #sym ", \"a\"\n"                              \
		".global ward_seccomp_" #sym "_json\n"                                             \
		".hidden ward_seccomp_" #sym "_json\n"                                             \
		".type ward_seccomp_" #sym "_json, @object\n"                                      \
		"ward_seccomp_" #sym "_json:\n"                                                    \
		".incbin \"" file "\"\n"                                                           \
		".byte 0\n"                                                                        \
		".size ward_seccomp_" #sym "_json, . - ward_seccomp_" #sym "_json\n"               \
		".popsection\n");                                                                  \
	extern const char ward_seccomp_##sym##_json[]

EMBED(default, "seccomp-profiles/default.json");
EMBED(strict, "seccomp-profiles/strict.json");
EMBED(privileged, "seccomp-profiles/privileged.json");

const char *const ward_seccomp_profile_names[] = {"default", "strict", "privileged", NULL};
static const char *const profile_texts[] = {ward_seccomp_default_json, ward_seccomp_strict_json,
					    ward_seccomp_privileged_json};
static const struct ward_seccomp *const profile_structs[] = {
    &ward_seccomp_builtin_default, &ward_seccomp_builtin_strict, &ward_seccomp_builtin_privileged};

char *ward_seccomp_profile_load(const char *name_or_path, struct ward_err *err)
{
	size_t len;

	if (!name_or_path || !*name_or_path) {
		ward_fail(err, 0, "seccomp profile: empty name");
		return NULL;
	}
	for (size_t i = 0; ward_seccomp_profile_names[i]; i++)
		if (strcmp(name_or_path, ward_seccomp_profile_names[i]) == 0)
			return xstrdup(profile_texts[i]);
	if (name_or_path[0] == '/') {
		char *text = read_file_at(AT_FDCWD, name_or_path, &len, err);
		if (!text)
			ward_wrap(err, "seccomp profile \"%s\"", name_or_path);
		return text;
	}
	ward_fail(err, 0,
		  "seccomp profile \"%s\": not a built-in profile (default, strict, privileged) "
		  "nor an absolute path",
		  name_or_path);
	return NULL;
}

struct ward_seccomp *ward_seccomp_profile_parse(const char *text, const char *what,
						struct ward_err *err)
{
	for (size_t i = 0; ward_seccomp_profile_names[i]; i++)
		if (strcmp(text, profile_texts[i]) == 0)
			return ward_seccomp_dup(profile_structs[i]);
	return ward_seccomp_parse(text, what, err);
}
