/* Capabilities: names from libcap, the five sets applied with prctl + cap_set_proc. */
#include "caps.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define CAPS_MAX 64 /* bits in a ward_capset */

/* "CAP_CHOWN" for every capability libcap knows by name; "" for the others. */
static char cap_names[CAPS_MAX][32];
static bool cap_names_ready;

static void cap_names_init(void)
{
	if (cap_names_ready)
		return;
	for (int cap = 0; cap < CAPS_MAX; cap++) {
		char *n = cap_to_name((cap_value_t)cap);
		/* libcap answers a bare number for capabilities it has no name for */
		if (n && strncmp(n, "cap_", 4) == 0 && strlen(n) < sizeof(cap_names[cap])) {
			for (size_t i = 0; n[i]; i++)
				cap_names[cap][i] = (char)toupper((unsigned char)n[i]);
		}
		cap_free(n);
	}
	cap_names_ready = true;
}

int ward_caps_last(void)
{
	static int last = -1;
	char buf[32];
	ssize_t n;
	cleanup_fd int fd = -1;

	if (last >= 0)
		return last;
	fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		last = atoi(buf);
	} else {
		last = (int)cap_max_bits() - 1; /* libcap probes the bounding set */
	}
	if (last < 0 || last >= CAPS_MAX)
		last = CAPS_MAX - 1;
	return last;
}

const char *ward_caps_name(int cap)
{
	if (cap < 0 || cap >= CAPS_MAX)
		return NULL;
	cap_names_init();
	return cap_names[cap][0] ? cap_names[cap] : NULL;
}

int ward_caps_from_name(const char *name)
{
	if (!name)
		return -1;
	cap_names_init();
	for (int cap = 0; cap < CAPS_MAX; cap++)
		if (cap_names[cap][0] && strcmp(cap_names[cap], name) == 0)
			return cap;
	return -1;
}

static uint64_t names_to_bits(char *const *names, const char *set)
{
	uint64_t bits = 0;
	int last = ward_caps_last();

	for (size_t i = 0; names && names[i]; i++) {
		int cap = ward_caps_from_name(names[i]);
		if (cap < 0) {
			ward_warn("process.capabilities.%s: unknown capability \"%s\" ignored", set,
				  names[i]);
			continue;
		}
		if (cap > last) {
			ward_warn("process.capabilities.%s: %s is not supported by this kernel, "
				  "ignored",
				  set, names[i]);
			continue;
		}
		bits |= UINT64_C(1) << cap;
	}
	return bits;
}

int ward_caps_from_spec(const struct ward_capabilities *c, struct ward_capset *out,
			struct ward_err *err)
{
	(void)err;
	memset(out, 0, sizeof(*out));
	if (!c)
		return 0;
	out->bounding = names_to_bits(c->bounding, "bounding");
	out->effective = names_to_bits(c->effective, "effective");
	out->inheritable = names_to_bits(c->inheritable, "inheritable");
	out->permitted = names_to_bits(c->permitted, "permitted");
	out->ambient = names_to_bits(c->ambient, "ambient");
	return 0;
}

static const char *cap_label(int cap)
{
	const char *n = ward_caps_name(cap);
	return n ? n : "unknown capability";
}

/* Set E/P/I of the calling thread to exactly these bits. */
static int set_proc(uint64_t eff, uint64_t perm, uint64_t inh, struct ward_err *err)
{
	static const cap_flag_t flags[] = {CAP_EFFECTIVE, CAP_PERMITTED, CAP_INHERITABLE};
	const uint64_t sets[] = {eff, perm, inh};
	cap_t caps = cap_init();
	int r = 0;

	if (!caps)
		return ward_fail_errno(err, "cap_init");
	for (size_t f = 0; f < ARRAY_SIZE(flags) && r == 0; f++) {
		for (int cap = 0; cap <= ward_caps_last() && r == 0; cap++) {
			cap_value_t v = cap;
			if (sets[f] & (UINT64_C(1) << cap))
				r = cap_set_flag(caps, flags[f], 1, &v, CAP_SET);
		}
	}
	if (r < 0)
		r = ward_fail_errno(err, "cap_set_flag");
	else if (cap_set_proc(caps) < 0)
		r = ward_fail_errno(err, "cap_set_proc");
	cap_free(caps);
	return r;
}

