/* Unit tests: the shim's bootstrap protocol pieces (shim/bootstrap.c): start's stdin, a
 * legacy google.protobuf.Any (containerd 1.6-2.2) or a BootstrapParams (2.3+), told apart
 * by instance_id/namespace == -id/-namespace; the RuntimeInfo that -info prints; the socket
 * name in a BootstrapParams.socket_dir. Inputs are built here by a separate tiny encoder. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "google/protobuf/any.pb-c.h"
#include "tap.h"

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put_varint(struct buf *b, uint64_t v)
{
	while (v > 0x7f) {
		b->b[b->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->b[b->n++] = (uint8_t)v;
}

static void put_len(struct buf *b, unsigned field, const void *d, size_t n)
{
	put_varint(b, field << 3 | 2);
	put_varint(b, n);
	memcpy(b->b + b->n, d, n);
	b->n += n;
}

static void put_str(struct buf *b, unsigned field, const char *s)
{
	put_len(b, field, s, strlen(s));
}

/* The 52 bytes CRI sends for runtimeoptions.v1.Options{config_path="/etc/ward/config.toml"}
 * (reference §1.2, verified on 1.6.20). */
static const uint8_t cri_any[] =
    "\x0a\x19runtimeoptions.v1.Options\x12\x17\x12\x15/etc/ward/config.toml";
static const uint8_t cri_value[] = "\x12\x15/etc/ward/config.toml";

static struct buf params(const char *id, const char *ns, bool with_ext)
{
	struct buf p = {0}, ext = {0};
	put_str(&p, 1, id);
	put_str(&p, 2, ns);
	put_str(&p, 3, "debug");
	put_str(&p, 4, "v2.3.0");
	put_str(&p, 5, "/run/containerd/containerd.sock.ttrpc");
	put_str(&p, 6, "/run/containerd/containerd.sock");
	put_str(&p, 7, "/usr/bin/containerd");
	put_varint(&p, 10 << 3 | 0); /* a field from the future: ignored */
	put_varint(&p, 300);
	if (with_ext) {
		put_len(&ext, 1, cri_any, sizeof(cri_any) - 1);
		put_len(&p, 8, ext.b, ext.n);
	}
	put_str(&p, 9, "/run/ctd/s");
	return p;
}

static bool options_are_cri(const struct shim_start_input *in)
{
	return in->has_options && in->options_type_url &&
	       strcmp(in->options_type_url, "runtimeoptions.v1.Options") == 0 &&
	       in->options_len == sizeof(cri_value) - 1 &&
	       memcmp(in->options, cri_value, in->options_len) == 0;
}

static bool str_is(const char *got, const char *want)
{
	if (got && strcmp(got, want) == 0)
		return true;
	printf("#   got %s, want %s\n", got ? got : "(null)", want);
	return false;
}

