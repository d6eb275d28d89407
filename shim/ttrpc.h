/* ttrpc, containerd's RPC protocol over unix sockets: frames, the Request/Response envelope
 * (protoc-c, shim/proto/github.com/containerd/ttrpc/request.proto), a single-threaded epoll server
 * whose calls may be answered later from any thread, and a small blocking client (events Forward to
 * containerd).
 *
 * Frame: length (BE32, data only, at most 4 MiB) | stream id (BE32) | type | flags | data.
 * Clients use odd, strictly increasing stream ids; responses may come out of order. */
#ifndef WARD_SHIM_TTRPC_H
#define WARD_SHIM_TTRPC_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "err.h"

#define TTRPC_HEADER_LEN 10
#define TTRPC_MAX_MSG	 (4u << 20)

enum ttrpc_type {
	TTRPC_TYPE_REQUEST = 1,
	TTRPC_TYPE_RESPONSE = 2,
};

/* gRPC status codes, as containerd's errdefs maps them. */
enum ttrpc_code {
	TTRPC_OK = 0,
	TTRPC_CANCELED = 1,
	TTRPC_UNKNOWN = 2,
	TTRPC_INVALID_ARGUMENT = 3,
	TTRPC_DEADLINE_EXCEEDED = 4,
	TTRPC_NOT_FOUND = 5,
	TTRPC_ALREADY_EXISTS = 6,
	TTRPC_PERMISSION_DENIED = 7,
	TTRPC_RESOURCE_EXHAUSTED = 8,
	TTRPC_FAILED_PRECONDITION = 9,
	TTRPC_ABORTED = 10,
	TTRPC_OUT_OF_RANGE = 11,
	TTRPC_UNIMPLEMENTED = 12,
	TTRPC_INTERNAL = 13,
	TTRPC_UNAVAILABLE = 14,
};

/* ---- envelope (package ttrpc / google.rpc.Status) ---- */

struct ttrpc_kv {
	char *key;
	char *value;
};

/* Request{service=1, method=2, payload=3, timeout_nano=4, metadata=5 (KeyValue{key=1,value=2})} */
struct ttrpc_request {
	char *service; /* "containerd.task.v2.Task" */
	char *method;  /* "Create" */
	uint8_t *payload;
	size_t payload_len;
	int64_t timeout_nano;
	struct ttrpc_kv *metadata;
	size_t n_metadata;
};

/* Response{status=1 (Status{code=1, message=2}), payload=2}; status omitted when code == 0. */
struct ttrpc_response {
	int32_t code;
	char *message;
	uint8_t *payload;
	size_t payload_len;
};

/* Encoders return a malloc'd buffer (never fail: allocation failure aborts). */
uint8_t *ttrpc_request_encode(const struct ttrpc_request *r, size_t *len);
uint8_t *ttrpc_response_encode(const struct ttrpc_response *r, size_t *len);
/* Decoders fill *r with malloc'd copies (NUL-terminated strings; empty fields are "" / NULL,0).
 * Unknown fields are skipped; malformed input fails with nothing left to free. */
int ttrpc_request_decode(const uint8_t *buf, size_t len, struct ttrpc_request *r,
			 struct ward_err *err);
int ttrpc_response_decode(const uint8_t *buf, size_t len, struct ttrpc_response *r,
			  struct ward_err *err);
void ttrpc_request_free(struct ttrpc_request *r);
void ttrpc_response_free(struct ttrpc_response *r);

/* ---- frames ---- */

struct ttrpc_header {
	uint32_t length;
	uint32_t stream_id;
	uint8_t type;
	uint8_t flags;
};

void ttrpc_header_pack(const struct ttrpc_header *h, uint8_t out[TTRPC_HEADER_LEN]);
void ttrpc_header_unpack(const uint8_t in[TTRPC_HEADER_LEN], struct ttrpc_header *h);
/* Blocking I/O of one whole frame. A frame over TTRPC_MAX_MSG is refused (not sent, or not
 * read: the stream is then out of sync and the caller must close it). read: *data is malloc'd
 * (NULL when length is 0); EOF before a whole frame is an error. */
int ttrpc_write_frame(int fd, uint32_t stream_id, uint8_t type, const void *data, size_t len,
		      struct ward_err *err);
int ttrpc_read_frame(int fd, struct ttrpc_header *h, uint8_t **data, struct ward_err *err);

/* ---- server ---- */

struct ttrpc_server;
struct ttrpc_call;

/* Called on the server's loop thread for a request to a registered (service, method). The
 * handler must complete `call` exactly once, with ttrpc_call_reply*() or ttrpc_call_fail():
 * either before returning, or later from any thread (keep the pointer; that is the asynchronous
 * reply, e.g. Task.Wait). The loop never waits for a handler's answer, so a pending call stalls
 * no other request. The request stays valid until the call is completed; if the connection
 * closed meanwhile, completing just frees the call. */
typedef void (*ttrpc_handler_fn)(struct ttrpc_call *call, const struct ttrpc_request *req,
				 void *data);

struct ttrpc_server *ttrpc_server_new(struct ward_err *err);
/* Complete or abandon every pending call first (calls left pending are freed with it). */
void ttrpc_server_free(struct ttrpc_server *srv);
/* Strings are copied. Registering the same (service, method) again replaces the handler. */
void ttrpc_server_register(struct ttrpc_server *srv, const char *service, const char *method,
			   ttrpc_handler_fn fn, void *data);
/* Serve a listening unix socket (the server takes the fd). Peers whose SO_PEERCRED uid differs
 * from our effective uid are refused. */
int ttrpc_server_add_listener(struct ttrpc_server *srv, int listen_fd, struct ward_err *err);
/* Serve one connected socket (the server takes the fd). */
int ttrpc_server_add_conn(struct ttrpc_server *srv, int fd, struct ward_err *err);
/* Call cb(fd, epoll events, data) on the loop thread when fd is readable (signalfd, pidfd...).
 * The caller keeps the fd; ttrpc_server_unwatch_fd before closing it. */
int ttrpc_server_watch_fd(struct ttrpc_server *srv, int fd,
			  void (*cb)(int fd, uint32_t events, void *data), void *data,
			  struct ward_err *err);
void ttrpc_server_unwatch_fd(struct ttrpc_server *srv, int fd);
/* Run the loop until ttrpc_server_stop (callable from any thread or a signal handler). */
int ttrpc_server_run(struct ttrpc_server *srv, struct ward_err *err);
void ttrpc_server_stop(struct ttrpc_server *srv);

/* Completion: copies the payload; any thread. */
void ttrpc_call_reply(struct ttrpc_call *call, const void *payload, size_t len);
/* Packs a protobuf-c message as the reply payload. */
void ttrpc_call_reply_msg(struct ttrpc_call *call, const ProtobufCMessage *msg);
void ttrpc_call_fail(struct ttrpc_call *call, enum ttrpc_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- client ---- */

struct ttrpc_client {
	int fd;
	uint32_t next_stream; /* next odd stream id */
};

/* address: "unix:///path" or "/path". */
int ttrpc_client_connect(struct ttrpc_client *c, const char *address, struct ward_err *err);
/* Send req (timeout_ms also bounds each read/write; 0 = none) and wait for its response. A
 * non-OK status is not an error here: look at resp->code / resp->message. */
int ttrpc_client_call(struct ttrpc_client *c, const struct ttrpc_request *req,
		      struct ttrpc_response *resp, int timeout_ms, struct ward_err *err);
void ttrpc_client_close(struct ttrpc_client *c);

#endif
