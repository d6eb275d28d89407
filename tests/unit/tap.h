/* Minimal TAP for C unit tests: one "ok N - name" / "not ok N - name" line per check.
 * Every line is flushed at once: a test that forks must not hand its children unflushed
 * lines to print again (stdout is a pipe, so fully buffered, under the runner). */
#ifndef WARD_TAP_H
#define WARD_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

#define CHECK(cond, name)                                                                          \
	do {                                                                                       \
		tap_n++;                                                                           \
		if (cond) {                                                                        \
			printf("ok %d - %s\n", tap_n, name);                                       \
		} else {                                                                           \
			tap_failed++;                                                              \
			printf("not ok %d - %s\n#   at %s:%d: %s\n", tap_n, name, __FILE__,        \
			       __LINE__, #cond);                                                   \
		}                                                                                  \
		fflush(stdout);                                                                    \
	} while (0)

#define CHECK_STR_CONTAINS(hay, needle, name)                                                      \
	do {                                                                                       \
		const char *_h = (hay);                                                            \
		CHECK(_h &&strstr(_h, (needle)), name);                                            \
		if (!(_h && strstr(_h, (needle))))                                                 \
			printf("#   got: %s\n#   want substring: %s\n", _h ? _h : "(null)",        \
			       (needle));                                                          \
	} while (0)

#define TAP_DONE()                                                                                 \
	do {                                                                                       \
		printf("1..%d\n", tap_n);                                                          \
		return tap_failed ? 1 : 0;                                                         \
	} while (0)

#endif
