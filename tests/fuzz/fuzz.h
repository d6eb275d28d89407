/* Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c): the input as a C string. */
#ifndef WARD_FUZZ_H
#define WARD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The n bytes at d and a NUL (an embedded NUL ends the text for parsers of C strings). */
static inline char *fuzz_cstr(const uint8_t *d, size_t n)
{
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, d, n);
	s[n] = '\0';
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
