/* A small Parquet writer of the tests' own: the files cod's reader is
 * benchmarked and fuzzed on, and the broken ones its errors are tested
 * with (a codec it does not read, a footer that lies about offsets),
 * which no library writes. Columns are strings, INT64 or DOUBLE, each
 * optional (nulls allowed); values PLAIN, or strings in a dictionary
 * (PLAIN_DICTIONARY in v1 pages as pyarrow's format 1.0 writes them,
 * RLE_DICTIONARY in v2, the indices bit-packed), levels RLE, data pages
 * v1 or v2, UNCOMPRESSED, SNAPPY, GZIP or ZSTD. A row group is held in memory until
 * it is written; a page is cut at about page_bytes. */
#ifndef COD_TESTS_PARQUET_WRITER_H
#define COD_TESTS_PARQUET_WRITER_H

#include <stddef.h>
#include <stdint.h>

enum pqw_type { PQW_STRING, PQW_INT64, PQW_DOUBLE };

struct pqw_opts {
    int codec;          /* parquet.thrift's CompressionCodec: 0 none, 1 snappy, 2 gzip, 6 zstd */
    int codec_id;       /* >= 0: the codec the footer names instead (the pages are not compressed) */
    int v2;             /* data pages v2 */
    int dict;           /* strings in a dictionary */
    size_t page_bytes;  /* 0: 1 MiB */
    int64_t group_rows; /* 0: 10,000 */
    int64_t lie;        /* added to every data page offset the footer gives */
};

struct pqw;
struct pqw *pqw_open(const char *path, const char *const *names, const enum pqw_type *types, int n,
                     const struct pqw_opts *o);
/* One row: for each column its value or NULL (a string of slen bytes, an
 * int64_t or a double). 0, or -1 (an I/O or compression failure). */
int pqw_row(struct pqw *w, const void *const *values, const size_t *slen);
/* Writes the last row group and the footer. 0, or -1. */
int pqw_close(struct pqw *w);

#endif
