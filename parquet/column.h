/* Inside the reader: one column chunk (a leaf column of one row group)
 * read a page at a time, as its entries in order: each entry's repetition
 * and definition levels and, when it is defined to the leaf, its value.
 * Memory is the page being read (as stored and decompressed) and the
 * chunk's dictionary. */
#ifndef COD_PARQUET_COLUMN_H
#define COD_PARQUET_COLUMN_H

#include <stddef.h>
#include <stdint.h>

#include "parquet/file.h"

struct pq_value {
    int rep, def;
    int has;         /* def is the leaf's: a value follows */
    const char *s;   /* BYTE_ARRAY: valid until the next call on the cursor */
    uint32_t len;
    int64_t i;       /* INT32 (sign-extended), INT64, BOOLEAN (0 or 1) */
    double d;        /* FLOAT, DOUBLE */
};

struct pq_col;
/* A cursor on column `column` of row group `group`. NULL with err when the
 * chunk cannot be read (its codec, where the footer says it lies). */
struct pq_col *pq_col_open(const struct pq_file *f, int group, int column, char *err, size_t errlen);
/* The next entry: 1, 0 after the chunk's last, -1 with err. */
int pq_col_next(struct pq_col *c, struct pq_value *v, char *err, size_t errlen);
/* The next entry's repetition level without taking it: 1, 0 at the end, -1
 * with err. It may read the next page: take what the last entry's bytes
 * hold before peeking. */
int pq_col_peek(struct pq_col *c, int *rep, char *err, size_t errlen);
int64_t pq_col_offset(const struct pq_col *c);
/* "PATH: row group G, column 'a.b'": the start of the cursor's errors. */
const char *pq_col_where(const struct pq_col *c);
void pq_col_close(struct pq_col *c);

#endif
