/* The pod's members in a state root (pod_member.h). */
#include "pod_member.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "hostfds.h"
#include "intent.h"
#include "json.h"
#include "spec.h"
#include "state.h"
#include "util.h"

/* The pod and tenant of a state dir: its state.json, else (a create under way or one that
 * died) its intent. 0 if it names both. */
static int member_of(int dfd, char **pod, char **tenant)
{
	struct ward_state st = {0};
	struct ward_intent in = {0};
	struct ward_err ignored;

	*pod = *tenant = NULL;
	if (ward_state_read(dfd, &st, &ignored) == 0) {
		const char *t = ward_state_tenant(&st);
		*pod = xstrdup(ward_state_pod(&st));
		if (t)
			*tenant = xstrdup(t);
		ward_state_clear(&st);
	} else if (ignored.errnum == ENOENT && ward_intent_read(dfd, &in, &ignored) == 0) {
		*pod = in.pod;
		*tenant = in.tenant;
		in.pod = in.tenant = NULL;
		ward_intent_clear(&in);
	}
	if (*pod && *tenant)
		return 0;
	free(*pod);
	free(*tenant);
	*pod = *tenant = NULL;
	return -1;
}

struct pod_check {
	const char *pod, *tenant;
	struct ward_err *err;
};

static int check_pod_one(int dfd, const char *id, void *arg)
{
	struct pod_check *c = arg;
	cleanup_free char *p = NULL;
	cleanup_free char *t = NULL;

	if (member_of(dfd, &p, &t) < 0 || strcmp(p, c->pod) || !strcmp(t, c->tenant))
		return 0;
	return ward_fail(c->err, 0,
			 "pod \"%s\" already has container \"%s\" of tenant \"%s\": "
			 "all containers of a pod belong to one tenant",
			 c->pod, id, t);
}

int ward_pod_check_tenant(int rootfd, const char *pod, const char *tenant, struct ward_err *err)
{
	struct pod_check c = {.pod = pod, .tenant = tenant, .err = err};
	return ward_state_each(rootfd, NULL, check_pod_one, &c);
}

/* ---- the sandbox ---------------------------------------------------------------------- */

/* Is the namespace the held fd is the one /proc/<pid>/ns/<kind> is? By identity (st_dev,
 * st_ino of the nsfs inodes) of the fd that create will join (hostfds.c), never the name
 * again: the one place namespaces are compared here. */