/* Current permitted set, as bits. */
static int get_permitted(uint64_t *out, struct ward_err *err)
{
	cap_t caps = cap_get_proc();
	*out = 0;
	if (!caps)
		return ward_fail_errno(err, "cap_get_proc");
	for (int cap = 0; cap <= ward_caps_last(); cap++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (cap_get_flag(caps, (cap_value_t)cap, CAP_PERMITTED, &v) == 0 && v == CAP_SET)
			*out |= UINT64_C(1) << cap;
	}
	cap_free(caps);
	return 0;
}

/* have: the bounding set as get_bounding() read it (a capability the kernel does not
 * know, or one already dropped, is not in it: nothing to drop). */
static int drop_bounding(uint64_t have, uint64_t keep, struct ward_err *err)
{
	for (int cap = 0; cap <= ward_caps_last(); cap++) {
		if ((keep & (UINT64_C(1) << cap)) || !(have & (UINT64_C(1) << cap)))
			continue;
		if (prctl(PR_CAPBSET_DROP, (unsigned long)cap, 0, 0, 0) < 0)
			return ward_fail_errno(err, "drop %s from the bounding set",
					       cap_label(cap));
	}
	return 0;
}

static int set_ambient(uint64_t ambient, struct ward_err *err)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) {
		/* kernels without ambient capabilities: fine unless some were asked for */
		if (errno == EINVAL && ambient == 0)
			return 0;
		return ward_fail_errno(err, "clear ambient capabilities");
	}
	for (int cap = 0; cap <= ward_caps_last(); cap++) {
		if (!(ambient & (UINT64_C(1) << cap)))
			continue;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long)cap, 0, 0) < 0)
			return ward_fail_errno(err, "raise ambient %s", cap_label(cap));
	}
	return 0;
}

/* Keep the bits of want that are also in can; warn about the others (runtime-spec 1.1:
 * capabilities that cannot be granted are logged and ignored, not fatal). */
static uint64_t grantable(uint64_t want, uint64_t can, const char *set, const char *why)
{
	uint64_t lost = want & ~can;
	char names[512] = "";
	size_t n = 0;

	for (int cap = 0; lost && cap < CAPS_MAX && n < sizeof(names); cap++) {
		if (!(lost & (UINT64_C(1) << cap)))
			continue;
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", n ? " " : "",
				      cap_label(cap));
	}
	if (lost)
		ward_warn("process.capabilities.%s: %s %s, ignored", set, names, why);
	return want & can;
}

/* Current bounding set, as bits. */
static uint64_t get_bounding(void)
{
	uint64_t b = 0;
	for (int cap = 0; cap <= ward_caps_last(); cap++)
		if (prctl(PR_CAPBSET_READ, (unsigned long)cap, 0, 0, 0) == 1)
			b |= UINT64_C(1) << cap;
	return b;
}

int ward_caps_apply(const struct ward_capset *c, struct ward_err *err)
{
	uint64_t perm = 0, have, bset, p, e, i, a;

	if (get_permitted(&perm, err) < 0)
		return -1;
	/* What capset(2) would refuse, dropped with a warning instead of failing. */
	have = get_bounding();
	bset = have & c->bounding;
	p = grantable(c->permitted, perm, "permitted", "not held by the runtime");
	e = grantable(c->effective, p, "effective", "not in the permitted set");
	i = grantable(c->inheritable, bset, "inheritable", "not in the bounding set");
	if (!(perm & (UINT64_C(1) << CAP_SETPCAP)))
		i = grantable(i, perm, "inheritable", "not held by the runtime");
	a = grantable(c->ambient, p & i, "ambient", "not in both permitted and inheritable");

	/* The switch to a non-zero uid cleared the effective set; PR_CAPBSET_DROP needs
	 * CAP_SETPCAP effective, so make everything still permitted effective first.
	 * Callers add the "capabilities" context to errors. */
	if (set_proc(perm, perm, 0, err) < 0 || drop_bounding(have, c->bounding, err) < 0 ||
	    set_proc(e, p, i, err) < 0 || set_ambient(a, err) < 0)
		return -1;
	return 0;
}
