/* Unit tests: shim/events.c. A fake containerd events service (shim/ttrpc.c's server on a unix
 * socket in a temporary directory, on a thread) receives Events/Forward; every ForwardRequest
 * is decoded with protobuf-c and checked (namespace, metadata, topic, type_url, order, fields).
 * Then: containerd not up yet (the retries deliver in order once it listens), containerd gone
 * for good (a script standing in for `containerd publish` receives the events, in order), and
 * the memory.events OOM watch on a file that changes like cgroup v2's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "github.com/containerd/containerd/api/events/task.pb-c.h"
#include "github.com/containerd/containerd/api/types/mount.pb-c.h"
#include "github.com/containerd/containerd/api/services/ttrpc/events/v1/events.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "tap.h"
#include "ttrpc.h"
#include "util.h"

/* The value of metadata key `key` of a request, or NULL. */
static const char *request_metadata(const struct ttrpc_request *r, const char *key)
{
	for (size_t i = 0; i < r->n_metadata; i++)
		if (strcmp(r->metadata[i].key, key) == 0)
			return r->metadata[i].value;
	return NULL;
}

#define NS		"testns"
#define CONTAINERD_ADDR "/run/fake-containerd.sock"

static char dir[] = "/tmp/ward-events-XXXXXX";

/* ---- task events, as the shim builds them (task.c) ---- */

static char *s_or_empty(const char *v)
{
	return (char *)(v ? v : "");
}

static void set_ts(Google__Protobuf__Timestamp *ts, const struct timespec *t)
{
	struct timespec now;
	if (!t) {
		clock_gettime(CLOCK_REALTIME, &now);
		t = &now;
	}
	ts->seconds = t->tv_sec;
	ts->nanos = (int32_t)t->tv_nsec;
}

static int ev_task_create(const char *id, const char *bundle, uint32_t pid,
			  Containerd__Types__Mount **rootfs, size_t n_rootfs, const char *io_stdin,
			  const char *io_stdout, const char *io_stderr, bool terminal,
			  const char *checkpoint)
{
	Containerd__Events__TaskIO io = CONTAINERD__EVENTS__TASK_IO__INIT;
	io.stdin = s_or_empty(io_stdin);
	io.stdout = s_or_empty(io_stdout);
	io.stderr = s_or_empty(io_stderr);
	io.terminal = terminal;
	Containerd__Events__TaskCreate m = CONTAINERD__EVENTS__TASK_CREATE__INIT;
	m.container_id = s_or_empty(id);
	m.bundle = s_or_empty(bundle);
	m.rootfs = rootfs;
	m.n_rootfs = rootfs ? n_rootfs : 0;
	m.io = &io;
	m.checkpoint = s_or_empty(checkpoint);
	m.pid = pid;
	return shim_event_publish(SHIM_TOPIC_TASK_CREATE, &m.base);
}

static int ev_task_start(const char *id, uint32_t pid)
{
	Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
	m.container_id = s_or_empty(id);
	m.pid = pid;
	return shim_event_publish(SHIM_TOPIC_TASK_START, &m.base);
}

static int ev_task_exit(const char *container_id, const char *exec_id, uint32_t pid,
			uint32_t exit_status, const struct timespec *exited_at)
{
	Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	set_ts(&ts, exited_at);
	Containerd__Events__TaskExit m = CONTAINERD__EVENTS__TASK_EXIT__INIT;
	m.container_id = s_or_empty(container_id);
	m.id = s_or_empty(exec_id);
	m.pid = pid;
	m.exit_status = exit_status;
	m.exited_at = &ts;
	return shim_event_publish(SHIM_TOPIC_TASK_EXIT, &m.base);
}

static int ev_task_delete(const char *id, uint32_t pid, uint32_t exit_status,
			  const struct timespec *exited_at)
{
	Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
	set_ts(&ts, exited_at);
	Containerd__Events__TaskDelete m = CONTAINERD__EVENTS__TASK_DELETE__INIT;
	m.container_id = s_or_empty(id);
	m.pid = pid;
	m.exit_status = exit_status;
	m.exited_at = &ts;
	return shim_event_publish(SHIM_TOPIC_TASK_DELETE, &m.base);
}