static void test_start_input(void)
{
	struct shim_start_input in;
	struct ward_err err = {0};
	struct buf p;

	CHECK(sizeof(cri_any) - 1 == 52, "the CRI options Any is 52 bytes");
	CHECK(shim_decode_start_input(NULL, 0, "c1", "k8s.io", &in, &err) == 0 &&
		  !in.bootstrap_params && !in.has_options,
	      "empty stdin (ctr run): no options");
	shim_start_input_free(&in);

	CHECK(shim_decode_start_input(cri_any, sizeof(cri_any) - 1, "c1", "k8s.io", &in, &err) ==
		      0 &&
		  !in.bootstrap_params && options_are_cri(&in) && !in.ttrpc_address,
	      "a legacy Any (1.6-2.2): the options, not BootstrapParams");
	shim_start_input_free(&in);

	p = params("c1", "k8s.io", true);
	CHECK(shim_decode_start_input(p.b, p.n, "c1", "k8s.io", &in, &err) == 0 &&
		  in.bootstrap_params,
	      "BootstrapParams with instance_id == -id and namespace == -namespace");
	CHECK(options_are_cri(&in), "BootstrapParams: options from extensions[0].value");
	CHECK(str_is(in.ttrpc_address, "/run/containerd/containerd.sock.ttrpc") &&
		  str_is(in.grpc_address, "/run/containerd/containerd.sock") &&
		  str_is(in.socket_dir, "/run/ctd/s") && str_is(in.log_level, "debug") &&
		  str_is(in.containerd_version, "v2.3.0") &&
		  str_is(in.containerd_binary, "/usr/bin/containerd"),
	      "BootstrapParams: fields 3-7 and 9");
	shim_start_input_free(&in);

	/* the same bytes under another -id: upstream's rule reads them as an Any */
	CHECK(shim_decode_start_input(p.b, p.n, "c2", "k8s.io", &in, &err) == 0 &&
		  !in.bootstrap_params && in.has_options && str_is(in.options_type_url, "c1") &&
		  !in.socket_dir,
	      "instance_id != -id: decoded as a legacy Any");
	shim_start_input_free(&in);
	CHECK(shim_decode_start_input(p.b, p.n, "c1", "default", &in, &err) == 0 &&
		  !in.bootstrap_params,
	      "namespace != -namespace: decoded as a legacy Any");
	shim_start_input_free(&in);

	p = params("c1", "k8s.io", false);
	CHECK(shim_decode_start_input(p.b, p.n, "c1", "k8s.io", &in, &err) == 0 &&
		  in.bootstrap_params && !in.has_options && in.socket_dir,
	      "BootstrapParams without extensions: no options");
	shim_start_input_free(&in);

	/* two extensions: the first one's Any are the options */
	{
		struct buf q = params("c1", "k8s.io", false), e1 = {0}, a1 = {0}, e2 = {0};
		put_str(&a1, 1, "example.com/Other");
		put_str(&a1, 2, "xy");
		put_len(&e1, 1, a1.b, a1.n);
		put_len(&q, 8, e1.b, e1.n);
		put_len(&e2, 1, cri_any, sizeof(cri_any) - 1);
		put_len(&q, 8, e2.b, e2.n);
		CHECK(shim_decode_start_input(q.b, q.n, "c1", "k8s.io", &in, &err) == 0 &&
			  str_is(in.options_type_url, "example.com/Other") && in.options_len == 2 &&
			  memcmp(in.options, "xy", 2) == 0,
		      "several extensions: the first one's Any");
		shim_start_input_free(&in);
	}

	/* malformed input fails, naming stdin */
	static const uint8_t trunc_varint[] = {0x0a, 0x80};
	static const uint8_t long_len[] = {0x0a, 0x05, 'a', 'b'};
	static const uint8_t group[] = {0x0b, 0x0c};
	static const uint8_t field0[] = {0x02, 0x00};
	err = (struct ward_err){0};
	CHECK(shim_decode_start_input(trunc_varint, sizeof(trunc_varint), "c1", "ns", &in, &err) <
		  0,
	      "a truncated varint fails");
	CHECK_STR_CONTAINS(err.msg, "stdin: not a protobuf message", "  and says so");
	CHECK(shim_decode_start_input(long_len, sizeof(long_len), "c1", "ns", &in, &err) < 0,
	      "a length past the end fails");
	CHECK(shim_decode_start_input(group, sizeof(group), "c1", "ns", &in, &err) < 0,
	      "wire type 3 (group) fails");
	CHECK(shim_decode_start_input(field0, sizeof(field0), "c1", "ns", &in, &err) < 0,
	      "field number 0 fails");
	{
		struct buf q = {0};
		put_str(&q, 1, "c1");
		put_str(&q, 2, "ns");
		put_len(&q, 5, "/run/x\0y", 8);
		err = (struct ward_err){0};
		CHECK(shim_decode_start_input(q.b, q.n, "c1", "ns", &in, &err) < 0,
		      "a NUL byte in an address fails");
		CHECK_STR_CONTAINS(err.msg, "malformed BootstrapParams", "  and says so");
		/* a legacy Any whose type_url holds a NUL byte */
		struct buf a = {0};
		put_len(&a, 1, "runtimeoptions.v1.Options\0x", 27);
		put_str(&a, 2, "xy");
		err = (struct ward_err){0};
		CHECK(shim_decode_start_input(a.b, a.n, "c1", "ns", &in, &err) < 0,
		      "a NUL byte in a legacy Any's type_url fails");
		CHECK_STR_CONTAINS(err.msg, "not a google.protobuf.Any", "  and says so");
		/* an extension that is not a message */
		struct buf r = {0};
		put_str(&r, 1, "c1");
		put_str(&r, 2, "ns");
		put_len(&r, 8, "\x0a\x09", 2);
		CHECK(shim_decode_start_input(r.b, r.n, "c1", "ns", &in, &err) < 0,
		      "a broken extension fails");
	}
}

