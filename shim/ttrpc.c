/* ttrpc: envelope codec, frames, the epoll server and the blocking client (see ttrpc.h). */
#include "ttrpc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "github.com/containerd/ttrpc/request.pb-c.h"
#include "log.h"
#include "util.h"

/* ================================================================================== */
/* envelope: ttrpc.Request / ttrpc.Response (shim/proto/.../ttrpc/request.proto)         */
/* ================================================================================== */

static uint8_t *pack(const ProtobufCMessage *m, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = xmalloc(*len + 1);
	protobuf_c_message_pack(m, buf);
	return buf;
}

static char *str_or_empty(const char *s)
{
	return (char *)(s ? s : "");
}

uint8_t *ttrpc_request_encode(const struct ttrpc_request *r, size_t *len)
{
	Ttrpc__Request m = TTRPC__REQUEST__INIT;
	cleanup_free Ttrpc__KeyValue *kv = xcalloc(r->n_metadata + 1, sizeof(*kv));
	cleanup_free Ttrpc__KeyValue **kvp = xcalloc(r->n_metadata + 1, sizeof(*kvp));
	m.service = str_or_empty(r->service);
	m.method = str_or_empty(r->method);
	m.payload.data = r->payload;
	m.payload.len = r->payload_len;
	m.timeout_nano = r->timeout_nano;
	for (size_t i = 0; i < r->n_metadata; i++) {
		ttrpc__key_value__init(&kv[i]);
		kv[i].key = str_or_empty(r->metadata[i].key);
		kv[i].value = str_or_empty(r->metadata[i].value);
		kvp[i] = &kv[i];
	}
	m.n_metadata = r->n_metadata;
	m.metadata = kvp;
	return pack(&m.base, len);
}

uint8_t *ttrpc_response_encode(const struct ttrpc_response *r, size_t *len)
{
	Ttrpc__Response m = TTRPC__RESPONSE__INIT;
	Google__Rpc__Status st = GOOGLE__RPC__STATUS__INIT;
	/* on success the status is omitted, as ttrpc does */
	if (r->code != TTRPC_OK) {
		st.code = r->code;
		st.message = str_or_empty(r->message);
		m.status = &st;
	}
	m.payload.data = r->payload;
	m.payload.len = r->payload_len;
	return pack(&m.base, len);
}

static uint8_t *bytes_dup(const ProtobufCBinaryData *b)
{
	if (!b->len)
		return NULL;
	uint8_t *p = xmalloc(b->len);
	memcpy(p, b->data, b->len);
	return p;
}

int ttrpc_request_decode(const uint8_t *buf, size_t len, struct ttrpc_request *r,
			 struct ward_err *err)
{
	*r = (struct ttrpc_request){0};
	Ttrpc__Request *m = ttrpc__request__unpack(NULL, len, buf);
	if (!m)
		return ward_fail(err, EBADMSG, "decode ttrpc request");
	r->service = xstrdup(m->service);
	r->method = xstrdup(m->method);
	r->payload = bytes_dup(&m->payload);
	r->payload_len = m->payload.len;
	r->timeout_nano = m->timeout_nano;
	r->n_metadata = m->n_metadata;
	r->metadata = m->n_metadata ? xcalloc(m->n_metadata, sizeof(*r->metadata)) : NULL;
	for (size_t i = 0; i < m->n_metadata; i++) {
		r->metadata[i].key = xstrdup(m->metadata[i]->key);
		r->metadata[i].value = xstrdup(m->metadata[i]->value);
	}
	ttrpc__request__free_unpacked(m, NULL);
	return 0;
}

int ttrpc_response_decode(const uint8_t *buf, size_t len, struct ttrpc_response *r,
			  struct ward_err *err)
{
	*r = (struct ttrpc_response){0};
	Ttrpc__Response *m = ttrpc__response__unpack(NULL, len, buf);
	if (!m)
		return ward_fail(err, EBADMSG, "decode ttrpc response");
	r->code = m->status ? m->status->code : TTRPC_OK;
	r->message = xstrdup(m->status ? m->status->message : "");
	r->payload = bytes_dup(&m->payload);
	r->payload_len = m->payload.len;
	ttrpc__response__free_unpacked(m, NULL);
	return 0;
}

