/* Task.Stats: cgroup v2 files -> io.containerd.cgroups.v2.Metrics (see stats.h). */
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_stats.h"
#include "github.com/containerd/cgroups/v2/stats/metrics.pb-c.h"
#include "state.h"
#include "util.h"

int shim_state_open(const char *ward_root, const char *id, struct ward_state *st,
		    struct ward_err *err)
{
	cleanup_fd int rootfd = ward_state_root_open(ward_root, err);
	if (rootfd < 0)
		return -1;
	if (!ward_id_valid(id))
		return ward_fail(err, EINVAL, "invalid container ID format: \"%s\"", id);
	int dirfd = ward_state_open(rootfd, id, false, err);
	if (dirfd < 0)
		return -1;
	if (ward_state_read(dirfd, st, err) < 0) {
		close(dirfd);
		ward_state_clear(st);
		return -1;
	}
	return dirfd;
}

char *shim_stats_cgroup(const char *ward_root, const char *id, struct ward_err *err)
{
	struct ward_state st = {0};
	cleanup_fd int dirfd = shim_state_open(ward_root, id, &st, err);
	if (dirfd < 0)
		return NULL;
	char *cg = st.cgroup && st.cgroup[0] ? xstrdup(st.cgroup) : NULL;
	ward_state_clear(&st);
	if (!cg)
		ward_fail(err, ENOENT, "container \"%s\" has no cgroup", id);
	return cg;
}

/* Every uint64 field of msg named like a key of the keyed file (cpu.stat -> CPUStat,
 * memory.stat -> MemoryStat: containerd's names are the kernel's). */
static void read_keyed_fields(int dfd, const char *file, ProtobufCMessage *msg)
{
	struct ward_err ignored;
	cleanup_free char *text = read_file_at(dfd, file, NULL, &ignored);
	if (!text)
		return;
	const ProtobufCMessageDescriptor *d = msg->descriptor;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		uint64_t v;
		if (f->type == PROTOBUF_C_TYPE_UINT64 && f->label == PROTOBUF_C_LABEL_NONE &&
		    ward_cgroup_keyed(text, f->name, &v))
			*(uint64_t *)((char *)msg + f->offset) = v;
	}
}

static uint64_t read_limit(int dfd, const char *file, uint64_t if_max)
{
	uint64_t v = 0;
	bool is_max = false;
	if (!ward_cgroup_u64(dfd, file, &v, &is_max))
		return 0;
	return is_max ? if_max : v;
}

uint8_t *shim_stats_metrics(const char *cgroup, size_t *len, struct ward_err *err)
{
	Io__Containerd__Cgroups__V2__Metrics m = IO__CONTAINERD__CGROUPS__V2__METRICS__INIT;
	Io__Containerd__Cgroups__V2__PidsStat pids = IO__CONTAINERD__CGROUPS__V2__PIDS_STAT__INIT;
	Io__Containerd__Cgroups__V2__CPUStat cpu = IO__CONTAINERD__CGROUPS__V2__CPUSTAT__INIT;
	Io__Containerd__Cgroups__V2__MemoryStat mem =
	    IO__CONTAINERD__CGROUPS__V2__MEMORY_STAT__INIT;
	cleanup_fd int dfd = open(cgroup, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ward_fail_errno(err, "open cgroup %s", cgroup);
		return NULL;
	}
	pids.current = read_limit(dfd, "pids.current", 0);
	pids.limit = read_limit(dfd, "pids.max", 0);
	read_keyed_fields(dfd, "cpu.stat", &cpu.base);
	read_keyed_fields(dfd, "memory.stat", &mem.base);
	mem.usage = read_limit(dfd, "memory.current", 0);
	mem.usage_limit = read_limit(dfd, "memory.max", UINT64_MAX);
	mem.swap_usage = read_limit(dfd, "memory.swap.current", 0);
	mem.swap_limit = read_limit(dfd, "memory.swap.max", UINT64_MAX);
	m.pids = &pids;
	m.cpu = &cpu;
	m.memory = &mem;
	*len = io__containerd__cgroups__v2__metrics__get_packed_size(&m);
	uint8_t *buf = xmalloc(*len + 1);
	io__containerd__cgroups__v2__metrics__pack(&m, buf);
	return buf;
}
