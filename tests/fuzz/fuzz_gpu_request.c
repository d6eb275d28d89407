/* libFuzzer target: the GPUs a config.json asks for (ward_gpu_request_from_json, after the decoder
 * create uses: CDI annotations, linux.devices, NVIDIA_VISIBLE_DEVICES). */
#include "fuzz.h"
#include "gpu.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	struct ward_err err = {0};
	struct ward_gpu_request req = {0};

	json_t *root = ward_json_decode(text, strlen(text), &err);

	if (root && ward_gpu_request_from_json(root, &req, &err) == 0)
		ward_gpu_request_clear(&req);
	json_decref(root);
	free(text);
	return 0;
}
