/* SHA-256 digests in hex, from OpenSSL's libcrypto. cod-prep uses them to
 * check that a tokenizer file is the pinned one and to record what text a
 * set of shards was made from. */
#ifndef COD_PREP_SHA256_H
#define COD_PREP_SHA256_H

#include <stddef.h>

/* The hex digest of a buffer into hex[65] (NUL-terminated). 0, or -1 when
 * libcrypto failed (hex is then empty). */
int sha256_hex(const void *data, size_t n, char hex[65]);

#endif
