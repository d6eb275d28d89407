/* PLACEHOLDER for the ttrpc server: accepts connections and closes them. The ttrpc/Task API
 * server (shim/ttrpc.c + task.c) replaces this file with the real shim_serve(). */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "serve.h"

int shim_serve(int listen_fd, const struct shim_opts *o)
{
	ward_debug("shim %s: serving %s (placeholder server: no ttrpc yet)", o->id, o->socket_path);
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			close(fd);
		} else if (errno != EINTR && errno != ECONNABORTED) {
			ward_error("accept on %s: %m", o->socket_path);
			return 1;
		}
	}
}
