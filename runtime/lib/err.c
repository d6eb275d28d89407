#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ward_failv(struct ward_err *e, int errnum, const char *fmt, va_list ap)
{
	int n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	if (n < 0)
		n = 0;
	if (errnum != 0 && (size_t)n < sizeof(e->msg))
		snprintf(e->msg + n, sizeof(e->msg) - (size_t)n, ": %s", strerror(errnum));
	e->errnum = errnum;
	return -1;
}

int ward_fail(struct ward_err *e, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ward_failv(e, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int ward_fail_errno(struct ward_err *e, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	ward_failv(e, saved, fmt, ap);
	va_end(ap);
	errno = saved;
	return -1;
}

int ward_wrap(struct ward_err *e, const char *fmt, ...)
{
	char prefix[512];
	char old[sizeof(e->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	/* Truncation is acceptable for an over-long chain of context. */
	size_t n = strnlen(prefix, sizeof(prefix));
	memcpy(e->msg, prefix, n);
	if (n + 2 < sizeof(e->msg)) {
		e->msg[n] = ':';
		e->msg[n + 1] = ' ';
		size_t room = sizeof(e->msg) - n - 3;
		size_t m = strnlen(old, room);
		memcpy(e->msg + n + 2, old, m);
		e->msg[n + 2 + m] = '\0';
	} else {
		e->msg[sizeof(e->msg) - 1] = '\0';
	}
	return -1;
}

void ward_err_clear(struct ward_err *e)
{
	e->errnum = 0;
	e->msg[0] = '\0';
}
