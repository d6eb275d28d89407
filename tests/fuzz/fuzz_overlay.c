/* libFuzzer target: an overlay's super options as mountinfo shows them (ward_overlay_parse). */
#include "fuzz.h"
#include "overlay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	struct ward_err err = {0};
	struct ward_overlay_opts o;

	if (ward_overlay_parse(text, &o, &err) == 0)
		ward_overlay_opts_clear(&o);
	free(text);
	return 0;
}