static int ev_task_exec_added(const char *id, const char *exec_id)
{
	Containerd__Events__TaskExecAdded m = CONTAINERD__EVENTS__TASK_EXEC_ADDED__INIT;
	m.container_id = s_or_empty(id);
	m.exec_id = s_or_empty(exec_id);
	return shim_event_publish(SHIM_TOPIC_TASK_EXEC_ADDED, &m.base);
}

static int ev_task_exec_started(const char *id, const char *exec_id, uint32_t pid)
{
	Containerd__Events__TaskExecStarted m = CONTAINERD__EVENTS__TASK_EXEC_STARTED__INIT;
	m.container_id = s_or_empty(id);
	m.exec_id = s_or_empty(exec_id);
	m.pid = pid;
	return shim_event_publish(SHIM_TOPIC_TASK_EXEC_STARTED, &m.base);
}

static int ev_task_paused(const char *id)
{
	Containerd__Events__TaskPaused m = CONTAINERD__EVENTS__TASK_PAUSED__INIT;
	m.container_id = s_or_empty(id);
	return shim_event_publish(SHIM_TOPIC_TASK_PAUSED, &m.base);
}

static int ev_task_resumed(const char *id)
{
	Containerd__Events__TaskResumed m = CONTAINERD__EVENTS__TASK_RESUMED__INIT;
	m.container_id = s_or_empty(id);
	return shim_event_publish(SHIM_TOPIC_TASK_RESUMED, &m.base);
}

static int ev_task_checkpointed(const char *id, const char *checkpoint)
{
	Containerd__Events__TaskCheckpointed m = CONTAINERD__EVENTS__TASK_CHECKPOINTED__INIT;
	m.container_id = s_or_empty(id);
	m.checkpoint = s_or_empty(checkpoint);
	return shim_event_publish(SHIM_TOPIC_TASK_CHECKPOINTED, &m.base);
}

static int ev_task_oom(const char *id)
{
	Containerd__Events__TaskOOM m = CONTAINERD__EVENTS__TASK_OOM__INIT;
	m.container_id = s_or_empty(id);
	return shim_event_publish(SHIM_TOPIC_TASK_OOM, &m.base);
}

/* ---- fake events service ---- */

#define MAX_GOT 64
struct got {
	uint8_t *payload;
	size_t len;
	char *md_ns;
	char *service, *method;
};
static struct got got[MAX_GOT];
static size_t n_got;
static pthread_mutex_t got_mu = PTHREAD_MUTEX_INITIALIZER;

static void h_forward(struct ttrpc_call *call, const struct ttrpc_request *req, void *data)
{
	(void)data;
	pthread_mutex_lock(&got_mu);
	if (n_got < MAX_GOT) {
		struct got *g = &got[n_got++];
		g->payload = xmalloc(req->payload_len + 1);
		memcpy(g->payload, req->payload, req->payload_len);
		g->len = req->payload_len;
		const char *ns = request_metadata(req, SHIM_EVENTS_NS_KEY);
		g->md_ns = ns ? xstrdup(ns) : NULL;
		g->service = xstrdup(req->service);
		g->method = xstrdup(req->method);
	}
	pthread_mutex_unlock(&got_mu);
	ttrpc_call_reply(call, NULL, 0); /* google.protobuf.Empty */
}

static void got_reset(void)
{
	pthread_mutex_lock(&got_mu);
	for (size_t i = 0; i < n_got; i++) {
		free(got[i].payload);
		free(got[i].md_ns);
		free(got[i].service);
		free(got[i].method);
	}
	n_got = 0;
	pthread_mutex_unlock(&got_mu);
}

struct fake {
	struct ttrpc_server *srv;
	pthread_t th;
};

static void *server_thread(void *arg)
{
	struct fake *f = arg;
	struct ward_err err = {0};
	if (ttrpc_server_run(f->srv, &err) < 0)
		fprintf(stderr, "# server: %s\n", err.msg);
	return NULL;
}