void ttrpc_request_free(struct ttrpc_request *r)
{
	free(r->service);
	free(r->method);
	free(r->payload);
	for (size_t i = 0; i < r->n_metadata; i++) {
		free(r->metadata[i].key);
		free(r->metadata[i].value);
	}
	free(r->metadata);
	*r = (struct ttrpc_request){0};
}

void ttrpc_response_free(struct ttrpc_response *r)
{
	free(r->message);
	free(r->payload);
	*r = (struct ttrpc_response){0};
}

/* ================================================================================== */
/* frames                                                                              */
/* ================================================================================== */

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void ttrpc_header_pack(const struct ttrpc_header *h, uint8_t out[TTRPC_HEADER_LEN])
{
	put_be32(out, h->length);
	put_be32(out + 4, h->stream_id);
	out[8] = h->type;
	out[9] = h->flags;
}

void ttrpc_header_unpack(const uint8_t in[TTRPC_HEADER_LEN], struct ttrpc_header *h)
{
	h->length = get_be32(in);
	h->stream_id = get_be32(in + 4);
	h->type = in[8];
	h->flags = in[9];
}

/* Header + data in one buffer (what the server queues). */
static uint8_t *frame_build(uint32_t stream_id, uint8_t type, const void *data, size_t len)
{
	uint8_t *f = xmalloc(TTRPC_HEADER_LEN + len);
	ttrpc_header_pack(
	    &(struct ttrpc_header){.length = (uint32_t)len, .stream_id = stream_id, .type = type},
	    f);
	if (len)
		memcpy(f + TTRPC_HEADER_LEN, data, len);
	return f;
}

int ttrpc_write_frame(int fd, uint32_t stream_id, uint8_t type, const void *data, size_t len,
		      struct ward_err *err)
{
	if (len > TTRPC_MAX_MSG)
		return ward_fail(err, EMSGSIZE, "ttrpc frame of %zu bytes exceeds %u", len,
				 TTRPC_MAX_MSG);
	cleanup_free uint8_t *f = frame_build(stream_id, type, data, len);
	if (send_all(fd, f, TTRPC_HEADER_LEN + len) < 0)
		return ward_fail_errno(err, "write ttrpc frame");
	return 0;
}

int ttrpc_read_frame(int fd, struct ttrpc_header *h, uint8_t **data, struct ward_err *err)
{
	uint8_t hdr[TTRPC_HEADER_LEN];
	*data = NULL;
	ssize_t n = read_exact(fd, hdr, sizeof(hdr));
	if (n < 0)
		return ward_fail_errno(err, "read ttrpc frame header");
	if (n != (ssize_t)sizeof(hdr))
		return ward_fail(err, n ? EPROTO : ECONNRESET,
				 n ? "truncated ttrpc frame header" : "ttrpc connection closed");
	ttrpc_header_unpack(hdr, h);
	if (h->length > TTRPC_MAX_MSG)
		return ward_fail(err, EMSGSIZE, "ttrpc frame of %u bytes exceeds %u", h->length,
				 TTRPC_MAX_MSG);
	if (!h->length)
		return 0;
	cleanup_free uint8_t *buf = xmalloc(h->length);
	n = read_exact(fd, buf, h->length);
	if (n < 0)
		return ward_fail_errno(err, "read ttrpc frame");
	if (n != (ssize_t)h->length)
		return ward_fail(err, EPROTO, "truncated ttrpc frame: %zd of %u bytes", n,
				 h->length);
	*data = steal_ptr(buf);
	return 0;
}

/* ================================================================================== */
/* server                                                                              */
/* ================================================================================== */

enum watch_kind { W_LISTENER, W_CONN, W_WAKE, W_USER };

