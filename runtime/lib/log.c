#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static int log_fd = 2;
static bool log_json;
static bool log_debug;

int ward_log_open(const char *path, bool json, bool debug)
{
	log_json = json;
	log_debug = debug;
	if (path && *path) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
		log_fd = fd;
	}
	return 0;
}

int ward_log_fd(void)
{
	return log_fd;
}

bool ward_log_is_file(void)
{
	return log_fd != 2;
}

static const char *level_name(enum ward_log_level l)
{
	switch (l) {
	case WARD_LOG_DEBUG:
		return "debug";
	case WARD_LOG_INFO:
		return "info";
	case WARD_LOG_WARN:
		return "warning";
	default:
		return "error";
	}
}

/* JSON string escaping for the message. */
static size_t json_escape(char *out, size_t cap, const char *s)
{
	size_t n = 0;
	for (; *s && n + 7 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else if (c < 0x20) {
			n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
		} else {
			out[n++] = (char)c;
		}
	}
	out[n] = '\0';
	return n;
}

void ward_vlog(enum ward_log_level level, const char *fmt, va_list ap)
{
	char msg[2048], line[4600], ts[64];
	int n;

	if (level == WARD_LOG_DEBUG && !log_debug)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	rfc3339_now(ts, sizeof(ts));
	if (log_json) {
		char esc[4200];
		json_escape(esc, sizeof(esc), msg);
		n = snprintf(line, sizeof(line),
			     "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
			     level_name(level), esc, ts);
	} else if (log_fd == 2) {
		n = snprintf(line, sizeof(line), "ward: %s%s\n",
			     level == WARD_LOG_ERROR
				 ? ""
				 : (level == WARD_LOG_WARN ? "warning: " : "debug: "),
			     msg);
	} else {
		n = snprintf(line, sizeof(line), "time=\"%s\" level=%s msg=\"%s\"\n", ts,
			     level_name(level), msg);
	}
	if (n > 0)
		(void)write_all(log_fd, line,
				(size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

void ward_log(enum ward_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ward_vlog(level, fmt, ap);
	va_end(ap);
}

/* On /run (tmpfs), so a marker lives as long as the boot; the default state root. */
#define ONCE_DIR "/run/ward"

/* True if this is the first call for name in this boot (or it cannot be told). */
static bool first_in_boot(const char *name)
{
	char file[128];
	cleanup_fd int dfd = -1;
	int fd;

	if (mkdir(ONCE_DIR, 0711) < 0 && errno != EEXIST)
		return true;
	dfd = open(ONCE_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return true;
	/* '@' is no container id character: ward list never takes it for a container */
	snprintf(file, sizeof(file), "@once-%s", name);
	fd = openat(dfd, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno != EEXIST;
	close(fd);
	return true;
}

void ward_warn_once_per_boot(const char *name, const char *fmt, ...)
{
	va_list ap;

	if (!log_debug && !first_in_boot(name))
		return;
	va_start(ap, fmt);
	ward_vlog(WARD_LOG_WARN, fmt, ap);
	va_end(ap);
}