static bool fake_start(struct fake *f, const char *path)
{
	struct ward_err err = {0};
	f->srv = ttrpc_server_new(&err);
	if (!f->srv)
		return false;
	ttrpc_server_register(f->srv, SHIM_EVENTS_SERVICE, SHIM_EVENTS_METHOD, h_forward, NULL);
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 16) < 0 ||
	    ttrpc_server_add_listener(f->srv, lfd, &err) < 0)
		return false;
	return pthread_create(&f->th, NULL, server_thread, f) == 0;
}

static void fake_stop(struct fake *f, const char *path)
{
	ttrpc_server_stop(f->srv);
	pthread_join(f->th, NULL);
	ttrpc_server_free(f->srv);
	unlink(path);
}

/* ---- expected events ---- */

struct want {
	const char *topic;
	const char *type_url;
	char cid[32];
	uint32_t pid;
};

static const Containerd__Types__Mount *mk_mount(Containerd__Types__Mount *m)
{
	static char *opts[] = {"lowerdir=/l", "upperdir=/u"};
	containerd__types__mount__init(m);
	m->type = "overlay";
	m->source = "overlay";
	m->n_options = 2;
	m->options = opts;
	return m;
}

/* Publishes n events of rotating kinds; event i has container id "c<i>" and pid 1000+i. */
static int publish_mixed(struct want *w, size_t n)
{
	Containerd__Types__Mount mnt;
	Containerd__Types__Mount *rootfs[] = {(Containerd__Types__Mount *)mk_mount(&mnt)};
	struct timespec at = {.tv_sec = 1700000000, .tv_nsec = 123456789};
	int fails = 0;
	for (size_t i = 0; i < n; i++) {
		snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
		uint32_t pid = 1000 + (uint32_t)i;
		int r;
		switch (i % 10) {
		case 0:
			w[i] =
			    (struct want){"/tasks/create", "containerd.events.TaskCreate", "", pid};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_create(w[i].cid, "/run/bundle", pid, rootfs, 1, "/fifo/in",
					   "/fifo/out", "/fifo/err", true, NULL);
			break;
		case 1:
			w[i] =
			    (struct want){"/tasks/start", "containerd.events.TaskStart", "", pid};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_start(w[i].cid, pid);
			break;
		case 2:
			w[i] = (struct want){"/tasks/exit", "containerd.events.TaskExit", "", pid};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_exit(w[i].cid, "exec1", pid, 137, &at);
			break;
		case 3:
			w[i] =
			    (struct want){"/tasks/delete", "containerd.events.TaskDelete", "", pid};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_delete(w[i].cid, pid, 3, &at);
			break;
		case 4:
			w[i] = (struct want){"/tasks/exec-added", "containerd.events.TaskExecAdded",
					     "", 0};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_exec_added(w[i].cid, "exec1");
			break;
		case 5:
			w[i] = (struct want){"/tasks/exec-started",
					     "containerd.events.TaskExecStarted", "", pid};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_exec_started(w[i].cid, "exec1", pid);
			break;
		case 6:
			w[i] =
			    (struct want){"/tasks/paused", "containerd.events.TaskPaused", "", 0};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_paused(w[i].cid);
			break;
		case 7:
			w[i] =
			    (struct want){"/tasks/resumed", "containerd.events.TaskResumed", "", 0};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_resumed(w[i].cid);
			break;
		case 8:
			w[i] = (struct want){"/tasks/oom", "containerd.events.TaskOOM", "", 0};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_oom(w[i].cid);
			break;
		default:
			w[i] = (struct want){"/tasks/checkpointed",
					     "containerd.events.TaskCheckpointed", "", 0};
			snprintf(w[i].cid, sizeof(w[i].cid), "c%zu", i);
			r = ev_task_checkpointed(w[i].cid, "/ckpt");
			break;
		}
		if (r != 0)
			fails++;
	}
	return fails;
}