static bool ns_same(int fd, pid_t pid, const char *kind)
{
	char theirs[64];
	struct stat a, b;

	snprintf(theirs, sizeof(theirs), "/proc/%d/ns/%s", (int)pid, kind);
	return fd >= 0 && fstat(fd, &a) == 0 && stat(theirs, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* The sandbox's state (in st), or -1 if there is none in the state root. */
static int sandbox_open(int rootfd, const char *pod, struct ward_state *st)
{
	struct ward_err ignored = {0};
	cleanup_fd int dfd = -1;

	if (!ward_id_valid(pod) ||
	    (dfd = openat(rootfd, pod, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    ward_state_read(dfd, st, &ignored) < 0)
		return -1;
	return 0;
}

int ward_pod_check_sandbox(int rootfd, const char *id, struct ward_pod *pod,
			   const struct ward_hostfds *fds, struct ward_err *err)
{
	static const struct {
		int type;
		const char *proc;
	} kinds[] = {{CLONE_NEWIPC, "ipc"}, {CLONE_NEWUTS, "uts"}, {CLONE_NEWNET, "net"}};
	struct ward_state st = {0};
	cleanup_fd int pidfd = -1;
	const char *why = NULL;
	int joined = 0;

	if (!strcmp(pod->id, id))
		return 0; /* the sandbox itself, or a container alone */
	if (sandbox_open(rootfd, pod->id, &st) < 0) {
		why = "no such container in this state root";
		goto refuse;
	}
	if (strcmp(ward_state_pod(&st), pod->id)) {
		why = "that container is not a pod sandbox (it belongs to another pod)";
		goto refuse;
	}
	if ((pidfd = ward_state_pidfd(&st)) < 0) {
		why = "the sandbox container is not running";
		goto refuse;
	}
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		const struct ward_hostfd *e = ward_hostfds_ns(fds, kinds[k].type);
		if (e && ns_same(e->fd, st.pid, kinds[k].proc))
			joined |= kinds[k].type;
	}
	/* The pid named the sandbox's init throughout: it is still alive. */
	if (joined && ward_pidfd_send_signal(pidfd, 0) == 0) {
		pod->from_sandbox |= joined;
		/* Its userdata is the pod's when ward's state of the sandbox says its bundle was
		 * its own userdata directory, and the sandbox is of this tenant and pod. */
		pod->sandbox_userdata =
		    st.pod.userdata && st.pod.id && !strcmp(st.pod.id, pod->id) && pod->tenant &&
		    ward_state_tenant(&st) && !strcmp(ward_state_tenant(&st), pod->tenant);
		ward_state_clear(&st);
		return 0;
	}
	why = "it joins none of the sandbox's ipc, uts or network namespaces";
refuse:
	ward_state_clear(&st);
	return ward_fail(err, 0,
			 "container \"%s\": annotation %s=%s: the container does not join pod %s's "
			 "namespaces (%s)",
			 id, pod->sandbox_key ? pod->sandbox_key : WARD_ANN_SANDBOX_ID, pod->id,
			 pod->id, why);
}

void ward_pod_alone_unless_member(int rootfd, const char *id, struct ward_pod *pod,
				  const struct ward_hostfds *fds, const struct ward_tenant *t)
{
	struct ward_pod probe = WARD_POD_INIT;
	struct ward_err ignored;
	bool member;

	if (pod->is_sandbox || !pod->sandbox_key ||
	    strcmp(pod->sandbox_key, WARD_ANN_CRIO_SANDBOX_ID))
		return;
	probe.id = pod->id;
	probe.tenant = pod->tenant;
	probe.sandbox_key = pod->sandbox_key;
	member = ward_pod_check_sandbox(rootfd, id, &probe, fds, &ignored) == 0;
	if (member)
		return;
	free(pod->id);
	pod->id = xstrdup(id);
	pod->is_sandbox = true;
	free(pod->ids_owner);
	pod->ids_owner = t->trusted ? NULL : ward_pod_ids_owner(t, id);
}

int ward_pod_sandbox_userns(int rootfd, const char *id, struct ward_pod *pod,
			    struct ward_hostfds *fds, struct ward_err *err)
{
	struct ward_state st = {0};
	cleanup_fd int pidfd = -1;
	cleanup_free char *name = NULL;
	const struct ward_hostfd *e;

	free(pod->userns);
	pod->userns = NULL;
	if (!strcmp(pod->id, id) || ward_hostfds_ns(fds, CLONE_NEWUSER))
		return 0;
	if (sandbox_open(rootfd, pod->id, &st) < 0 || (pidfd = ward_state_pidfd(&st)) < 0) {
		ward_state_clear(&st);
		return ward_fail(err, 0,
				 "container \"%s\": pod %s: the sandbox is not running: "
				 "cannot join its user namespace",
				 id, pod->id);
	}
	name = xasprintf("/proc/%d/ns/user", (int)st.pid);
	if (ward_hostfds_add_ns(fds, CLONE_NEWUSER, "user", name, err) < 0) {
		ward_state_clear(&st);
		return ward_wrap(err, "container \"%s\": pod %s's user namespace", id, pod->id);
	}
	/* Held now; the pid still named the sandbox's init once it was (pidfd, not the pid). */
	e = ward_hostfds_ns(fds, CLONE_NEWUSER);
	if (!e || !ns_same(e->fd, st.pid, "user") || ward_pidfd_send_signal(pidfd, 0) < 0) {
		ward_state_clear(&st);
		return ward_fail(err, 0,
				 "container \"%s\": pod %s: the sandbox exited while its "
				 "user namespace was opened",
				 id, pod->id);
	}
	ward_state_clear(&st);
	pod->userns = steal_ptr(name);
	pod->from_sandbox |= CLONE_NEWUSER;
	return 0;
}

char *ward_pod_sandbox_uid(int rootfd, const char *id, const char *pod)
{
	struct ward_state st = {0};
	const char *uid;
	char *r;

	if (rootfd < 0 || !strcmp(pod, id))
		return NULL;
	if (sandbox_open(rootfd, pod, &st) < 0) {
		ward_state_clear(&st);
		return xstrdup("");
	}
	uid = st.pod.id ? st.pod.uid : NULL;
	for (size_t i = 0; !st.pod.id && st.annotation_keys && st.annotation_keys[i]; i++)
		if (!strcmp(st.annotation_keys[i], WARD_ANN_CRI_POD_UID))
			uid = st.annotation_values[i];
	r = xstrdup(uid ? uid : "");
	ward_state_clear(&st);
	return r;
}
