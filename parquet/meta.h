/* A Parquet file's footer (FileMetaData) as cod reads it: the schema as
 * its flat list of elements, and each row group's column chunks with
 * where their pages lie and how they are compressed. What cod has no use
 * for (statistics, page indexes, key-value metadata, sorting, bloom
 * filters) is skipped; what it must refuse (encryption, a column chunk
 * kept in another file) is recorded so that the reader can say so. */
#ifndef COD_PARQUET_META_H
#define COD_PARQUET_META_H

#include <stddef.h>
#include <stdint.h>

enum pq_phys { PQ_BOOLEAN, PQ_INT32, PQ_INT64, PQ_INT96, PQ_FLOAT, PQ_DOUBLE, PQ_BYTE_ARRAY, PQ_FIXED_LEN_BYTE_ARRAY };
enum pq_repetition { PQ_REQUIRED, PQ_OPTIONAL, PQ_REPEATED };
/* ConvertedType values cod looks at */
enum { PQ_CT_UTF8 = 0, PQ_CT_MAP = 1, PQ_CT_MAP_KEY_VALUE = 2, PQ_CT_LIST = 3, PQ_CT_ENUM = 4, PQ_CT_UINT_8 = 11,
       PQ_CT_UINT_64 = 14, PQ_CT_INT_8 = 15, PQ_CT_INT_64 = 18, PQ_CT_JSON = 19 };
/* LogicalType: the union's field ids */
enum { PQ_LT_STRING = 1, PQ_LT_MAP = 2, PQ_LT_LIST = 3, PQ_LT_ENUM = 4, PQ_LT_INTEGER = 10, PQ_LT_UNKNOWN = 11,
       PQ_LT_JSON = 12 };
enum pq_codec { PQ_UNCOMPRESSED, PQ_SNAPPY, PQ_GZIP, PQ_LZO, PQ_BROTLI, PQ_LZ4, PQ_ZSTD, PQ_LZ4_RAW };

struct pq_element {
    char *name;
    int type;          /* enum pq_phys; -1: a group */
    int repetition;    /* enum pq_repetition; -1: not given (the root) */
    int num_children;
    int converted;     /* ConvertedType; -1: none */
    int logical;       /* LogicalType's field id; 0: none */
    int int_bits, int_signed; /* LogicalType INTEGER */
};

struct pq_chunk {
    int has_meta;      /* ColumnMetaData given */
    int type, codec;
    int64_t num_values, compressed;
    int64_t data_off, dict_off; /* dict_off: -1 when none */
    int external;      /* file_path given: the chunk is in another file */
    int encrypted;
};

struct pq_group {
    int64_t rows;
    struct pq_chunk *chunks;
    int n_chunks;
};

struct pq_meta {
    struct pq_element *el;
    int n_el;
    int64_t rows;
    struct pq_group *groups;
    int n_groups;
    int encrypted;     /* an encryption algorithm named in a plaintext footer */
};

/* Parses n bytes of FileMetaData. 0, or -1 with why (what is malformed). */
int pq_meta_parse(const uint8_t *buf, size_t n, struct pq_meta *m, char *why, size_t whylen);
void pq_meta_free(struct pq_meta *m);

const char *pq_codec_name(int codec);
const char *pq_type_name(int type);

#endif
