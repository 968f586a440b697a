/* A task file as a stream of rows, each a JSON object with its place in
 * the file: the seam every task format comes in through. JSON lines
 * (plain, .gz, .zst, .xz; text/decompress.h), and a .parquet file's rows
 * as objects shaped as datasets' to_json writes them (parquet/parquet.h),
 * so that a layout reads the Hub's Parquet copy of a task as its JSON
 * lines. */
#ifndef COD_EVAL_ROWS_H
#define COD_EVAL_ROWS_H

#include <stddef.h>

#include <jansson.h>

struct eval_rows;

/* NULL with err ("PATH: why") when the file cannot be opened. */
struct eval_rows *eval_rows_open(const char *path, char *err, size_t errlen);

enum { ROWS_END = 0, ROWS_ROW = 1, ROWS_BAD = 2, ROWS_FAILED = -1 };

/* The next row: ROWS_ROW with *row (the caller's reference) and *where
 * (its line or row, from 1); ROWS_BAD when the line is no JSON object (why says
 * what is wrong, *where which line), the reader having moved past it;
 * ROWS_END; ROWS_FAILED with why (a read error, corrupt compressed data,
 * out of memory), after which nothing more comes. */
int eval_rows_next(struct eval_rows *r, json_t **row, long *where, char *why, size_t whylen);
/* "line" (JSON lines) or "row": what *where counts, for messages. */
const char *eval_rows_unit(const struct eval_rows *r);
void eval_rows_close(struct eval_rows *r);

#endif