/* First member of everything registered with epoll. */
struct watch {
	enum watch_kind kind;
	int fd;
};

struct handler {
	struct handler *next;
	char *service, *method;
	ttrpc_handler_fn fn;
	void *data;
};

struct listener {
	struct watch w;
	struct listener *next;
};

struct user_watch {
	struct watch w;
	struct user_watch *next;
	void (*cb)(int fd, uint32_t events, void *data);
	void *data;
};

struct conn {
	struct watch w;
	struct conn *next;
	uint64_t id;
	uint8_t *in; /* bytes received, not yet a whole frame */
	size_t in_len, in_cap;
	uint8_t *out; /* bytes to send; out_off already sent */
	size_t out_len, out_off;
	uint32_t last_stream;
	bool want_out; /* EPOLLOUT registered */
	bool dead;
};

/* A reply on its way from another thread to the loop. */
struct pending {
	struct pending *next;
	uint64_t conn_id;
	uint8_t *frame;
	size_t len;
};

struct ttrpc_call {
	struct ttrpc_server *srv;
	uint64_t conn_id;
	uint32_t stream_id;
	struct ttrpc_request req;
};

struct ttrpc_server {
	int epfd;
	struct watch wake; /* eventfd: replies queued, or stop */
	struct handler *handlers;
	struct listener *listeners;
	struct user_watch *user;
	struct conn *conns;
	size_t n_conns;
	uint64_t next_conn_id;
	uid_t uid;

	pthread_mutex_t lock; /* guards queue */
	struct pending *queue, **queue_tail;
	volatile int stop;
	bool running;
	pthread_t loop_thread;
};

static int ep_add(struct ttrpc_server *srv, struct watch *w, uint32_t events, struct ward_err *err)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0)
		return ward_fail_errno(err, "epoll add fd %d", w->fd);
	return 0;
}

struct ttrpc_server *ttrpc_server_new(struct ward_err *err)
{
	struct ttrpc_server *srv = xcalloc(1, sizeof(*srv));
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	srv->wake = (struct watch){.kind = W_WAKE, .fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};
	srv->uid = geteuid();
	srv->queue_tail = &srv->queue;
	srv->next_conn_id = 1;
	pthread_mutex_init(&srv->lock, NULL);
	if (srv->epfd < 0 || srv->wake.fd < 0) {
		ward_fail_errno(err, "create ttrpc server");
		ttrpc_server_free(srv);
		return NULL;
	}
	if (ep_add(srv, &srv->wake, EPOLLIN, err) < 0) {
		ttrpc_server_free(srv);
		return NULL;
	}
	return srv;
}

static void conn_free(struct conn *c)
{
	close(c->w.fd);
	free(c->in);
	free(c->out);
	free(c);
}

