/* A Parquet file as cod-prep reads it (parquet/parquet.h's strings of one
 * column): its row groups, each cut into blocks of about block_bytes of
 * text (prep/block.h) that hold every row, with its text or why it has
 * none (null, empty, not UTF-8); and the file's SHA-256 as its last block.
 * One open file is shared by the units of work its row groups make, each
 * on a thread of its own. */
#ifndef COD_PREP_PARQUET_INPUT_H
#define COD_PREP_PARQUET_INPUT_H

#include <stddef.h>

#include "prep/block.h"

struct pq_input;

/* Opens PATH and finds its text column. NULL with err naming the file and
 * the problem (not Parquet, no such column, not a string, ...). */
struct pq_input *pq_input_open(const char *path, const char *text_key, char *err, size_t errlen);
int pq_input_groups(const struct pq_input *p);
void pq_input_close(struct pq_input *p);

/* Hands a block on: 0, or -1 to stop (the block is then the callee's). */
typedef int (*pq_push)(void *ctx, struct block *b);

/* Row group g of file number `file` as blocks, in order. 0; -1 with err,
 * or with err empty when push said stop. */
int pq_input_group(struct pq_input *p, size_t file, int g, size_t block_bytes, pq_push push, void *ctx, char *err,
                   size_t errlen);
/* The file's last block: no rows, its stored SHA-256 and its row groups. */
int pq_input_hash(struct pq_input *p, size_t file, pq_push push, void *ctx, char *err, size_t errlen);

#endif
