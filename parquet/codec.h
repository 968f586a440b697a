/* A page's compressed bytes to its bytes: UNCOMPRESSED, SNAPPY (libsnappy),
 * GZIP (zlib) and ZSTD (libzstd), the codecs pyarrow and the Hugging Face
 * Hub write. A page says how large it is decompressed; the output buffer
 * grows as the data really decompresses, never to a size only the header
 * claims, so that a lying header costs no memory. */
#ifndef COD_PARQUET_CODEC_H
#define COD_PARQUET_CODEC_H

#include <stddef.h>
#include <stdint.h>

struct pq_inflate; /* a cursor's decompression state, kept across pages */

/* Whether cod reads the codec. */
int pq_codec_known(int codec);
/* src (n bytes) decompressed into *buf (grown as needed; *cap its size),
 * which must come to exactly want bytes. 0, or -1 with why. */
int pq_decompress(struct pq_inflate **z, int codec, const uint8_t *src, size_t n, size_t want, uint8_t **buf,
                  size_t *cap, char *why, size_t whylen);
void pq_inflate_free(struct pq_inflate *z);

#endif
