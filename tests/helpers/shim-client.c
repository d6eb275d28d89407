/* shim-client: a tiny containerd.task.v2.Task client for tests/shim.bats, so the shim's
 * Task service is tested without containerd.
 *
 *   shim-client SOCKET METHOD ARGS... [key=value...]
 *     create ID BUNDLE [stdin=P] [stdout=P] [stderr=P] [terminal=1]
 *     start|state|wait|delete ID [exec=EXEC_ID]
 *     kill ID SIGNAL [all=1] [exec=EXEC_ID]
 *     exec ID EXEC_ID PROCESS_JSON_FILE [stdout=P] [stderr=P]
 *     pids|connect|shutdown|pause|resume|stats ID
 *     call METHOD          (an empty request to any method name)
 *
 * Prints the response as key=value lines and exits 0; on an error status prints
 * "code=N" and "message=..." and exits 1; exits 2 on a transport or usage error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "github.com/containerd/cgroups/v2/stats/metrics.pb-c.h"
#include "github.com/containerd/containerd/runtime/v2/task/shim.pb-c.h"
#include "ttrpc.h"
#include "util.h"

static const char *opt(int argc, char **argv, const char *key, const char *def)
{
	size_t n = strlen(key);
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return argv[i] + n + 1;
	return def;
}

static const char *status_name(int s)
{
	static const char *const names[] = {"unknown", "created", "running",
					    "stopped", "paused",  "pausing"};
	return s >= 0 && s <= 5 ? names[s] : "invalid";
}

static void print_ts(const char *key, const Google__Protobuf__Timestamp *ts)
{
	if (ts)
		printf("%s=%lld.%09d\n", key, (long long)ts->seconds, ts->nanos);
}

static int usage(void)
{
	fprintf(stderr, "usage: shim-client SOCKET METHOD ARGS... (see the source)\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	const char *sock = argv[1], *cmd = argv[2];
	char **a = argv + 3;
	int na = argc - 3;
	const char *method = NULL;
	ProtobufCMessage *msg = NULL;
	const ProtobufCMessageDescriptor *out_desc = &google__protobuf__empty__descriptor;
	const char *exec_id = opt(na, a, "exec", "");

	Containerd__Task__V2__CreateTaskRequest create =
	    CONTAINERD__TASK__V2__CREATE_TASK_REQUEST__INIT;
	Containerd__Task__V2__StartRequest start = CONTAINERD__TASK__V2__START_REQUEST__INIT;
	Containerd__Task__V2__StateRequest state = CONTAINERD__TASK__V2__STATE_REQUEST__INIT;
	Containerd__Task__V2__WaitRequest wait = CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
	Containerd__Task__V2__DeleteRequest del = CONTAINERD__TASK__V2__DELETE_REQUEST__INIT;
	Containerd__Task__V2__KillRequest kill = CONTAINERD__TASK__V2__KILL_REQUEST__INIT;
	Containerd__Task__V2__ExecProcessRequest exec =
	    CONTAINERD__TASK__V2__EXEC_PROCESS_REQUEST__INIT;
	Containerd__Task__V2__PidsRequest pids = CONTAINERD__TASK__V2__PIDS_REQUEST__INIT;
	Containerd__Task__V2__ConnectRequest conn = CONTAINERD__TASK__V2__CONNECT_REQUEST__INIT;
	Containerd__Task__V2__ShutdownRequest shut = CONTAINERD__TASK__V2__SHUTDOWN_REQUEST__INIT;
	Containerd__Task__V2__PauseRequest pause = CONTAINERD__TASK__V2__PAUSE_REQUEST__INIT;
	Containerd__Task__V2__StatsRequest stats = CONTAINERD__TASK__V2__STATS_REQUEST__INIT;
	Google__Protobuf__Any spec = GOOGLE__PROTOBUF__ANY__INIT;
	char *spec_json = NULL;

	if (na < 1 && strcmp(cmd, "call"))
		return usage();
	if (!strcmp(cmd, "create")) {
		if (na < 2)
			return usage();
		method = "Create";
		create.id = a[0];
		create.bundle = a[1];
		create.stdin = (char *)opt(na, a, "stdin", "");
		create.stdout = (char *)opt(na, a, "stdout", "");
		create.stderr = (char *)opt(na, a, "stderr", "");
		create.terminal = !strcmp(opt(na, a, "terminal", "0"), "1");
		msg = &create.base;
		out_desc = &containerd__task__v2__create_task_response__descriptor;
	} else if (!strcmp(cmd, "start")) {
		method = "Start";
		start.id = a[0];
		start.exec_id = (char *)exec_id;
		msg = &start.base;
		out_desc = &containerd__task__v2__start_response__descriptor;
	} else if (!strcmp(cmd, "state")) {
		method = "State";
		state.id = a[0];
		state.exec_id = (char *)exec_id;
		msg = &state.base;
		out_desc = &containerd__task__v2__state_response__descriptor;
	} else if (!strcmp(cmd, "wait")) {
		method = "Wait";
		wait.id = a[0];
		wait.exec_id = (char *)exec_id;
		msg = &wait.base;
		out_desc = &containerd__task__v2__wait_response__descriptor;
	} else if (!strcmp(cmd, "delete")) {
		method = "Delete";
		del.id = a[0];
		del.exec_id = (char *)exec_id;
		msg = &del.base;
		out_desc = &containerd__task__v2__delete_response__descriptor;
	} else if (!strcmp(cmd, "kill")) {
		if (na < 2)
			return usage();
		method = "Kill";
		kill.id = a[0];
		kill.exec_id = (char *)exec_id;
		kill.signal = (uint32_t)atoi(a[1]);
		kill.all = !strcmp(opt(na, a, "all", "0"), "1");
		msg = &kill.base;
	} else if (!strcmp(cmd, "exec")) {
		if (na < 3)
			return usage();
		struct ward_err err = {0};
		size_t len;
		spec_json = read_file_at(AT_FDCWD, a[2], &len, &err);
		if (!spec_json) {
			fprintf(stderr, "shim-client: %s\n", err.msg);
			return 2;
		}
		method = "Exec";
		exec.id = a[0];
		exec.exec_id = a[1];
		exec.stdin = (char *)opt(na, a, "stdin", "");
		exec.stdout = (char *)opt(na, a, "stdout", "");
		exec.stderr = (char *)opt(na, a, "stderr", "");
		spec.type_url = "types.containerd.io/opencontainers/runtime-spec/1/Process";
		spec.value.data = (uint8_t *)spec_json;
		spec.value.len = len;
		exec.spec = &spec;
		msg = &exec.base;
	} else if (!strcmp(cmd, "pids")) {
		method = "Pids";
		pids.id = a[0];
		msg = &pids.base;
		out_desc = &containerd__task__v2__pids_response__descriptor;
	} else if (!strcmp(cmd, "connect")) {
		method = "Connect";
		conn.id = a[0];
		msg = &conn.base;
		out_desc = &containerd__task__v2__connect_response__descriptor;
	} else if (!strcmp(cmd, "shutdown")) {
		method = "Shutdown";
		shut.id = a[0];
		msg = &shut.base;
	} else if (!strcmp(cmd, "pause") || !strcmp(cmd, "resume")) {
		/* PauseRequest and ResumeRequest are both {id=1} */
		method = !strcmp(cmd, "pause") ? "Pause" : "Resume";
		pause.id = a[0];
		msg = &pause.base;
	} else if (!strcmp(cmd, "stats")) {
		method = "Stats";
		stats.id = a[0];
		msg = &stats.base;
		out_desc = &containerd__task__v2__stats_response__descriptor;
	} else if (!strcmp(cmd, "call")) {
		if (na < 1)
			return usage();
		method = a[0];
	} else {
		return usage();
	}

	uint8_t *payload = NULL;
	size_t plen = 0;
	if (msg) {
		plen = protobuf_c_message_get_packed_size(msg);
		payload = xmalloc(plen + 1);
		protobuf_c_message_pack(msg, payload);
	}
	struct ttrpc_request req = {.service = "containerd.task.v2.Task",
				    .method = (char *)method,
				    .payload = payload,
				    .payload_len = plen};
	struct ttrpc_response resp = {0};
	struct ttrpc_client c;
	struct ward_err err = {0};
	if (ttrpc_client_connect(&c, sock, &err) < 0 ||
	    ttrpc_client_call(&c, &req, &resp, 0, &err) < 0) {
		fprintf(stderr, "shim-client: %s\n", err.msg);
		return 2;
	}
	ttrpc_client_close(&c);
	free(payload);
	free(spec_json);
	if (resp.code != 0) {
		printf("code=%d\nmessage=%s\n", resp.code, resp.message ? resp.message : "");
		ttrpc_response_free(&resp);
		return 1;
	}
	ProtobufCMessage *out =
	    protobuf_c_message_unpack(out_desc, NULL, resp.payload_len, resp.payload);
	if (!out) {
		fprintf(stderr, "shim-client: malformed %s response\n", method);
		return 2;
	}
	if (out_desc == &containerd__task__v2__create_task_response__descriptor) {
		printf("pid=%u\n", ((Containerd__Task__V2__CreateTaskResponse *)out)->pid);
	} else if (out_desc == &containerd__task__v2__start_response__descriptor) {
		printf("pid=%u\n", ((Containerd__Task__V2__StartResponse *)out)->pid);
	} else if (out_desc == &containerd__task__v2__state_response__descriptor) {
		Containerd__Task__V2__StateResponse *s = (void *)out;
		printf("id=%s\nexec_id=%s\nbundle=%s\npid=%u\nstatus=%s\nstdin=%s\nstdout=%s\n"
		       "stderr=%s\nterminal=%d\nexit_status=%u\n",
		       s->id, s->exec_id, s->bundle, s->pid, status_name(s->status), s->stdin,
		       s->stdout, s->stderr, s->terminal, s->exit_status);
		print_ts("exited_at", s->exited_at);
	} else if (out_desc == &containerd__task__v2__wait_response__descriptor) {
		Containerd__Task__V2__WaitResponse *w = (void *)out;
		printf("exit_status=%u\n", w->exit_status);
		print_ts("exited_at", w->exited_at);
	} else if (out_desc == &containerd__task__v2__delete_response__descriptor) {
		Containerd__Task__V2__DeleteResponse *d = (void *)out;
		printf("pid=%u\nexit_status=%u\n", d->pid, d->exit_status);
		print_ts("exited_at", d->exited_at);
	} else if (out_desc == &containerd__task__v2__pids_response__descriptor) {
		Containerd__Task__V2__PidsResponse *p = (void *)out;
		printf("pids=");
		for (size_t i = 0; i < p->n_processes; i++)
			printf("%s%u", i ? " " : "", p->processes[i]->pid);
		printf("\n");
	} else if (out_desc == &containerd__task__v2__connect_response__descriptor) {
		Containerd__Task__V2__ConnectResponse *r = (void *)out;
		printf("shim_pid=%u\ntask_pid=%u\nversion=%s\n", r->shim_pid, r->task_pid,
		       r->version);
	} else if (out_desc == &containerd__task__v2__stats_response__descriptor) {
		Containerd__Task__V2__StatsResponse *r = (void *)out;
		if (r->stats) {
			printf("type_url=%s\n", r->stats->type_url);
			Io__Containerd__Cgroups__V2__Metrics *m =
			    io__containerd__cgroups__v2__metrics__unpack(NULL, r->stats->value.len,
									 r->stats->value.data);
			if (m) {
				if (m->pids)
					printf("pids.current=%llu\n",
					       (unsigned long long)m->pids->current);
				if (m->cpu)
					printf("cpu.usage_usec=%llu\n",
					       (unsigned long long)m->cpu->usage_usec);
				if (m->memory)
					printf("memory.usage=%llu\nmemory.usage_limit=%llu\n"
					       "memory.anon=%llu\n",
					       (unsigned long long)m->memory->usage,
					       (unsigned long long)m->memory->usage_limit,
					       (unsigned long long)m->memory->anon);
				io__containerd__cgroups__v2__metrics__free_unpacked(m, NULL);
			}
		}
	}
	protobuf_c_message_free_unpacked(out, NULL);
	ttrpc_response_free(&resp);
	return 0;
}
