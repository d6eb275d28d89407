/* overlay.c: the super options of an overlay mount as mountinfo shows them, split into
 * layers, upper, work and the rest; what cannot be rebuilt is refused with a reason. */
#include <stdlib.h>
#include <string.h>

#include "overlay.h"
#include "tap.h"
#include "util.h"

static int parse(const char *s, struct ward_overlay_opts *o, struct ward_err *err)
{
	ward_err_clear(err);
	return ward_overlay_parse(s, o, err);
}

static void test_containerd(void)
{
	struct ward_overlay_opts o;
	struct ward_err err;
	const char *snap = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots";
	char *s = xasprintf("rw,lowerdir=%s/3/fs:%s/2/fs:%s/1/fs,upperdir=%s/4/fs,workdir=%s/4/"
			    "work,uuid=on,index=off",
			    snap, snap, snap, snap, snap);

	CHECK(parse(s, &o, &err) == 0, "containerd's overlay parses");
	CHECK(strv_len(o.lower) == 3, "three lower layers");
	CHECK(o.lower[0] && strstr(o.lower[0], "/3/fs") && strstr(o.lower[2], "/1/fs"),
	      "layers keep their order, top first");
	CHECK(o.upper && strstr(o.upper, "/4/fs") && o.work && strstr(o.work, "/4/work"),
	      "upper and work dirs");
	CHECK(strv_len(o.other) == 2 && !strcmp(o.other[0], "uuid=on") &&
		  !strcmp(o.other[1], "index=off"),
	      "other options kept as they are");
	CHECK(!o.readonly, "rw");
	ward_overlay_opts_clear(&o);
	free(s);

	CHECK(parse("ro,lowerdir=/a:/b", &o, &err) == 0, "read-only overlay of two layers");
	CHECK(o.readonly && !o.upper && !o.work && strv_len(o.lower) == 2, "ro, no upper, no work");
	ward_overlay_opts_clear(&o);
}

static void test_escapes(void)
{
	struct ward_overlay_opts o;
	struct ward_err err;

	/* mountinfo: space as \040, comma as \054, backslash as \134; a ':' in a layer "\:" */
	CHECK(parse("rw,lowerdir=/my\\040layer:/with\\054comma:/colon\\134:ed,upperdir=/u\\040p,"
		    "workdir=/w",
		    &o, &err) == 0,
	      "escaped paths parse");
	CHECK(strv_len(o.lower) == 3 && !strcmp(o.lower[0], "/my layer") &&
		  !strcmp(o.lower[1], "/with,comma") && !strcmp(o.lower[2], "/colon:ed"),
	      "octal escapes and \\: undone in layers");
	CHECK(o.upper && !strcmp(o.upper, "/u p"), "octal escape undone in upperdir");
	ward_overlay_opts_clear(&o);
}

static void test_refusals(void)
{
	struct ward_overlay_opts o;
	struct ward_err err;

	CHECK(parse("rw,lowerdir=/a::/data", &o, &err) < 0, "data-only layers refused");
	CHECK_STR_CONTAINS(err.msg, "data-only layers", "data-only message");
	CHECK(parse("rw,lowerdir=1/fs:2/fs,upperdir=/u,workdir=/w", &o, &err) < 0,
	      "relative layer paths refused");
	CHECK_STR_CONTAINS(err.msg, "layer \"1/fs\" is not an absolute path", "relative message");
	CHECK(parse("rw,upperdir=/u,workdir=/w", &o, &err) < 0, "no lowerdir refused");
	CHECK_STR_CONTAINS(err.msg, "without lowerdir", "no lowerdir message");
	CHECK(parse("rw,lowerdir=/a,upperdir=/u", &o, &err) < 0, "upper without work refused");
	CHECK_STR_CONTAINS(err.msg, "upperdir but no workdir", "upper without work message");
	CHECK(parse("rw,lowerdir=/a,upperdir=u,workdir=/w", &o, &err) < 0,
	      "relative upperdir refused");
	CHECK(parse("rw,lowerdir=/a,lowerdir=/b", &o, &err) < 0, "lowerdir twice refused");
	CHECK(parse("rw,lowerdir=/a:", &o, &err) < 0, "empty layer refused");
	CHECK(o.lower == NULL && o.other == NULL, "nothing left allocated after a refusal");
}

int main(void)
{
	test_containerd();
	test_escapes();
	test_refusals();
	TAP_DONE();
}
