/* Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c): the input as a C string. */
#ifndef WARD_FUZZ_H
#define WARD_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* With WARD_FUZZ_DEBUG set (running a target on a few files by hand), why an input was
 * refused: for keeping the seeds such that they get far. */
__attribute__((format(printf, 1, 2))) static inline void fuzz_debug(const char *fmt, ...)
{
	va_list ap;
	if (!getenv("WARD_FUZZ_DEBUG"))
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
