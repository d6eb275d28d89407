/* Deep copies of the typed spec (spec.h): the tenant policy edits a copy of the pod's spec
 * and returns it as the effective spec; the pod's stays as it was read. */
#include <stdlib.h>
#include <string.h>

#include "spec.h"
#include "util.h"

static char *sdup(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* NULL stays NULL (an absent list), unlike strv_dup. */
static char **vdup(char *const *v)
{
	return v ? strv_dup(v) : NULL;
}

static void *mdup(const void *p, size_t n, size_t size)
{
	void *q;

	if (!p)
		return NULL;
	q = xcalloc(n ? n : 1, size);
	memcpy(q, p, n * size);
	return q;
}

static void idmaps_dup(struct ward_idmaps *d, const struct ward_idmaps *s)
{
	d->v = mdup(s->v, s->n, sizeof(*s->v));
	d->n = s->n;
}

struct ward_seccomp *ward_seccomp_dup(const struct ward_seccomp *s)
{
	struct ward_seccomp *d;

	if (!s)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	*d = *s;
	d->default_action = sdup(s->default_action);
	d->architectures = vdup(s->architectures);
	d->flags = vdup(s->flags);
	d->listener_path = sdup(s->listener_path);
	d->listener_metadata = sdup(s->listener_metadata);
	d->syscalls = mdup(s->syscalls, s->n_syscalls, sizeof(*s->syscalls));
	for (size_t i = 0; d->syscalls && i < s->n_syscalls; i++) {
		struct ward_seccomp_rule *r = &d->syscalls[i];
		r->names = vdup(r->names);
		r->action = sdup(r->action);
		r->args = mdup(r->args, r->n_args, sizeof(*r->args));
		for (size_t j = 0; r->args && j < r->n_args; j++)
			r->args[j].op = sdup(r->args[j].op);
	}
	return d;
}

struct ward_process *ward_process_dup(const struct ward_process *s)
{
	struct ward_process *d;

	if (!s)
		return NULL;
	d = xcalloc(1, sizeof(*d));
	*d = *s;
	d->user.additional_gids =
	    mdup(s->user.additional_gids, s->user.n_additional_gids, sizeof(uint32_t));
	d->args = vdup(s->args);
	d->env = vdup(s->env);
	d->cwd = sdup(s->cwd);
	d->capabilities.bounding = vdup(s->capabilities.bounding);
	d->capabilities.effective = vdup(s->capabilities.effective);
	d->capabilities.inheritable = vdup(s->capabilities.inheritable);
	d->capabilities.permitted = vdup(s->capabilities.permitted);
	d->capabilities.ambient = vdup(s->capabilities.ambient);
	d->rlimits = mdup(s->rlimits, s->n_rlimits, sizeof(*s->rlimits));
	for (size_t i = 0; d->rlimits && i < s->n_rlimits; i++)
		d->rlimits[i].type = sdup(s->rlimits[i].type);
	d->apparmor_profile = sdup(s->apparmor_profile);
	d->selinux_label = sdup(s->selinux_label);
	d->io_priority_class = sdup(s->io_priority_class);
	d->scheduler.policy = sdup(s->scheduler.policy);
	d->scheduler.flags = vdup(s->scheduler.flags);
	return d;
}

static void linux_dup(struct ward_linux *d, const struct ward_linux *s)
{
	*d = *s;
	d->namespaces = mdup(s->namespaces, s->n_namespaces, sizeof(*s->namespaces));
	for (size_t i = 0; d->namespaces && i < s->n_namespaces; i++)
		d->namespaces[i].path = sdup(s->namespaces[i].path);
	idmaps_dup(&d->uid_mappings, &s->uid_mappings);
	idmaps_dup(&d->gid_mappings, &s->gid_mappings);
	d->devices = mdup(s->devices, s->n_devices, sizeof(*s->devices));
	for (size_t i = 0; d->devices && i < s->n_devices; i++)
		d->devices[i].path = sdup(s->devices[i].path);
	d->cgroups_path = sdup(s->cgroups_path);
	ward_resources_dup(&d->resources, &s->resources);
	d->sysctl_keys = vdup(s->sysctl_keys);
	d->sysctl_values = vdup(s->sysctl_values);
	d->seccomp = ward_seccomp_dup(s->seccomp);
	d->seccomp_pod = ward_seccomp_dup(s->seccomp_pod);
	d->rootfs_propagation = sdup(s->rootfs_propagation);
	d->masked_paths = vdup(s->masked_paths);
	d->readonly_paths = vdup(s->readonly_paths);
	d->mount_label = sdup(s->mount_label);
	if (s->personality) {
		d->personality = xcalloc(1, sizeof(*d->personality));
		d->personality->domain = sdup(s->personality->domain);
		d->personality->flags = vdup(s->personality->flags);
	}
}

void ward_mount_copy(struct ward_mount *d, const struct ward_mount *s)
{
	*d = *s;
	d->destination = sdup(s->destination);
	d->type = sdup(s->type);
	d->source = sdup(s->source);
	d->options = vdup(s->options);
	idmaps_dup(&d->uid_mappings, &s->uid_mappings);
	idmaps_dup(&d->gid_mappings, &s->gid_mappings);
}

void ward_hook_copy(struct ward_hook *d, const struct ward_hook *s)
{
	*d = *s;
	d->path = sdup(s->path);
	d->args = vdup(s->args);
	d->env = vdup(s->env);
}

struct ward_spec *ward_spec_dup(const struct ward_spec *s)
{
	struct ward_spec *d = xcalloc(1, sizeof(*d));

	*d = *s;
	d->oci_version = sdup(s->oci_version);
	d->root_path = sdup(s->root_path);
	d->mounts = mdup(s->mounts, s->n_mounts, sizeof(*s->mounts));
	for (size_t i = 0; d->mounts && i < s->n_mounts; i++)
		ward_mount_copy(&d->mounts[i], &s->mounts[i]);
	d->process = ward_process_dup(s->process);
	d->hostname = sdup(s->hostname);
	d->domainname = sdup(s->domainname);
	for (int k = 0; k < WARD_HOOK__COUNT; k++) {
		d->hooks[k].v = mdup(s->hooks[k].v, s->hooks[k].n, sizeof(*s->hooks[k].v));
		for (size_t i = 0; d->hooks[k].v && i < s->hooks[k].n; i++)
			ward_hook_copy(&d->hooks[k].v[i], &s->hooks[k].v[i]);
	}
	d->annotation_keys = vdup(s->annotation_keys);
	d->annotation_values = vdup(s->annotation_values);
	linux_dup(&d->linux, &s->linux);
	ward_own_copy(&d->own, &s->own);
	return d;
}

void ward_spec_set_annotation(struct ward_spec *s, const char *key, const char *value)
{
	size_t i;

	for (i = 0; s->annotation_keys && s->annotation_keys[i]; i++)
		if (!strcmp(s->annotation_keys[i], key)) {
			free(s->annotation_values[i]);
			s->annotation_values[i] = xstrdup(value);
			return;
		}
	if (!s->annotation_keys) {
		s->annotation_keys = xcalloc(1, sizeof(char *));
		s->annotation_values = xcalloc(1, sizeof(char *));
	}
	s->annotation_keys = strv_append(s->annotation_keys, key);
	s->annotation_values = strv_append(s->annotation_values, value);
}
