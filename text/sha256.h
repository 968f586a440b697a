/* SHA-256 digests from OpenSSL's libcrypto. cod-prep uses them to check
 * that a tokenizer file is the pinned one, to record what text a set of
 * shards was made from, and to know a document again (prep/doc_key.h). */
#ifndef COD_TEXT_SHA256_H
#define COD_TEXT_SHA256_H

#include <stddef.h>

/* The hex digest of a buffer into hex[65] (NUL-terminated). 0, or -1 when
 * libcrypto failed (hex is then empty). */
int sha256_hex(const void *data, size_t n, char hex[65]);

/* A digest of data that arrives in pieces. sha256_begin: NULL when out of
 * memory; sha256_update: 0 or -1; sha256_end writes the digest (32 bytes)
 * and frees the stream whatever happens (0, or -1 when libcrypto failed). */
struct sha256_stream;
struct sha256_stream *sha256_begin(void);
int sha256_update(struct sha256_stream *s, const void *data, size_t n);
int sha256_end(struct sha256_stream *s, unsigned char md[32]);
/* 32 bytes of digest as 64 hex digits and a NUL. */
void sha256_to_hex(const unsigned char md[32], char hex[65]);

#endif
