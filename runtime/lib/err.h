/* One error type for the whole engine: filled once where the failure happens,
 * wrapped with context on the way up, printed once by the CLI. */
#ifndef WARD_ERR_H
#define WARD_ERR_H

#include <stdarg.h>
#include <stddef.h>

struct ward_err {
	int errnum;	/* errno of the root cause, 0 if none */
	char msg[1024]; /* "context: context: cause" */
};

/* Set the error (errnum may be 0). Appends ": strerror(errnum)" when errnum != 0. Returns -1. */
int ward_fail(struct ward_err *e, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* ward_fail with a va_list. Returns -1. */
int ward_failv(struct ward_err *e, int errnum, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* Like ward_fail with errnum = errno. Returns -1. */
int ward_fail_errno(struct ward_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefix context: "fmt: previous message". Returns -1. */
int ward_wrap(struct ward_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ward_err_clear(struct ward_err *e);

#endif