void ttrpc_server_free(struct ttrpc_server *srv)
{
	if (!srv)
		return;
	for (struct conn *c = srv->conns, *next; c; c = next) {
		next = c->next;
		conn_free(c);
	}
	for (struct listener *l = srv->listeners, *next; l; l = next) {
		next = l->next;
		close(l->w.fd);
		free(l);
	}
	for (struct user_watch *u = srv->user, *next; u; u = next) {
		next = u->next;
		free(u);
	}
	for (struct handler *h = srv->handlers, *next; h; h = next) {
		next = h->next;
		free(h->service);
		free(h->method);
		free(h);
	}
	for (struct pending *p = srv->queue, *next; p; p = next) {
		next = p->next;
		free(p->frame);
		free(p);
	}
	if (srv->wake.fd >= 0)
		close(srv->wake.fd);
	if (srv->epfd >= 0)
		close(srv->epfd);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

void ttrpc_server_register(struct ttrpc_server *srv, const char *service, const char *method,
			   ttrpc_handler_fn fn, void *data)
{
	for (struct handler *h = srv->handlers; h; h = h->next) {
		if (strcmp(h->service, service) == 0 && strcmp(h->method, method) == 0) {
			h->fn = fn;
			h->data = data;
			return;
		}
	}
	struct handler *h = xcalloc(1, sizeof(*h));
	h->service = xstrdup(service);
	h->method = xstrdup(method);
	h->fn = fn;
	h->data = data;
	h->next = srv->handlers;
	srv->handlers = h;
}

int ttrpc_server_add_listener(struct ttrpc_server *srv, int listen_fd, struct ward_err *err)
{
	struct listener *l = xcalloc(1, sizeof(*l));
	l->w = (struct watch){.kind = W_LISTENER, .fd = listen_fd};
	if (ep_add(srv, &l->w, EPOLLIN, err) < 0) {
		close(listen_fd);
		free(l);
		return -1;
	}
	l->next = srv->listeners;
	srv->listeners = l;
	return 0;
}

int ttrpc_server_add_conn(struct ttrpc_server *srv, int fd, struct ward_err *err)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		ward_fail_errno(err, "ttrpc connection fd %d", fd);
		close(fd);
		return -1;
	}
	struct conn *c = xcalloc(1, sizeof(*c));
	c->w = (struct watch){.kind = W_CONN, .fd = fd};
	c->id = srv->next_conn_id++;
	if (ep_add(srv, &c->w, EPOLLIN | EPOLLRDHUP, err) < 0) {
		conn_free(c);
		return -1;
	}
	c->next = srv->conns;
	srv->conns = c;
	srv->n_conns++;
	return 0;
}

int ttrpc_server_watch_fd(struct ttrpc_server *srv, int fd,
			  void (*cb)(int fd, uint32_t events, void *data), void *data,
			  struct ward_err *err)
{
	struct user_watch *u = xcalloc(1, sizeof(*u));
	u->w = (struct watch){.kind = W_USER, .fd = fd};
	u->cb = cb;
	u->data = data;
	if (ep_add(srv, &u->w, EPOLLIN, err) < 0) {
		free(u);
		return -1;
	}
	u->next = srv->user;
	srv->user = u;
	return 0;
}

void ttrpc_server_unwatch_fd(struct ttrpc_server *srv, int fd)
{
	for (struct user_watch **pp = &srv->user; *pp; pp = &(*pp)->next) {
		if ((*pp)->w.fd == fd) {
			struct user_watch *u = *pp;
			*pp = u->next;
			epoll_ctl(srv->epfd, EPOLL_CTL_DEL, fd, NULL);
			free(u);
			return;
		}
	}
}

void ttrpc_server_stop(struct ttrpc_server *srv)
{
	uint64_t one = 1;
	srv->stop = 1;
	/* async-signal-safe; a full counter (EAGAIN) still wakes the loop */
	if (write(srv->wake.fd, &one, sizeof(one)) < 0) {
	}
}

static struct conn *conn_by_id(struct ttrpc_server *srv, uint64_t id)
{
	for (struct conn *c = srv->conns; c; c = c->next)
		if (c->id == id && !c->dead)
			return c;
	return NULL;
}

/* Send what we can; EPOLLOUT for the rest. -1 (and dead) when the peer is gone. */
static int conn_flush(struct ttrpc_server *srv, struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w =
		    send(c->w.fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			c->dead = true;
			return -1;
		}
		c->out_off += (size_t)w;
	}
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	bool want = c->out_len > 0;
	if (want != c->want_out) {
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0),
					 .data.ptr = &c->w};
		epoll_ctl(srv->epfd, EPOLL_CTL_MOD, c->w.fd, &ev);
		c->want_out = want;
	}
	return 0;
}

