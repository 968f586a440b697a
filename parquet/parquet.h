/* cod's Parquet reader, for the files pyarrow writes and the Hugging Face
 * Hub serves (FineWeb, and the Hub's copy of every dataset): the footer
 * through the Thrift compact protocol; data pages v1 and v2 and dictionary
 * pages; PLAIN, PLAIN_DICTIONARY and RLE_DICTIONARY values with levels in
 * the RLE / bit-packed hybrid (and RLE booleans); UNCOMPRESSED, SNAPPY,
 * GZIP and ZSTD pages; BYTE_ARRAY (as UTF-8), INT32, INT64, BOOLEAN, FLOAT
 * and DOUBLE, nullable or not, one level of LIST, and a struct of those
 * (ARC's `choices {text, label}`). Anything else (encryption, another
 * codec or encoding, a deeper nesting, a MAP, a decimal or a timestamp)
 * is refused with an error naming the file, the column and what it uses.
 *
 * Only the columns asked for are read, a page at a time: memory is a page
 * of each column being read (and its dictionary), whatever the size of the
 * file or of a row group. An open file may be read by several threads at
 * once, each with cursors of its own (pread), so that row groups and files
 * spread over the cores.
 *
 * Two ways in:
 *  - the strings of one column (pq_text_*), without building JSON: what
 *    cod-prep tokenizes;
 *  - rows as jansson objects (pq_rows_*), shaped as Hugging Face datasets'
 *    `to_json` writes them: a LIST a JSON array, a struct an object, null
 *    null, an integer an integer, a BOOLEAN true or false.
 * Errors are -1 with err naming the file and the fault. */
#ifndef COD_PARQUET_PARQUET_H
#define COD_PARQUET_PARQUET_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct pq_file;

/* Opens PATH and reads its footer. NULL with err ("PATH: why"). */
struct pq_file *pq_open(const char *path, char *err, size_t errlen);
void pq_close(struct pq_file *f);
const char *pq_path(const struct pq_file *f);
int64_t pq_num_rows(const struct pq_file *f);
int pq_row_groups(const struct pq_file *f);
int64_t pq_group_rows(const struct pq_file *f, int group);
/* Where a row group's pages lie (for a progress measure): its first byte
 * and the byte past its last, over every column. */
void pq_group_span(const struct pq_file *f, int group, int64_t *from, int64_t *to);

/* The column at a dotted path ("text", "meta.body"), which must be a
 * string that repeats in no list: its index, or -1 with err naming the
 * file and why (no such column, listing those there are; a list, a struct
 * or a number there). */
int pq_text_column(const struct pq_file *f, const char *dotted, char *err, size_t errlen);

/* A row group's values of that column, one a row, in order. */
struct pq_text;
struct pq_text *pq_text_open(const struct pq_file *f, int group, int column, char *err, size_t errlen);
/* The next row's string: 1 with *s and *len (*s is NULL for a null; the
 * bytes, not checked as UTF-8, stay valid until the next call), 0 after
 * the row group's last row, -1 with err. */
int pq_text_next(struct pq_text *t, const char **s, size_t *len, char *err, size_t errlen);
/* Bytes of the file read up to the page being read (for a progress measure). */
int64_t pq_text_offset(const struct pq_text *t);
void pq_text_close(struct pq_text *t);

/* Rows of PATH as JSON objects: the named top-level columns in that order
 * (n 0: every top-level column, in the file's order). NULL with err when
 * the file cannot be read or a column is missing or of a kind not read. */
struct pq_rows;
struct pq_rows *pq_rows_open(const char *path, const char *const *columns, size_t n, char *err, size_t errlen);
/* The next row in file order: 1 with *row (the caller's reference), 0
 * after the last row, -1 with err naming the file, the column and the row. */
int pq_rows_next(struct pq_rows *r, json_t **row, char *err, size_t errlen);
void pq_rows_close(struct pq_rows *r);


#endif
