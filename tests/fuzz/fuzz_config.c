/* libFuzzer target: the admin's configuration (ward_config_parse). The input is ward.json,
 * a NUL byte, then tenants.d/a.json; without a NUL it is ward.json alone, and an empty
 * ward.json stands for none (the built-in global settings). */
#include "config.h"
#include "fuzz.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	size_t glen = strlen(text);
	const char *names[] = {"a"};
	const char *tenants[] = {glen < size ? text + glen + 1 : NULL};
	struct ward_err err = {0};
	struct ward_config *c =
	    ward_config_parse(glen ? text : NULL, names, tenants, tenants[0] ? 1 : 0, &err);

	if (c) {
		/* What `ward policy explain` prints of every tenant. */
		for (size_t i = 0; i < c->n_tenants; i++)
			free(ward_tenant_json(&c->tenants[i]));
		(void)ward_config_tenant(c, "a");
		ward_config_free(c);
	}
	free(text);
	return 0;
}