static void conn_send(struct ttrpc_server *srv, struct conn *c, const uint8_t *frame, size_t len)
{
	if (c->out_off && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	c->out = xrealloc(c->out, c->out_len + len);
	memcpy(c->out + c->out_len, frame, len);
	c->out_len += len;
	conn_flush(srv, c);
}

static bool on_loop_thread(const struct ttrpc_server *srv)
{
	return srv->running && pthread_equal(pthread_self(), srv->loop_thread);
}

/* Deliver one response frame to connection conn_id (dropped if it has gone). */
static void deliver(struct ttrpc_server *srv, uint64_t conn_id, uint8_t *frame, size_t len)
{
	if (on_loop_thread(srv)) {
		struct conn *c = conn_by_id(srv, conn_id);
		if (c)
			conn_send(srv, c, frame, len);
		free(frame);
		return;
	}
	struct pending *p = xcalloc(1, sizeof(*p));
	*p = (struct pending){.conn_id = conn_id, .frame = frame, .len = len};
	pthread_mutex_lock(&srv->lock);
	*srv->queue_tail = p;
	srv->queue_tail = &p->next;
	pthread_mutex_unlock(&srv->lock);
	uint64_t one = 1;
	if (write(srv->wake.fd, &one, sizeof(one)) < 0) {
	}
}

static void drain_queue(struct ttrpc_server *srv)
{
	uint64_t n;
	if (read(srv->wake.fd, &n, sizeof(n)) < 0) {
	}
	pthread_mutex_lock(&srv->lock);
	struct pending *p = srv->queue;
	srv->queue = NULL;
	srv->queue_tail = &srv->queue;
	pthread_mutex_unlock(&srv->lock);
	while (p) {
		struct pending *next = p->next;
		struct conn *c = conn_by_id(srv, p->conn_id);
		if (c)
			conn_send(srv, c, p->frame, p->len);
		free(p->frame);
		free(p);
		p = next;
	}
}

static void respond(struct ttrpc_server *srv, uint64_t conn_id, uint32_t stream_id,
		    const struct ttrpc_response *resp)
{
	size_t len;
	cleanup_free uint8_t *data = ttrpc_response_encode(resp, &len);
	if (len > TTRPC_MAX_MSG) {
		free(data);
		char msg[96];
		snprintf(msg, sizeof(msg), "response of %zu bytes exceeds the %u byte limit", len,
			 TTRPC_MAX_MSG);
		data = ttrpc_response_encode(
		    &(struct ttrpc_response){.code = TTRPC_RESOURCE_EXHAUSTED, .message = msg},
		    &len);
	}
	deliver(srv, conn_id, frame_build(stream_id, TTRPC_TYPE_RESPONSE, data, len),
		TTRPC_HEADER_LEN + len);
}

static void call_free(struct ttrpc_call *call)
{
	ttrpc_request_free(&call->req);
	free(call);
}

void ttrpc_call_reply(struct ttrpc_call *call, const void *payload, size_t len)
{
	struct ttrpc_response resp = {.payload = (uint8_t *)payload, .payload_len = len};
	respond(call->srv, call->conn_id, call->stream_id, &resp);
	call_free(call);
}

void ttrpc_call_reply_msg(struct ttrpc_call *call, const ProtobufCMessage *msg)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	cleanup_free uint8_t *buf = xmalloc(len ? len : 1);
	protobuf_c_message_pack(msg, buf);
	ttrpc_call_reply(call, buf, len);
}

static void fail_v(struct ttrpc_server *srv, uint64_t conn_id, uint32_t stream_id,
		   enum ttrpc_code code, const char *fmt, va_list ap)
{
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	respond(srv, conn_id, stream_id, &(struct ttrpc_response){.code = code, .message = msg});
}

void ttrpc_call_fail(struct ttrpc_call *call, enum ttrpc_code code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_v(call->srv, call->conn_id, call->stream_id, code, fmt, ap);
	va_end(ap);
	call_free(call);
}

static struct handler *find_handler(struct ttrpc_server *srv, const char *service,
				    const char *method, bool *service_known)
{
	*service_known = false;
	for (struct handler *h = srv->handlers; h; h = h->next) {
		if (strcmp(h->service, service) != 0)
			continue;
		*service_known = true;
		if (strcmp(h->method, method) == 0)
			return h;
	}
	return NULL;
}

