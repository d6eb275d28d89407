/* Unit tests: the pod resolved from a spec's annotations (pod.h), kept in state.json as
 * ward's own "pod" object and read back; an older state.json's pod from its annotations. */
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "pod.h"
#include "spec.h"
#include "state.h"
#include "tap.h"
#include "util.h"

static void test_resolve(void)
{
	struct ward_tenant a = {.name = "a", .id_mode = WARD_IDS_POD};
	struct ward_tenant t = {.name = "infra", .trusted = true, .id_mode = WARD_IDS_POD};
	struct ward_pod pod = WARD_POD_INIT;
	struct ward_err err = {0};
	json_t *ann = json_pack("{s:s,s:s,s:s,s:s,s:s}", WARD_ANN_SANDBOX_ID, "sb",
				WARD_ANN_CRI_NAMESPACE, "team-a", WARD_ANN_CRI_POD, "web",
				WARD_ANN_CRI_POD_UID, "u1", WARD_ANN_TENANT, "a");

	CHECK(ward_pod_resolve(&pod, ann, "app", &a, &err) == 0, "resolve: a pod member");
	CHECK(!strcmp(pod.id, "sb") && !pod.is_sandbox, "  its pod is its sandbox's id");
	CHECK(pod.k8s_namespace && !strcmp(pod.k8s_namespace, "team-a") && pod.name &&
		  !strcmp(pod.name, "web") && pod.uid && !strcmp(pod.uid, "u1"),
	      "  the Kubernetes namespace, name and uid");
	CHECK(!strcmp(pod.tenant, "a") && pod.tenant_ann && !strcmp(pod.tenant_ann, "a"),
	      "  the tenant and the pod's own tenant annotation");
	CHECK(pod.ids_owner && !strcmp(pod.ids_owner, "pod:a/sb"), "  the pod's ID slice owner");
	CHECK(!pod.locked && pod.lockfd == -1 && !pod.from_sandbox && !pod.userns,
	      "  not locked, nothing shared yet");
	ward_pod_clear(&pod);

	CHECK(ward_pod_resolve(&pod, NULL, "c1", &a, &err) == 0 && !strcmp(pod.id, "c1") &&
		  pod.is_sandbox && !pod.k8s_namespace,
	      "resolve: a container alone is its own pod (its sandbox)");
	ward_pod_clear(&pod);
	CHECK(ward_pod_resolve(&pod, NULL, "c1", &t, &err) == 0 && !pod.ids_owner,
	      "resolve: a trusted tenant's pod has no slice of ward's");
	ward_pod_clear(&pod);

	{ /* CRI-O's (and dockershim's) keys when containerd's are absent (the audit's pod) */
		json_t *crio =
		    json_pack("{s:s,s:s,s:s}", "io.kubernetes.pod.namespace", "team-b",
			      "io.kubernetes.pod.name", "db", "io.kubernetes.pod.uid", "u2");
		CHECK(ward_pod_resolve(&pod, crio, "c2", &a, &err) == 0 && pod.k8s_namespace &&
			  !strcmp(pod.k8s_namespace, "team-b") && pod.name &&
			  !strcmp(pod.name, "db") && pod.uid && !strcmp(pod.uid, "u2"),
		      "resolve: the older io.kubernetes.pod.* keys when the CRI ones are absent");
		ward_pod_clear(&pod);
		json_decref(crio);
	}

	{ /* podman's pod member (and CRI-O's): io.kubernetes.cri-o.SandboxID, the infra's id */
		json_t *pm = json_pack("{s:s,s:s}", "io.kubernetes.cri-o.SandboxID", "infra1",
				       "io.kubernetes.cri-o.ContainerType", "container");
		CHECK(ward_pod_resolve(&pod, pm, "m1", &a, &err) == 0 &&
			  !strcmp(pod.id, "infra1") && !pod.is_sandbox &&
			  !strcmp(pod.ids_owner, "pod:a/infra1") &&
			  !strcmp(pod.sandbox_key, "io.kubernetes.cri-o.SandboxID"),
		      "resolve: podman's SandboxID makes a member of the infra's pod");
		ward_pod_clear(&pod);
		json_object_set_new(pm, WARD_ANN_SANDBOX_ID, json_string("sb"));
		CHECK(ward_pod_resolve(&pod, pm, "m1", &a, &err) == 0 && !strcmp(pod.id, "sb"),
		      "resolve: containerd's sandbox-id first");
		ward_pod_clear(&pod);
		json_object_set_new(pm, WARD_ANN_SANDBOX_ID, json_string(""));
		json_object_set_new(pm, "io.kubernetes.cri-o.SandboxID", json_string("../y"));
		CHECK(ward_pod_resolve(&pod, pm, "m1", &a, &err) < 0,
		      "resolve: an invalid SandboxID");
		CHECK_STR_CONTAINS(err.msg,
				   "annotation io.kubernetes.cri-o.SandboxID: invalid pod id",
				   "  is refused, naming that annotation");
		ward_pod_clear(&pod);
		json_decref(pm);
	}

	json_object_set_new(ann, WARD_ANN_SANDBOX_ID, json_string("../x"));
	CHECK(ward_pod_resolve(&pod, ann, "app", &a, &err) < 0, "resolve: an invalid pod id");
	CHECK_STR_CONTAINS(err.msg, "annotation io.kubernetes.cri.sandbox-id: invalid pod id",
			   "  is refused, naming the annotation");
	ward_pod_clear(&pod);
	json_decref(ann);
}