/* Checks an event's Any (type_url and every field) against w. */
static bool any_matches(const Google__Protobuf__Any *any, const struct want *w)
{
	if (!any || strcmp(any->type_url, w->type_url) != 0)
		return false;
	const ProtobufCMessageDescriptor *d = NULL;
#define D(name) &containerd__events__##name##__descriptor
	const ProtobufCMessageDescriptor *all[] = {
	    D(task_create),	D(task_start),	      D(task_exit),   D(task_delete),
	    D(task_exec_added), D(task_exec_started), D(task_paused), D(task_resumed),
	    D(task_oom),	D(task_checkpointed)};
#undef D
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		if (strcmp(all[i]->name, w->type_url) == 0)
			d = all[i];
	if (!d)
		return false;
	ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, any->value.len, any->value.data);
	if (!m)
		return false;
	bool ok = false;
	const uint32_t pid = w->pid;
	if (d == &containerd__events__task_create__descriptor) {
		Containerd__Events__TaskCreate *e = (void *)m;
		ok = !strcmp(e->container_id, w->cid) && !strcmp(e->bundle, "/run/bundle") &&
		     e->pid == pid && e->n_rootfs == 1 && !strcmp(e->rootfs[0]->type, "overlay") &&
		     e->rootfs[0]->n_options == 2 &&
		     !strcmp(e->rootfs[0]->options[1], "upperdir=/u") && e->io &&
		     !strcmp(e->io->stdin, "/fifo/in") && !strcmp(e->io->stdout, "/fifo/out") &&
		     !strcmp(e->io->stderr, "/fifo/err") && e->io->terminal &&
		     !strcmp(e->checkpoint, "");
	} else if (d == &containerd__events__task_start__descriptor) {
		Containerd__Events__TaskStart *e = (void *)m;
		ok = !strcmp(e->container_id, w->cid) && e->pid == pid;
	} else if (d == &containerd__events__task_exit__descriptor) {
		Containerd__Events__TaskExit *e = (void *)m;
		ok = !strcmp(e->container_id, w->cid) && !strcmp(e->id, "exec1") && e->pid == pid &&
		     e->exit_status == 137 && e->exited_at && e->exited_at->seconds == 1700000000 &&
		     e->exited_at->nanos == 123456789;
	} else if (d == &containerd__events__task_delete__descriptor) {
		Containerd__Events__TaskDelete *e = (void *)m;
		ok = !strcmp(e->container_id, w->cid) && e->pid == pid && e->exit_status == 3 &&
		     e->exited_at && e->exited_at->seconds == 1700000000 && !strcmp(e->id, "");
	} else if (d == &containerd__events__task_exec_added__descriptor) {
		Containerd__Events__TaskExecAdded *e = (void *)m;
		ok = !strcmp(e->container_id, w->cid) && !strcmp(e->exec_id, "exec1");
	} else if (d == &containerd__events__task_exec_started__descriptor) {
		Containerd__Events__TaskExecStarted *e = (void *)m;
		ok = !strcmp(e->container_id, w->cid) && !strcmp(e->exec_id, "exec1") &&
		     e->pid == pid;
	} else if (d == &containerd__events__task_paused__descriptor) {
		ok = !strcmp(((Containerd__Events__TaskPaused *)m)->container_id, w->cid);
	} else if (d == &containerd__events__task_resumed__descriptor) {
		ok = !strcmp(((Containerd__Events__TaskResumed *)m)->container_id, w->cid);
	} else if (d == &containerd__events__task_oom__descriptor) {
		ok = !strcmp(((Containerd__Events__TaskOOM *)m)->container_id, w->cid);
	} else {
		Containerd__Events__TaskCheckpointed *e = (void *)m;
		ok = !strcmp(e->container_id, w->cid) && !strcmp(e->checkpoint, "/ckpt");
	}
	protobuf_c_message_free_unpacked(m, NULL);
	return ok;
}

