/* libFuzzer target: config.json as the orchestrator writes it (ward_spec_parse), and the
 * same text as an exec --process file (ward_process_parse). */
#include "fuzz.h"
#include "spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ward_err err = {0};
	struct ward_spec *s = ward_spec_parse((const char *)data, size, "/bundle", &err);
	struct ward_process *p;

	if (s) {
		/* The lookups the runtime does on every parsed spec. */
		(void)ward_spec_ns(s, 0);
		(void)ward_spec_annotation(s, WARD_ANN_TENANT);
		ward_spec_free(s);
	} else {
		fuzz_debug("%s", err.msg);
	}
	p = ward_process_parse((const char *)data, size, "process.json", &err);
	ward_process_free(p);
	return 0;
}