static void test_runtime_info(void)
{
	size_t n;
	const char *json = "{\"ociVersionMin\":\"1.0.0\"}";
	uint8_t *b = shim_encode_runtime_info("io.containerd.ward.v2", "0.1.0", "abc", cri_any,
					      sizeof(cri_any) - 1, json, strlen(json), &n);
	struct buf want = {0}, ver = {0}, feat = {0};

	/* RuntimeInfo{name=1, version=2 {version=1, revision=2}, options=3, features=4} */
	put_str(&want, 1, "io.containerd.ward.v2");
	put_str(&ver, 1, "0.1.0");
	put_str(&ver, 2, "abc");
	put_len(&want, 2, ver.b, ver.n);
	put_len(&want, 3, cri_any, sizeof(cri_any) - 1);
	put_str(&feat, 1, "types.containerd.io/opencontainers/runtime-spec/1/features/Features");
	put_str(&feat, 2, json);
	put_len(&want, 4, feat.b, feat.n);
	CHECK(n == want.n && memcmp(b, want.b, n) == 0, "RuntimeInfo: byte for byte");
	CHECK(b[0] == 0x0a && b[1] == 21 && memcmp(b + 2, "io.containerd.ward.v2", 21) == 0 &&
		  b[23] == 0x12 && b[24] == 12 && b[25] == 0x0a && b[26] == 5,
	      "RuntimeInfo: name (field 1), then version (field 2) {version (field 1)}");

	/* the features Any decodes with protobuf-c's google.protobuf.Any */
	size_t off = want.n - feat.n;
	Google__Protobuf__Any *a = google__protobuf__any__unpack(NULL, feat.n, b + off);
	CHECK(a && b[off - 2] == (4 << 3 | 2) && strcmp(a->type_url, SHIM_FEATURES_TYPE_URL) == 0 &&
		  a->value.len == strlen(json) && memcmp(a->value.data, json, a->value.len) == 0,
	      "RuntimeInfo.features: an Any of the features JSON (protobuf-c decodes it)");
	if (a)
		google__protobuf__any__free_unpacked(a, NULL);
	free(b);

	/* no options, no features: name and version only */
	b = shim_encode_runtime_info("io.containerd.ward.v2", "0.1.0", "", NULL, 0, NULL, 0, &n);
	CHECK(n == 2 + 21 + 2 + 7 && b[23] == 0x12 && b[24] == 7,
	      "RuntimeInfo without options/features: fields 1 and 2 only, empty revision left out");
	free(b);
}

static void test_socket_dir(void)
{
	char path[108];
	struct ward_err err = {0};
	CHECK(shim_socket_path(NULL, "/tmp/ctd/containerd.sock", "wardtest", "podA", path,
			       sizeof(path), &err) == 0 &&
		  strcmp(path,
			 "/run/containerd/s/"
			 "2af39b707f26809630466fa8debe357aff387f30c5bebb5fc889c12853e78849") == 0,
	      "socket name: the runc shim's example in /run/containerd/s");
	CHECK(shim_socket_path("/run/ctd/s", "/tmp/ctd/containerd.sock", "wardtest", "podA", path,
			       sizeof(path), &err) == 0 &&
		  strcmp(path,
			 "/run/ctd/s/"
			 "2af39b707f26809630466fa8debe357aff387f30c5bebb5fc889c12853e78849") == 0,
	      "socket name: the same hash in BootstrapParams.socket_dir");
}

int main(void)
{
	test_start_input();
	test_runtime_info();
	test_socket_dir();
	TAP_DONE();
}
