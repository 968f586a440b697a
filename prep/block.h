/* A block of input as the reader (prep/reader.h) hands it on: whole lines
 * of a JSON-lines file, a whole text file, or the texts of Parquet rows
 * (prep/parquet_input.h), with where it came from. Its own file because
 * the reader and the Parquet input both make and free blocks. */
#ifndef COD_PREP_BLOCK_H
#define COD_PREP_BLOCK_H

#include <stddef.h>
#include <stdint.h>

/* A Parquet row of a block: its text, or why it has none. */
enum row_kind { ROW_TEXT, ROW_NULL, ROW_EMPTY, ROW_NOT_UTF8 };
struct block_row {
    size_t off, len;    /* ROW_TEXT: its text in data (a NUL follows it) */
    enum row_kind kind;
};

struct block {
    size_t file;        /* index in the input list */
    unsigned char *data; /* a NUL follows the last byte */
    size_t len;
    int64_t first_line; /* the line number of data[0], from 1; Parquet: rows[0]'s row, from 0 */
    struct block_row *rows; /* Parquet: the rows, data their texts */
    size_t n_rows;
    int groups;         /* Parquet, the last block: the file's row groups */
    int64_t stored_end; /* bytes of the stored file read when this block was cut */
    int last;           /* the file's last block */
    char sha256[65];    /* the stored file's, in the last block */
    struct block *next;
};

/* frees b and what it holds; NULL is nothing */
void block_free(struct block *b);

#endif