static void test_state_round_trip(void)
{
	char tmpl[] = "/tmp/ward-pod-XXXXXX";
	char *dir = mkdtemp(tmpl);
	cleanup_fd int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	struct ward_state st = {0}, back = {0};
	struct ward_err err = {0};

	CHECK(dfd >= 0, "a temporary state dir");
	if (dfd < 0)
		return;
	st.id = xstrdup("app");
	st.annotation_keys = xcalloc(2, sizeof(char *));
	st.annotation_values = xcalloc(2, sizeof(char *));
	st.annotation_keys[0] = xstrdup(WARD_ANN_SANDBOX_ID);
	st.annotation_values[0] = xstrdup("from-annotation");
	st.pod = (struct ward_pod){.id = xstrdup("sb"),
				   .k8s_namespace = xstrdup("team-a"),
				   .name = xstrdup("web"),
				   .uid = xstrdup("u1"),
				   .tenant = xstrdup("a"),
				   .tenant_ann = xstrdup("a"),
				   .ids_owner = xstrdup("pod:a/sb"),
				   .ids = {1000000, 65536},
				   .from_sandbox = CLONE_NEWUSER | CLONE_NEWNET,
				   .userns = xstrdup("/proc/42/ns/user"),
				   .userdata = true,
				   .sandbox_userdata = true,
				   .lockfd = -1};
	CHECK(ward_state_write(dfd, &st, &err) == 0, "state: written with its pod");
	CHECK(ward_state_read(dfd, &back, &err) == 0, "state: read back");
	CHECK(back.pod.id && !strcmp(back.pod.id, "sb") && !back.pod.is_sandbox &&
		  !strcmp(back.pod.k8s_namespace, "team-a") && !strcmp(back.pod.name, "web") &&
		  !strcmp(back.pod.uid, "u1") && !strcmp(back.pod.tenant, "a") &&
		  !strcmp(back.pod.ids_owner, "pod:a/sb") && back.pod.ids.start == 1000000 &&
		  back.pod.ids.size == 65536 &&
		  back.pod.from_sandbox == (CLONE_NEWUSER | CLONE_NEWNET) &&
		  !strcmp(back.pod.userns, "/proc/42/ns/user") && back.pod.userdata,
	      "state: the pod round-trips (its bundle was its containers/storage userdata)");
	CHECK(!back.pod.tenant_ann && !back.pod.locked && !back.pod.sandbox_userdata,
	      "state: neither the pod's tenant annotation, a lock nor a member's right to its "
	      "sandbox's userdata is kept");
	CHECK(!strcmp(ward_state_pod(&back), "sb"),
	      "state: the pod is ward's field, not the annotation");
	ward_state_clear(&back);

	/* a state.json written before the pod field: its annotation, else the container */
	ward_pod_clear(&st.pod);
	CHECK(ward_state_write(dfd, &st, &err) == 0 && ward_state_read(dfd, &back, &err) == 0 &&
		  !back.pod.id && !strcmp(ward_state_pod(&back), "from-annotation"),
	      "older state: the pod is its sandbox-id annotation");
	ward_state_clear(&back);
	free(st.annotation_values[0]);
	st.annotation_values[0] = xstrdup("");
	CHECK(ward_state_write(dfd, &st, &err) == 0 && ward_state_read(dfd, &back, &err) == 0 &&
		  !strcmp(ward_state_pod(&back), "app"),
	      "older state: without one the container is its own pod");
	ward_state_clear(&back);
	ward_state_clear(&st);

	/* a malformed pod object is no pod */
	{
		struct ward_pod p;
		json_t *o = json_pack("{s:s}", "id", "../x");
		ward_pod_from_json(o, &p);
		CHECK(!p.id, "state: a pod object with an invalid id is ignored");
		ward_pod_clear(&p);
		json_decref(o);
		ward_pod_from_json(NULL, &p);
		CHECK(!p.id, "state: no pod object, no pod");
	}
	unlinkat(dfd, "state.json", 0);
	rmdir(dir);
}

int main(void)
{
	test_resolve();
	test_state_round_trip();
	TAP_DONE();
}
