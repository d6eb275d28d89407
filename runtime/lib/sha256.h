/* SHA-256 (FIPS 180-4), for names derived from strings (the shim's socket path). */
#ifndef WARD_SHA256_H
#define WARD_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct ward_sha256 {
	uint32_t h[8];
	uint64_t len; /* bytes hashed so far */
	uint8_t buf[64];
	size_t nbuf;
};

void ward_sha256_init(struct ward_sha256 *c);
void ward_sha256_update(struct ward_sha256 *c, const void *data, size_t len);
void ward_sha256_final(struct ward_sha256 *c, uint8_t out[32]);
/* One call: the digest of data as 64 lowercase hex digits and a NUL. */
void ward_sha256_hex(const void *data, size_t len, char out[65]);

#endif