/* One whole frame from c. -1: protocol violation, close the connection. */
static int handle_frame(struct ttrpc_server *srv, struct conn *c, const struct ttrpc_header *h,
			const uint8_t *data)
{
	struct ward_err err = {0};
	if (h->type != TTRPC_TYPE_REQUEST) {
		ward_debug("ttrpc: connection %llu: unexpected frame type %u, closing",
			   (unsigned long long)c->id, h->type);
		return -1;
	}
	struct ttrpc_call *call = xcalloc(1, sizeof(*call));
	*call = (struct ttrpc_call){.srv = srv, .conn_id = c->id, .stream_id = h->stream_id};
	if (ttrpc_request_decode(data, h->length, &call->req, &err) < 0) {
		ward_debug("ttrpc: connection %llu: %s, closing", (unsigned long long)c->id,
			   err.msg);
		free(call);
		return -1;
	}
	if (h->stream_id % 2 != 1) {
		ttrpc_call_fail(call, TTRPC_INVALID_ARGUMENT,
				"stream id %u: must be odd for client-initiated streams",
				h->stream_id);
		return 0;
	}
	if (h->stream_id <= c->last_stream) {
		ttrpc_call_fail(call, TTRPC_INVALID_ARGUMENT,
				"stream id %u: must increase (last %u)", h->stream_id,
				c->last_stream);
		return 0;
	}
	c->last_stream = h->stream_id;

	bool service_known;
	struct handler *hd = find_handler(srv, call->req.service, call->req.method, &service_known);
	if (!hd) {
		if (service_known)
			ttrpc_call_fail(call, TTRPC_UNIMPLEMENTED, "%s/%s: method not implemented",
					call->req.service, call->req.method);
		else
			ttrpc_call_fail(call, TTRPC_UNIMPLEMENTED, "service %s not implemented",
					call->req.service);
		return 0;
	}
	hd->fn(call, &call->req, hd->data);
	return 0;
}

static void conn_read(struct ttrpc_server *srv, struct conn *c)
{
	for (;;) {
		if (c->in_cap - c->in_len < 4096) {
			c->in_cap = c->in_cap ? c->in_cap * 2 : 16384;
			c->in = xrealloc(c->in, c->in_cap);
		}
		ssize_t n = recv(c->w.fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				c->dead = true;
			break;
		}
		if (n == 0) { /* EOF; a partial frame left in c->in is dropped with it */
			c->dead = true;
			break;
		}
		c->in_len += (size_t)n;

		size_t off = 0;
		while (!c->dead && c->in_len - off >= TTRPC_HEADER_LEN) {
			struct ttrpc_header h;
			ttrpc_header_unpack(c->in + off, &h);
			if (h.length > TTRPC_MAX_MSG) {
				ward_debug("ttrpc: connection %llu: frame of %u bytes, closing",
					   (unsigned long long)c->id, h.length);
				c->dead = true;
				break;
			}
			if (c->in_len - off < TTRPC_HEADER_LEN + (size_t)h.length)
				break;
			if (handle_frame(srv, c, &h, c->in + off + TTRPC_HEADER_LEN) < 0)
				c->dead = true;
			off += TTRPC_HEADER_LEN + h.length;
		}
		if (c->dead)
			break;
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
	}
}

static void reap_dead(struct ttrpc_server *srv)
{
	for (struct conn **pp = &srv->conns; *pp;) {
		struct conn *c = *pp;
		if (!c->dead) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->w.fd, NULL);
		conn_free(c);
		srv->n_conns--;
	}
}

static void accept_conns(struct ttrpc_server *srv, struct listener *l)
{
	for (;;) {
		int fd = accept4(l->w.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				ward_warn("ttrpc: accept: %s", strerror(errno));
			return;
		}
		struct ucred cred;
		socklen_t cl = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
			ward_warn("ttrpc: SO_PEERCRED: %s", strerror(errno));
			close(fd);
			continue;
		}
		if (cred.uid != srv->uid) {
			ward_warn("ttrpc: refusing pid %d: uid %u is not ours", (int)cred.pid,
				  (unsigned)cred.uid);
			close(fd);
			continue;
		}
		struct ward_err err = {0};
		if (ttrpc_server_add_conn(srv, fd, &err) < 0)
			ward_warn("ttrpc: %s", err.msg);
	}
}

