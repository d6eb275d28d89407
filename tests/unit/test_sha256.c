/* Unit tests: SHA-256 against the FIPS 180-4 example vectors (and the NIST long-message
 * vector), padding boundaries, split updates, and the shim's socket-name example. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "tap.h"

static int hex_is(const char *msg, size_t len, const char *want)
{
	char got[65];
	ward_sha256_hex(msg, len, got);
	if (strcmp(got, want) != 0)
		printf("#   got  %s\n#   want %s\n", got, want);
	return strcmp(got, want) == 0;
}

/* n copies of 'a', hashed one-shot. */
static int a_is(size_t n, const char *want)
{
	char *m = malloc(n + 1);
	memset(m, 'a', n);
	int ok = hex_is(m, n, want);
	free(m);
	return ok;
}

int main(void)
{
	CHECK(hex_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
	      "FIPS 180-4 one-block message \"abc\"");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	CHECK(hex_is(two, strlen(two),
		     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
	      "FIPS 180-4 two-block message (448 bits)");
	CHECK(hex_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
	      "empty message");
	const char *four =
	    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjk"
	    "lmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
	CHECK(hex_is(four, strlen(four),
		     "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
	      "NIST 896-bit message");

	/* One million 'a' fed in uneven pieces (FIPS 180-2 appendix B.3). */
	struct ward_sha256 c;
	uint8_t d[32];
	char chunk[997];
	memset(chunk, 'a', sizeof(chunk));
	ward_sha256_init(&c);
	for (size_t left = 1000000; left > 0;) {
		size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
		ward_sha256_update(&c, chunk, n);
		left -= n;
	}
	ward_sha256_final(&c, d);
	static const uint8_t million[32] = {0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92,
					    0x81, 0xa1, 0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67,
					    0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97, 0x20, 0x0e,
					    0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0};
	CHECK(memcmp(d, million, 32) == 0, "one million 'a' in 997-byte updates");

	/* Lengths around the 56-byte padding boundary and block edges (sha256sum). */
	CHECK(a_is(55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
	      "55 bytes: length fits in the same block");
	CHECK(a_is(56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
	      "56 bytes: padding spills into a second block");
	CHECK(a_is(63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"),
	      "63 bytes");
	CHECK(a_is(64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
	      "64 bytes: exactly one block");
	CHECK(a_is(65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"),
	      "65 bytes");
	CHECK(a_is(119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
	      "119 bytes");
	CHECK(a_is(120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"),
	      "120 bytes");

	/* Byte-at-a-time updates give the same digest as one call. */
	int same = 1;
	for (size_t n = 0; n < 200 && same; n++) {
		char buf[200], one[65], bytewise[65];
		for (size_t i = 0; i < n; i++)
			buf[i] = (char)(i * 7 + 1);
		ward_sha256_hex(buf, n, one);
		ward_sha256_init(&c);
		for (size_t i = 0; i < n; i++)
			ward_sha256_update(&c, buf + i, 1);
		ward_sha256_final(&c, d);
		for (int i = 0; i < 32; i++)
			snprintf(bytewise + 2 * i, 3, "%02x", d[i]);
		same = strcmp(one, bytewise) == 0;
		if (!same)
			printf("#   length %zu differs\n", n);
	}
	CHECK(same, "byte-at-a-time updates match one-shot for lengths 0..199");

	/* The runc shim's socket name for <address>/<namespace>/<group> (reference §1.3). */
	const char *key = "/tmp/ctd/containerd.sock/wardtest/podA";
	CHECK(hex_is(key, strlen(key),
		     "2af39b707f26809630466fa8debe357aff387f30c5bebb5fc889c12853e78849"),
	      "containerd-shim-runc-v2's socket hash example");
	TAP_DONE();
}
