/* libFuzzer target: a container's state.json (ward_state_parse, what ward_state_read does
 * with the file's text), and the runc-shaped state JSON `ward state` prints from it. */
#include "fuzz.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	struct ward_err err = {0};
	struct ward_state st;

	if (ward_state_parse(text, &st, &err) == 0) {
		(void)ward_id_valid(st.id);
		free(ward_state_json(&st, WARD_STOPPED, true));
		ward_state_clear(&st);
	}
	free(text);
	return 0;
}
