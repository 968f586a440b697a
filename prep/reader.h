/* The input files (prep/inputs.h) as one ordered stream of blocks, read
 * ahead on threads of their own: decompressing overlaps encoding, and up
 * to `threads` files decompress at once. The order never depends on the
 * threads: every block of file i comes before any of file i+1, and a
 * file's blocks come in order.
 *
 * A JSON-lines file comes as blocks of whole lines of about block_bytes
 * (a longer line is a block of its own); a text file is one document and
 * comes whole, as one block. Every file ends with a block marked last,
 * which carries the stored file's SHA-256 (it may be empty). Memory: at
 * most `threads` files are open, and each holds at most queue_bytes of
 * blocks not yet taken (the file being taken from: lead_bytes, so that
 * one large file is read a batch ahead), plus the one block being cut. */
#ifndef COD_PREP_READER_H
#define COD_PREP_READER_H

#include <stddef.h>
#include <stdint.h>

#include "prep/inputs.h"

struct block {
    size_t file;        /* index in the input list */
    unsigned char *data; /* a NUL follows the last byte */
    size_t len;
    int64_t first_line; /* the line number of data[0], from 1 */
    int64_t stored_end; /* bytes of the stored file read when this block was cut */
    int last;           /* the file's last block */
    char sha256[65];    /* the stored file's, in the last block */
    struct block *next;
};

void block_free(struct block *b);

struct reader;

/* Starts reading in (which must outlive the reader). NULL with err when
 * out of memory or a thread cannot start. */
struct reader *reader_start(const struct input_list *in, int threads, size_t block_bytes, size_t queue_bytes,
                            size_t lead_bytes, char *err, size_t errlen);
/* The next block in order (free it with block_free). NULL at the end
 * (err empty) or when a file could not be read (err names it and the
 * fault; the blocks before it have come). */
struct block *reader_next(struct reader *r, char *err, size_t errlen);
/* Stops the threads and frees what they read ahead. */
void reader_stop(struct reader *r);

#endif