int ttrpc_server_run(struct ttrpc_server *srv, struct ward_err *err)
{
	srv->loop_thread = pthread_self();
	srv->running = true;
	int rc = 0;
	while (!srv->stop) {
		struct epoll_event evs[32];
		int n = epoll_wait(srv->epfd, evs, ARRAY_SIZE(evs), -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = ward_fail_errno(err, "ttrpc server epoll_wait");
			break;
		}
		for (int i = 0; i < n; i++) {
			struct watch *w = evs[i].data.ptr;
			uint32_t e = evs[i].events;
			bool user = w->kind == W_USER; /* the callback may free w */
			switch (w->kind) {
			case W_WAKE:
				drain_queue(srv);
				break;
			case W_LISTENER:
				accept_conns(srv, (struct listener *)w);
				break;
			case W_USER: {
				struct user_watch *u = (struct user_watch *)w;
				u->cb(w->fd, e, u->data);
				break;
			}
			case W_CONN: {
				struct conn *c = (struct conn *)w;
				if (c->dead)
					break;
				if (e & EPOLLOUT)
					conn_flush(srv, c);
				if (!c->dead && (e & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
					conn_read(srv, c);
				break;
			}
			}
			/* A user callback may unwatch a later fd of this batch: stop the batch and
			 * let epoll report again rather than touch a freed watch. */
			if (user)
				break;
		}
		reap_dead(srv);
	}
	srv->running = false;
	srv->stop = 0;
	return rc;
}

/* ================================================================================== */
/* client                                                                              */
/* ================================================================================== */

int ttrpc_client_connect(struct ttrpc_client *c, const char *address, struct ward_err *err)
{
	const char *path = address;
	if (strncmp(path, "unix://", 7) == 0)
		path += 7;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	c->fd = -1;
	c->next_stream = 1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return ward_fail(err, ENAMETOOLONG, "ttrpc address %s", address);
	strcpy(sa.sun_path, path);
	cleanup_fd int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ward_fail_errno(err, "socket for %s", address);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return ward_fail_errno(err, "connect to %s", address);
	c->fd = steal_fd(fd);
	return 0;
}

static void set_timeouts(int fd, int timeout_ms)
{
	struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int ttrpc_client_call(struct ttrpc_client *c, const struct ttrpc_request *req,
		      struct ttrpc_response *resp, int timeout_ms, struct ward_err *err)
{
	*resp = (struct ttrpc_response){0};
	if (c->fd < 0)
		return ward_fail(err, ENOTCONN, "ttrpc %s/%s: not connected", req->service,
				 req->method);
	set_timeouts(c->fd, timeout_ms);
	uint32_t sid = c->next_stream;
	c->next_stream += 2;
	size_t len;
	cleanup_free uint8_t *data = ttrpc_request_encode(req, &len);
	if (ttrpc_write_frame(c->fd, sid, TTRPC_TYPE_REQUEST, data, len, err) < 0)
		return ward_wrap(err, "ttrpc %s/%s", req->service, req->method);
	for (;;) {
		struct ttrpc_header h;
		cleanup_free uint8_t *rdata = NULL;
		if (ttrpc_read_frame(c->fd, &h, &rdata, err) < 0)
			return ward_wrap(err, "ttrpc %s/%s", req->service, req->method);
		if (h.type != TTRPC_TYPE_RESPONSE || h.stream_id != sid)
			continue; /* not ours (this client has one call in flight) */
		if (ttrpc_response_decode(rdata, h.length, resp, err) < 0)
			return ward_wrap(err, "ttrpc %s/%s", req->service, req->method);
		return 0;
	}
}

void ttrpc_client_close(struct ttrpc_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
