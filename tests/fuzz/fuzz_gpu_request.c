/* libFuzzer target: the GPUs a config.json asks for (ward_gpu_request_parse: CDI
 * annotations, linux.devices, NVIDIA_VISIBLE_DEVICES). */
#include "fuzz.h"
#include "gpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	struct ward_err err = {0};
	struct ward_gpu_request req = {0};

	if (ward_gpu_request_parse(text, &req, &err) == 0)
		ward_gpu_request_clear(&req);
	free(text);
	return 0;
}
