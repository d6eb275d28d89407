/* Task events to containerd: an ordered queue, one publisher thread, ttrpc Events/Forward
 * with retries, the publish binary as fallback; and the cgroup v2 OOM watch. See events.h. */
#include "events.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include "github.com/containerd/containerd/api/events/task.pb-c.h"
#include "github.com/containerd/containerd/api/services/ttrpc/events/v1/events.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/timestamp.pb-c.h"
#include "log.h"
#include "ttrpc.h"
#include "util.h"

extern char **environ;

struct ev_item {
	struct ev_item *next;
	char *topic;
	char *type_url;
	uint8_t *value;
	size_t value_len;
	struct timespec ts;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* queue non-empty or stopping */
	pthread_cond_t idle_cv; /* queue drained */
	bool running, stopping, busy;
	pthread_t thread;
	struct ev_item *head, *tail;
	char *ns, *ttrpc_addr, *publish_binary, *address;
	struct shim_events_stats stats;
	/* publisher thread only */
	struct ttrpc_client client;
	bool degraded;
} ev = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .cv = PTHREAD_COND_INITIALIZER,
    .idle_cv = PTHREAD_COND_INITIALIZER,
    .client = {.fd = -1},
};

static void item_free(struct ev_item *it)
{
	free(it->topic);
	free(it->type_url);
	free(it->value);
	free(it);
}

static void sleep_ms(int ms)
{
	struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* The Any bytes (google.protobuf.Any{type_url=1, value=2}). */
static uint8_t *pack_any(const struct ev_item *it, size_t *len)
{
	Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
	any.type_url = it->type_url;
	any.value.data = it->value;
	any.value.len = it->value_len;
	*len = google__protobuf__any__get_packed_size(&any);
	uint8_t *buf = xmalloc(*len ? *len : 1);
	google__protobuf__any__pack(&any, buf);
	return buf;
}

/* 1: forwarded, 0: refused by containerd (do not retry), -1: transport error. */
static int forward_once(const struct ev_item *it)
{
	struct ward_err err = {0};
	if (ev.client.fd < 0 && ttrpc_client_connect(&ev.client, ev.ttrpc_addr, &err) < 0) {
		ward_debug("events: %s", err.msg);
		return -1;
	}
	Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
	any.type_url = it->type_url;
	any.value.data = it->value;
	any.value.len = it->value_len;
	Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	ts.seconds = it->ts.tv_sec;
	ts.nanos = (int32_t)it->ts.tv_nsec;
	Containerd__Services__Events__Ttrpc__V1__Envelope env =
	    CONTAINERD__SERVICES__EVENTS__TTRPC__V1__ENVELOPE__INIT;
	env.timestamp = &ts;
	env.namespace_ = ev.ns;
	env.topic = it->topic;
	env.event = &any;
	Containerd__Services__Events__Ttrpc__V1__ForwardRequest fr =
	    CONTAINERD__SERVICES__EVENTS__TTRPC__V1__FORWARD_REQUEST__INIT;
	fr.envelope = &env;
	size_t len = containerd__services__events__ttrpc__v1__forward_request__get_packed_size(&fr);
	cleanup_free uint8_t *payload = xmalloc(len ? len : 1);
	containerd__services__events__ttrpc__v1__forward_request__pack(&fr, payload);

	struct ttrpc_kv md = {SHIM_EVENTS_NS_KEY, ev.ns};
	struct ttrpc_request req = {.service = SHIM_EVENTS_SERVICE,
				    .method = SHIM_EVENTS_METHOD,
				    .payload = payload,
				    .payload_len = len,
				    .timeout_nano = (int64_t)SHIM_EVENTS_CALL_MS * 1000000,
				    .metadata = &md,
				    .n_metadata = 1};
	struct ttrpc_response resp;
	if (ttrpc_client_call(&ev.client, &req, &resp, SHIM_EVENTS_CALL_MS, &err) < 0) {
		ward_debug("events: %s %s: %s", it->topic, it->type_url, err.msg);
		ttrpc_client_close(&ev.client);
		return -1;
	}
	int ret = 1;
	if (resp.code != 0) {
		ward_warn("events: containerd refused %s %s: code %d: %s", it->topic, it->type_url,
			  resp.code, resp.message ? resp.message : "");
		ret = 0;
	}
	ttrpc_response_free(&resp);
	return ret;
}

/* Waits for pid at most SHIM_EVENTS_PUBLISH_MS (then kills it). Returns its wait status, or
 * 0 when someone else reaped it (ECHILD). */
static int wait_child(pid_t pid)
{
	int status = 0;
	for (int waited = 0;; waited += 10) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno == ECHILD)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (waited >= SHIM_EVENTS_PUBLISH_MS) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
		sleep_ms(10);
	}
}