/* Every received ForwardRequest matches w[0..n) in order. Prints the first mismatch. */
static bool forwarded_match(const struct want *w, size_t n, time_t t0)
{
	pthread_mutex_lock(&got_mu);
	bool ok = n_got == n;
	if (!ok)
		printf("# got %zu Forward calls, want %zu\n", n_got, n);
	for (size_t i = 0; ok && i < n; i++) {
		const struct got *g = &got[i];
		Containerd__Services__Events__Ttrpc__V1__ForwardRequest *fr =
		    containerd__services__events__ttrpc__v1__forward_request__unpack(NULL, g->len,
										     g->payload);
		const Containerd__Services__Events__Ttrpc__V1__Envelope *e =
		    fr ? fr->envelope : NULL;
		ok = e && g->md_ns && !strcmp(g->md_ns, NS) &&
		     !strcmp(g->service, SHIM_EVENTS_SERVICE) && !strcmp(g->method, "Forward") &&
		     !strcmp(e->namespace_, NS) && !strcmp(e->topic, w[i].topic) && e->timestamp &&
		     e->timestamp->seconds >= t0 && e->timestamp->seconds <= time(NULL) &&
		     any_matches(e->event, &w[i]);
		if (!ok)
			printf("# event %zu (%s %s) does not match\n", i, w[i].topic,
			       w[i].type_url);
		if (fr)
			containerd__services__events__ttrpc__v1__forward_request__free_unpacked(
			    fr, NULL);
	}
	pthread_mutex_unlock(&got_mu);
	return ok;
}

static struct shim_opts mk_opts(const char *ttrpc_addr, const char *publish)
{
	struct shim_opts o = {0};
	o.namespace = NS;
	o.address = CONTAINERD_ADDR;
	o.ttrpc_address = ttrpc_addr;
	o.publish_binary = publish;
	return o;
}

static char sock1[256], sock2[256], script[256], pubdir[256], publog[256];

static void test_forward(void)
{
	struct fake f;
	CHECK(fake_start(&f, sock1), "fake events service listens");
	struct shim_opts o = mk_opts(sock1, script);
	CHECK(shim_events_init(&o) == 0, "events publisher starts");
	CHECK(shim_events_init(&o) == -1, "a second init is refused while running");
	time_t t0 = time(NULL);
	struct want w[20];
	CHECK(publish_mixed(w, 20) == 0, "20 events of 10 kinds queued");
	CHECK(shim_events_flush(10000), "queue drains");
	CHECK(forwarded_match(w, 20, t0),
	      "20 ForwardRequests in order: namespace, metadata, topic, type_url, fields");
	struct shim_events_stats st;
	shim_events_get_stats(&st);
	CHECK(st.forwarded == 20 && st.published == 0 && st.dropped == 0,
	      "all 20 forwarded, none through the publish binary");
	CHECK(access(publog, F_OK) != 0, "publish binary not run");

	/* containerd restarts: the kept connection breaks, the next events reconnect. */
	fake_stop(&f, sock1);
	got_reset();
	CHECK(fake_start(&f, sock1), "fake events service restarted");
	t0 = time(NULL);
	CHECK(publish_mixed(w, 5) == 0 && shim_events_flush(10000) && forwarded_match(w, 5, t0),
	      "after a restart of the service, events arrive on a new connection in order");
	shim_events_get_stats(&st);
	CHECK(st.forwarded == 25 && st.published == 0, "reconnected without the fallback");
	shim_events_shutdown(5000);
	fake_stop(&f, sock1);
	got_reset();
	CHECK(ev_task_start("x", 1) == -1, "publishing after shutdown is refused");
}

static void test_late_server(void)
{
	struct shim_opts o = mk_opts(sock2, script);
	CHECK(shim_events_init(&o) == 0, "publisher restarts after shutdown");
	time_t t0 = time(NULL);
	struct want w[12];
	CHECK(publish_mixed(w, 12) == 0, "12 events queued while containerd is down");
	struct timespec d = {.tv_nsec = 300 * 1000000};
	nanosleep(&d, NULL);
	struct fake f;
	CHECK(fake_start(&f, sock2), "containerd comes up 300 ms later");
	CHECK(shim_events_flush(20000), "queue drains");
	CHECK(forwarded_match(w, 12, t0), "all 12 arrive, in order, through the retries");
	struct shim_events_stats st;
	shim_events_get_stats(&st);
	CHECK(st.forwarded == 12 && st.published == 0 && st.dropped == 0,
	      "no event went to the publish binary");
	shim_events_shutdown(5000);
	fake_stop(&f, sock2);
	got_reset();
}

