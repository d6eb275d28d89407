/* Unit tests: container ids, cgroup path rules, state.json round trip and status. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "state.h"
#include "tap.h"
#include "util.h"

static void test_ids(void)
{
	CHECK(ward_id_valid("web-1"), "plain id is valid");
	CHECK(ward_id_valid("a.b_c+d"), "dots, underscores, plus are valid");
	CHECK(!ward_id_valid(""), "empty id is invalid");
	CHECK(!ward_id_valid("a/b"), "id with / is invalid");
	CHECK(!ward_id_valid(".."), "id .. is invalid");
	CHECK(!ward_id_valid("."), "id . is invalid");
	CHECK(!ward_id_valid("a b"), "id with space is invalid");
	CHECK(!ward_id_valid(NULL), "NULL id is invalid");
}

static void test_cgroup_paths(void)
{
	struct ward_err err = {0};
	const char *v2 = ward_cgroup_v2_root(&err);
	char *p;
	char want[4200];

	CHECK(v2 != NULL, "a cgroup2 hierarchy is found");
	if (!v2)
		return;
	p = ward_cgroup_path_for(NULL, "c1", &err);
	snprintf(want, sizeof(want), "%s/ward/c1", v2);
	CHECK(p && !strcmp(p, want), "default cgroup is <v2>/ward/<id>");
	free(p);
	p = ward_cgroup_path_for("/tenant/x", "c1", &err);
	snprintf(want, sizeof(want), "%s/tenant/x", v2);
	CHECK(p && !strcmp(p, want), "absolute cgroupsPath is under the v2 root");
	free(p);
	p = ward_cgroup_path_for("rel/x", "c1", &err);
	snprintf(want, sizeof(want), "%s/ward/rel/x", v2);
	CHECK(p && !strcmp(p, want), "relative cgroupsPath is under <v2>/ward");
	free(p);
	p = ward_cgroup_path_for("/a/../../etc", "c1", &err);
	CHECK(p == NULL, "cgroupsPath with .. is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.cgroupsPath", "error names the field");
	p = ward_cgroup_path_for("kubepods-burstable.slice:ward:c1", "c1", &err);
	snprintf(want, sizeof(want), "%s/kubepods.slice/kubepods-burstable.slice/ward-c1.scope",
		 v2);
	CHECK(p && !strcmp(p, want), "systemd slice:prefix:name is where systemd puts the scope");
	free(p);
	p = ward_cgroup_path_for("rel:x", "c1", &err);
	CHECK(p == NULL, "another relative form with ':' is refused");
	CHECK_STR_CONTAINS(err.msg, "linux.cgroupsPath: \"rel:x\": expected systemd's",
			   "error names the field and the form");
}

static void test_state_roundtrip(void)
{
	char tmpl[] = "/tmp/ward-state-XXXXXX";
	char *root = mkdtemp(tmpl);
	struct ward_err err = {0};
	struct ward_state st = {0}, back;
	char *keys[] = {"k1", NULL}, *vals[] = {"v1", NULL};
	cleanup_fd int rootfd = -1;
	cleanup_fd int dirfd = -1;
	cleanup_free char *json = NULL;
	int fd2;
	pid_t child;

	rootfd = ward_state_root_open(root, &err);
	CHECK(rootfd >= 0, "state root opens");
	dirfd = ward_state_create(rootfd, "c1", &err);
	CHECK(dirfd >= 0, "state dir is created");
	fd2 = ward_state_create(rootfd, "c1", &err);
	CHECK(fd2 < 0, "second create of the same id fails");
	CHECK_STR_CONTAINS(err.msg, "already exists", "duplicate id error wording");

	/* A child that exits at once gives a pid that is no longer alive. */
	child = fork();
	if (child == 0)
		_exit(0);
	st.id = "c1";
	st.oci_version = "1.3.0";
	st.pid = child;
	st.pid_start = proc_start_time(child);
	st.bundle = "/b";
	st.rootfs = "/b/rootfs";
	st.created = "2026-11-21T00:00:00.000000000Z";
	st.owner = "";
	st.cgroup = "";
	st.annotation_keys = keys;
	st.annotation_values = vals;
	st.apparmor_asked = "containers-default-0.50.1";
	CHECK(ward_state_write(dirfd, &st, &err) == 0, "state.json is written");
	CHECK(ward_state_read(dirfd, &back, &err) == 0, "state.json reads back");
	CHECK(back.pid == child && !strcmp(back.bundle, "/b") &&
		  !strcmp(back.annotation_values[0], "v1"),
	      "state fields round-trip");
	CHECK(back.apparmor_asked && !strcmp(back.apparmor_asked, "containers-default-0.50.1"),
	      "the AppArmor profile asked at create round-trips");
	st.apparmor_asked = NULL;
	waitpid(child, NULL, 0);
	CHECK(ward_state_status(dirfd, &back) == WARD_STOPPED, "dead pid means stopped");
	json = ward_state_json(&back, WARD_STOPPED, true);
	CHECK_STR_CONTAINS(json, "\"pid\": 0", "stopped state prints pid 0");
	CHECK_STR_CONTAINS(json, "\"status\": \"stopped\"", "status field");
	CHECK_STR_CONTAINS(json, "\"owner\": \"\"", "owner field is present");
	CHECK_STR_CONTAINS(json, "\"k1\": \"v1\"", "annotations are printed");
	ward_state_clear(&back);

	/* Our own live pid with the fifo present: created. */
	st.pid = getpid();
	st.pid_start = proc_start_time(getpid());
	ward_state_write(dirfd, &st, &err);
	mkfifoat(dirfd, WARD_EXEC_FIFO, 0600);
	ward_state_read(dirfd, &back, &err);
	CHECK(ward_state_status(dirfd, &back) == WARD_CREATED, "live pid + fifo means created");
	unlinkat(dirfd, WARD_EXEC_FIFO, 0);
	CHECK(ward_state_status(dirfd, &back) == WARD_RUNNING, "live pid, no fifo: running");
	back.pid_start += 1;
	CHECK(ward_state_status(dirfd, &back) == WARD_STOPPED,
	      "a recycled pid (other start time) means stopped");
	ward_state_clear(&back);

	CHECK(ward_state_remove(rootfd, "c1", &err) == 0, "state dir is removed");
	CHECK(ward_state_open(rootfd, "c1", false, &err) < 0, "removed container is gone");
	CHECK_STR_CONTAINS(err.msg, "does not exist", "unknown id wording");
	rmdir(root);
}

