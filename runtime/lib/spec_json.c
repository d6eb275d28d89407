/* struct ward_spec -> JSON. See spec_json.h. The order of the members is the runtime-spec's
 * (and `ward spec`'s), so a spec ward wrote reads the same after a round trip. */
#include "spec_json.h"

#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bpfdev.h"
#include "json.h"

/* ---- pieces ------------------------------------------------------------------------- */

static void put(json_t *o, const char *key, json_t *v)
{
	if (json_object_set_new(o, key, v) < 0)
		abort(); /* only on OOM or a non-UTF-8 key, which the parser refused */
}

static void put_str(json_t *o, const char *key, const char *s)
{
	if (s)
		put(o, key, json_string(s));
}

static void put_i64(json_t *o, const char *key, int64_t v)
{
	put(o, key, json_integer((json_int_t)v));
}

static void put_u64(json_t *o, const char *key, uint64_t v)
{
	put(o, key, ward_json_from_u64(v));
}

/* Members the struct keeps without a "set" flag of their own: written when cond. */
static void put_i64_if(json_t *o, const char *key, bool cond, int64_t v)
{
	if (cond)
		put_i64(o, key, v);
}

static void put_u64_if(json_t *o, const char *key, bool cond, uint64_t v)
{
	if (cond)
		put_u64(o, key, v);
}

/* An array of n elements of size bytes at v, each written by fn; none when n is 0. */
static void put_array(json_t *o, const char *key, const void *v, size_t n, size_t size,
		      json_t *(*fn)(const void *))
{
	json_t *a;
	if (n == 0)
		return;
	a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, fn((const char *)v + i * size));
	put(o, key, a);
}