static void test_fallback(void)
{
	char none[300];
	snprintf(none, sizeof(none), "%s/nobody.sock", dir);
	struct shim_opts o = mk_opts(none, script);
	CHECK(shim_events_init(&o) == 0, "publisher starts with containerd gone");
	struct want w[6];
	CHECK(publish_mixed(w, 6) == 0, "6 events queued");
	CHECK(shim_events_flush(60000), "queue drains");
	struct shim_events_stats st;
	shim_events_get_stats(&st);
	CHECK(st.forwarded == 0 && st.published == 6 && st.dropped == 0,
	      "all 6 handed to the publish binary");

	FILE *fp = fopen(publog, "r");
	CHECK(fp != NULL, "publish binary ran");
	char line[1024];
	size_t i = 0;
	bool ok = fp != NULL;
	while (fp && ok && fgets(line, sizeof(line), fp)) {
		/* "<args> | <pid>" with the Any bytes saved as <pubdir>/<pid> */
		char want_args[512];
		if (i >= 6) {
			ok = false;
			break;
		}
		snprintf(want_args, sizeof(want_args),
			 "--address " CONTAINERD_ADDR " publish --topic %s --namespace " NS " | ",
			 w[i].topic);
		ok = strncmp(line, want_args, strlen(want_args)) == 0;
		if (!ok) {
			printf("# line %zu: %s# want: %s\n", i, line, want_args);
			break;
		}
		long pid = strtol(line + strlen(want_args), NULL, 10);
		char path[512];
		snprintf(path, sizeof(path), "%s/%ld", pubdir, pid);
		struct ward_err err = {0};
		size_t len = 0;
		cleanup_free char *data = read_file_at(AT_FDCWD, path, &len, &err);
		Google__Protobuf__Any *any =
		    data ? google__protobuf__any__unpack(NULL, len, (uint8_t *)data) : NULL;
		ok = any && any_matches(any, &w[i]);
		if (!ok)
			printf("# stdin of publish %zu does not decode to %s\n", i, w[i].type_url);
		if (any)
			google__protobuf__any__free_unpacked(any, NULL);
		i++;
	}
	if (fp)
		fclose(fp);
	CHECK(ok && i == 6,
	      "publish binary got --address/publish/--topic/--namespace and the Any on stdin, "
	      "in order");
	shim_events_shutdown(5000);

	/* No publish binary at all: events are dropped, never stuck. */
	o = mk_opts(none, NULL);
	CHECK(shim_events_init(&o) == 0 && ev_task_oom("c") == 0 && shim_events_flush(30000),
	      "no publish binary: the queue still drains");
	shim_events_get_stats(&st);
	CHECK(st.dropped == 1 && st.published == 0, "the event is counted as dropped");
	shim_events_shutdown(5000);
}

