/* One logger: text (logrus-like) or runc's JSON lines, to stderr or --log FILE. */
#ifndef WARD_LOG_H
#define WARD_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum ward_log_level { WARD_LOG_DEBUG, WARD_LOG_INFO, WARD_LOG_WARN, WARD_LOG_ERROR };

/* path NULL = stderr. json selects runc's {"level","msg","time"} lines. */
int ward_log_open(const char *path, bool json, bool debug);
void ward_log(enum ward_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ward_vlog(enum ward_log_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* fd of the log file (or 2); processes that must keep logging keep it (CLOEXEC). */
int ward_log_fd(void);
/* True if the log goes to a file (so errors must also be printed on stderr). */
bool ward_log_is_file(void);

/* A warning about the host, not the container (no AppArmor): said by the first ward of a
 * boot to reach it, and by every ward run with --debug; the others log it at debug level.
 * The marker /run/ward/@once-NAME (tmpfs: it lives as long as the boot) records that it was
 * said; where the marker cannot be made, the warning is said every time. */
void ward_warn_once_per_boot(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define ward_debug(...) ward_log(WARD_LOG_DEBUG, __VA_ARGS__)
#define ward_info(...)	ward_log(WARD_LOG_INFO, __VA_ARGS__)
#define ward_warn(...)	ward_log(WARD_LOG_WARN, __VA_ARGS__)
#define ward_error(...) ward_log(WARD_LOG_ERROR, __VA_ARGS__)

#endif