/* `<publish_binary> --address <address> publish --topic T --namespace NS` < Any. */
static int publish_binary(const struct ev_item *it)
{
	if (!ev.publish_binary || !*ev.publish_binary) {
		ward_warn("events: dropping %s %s: no publish binary", it->topic, it->type_url);
		return -1;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		ward_warn("events: pipe for %s: %s", ev.publish_binary, strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	sigset_t none;
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	sigset_t def;
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGCHLD);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	char *argv[] = {ev.publish_binary, "--address", ev.address ? ev.address : "",
			"publish",	   "--topic",	it->topic,
			"--namespace",	   ev.ns,	NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, ev.publish_binary, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(p[0]);
	if (rc != 0) {
		close(p[1]);
		ward_warn("events: dropping %s %s: spawn %s: %s", it->topic, it->type_url,
			  ev.publish_binary, strerror(rc));
		return -1;
	}
	size_t len;
	cleanup_free uint8_t *buf = pack_any(it, &len);
	/* Events are far below a pipe's capacity; a child that does not read gets EOF/EPIPE. */
	if (write_all(p[1], buf, len) < 0)
		ward_warn("events: writing %s to %s: %s", it->topic, ev.publish_binary,
			  strerror(errno));
	close(p[1]);
	int status = wait_child(pid);
	if (status != 0) {
		ward_warn("events: dropping %s %s: %s publish failed (status %d)", it->topic,
			  it->type_url, ev.publish_binary, status);
		return -1;
	}
	return 0;
}

static void deliver(const struct ev_item *it)
{
	int attempts = ev.degraded ? 1 : SHIM_EVENTS_ATTEMPTS;
	int backoff = SHIM_EVENTS_BACKOFF_MS;
	int r = -1;
	for (int i = 0; i < attempts; i++) {
		r = forward_once(it);
		if (r >= 0)
			break;
		if (i + 1 < attempts) {
			sleep_ms(backoff);
			backoff *= 2;
		}
	}
	pthread_mutex_lock(&ev.mu);
	if (r == 1)
		ev.stats.forwarded++;
	else if (r == 0)
		ev.stats.dropped++;
	pthread_mutex_unlock(&ev.mu);
	if (r >= 0) {
		ev.degraded = false;
		return;
	}
	if (!ev.degraded)
		ward_warn("events: %s unreachable, using %s publish", ev.ttrpc_addr,
			  ev.publish_binary ? ev.publish_binary : "(none)");
	ev.degraded = true;
	int ok = publish_binary(it) == 0;
	pthread_mutex_lock(&ev.mu);
	if (ok)
		ev.stats.published++;
	else
		ev.stats.dropped++;
	pthread_mutex_unlock(&ev.mu);
}

static void *publisher(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ev.mu);
	for (;;) {
		while (!ev.head && !ev.stopping)
			pthread_cond_wait(&ev.cv, &ev.mu);
		if (!ev.head)
			break; /* stopping with nothing left */
		struct ev_item *it = ev.head;
		ev.head = it->next;
		if (!ev.head)
			ev.tail = NULL;
		ev.busy = true;
		pthread_mutex_unlock(&ev.mu);
		deliver(it);
		item_free(it);
		pthread_mutex_lock(&ev.mu);
		ev.busy = false;
		if (!ev.head)
			pthread_cond_broadcast(&ev.idle_cv);
	}
	pthread_mutex_unlock(&ev.mu);
	ttrpc_client_close(&ev.client);
	return NULL;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

int shim_events_init(const struct shim_opts *o)
{
	pthread_mutex_lock(&ev.mu);
	if (ev.running) {
		pthread_mutex_unlock(&ev.mu);
		ward_warn("events: publisher already running");
		return -1;
	}
	const char *addr = o->ttrpc_address;
	if (!addr || !*addr)
		addr = getenv("TTRPC_ADDRESS");
	if (!addr || !*addr)
		addr = SHIM_DEFAULT_TTRPC_ADDR;
	ev.ns = xstrdup(o->namespace ? o->namespace : "");
	ev.ttrpc_addr = xstrdup(addr);
	ev.publish_binary = dup_or_null(o->publish_binary);
	ev.address = dup_or_null(o->address);
	ev.stats = (struct shim_events_stats){0};
	ev.stopping = false;
	ev.degraded = false;
	ev.client = (struct ttrpc_client){.fd = -1};
	int rc = pthread_create(&ev.thread, NULL, publisher, NULL);
	if (rc != 0) {
		pthread_mutex_unlock(&ev.mu);
		ward_error("events: publisher thread: %s", strerror(rc));
		return -1;
	}
	ev.running = true;
	pthread_mutex_unlock(&ev.mu);
	return 0;
}

int shim_event_publish(const char *topic, const ProtobufCMessage *event)
{
	struct ev_item *it = xcalloc(1, sizeof(*it));
	clock_gettime(CLOCK_REALTIME, &it->ts);
	it->topic = xstrdup(topic);
	it->type_url = xstrdup(event->descriptor->name);
	it->value_len = protobuf_c_message_get_packed_size(event);
	it->value = xmalloc(it->value_len ? it->value_len : 1);
	protobuf_c_message_pack(event, it->value);

	pthread_mutex_lock(&ev.mu);
	if (!ev.running || ev.stopping) {
		pthread_mutex_unlock(&ev.mu);
		ward_warn("events: %s %s not published: publisher not running", topic,
			  it->type_url);
		item_free(it);
		return -1;
	}
	if (ev.tail)
		ev.tail->next = it;
	else
		ev.head = it;
	ev.tail = it;
	pthread_cond_signal(&ev.cv);
	pthread_mutex_unlock(&ev.mu);
	return 0;
}

/* Called with ev.mu held. */
static bool wait_idle_locked(int timeout_ms)
{
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	if (timeout_ms >= 0) {
		dl.tv_sec += timeout_ms / 1000;
		dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
	}
	while (ev.running && (ev.head || ev.busy)) {
		if (timeout_ms < 0)
			pthread_cond_wait(&ev.idle_cv, &ev.mu);
		else if (pthread_cond_timedwait(&ev.idle_cv, &ev.mu, &dl) == ETIMEDOUT)
			break;
	}
	return !(ev.head || ev.busy);
}

bool shim_events_flush(int timeout_ms)
{
	pthread_mutex_lock(&ev.mu);
	bool ok = wait_idle_locked(timeout_ms);
	pthread_mutex_unlock(&ev.mu);
	return ok;
}

void shim_events_shutdown(int timeout_ms)
{
	struct shim_events_stats st;
	bool idle = shim_events_flush(timeout_ms);
	pthread_mutex_lock(&ev.mu);
	if (!ev.running) {
		pthread_mutex_unlock(&ev.mu);
		return;
	}
	/* queued since the flush: nothing should publish now, but drop rather than wait */
	idle = idle && !ev.busy;
	size_t dropped = 0;
	while (ev.head) {
		struct ev_item *it = ev.head;
		ev.head = it->next;
		item_free(it);
		dropped++;
	}
	ev.tail = NULL;
	ev.stats.dropped += dropped;
	ev.stopping = true;
	pthread_cond_broadcast(&ev.cv);
	pthread_mutex_unlock(&ev.mu);
	if (dropped || !idle)
		ward_warn("events: shutting down with %zu event(s) undelivered", dropped + !idle);
	shim_events_get_stats(&st);
	ward_info("events: %llu forwarded, %llu through the publish binary, %llu dropped",
		  (unsigned long long)st.forwarded, (unsigned long long)st.published,
		  (unsigned long long)st.dropped);
	if (idle) {
		pthread_join(ev.thread, NULL);
	} else {
		/* Stuck in a call or the publish binary: the process is about to exit anyway. */
		pthread_detach(ev.thread);
		return; /* its strings stay allocated for it */
	}
	pthread_mutex_lock(&ev.mu);
	ev.running = false;
	free(ev.ns);
	free(ev.ttrpc_addr);
	free(ev.publish_binary);
	free(ev.address);
	ev.ns = ev.ttrpc_addr = ev.publish_binary = ev.address = NULL;
	pthread_mutex_unlock(&ev.mu);
}

void shim_events_get_stats(struct shim_events_stats *st)
{
	pthread_mutex_lock(&ev.mu);
	*st = ev.stats;
	pthread_mutex_unlock(&ev.mu);
}

/* ---- OOM ---- */

uint64_t shim_oom_parse(const char *text)
{
	for (const char *p = text; p && *p;) {
		if (strncmp(p, "oom_kill ", 9) == 0)
			return strtoull(p + 9, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

static bool read_oom_kill(const char *cgroup_path, uint64_t *v)
{
	struct ward_err err = {0};
	cleanup_free char *path = xasprintf("%s/memory.events", cgroup_path);
	cleanup_free char *text = read_file_at(AT_FDCWD, path, NULL, &err);
	if (!text)
		return false;
	*v = shim_oom_parse(text);
	return true;
}

int shim_oom_fd(const char *cgroup_path, uint64_t *last)
{
	cleanup_free char *path = xasprintf("%s/memory.events", cgroup_path);
	cleanup_fd int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0) {
		ward_warn("oom watch: inotify: %s", strerror(errno));
		return -1;
	}
	if (inotify_add_watch(fd, path, IN_MODIFY) < 0) {
		int e = errno;
		/* no memory controller in this cgroup v2 tree (hybrid hosts): expected, quiet */
		if (e == ENOENT)
			ward_debug("oom watch: no %s: no OOM events for this container", path);
		else
			ward_warn("oom watch: %s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	*last = 0;
	if (!read_oom_kill(cgroup_path, last))
		ward_warn("oom watch: cannot read %s", path);
	return steal_fd(fd);
}

bool shim_oom_drain(int fd)
{
	bool gone = false;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			if (e->mask & IN_IGNORED)
				gone = true;
			p += sizeof(*e) + e->len;
		}
	}
	return gone;
}

bool shim_oom_check(const char *cgroup_path, uint64_t *last)
{
	uint64_t v;
	if (!read_oom_kill(cgroup_path, &v) || v <= *last)
		return false;
	*last = v;
	return true;
}