static void test_oom(void)
{
	CHECK(shim_oom_parse("low 0\nhigh 0\nmax 4\noom 2\noom_kill 3\noom_group_kill 0\n") == 3,
	      "oom_kill parsed from memory.events");
	CHECK(shim_oom_parse("oom_group_kill 7\nlow 1\n") == 0, "absent oom_kill is 0");
	CHECK(shim_oom_parse("oom_kill 18446744073709551615") == UINT64_MAX,
	      "oom_kill first, no newline, 64 bits");
	CHECK(shim_oom_parse("") == 0 && shim_oom_parse(NULL) == 0, "empty text is 0");

	char cg[300], ev[320];
	snprintf(cg, sizeof(cg), "%s/cg", dir);
	snprintf(ev, sizeof(ev), "%s/memory.events", cg);
	mkdir(cg, 0700);
	struct ward_err err = {0};
	const char *v0 = "low 0\nhigh 0\nmax 0\noom 0\noom_kill 2\noom_group_kill 0\n";
	write_file_at(AT_FDCWD, ev, O_CREAT | O_TRUNC, 0600, v0, strlen(v0), &err);
	uint64_t last = 99;
	int fd = shim_oom_fd(cg, &last);
	CHECK(fd >= 0 && last == 2, "watch set, current oom_kill read");
	CHECK(!shim_oom_check(cg, &last), "no change, no OOM");
	const char *v1 = "low 0\nhigh 0\nmax 5\noom 1\noom_kill 3\noom_group_kill 0\n";
	write_file_at(AT_FDCWD, ev, O_TRUNC, 0600, v1, strlen(v1), &err);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	CHECK(poll(&p, 1, 5000) == 1, "inotify fd readable after memory.events changes");
	CHECK(!shim_oom_drain(fd), "drained, watch still there");
	p.revents = 0;
	CHECK(poll(&p, 1, 0) == 0, "nothing left after the drain");
	CHECK(shim_oom_check(cg, &last) && last == 3, "oom_kill increase seen");
	CHECK(!shim_oom_check(cg, &last), "reported once");
	unlink(ev);
	CHECK(poll(&p, 1, 5000) == 1 && shim_oom_drain(fd), "removal reported as gone");
	/* a hybrid host's v2 cgroup has no memory.events: no watch, ENOENT, and nothing on the
	 * log at the default level (the shim logs one debug line per container) */
	char logp[320];
	snprintf(logp, sizeof(logp), "%s/oom.log", dir);
	int saved = dup(2), lfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fflush(stderr);
	dup2(lfd, 2);
	errno = 0;
	int nofd = shim_oom_fd(cg, &last);
	int nofd_errno = errno;
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(lfd);
	CHECK(nofd == -1 && nofd_errno == ENOENT, "no memory.events: -1, ENOENT");
	struct stat lst;
	CHECK(stat(logp, &lst) == 0 && lst.st_size == 0, "no memory.events: no warning logged");
	close(fd);

	/* several kills between two looks: one event, the count catches up; a file that cannot
	 * be read (cgroup removed) reports nothing and keeps the count */
	const char *v2 = "oom_kill 7";
	write_file_at(AT_FDCWD, ev, O_CREAT | O_TRUNC, 0600, v2, strlen(v2), &err);
	fd = shim_oom_fd(cg, &last);
	CHECK(fd >= 0 && last == 7, "oom_kill on the first line, no newline");
	const char *v3 = "oom 4\noom_kill 10\noom_group_kill 0\n";
	write_file_at(AT_FDCWD, ev, O_TRUNC, 0600, v3, strlen(v3), &err);
	write_file_at(AT_FDCWD, ev, O_TRUNC, 0600, v3, strlen(v3), &err);
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	CHECK(poll(&p, 1, 5000) == 1 && !shim_oom_drain(fd),
	      "two rewrites: readable, one drain empties it");
	CHECK(shim_oom_check(cg, &last) && last == 10, "three kills at once: one event");
	const char *v4 = "oom_kill 10\n";
	write_file_at(AT_FDCWD, ev, O_TRUNC, 0600, v4, strlen(v4), &err);
	CHECK(poll(&p, 1, 5000) == 1 && !shim_oom_drain(fd), "rewrite without a change wakes");
	CHECK(!shim_oom_check(cg, &last) && last == 10, "same count: no event");
	unlink(ev);
	CHECK(!shim_oom_check(cg, &last) && last == 10, "unreadable: no event, count kept");
	CHECK(poll(&p, 1, 5000) == 1 && shim_oom_drain(fd), "removal reported as gone");
	close(fd);
	rmdir(cg);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (!mkdtemp(dir)) {
		printf("not ok 1 - temp dir\n1..1\n");
		return 1;
	}
	snprintf(sock1, sizeof(sock1), "%s/events.sock", dir);
	snprintf(sock2, sizeof(sock2), "%s/late.sock", dir);
	snprintf(script, sizeof(script), "%s/publish.sh", dir);
	snprintf(pubdir, sizeof(pubdir), "%s/pub", dir);
	snprintf(publog, sizeof(publog), "%s/publish.log", dir);
	mkdir(pubdir, 0700);
	FILE *fp = fopen(script, "w");
	fprintf(fp, "#!/bin/sh\ncat > '%s'/$$\necho \"$* | $$\" >> '%s'\n", pubdir, publog);
	fclose(fp);
	chmod(script, 0700);

	test_forward();
	test_late_server();
	test_fallback();
	test_oom();

	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	TAP_DONE();
}