static json_t *strv(char *const *v)
{
	json_t *a = json_array();
	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* A NULL-terminated list that is there (an empty one too): the parser keeps NULL for none. */
static void put_strv(json_t *o, const char *key, char *const *v)
{
	if (v)
		put(o, key, strv(v));
}

static void put_map(json_t *o, const char *key, char *const *keys, char *const *values)
{
	json_t *m;
	if (!keys)
		return;
	m = json_object();
	for (size_t i = 0; keys[i]; i++)
		put(m, keys[i], json_string(values[i]));
	put(o, key, m);
}

/* An object given only when it has members. */
static void put_nonempty(json_t *o, const char *key, json_t *v)
{
	if (json_object_size(v) > 0)
		put(o, key, v);
	else
		json_decref(v);
}

static void put_idmaps(json_t *o, const char *key, const struct ward_idmaps *m)
{
	json_t *a;
	if (m->n == 0)
		return;
	a = json_array();
	for (size_t i = 0; i < m->n; i++)
		json_array_append_new(a, json_pack("{s:I,s:I,s:I}", "containerID",
						   (json_int_t)m->v[i].container_id, "hostID",
						   (json_int_t)m->v[i].host_id, "size",
						   (json_int_t)m->v[i].size));
	put(o, key, a);
}

/* ---- linux.resources ---------------------------------------------------------------- */

static void put_ri64(json_t *o, const char *key, struct ward_res_i64 v)
{
	if (v.set)
		put_i64(o, key, v.v);
}

static void put_ru64(json_t *o, const char *key, struct ward_res_u64 v)
{
	if (v.set)
		put_u64(o, key, v.v);
}

static void put_rbool(json_t *o, const char *key, struct ward_res_bool v)
{
	if (v.set)
		put(o, key, json_boolean(v.v));
}

/* The scalar members of memory and cpu, by table: each is written when set. */
struct res_field {
	const char *section, *key;
	enum { RF_I64, RF_U64, RF_BOOL, RF_STR } kind;
	size_t off; /* in struct ward_resources */
};

#define RF(section, key, kind, member)                                                             \
	{                                                                                          \
		section, key, kind, offsetof(struct ward_resources, member)                        \
	}
static const struct res_field res_fields[] = {
    RF("memory", "limit", RF_I64, memory.limit),
    RF("memory", "reservation", RF_I64, memory.reservation),
    RF("memory", "swap", RF_I64, memory.swap),
    RF("memory", "kernel", RF_I64, memory.kernel),
    RF("memory", "kernelTCP", RF_I64, memory.kernel_tcp),
    RF("memory", "swappiness", RF_U64, memory.swappiness),
    RF("memory", "disableOOMKiller", RF_BOOL, memory.disable_oom_killer),
    RF("memory", "useHierarchy", RF_BOOL, memory.use_hierarchy),
    RF("memory", "checkBeforeUpdate", RF_BOOL, memory.check_before_update),
    RF("cpu", "shares", RF_U64, cpu.shares),
    RF("cpu", "quota", RF_I64, cpu.quota),
    RF("cpu", "burst", RF_U64, cpu.burst),
    RF("cpu", "period", RF_U64, cpu.period),
    RF("cpu", "realtimeRuntime", RF_I64, cpu.realtime_runtime),
    RF("cpu", "realtimePeriod", RF_U64, cpu.realtime_period),
    RF("cpu", "cpus", RF_STR, cpu.cpus),
    RF("cpu", "mems", RF_STR, cpu.mems),
    RF("cpu", "idle", RF_I64, cpu.idle),
};
#undef RF

/* The members of section (an object) from the table. */
static json_t *fields_json(const struct ward_resources *r, const char *section)
{
	json_t *o = json_object();
	for (size_t i = 0; i < sizeof(res_fields) / sizeof(res_fields[0]); i++) {
		const struct res_field *f = &res_fields[i];
		const char *at = (const char *)r + f->off;
		if (strcmp(f->section, section))
			continue;
		switch (f->kind) {
		case RF_I64:
			put_ri64(o, f->key, *(const struct ward_res_i64 *)at);
			break;
		case RF_U64:
			put_ru64(o, f->key, *(const struct ward_res_u64 *)at);
			break;
		case RF_BOOL:
			put_rbool(o, f->key, *(const struct ward_res_bool *)at);
			break;
		case RF_STR:
			put_str(o, f->key, *(char *const *)at);
			break;
		}
	}
	return o;
}

static json_t *block_io_json(const struct ward_res_block_io *b)
{
	json_t *o = json_object(), *a;
	put_ru64(o, "weight", b->weight);
	put_ru64(o, "leafWeight", b->leaf_weight);
	if (b->weight_device) {
		a = json_array();
		for (size_t i = 0; i < b->n_weight_device; i++) {
			const struct ward_res_weight_device *w = &b->weight_device[i];
			json_t *d = json_pack("{s:I,s:I}", "major", (json_int_t)w->major, "minor",
					      (json_int_t)w->minor);
			put_ru64(d, "weight", w->weight);
			put_ru64(d, "leafWeight", w->leaf_weight);
			json_array_append_new(a, d);
		}
		put(o, "weightDevice", a);
	}
	for (int k = 0; k < WARD_RES_N_THROTTLE; k++) {
		if (!b->throttle[k])
			continue;
		a = json_array();
		for (size_t i = 0; i < b->n_throttle[k]; i++) {
			const struct ward_res_throttle_device *t = &b->throttle[k][i];
			json_t *d = json_pack("{s:I,s:I}", "major", (json_int_t)t->major, "minor",
					      (json_int_t)t->minor);
			put_u64(d, "rate", t->rate);
			json_array_append_new(a, d);
		}
		put(o, ward_res_throttle_names[k], a);
	}
	return o;
}

static json_t *device_rule_json(const void *v)
{
	const struct ward_bpfdev_rule *r = v;
	char access[4], *w = access;
	json_t *o = json_pack("{s:b}", "allow", r->allow);
	if (r->type != 'a')
		put(o, "type", json_stringn(&r->type, 1));
	put_i64_if(o, "major", r->major != WARD_BPFDEV_ANY, r->major);
	put_i64_if(o, "minor", r->minor != WARD_BPFDEV_ANY, r->minor);
	if (r->access & WARD_BPFDEV_READ)
		*w++ = 'r';
	if (r->access & WARD_BPFDEV_WRITE)
		*w++ = 'w';
	if (r->access & WARD_BPFDEV_MKNOD)
		*w++ = 'm';
	*w = '\0';
	put_str(o, "access", access);
	return o;
}

json_t *ward_resources_to_json(const struct ward_resources *r)
{
	json_t *o = json_object(), *a;

	if (r->has_devices) /* an empty list too: update replaces the program then */
		put(o, "devices", json_array());
	put_array(o, "devices", r->devices, r->n_devices, sizeof(*r->devices), device_rule_json);
	if (r->has_memory)
		put(o, "memory", fields_json(r, "memory"));
	if (r->has_cpu)
		put(o, "cpu", fields_json(r, "cpu"));
	if (r->has_pids) {
		json_t *p = json_object();
		put_ri64(p, "limit", r->pids_limit);
		put(o, "pids", p);
	}
	if (r->has_block_io)
		put(o, "blockIO", block_io_json(&r->block_io));
	if (r->hugepage_limits) {
		a = json_array();
		for (size_t i = 0; i < r->n_hugepage_limits; i++) {
			json_t *h = json_pack("{s:s}", "pageSize", r->hugepage_limits[i].page_size);
			put_u64(h, "limit", r->hugepage_limits[i].limit);
			json_array_append_new(a, h);
		}
		put(o, "hugepageLimits", a);
	}
	if (r->has_network) {
		json_t *n = json_object();
		put_ru64(n, "classID", r->network.class_id);
		if (r->network.priorities) {
			a = json_array();
			for (size_t i = 0; i < r->network.n_priorities; i++)
				json_array_append_new(
				    a, json_pack("{s:s,s:I}", "name", r->network.priorities[i].name,
						 "priority",
						 (json_int_t)r->network.priorities[i].priority));
			put(n, "priorities", a);
		}
		put(o, "network", n);
	}
	if (r->rdma) {
		json_t *m = json_object();
		for (size_t i = 0; i < r->n_rdma; i++) {
			json_t *d = json_object();
			put_ru64(d, "hcaHandles", r->rdma[i].hca_handles);
			put_ru64(d, "hcaObjects", r->rdma[i].hca_objects);
			put(m, r->rdma[i].device, d);
		}
		put(o, "rdma", m);
	}
	put_map(o, "unified", r->unified_keys, r->unified_values);
	return o;
}

/* ---- process ------------------------------------------------------------------------ */

static json_t *user_json(const struct ward_user *u)
{
	json_t *o = json_pack("{s:I,s:I}", "uid", (json_int_t)u->uid, "gid", (json_int_t)u->gid);
	put_i64_if(o, "umask", u->has_umask, u->umask);
	if (u->n_additional_gids) {
		json_t *a = json_array();
		for (size_t i = 0; i < u->n_additional_gids; i++)
			json_array_append_new(a, json_integer(u->additional_gids[i]));
		put(o, "additionalGids", a);
	}
	return o;
}

static json_t *capabilities_json(const struct ward_capabilities *c)
{
	json_t *o = json_object();
	put_strv(o, "bounding", c->bounding);
	put_strv(o, "effective", c->effective);
	put_strv(o, "inheritable", c->inheritable);
	put_strv(o, "permitted", c->permitted);
	put_strv(o, "ambient", c->ambient);
	return o;
}

static json_t *scheduler_json(const struct ward_scheduler *s)
{
	json_t *o = json_pack("{s:s}", "policy", s->policy);
	put_i64_if(o, "nice", s->nice != 0, s->nice);
	put_i64_if(o, "priority", s->priority != 0, s->priority);
	put_strv(o, "flags", s->flags);
	put_u64_if(o, "runtime", s->runtime != 0, s->runtime);
	put_u64_if(o, "deadline", s->deadline != 0, s->deadline);
	put_u64_if(o, "period", s->period != 0, s->period);
	return o;
}

json_t *ward_process_to_json(const struct ward_process *p)
{
	json_t *o = json_object();

	if (p->terminal)
		put(o, "terminal", json_true());
	if (p->has_console_size)
		put(o, "consoleSize",
		    json_pack("{s:I,s:I}", "height", (json_int_t)p->console_height, "width",
			      (json_int_t)p->console_width));
	put(o, "user", user_json(&p->user));
	put(o, "args", strv(p->args));
	put_strv(o, "env", p->env);
	put_str(o, "cwd", p->cwd);
	if (p->has_capabilities)
		put(o, "capabilities", capabilities_json(&p->capabilities));
	if (p->n_rlimits) {
		json_t *a = json_array();
		for (size_t i = 0; i < p->n_rlimits; i++) {
			json_t *r = json_pack("{s:s}", "type", p->rlimits[i].type);
			put_u64(r, "hard", p->rlimits[i].hard);
			put_u64(r, "soft", p->rlimits[i].soft);
			json_array_append_new(a, r);
		}
		put(o, "rlimits", a);
	}
	if (p->no_new_privileges)
		put(o, "noNewPrivileges", json_true());
	put_str(o, "apparmorProfile", p->apparmor_profile);
	put_str(o, "selinuxLabel", p->selinux_label);
	put_i64_if(o, "oomScoreAdj", p->has_oom_score_adj, p->oom_score_adj);
	if (p->has_io_priority)
		put(o, "ioPriority",
		    json_pack("{s:s,s:i}", "class", p->io_priority_class, "priority",
			      p->io_priority));
	if (p->has_scheduler)
		put(o, "scheduler", scheduler_json(&p->scheduler));
	return o;
}

/* ---- linux -------------------------------------------------------------------------- */

static json_t *seccomp_rule_json(const void *v)
{
	const struct ward_seccomp_rule *r = v;
	json_t *o = json_object();
	put(o, "names", strv(r->names));
	put_str(o, "action", r->action);
	put_i64_if(o, "errnoRet", r->has_errno_ret, r->errno_ret);
	if (r->n_args) {
		json_t *a = json_array();
		for (size_t i = 0; i < r->n_args; i++) {
			json_t *x = json_pack("{s:I}", "index", (json_int_t)r->args[i].index);
			put_u64(x, "value", r->args[i].value);
			if (r->args[i].value_two)
				put_u64(x, "valueTwo", r->args[i].value_two);
			put_str(x, "op", r->args[i].op);
			json_array_append_new(a, x);
		}
		put(o, "args", a);
	}
	return o;
}

static json_t *seccomp_json(const struct ward_seccomp *s)
{
	json_t *o = json_pack("{s:s}", "defaultAction", s->default_action);
	put_i64_if(o, "defaultErrnoRet", s->has_default_errno_ret, s->default_errno_ret);
	put_strv(o, "architectures", s->architectures);
	put_strv(o, "flags", s->flags);
	put_str(o, "listenerPath", s->listener_path);
	put_str(o, "listenerMetadata", s->listener_metadata);
	put_array(o, "syscalls", s->syscalls, s->n_syscalls, sizeof(*s->syscalls),
		  seccomp_rule_json);
	return o;
}

static json_t *device_json(const void *v)
{
	const struct ward_device *d = v;
	json_t *o = json_object();
	put(o, "type", json_stringn(&d->type, 1));
	put_str(o, "path", d->path);
	/* A FIFO needs no numbers; the parser reads absent ones as 0. */
	if (d->type != 'p' || d->major || d->minor) {
		put_i64(o, "major", d->major);
		put_i64(o, "minor", d->minor);
	}
	put_i64_if(o, "fileMode", d->has_file_mode, d->file_mode);
	put_i64_if(o, "uid", d->has_uid, d->uid);
	put_i64_if(o, "gid", d->has_gid, d->gid);
	return o;
}

static void put_time_offset(json_t *o, const char *clock, const struct ward_time_offset *t)
{
	json_t *v;
	if (!t->set)
		return;
	v = json_pack("{s:I}", "secs", (json_int_t)t->secs);
	if (t->nanosecs)
		put_i64(v, "nanosecs", t->nanosecs);
	put(o, clock, v);
}

static json_t *linux_json(const struct ward_linux *l)
{
	json_t *o = json_object(), *t;

	if (l->n_namespaces) {
		json_t *a = json_array();
		for (size_t i = 0; i < l->n_namespaces; i++) {
			json_t *n =
			    json_pack("{s:s}", "type", ward_ns_type_name(l->namespaces[i].type));
			put_str(n, "path", l->namespaces[i].path);
			json_array_append_new(a, n);
		}
		put(o, "namespaces", a);
	}
	put_idmaps(o, "uidMappings", &l->uid_mappings);
	put_idmaps(o, "gidMappings", &l->gid_mappings);
	t = json_object();
	put_time_offset(t, "monotonic", &l->time_monotonic);
	put_time_offset(t, "boottime", &l->time_boottime);
	put_nonempty(o, "timeOffsets", t);
	put_array(o, "devices", l->devices, l->n_devices, sizeof(*l->devices), device_json);
	put_str(o, "cgroupsPath", l->cgroups_path);
	if (l->has_resources)
		put(o, "resources", ward_resources_to_json(&l->resources));
	put_map(o, "sysctl", l->sysctl_keys, l->sysctl_values);
	if (l->seccomp)
		put(o, "seccomp", seccomp_json(l->seccomp));
	put_str(o, "rootfsPropagation", l->rootfs_propagation);
	put_strv(o, "maskedPaths", l->masked_paths);
	put_strv(o, "readonlyPaths", l->readonly_paths);
	put_str(o, "mountLabel", l->mount_label);
	if (l->personality) {
		json_t *p = json_pack("{s:s}", "domain", l->personality->domain);
		put_strv(p, "flags", l->personality->flags);
		put(o, "personality", p);
	}
	return o;
}

/* ---- the spec ----------------------------------------------------------------------- */

static json_t *mount_json(const void *v)
{
	const struct ward_mount *m = v;
	json_t *o = json_pack("{s:s}", "destination", m->destination);
	put_str(o, "type", m->type);
	put_str(o, "source", m->source);
	if (m->options && m->options[0])
		put(o, "options", strv(m->options));
	put_idmaps(o, "uidMappings", &m->uid_mappings);
	put_idmaps(o, "gidMappings", &m->gid_mappings);
	return o;
}

static json_t *hooks_json(const struct ward_spec *s)
{
	json_t *o = json_object();
	for (int k = 0; k < WARD_HOOK__COUNT; k++) {
		json_t *a;
		if (s->hooks[k].n == 0)
			continue;
		a = json_array();
		for (size_t i = 0; i < s->hooks[k].n; i++) {
			const struct ward_hook *h = &s->hooks[k].v[i];
			json_t *e = json_pack("{s:s}", "path", h->path);
			put_strv(e, "args", h->args);
			put_strv(e, "env", h->env);
			if (h->timeout > 0)
				put_i64(e, "timeout", h->timeout);
			json_array_append_new(a, e);
		}
		put(o, ward_hook_names[k], a);
	}
	return o;
}

/* ward's own record (own.h), written when the spec had one (every effective spec has:
 * the policy makes it), so its readers never fall back to an older ward's annotations. */
static json_t *own_json(const struct ward_spec *s)
{
	json_t *o = ward_own_to_json(&s->own);

	if (s->linux.seccomp_pod)
		put(o, "podSeccomp", seccomp_json(s->linux.seccomp_pod));
	return o;
}

json_t *ward_spec_to_json(const struct ward_spec *s)
{
	json_t *o = json_object(), *root;

	put_str(o, "ociVersion", s->oci_version);
	if (s->process)
		put(o, "process", ward_process_to_json(s->process));
	root = json_pack("{s:s}", "path", s->root_path);
	if (s->root_readonly)
		put(root, "readonly", json_true());
	put(o, "root", root);
	put_str(o, "hostname", s->hostname);
	put_str(o, "domainname", s->domainname);
	put_array(o, "mounts", s->mounts, s->n_mounts, sizeof(*s->mounts), mount_json);
	put_nonempty(o, "hooks", hooks_json(s));
	put_map(o, "annotations", s->annotation_keys, s->annotation_values);
	put_nonempty(o, "linux", linux_json(&s->linux));
	if (s->own.present)
		put(o, WARD_OWN_KEY, own_json(s));
	return o;
}
