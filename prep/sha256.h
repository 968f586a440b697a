/* SHA-256 (FIPS 180-4). cod-prep uses it to check that a tokenizer file is the
 * pinned one and to record what text a set of shards was made from, without
 * pulling in a crypto library for two hashes. */
#ifndef COD_PREP_SHA256_H
#define COD_PREP_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
    uint32_t h[8];
    uint64_t len;
    unsigned char buf[64];
    size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
void sha256_final(struct sha256 *s, unsigned char out[32]);
/* Hex digest of a buffer into hex[65] (NUL-terminated). */
void sha256_hex(const void *data, size_t n, char hex[65]);
void sha256_final_hex(struct sha256 *s, char hex[65]);

#endif