/* The tenant is ward's own field of state.json and of the state JSON, not an annotation;
 * a state.json written before that field names it in the policy's annotation. */
static void test_state_tenant(void)
{
	struct ward_err err = {0};
	struct ward_state st = {0};
	char *json;

	CHECK(ward_state_parse("{\"id\":\"c\",\"tenant\":\"acme\",\"annotations\":"
			       "{\"org.x\":\"y\"}}",
			       &st, &err) == 0,
	      "a state with a tenant parses");
	CHECK(ward_state_tenant(&st) && !strcmp(ward_state_tenant(&st), "acme"),
	      "the tenant field is the tenant");
	json = ward_state_json(&st, WARD_STOPPED, false);
	CHECK_STR_CONTAINS(json, "\"tenant\":\"acme\"", "the state JSON has the tenant");
	CHECK_STR_CONTAINS(json, "\"annotations\":{\"org.x\":\"y\"}",
			   "and the annotations as they were");
	free(json);
	ward_state_clear(&st);

	CHECK(ward_state_parse("{\"id\":\"c\",\"annotations\":{\"ward.dev/tenant\":\"old\"}}", &st,
			       &err) == 0,
	      "an older state parses");
	CHECK(ward_state_tenant(&st) && !strcmp(ward_state_tenant(&st), "old"),
	      "an older state's tenant is its policy annotation");
	json = ward_state_json(&st, WARD_STOPPED, false);
	CHECK(!strstr(json, "\"tenant\":"), "no tenant field is made up for it");
	free(json);
	ward_state_clear(&st);

	CHECK(ward_state_parse("{\"id\":\"c\"}", &st, &err) == 0 && !ward_state_tenant(&st),
	      "no tenant at all: NULL");
	CHECK(!st.apparmor_asked, "no AppArmor profile asked at create: NULL");
	ward_state_clear(&st);
}

int main(void)
{
	test_ids();
	test_cgroup_paths();
	test_state_roundtrip();
	test_state_tenant();
	TAP_DONE();
}
