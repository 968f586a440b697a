/* The input files (prep/inputs.h) as one ordered stream of blocks, read
 * ahead on threads of their own: decompressing overlaps encoding, and up
 * to `threads` units of work go at once. A unit is a text or JSON-lines
 * file, a row group of a Parquet file, or the hash of a Parquet file, so
 * that the row groups of one large Parquet file spread over the threads
 * as files do. The order never depends on the threads: every block of
 * file i comes before any of file i+1, and a file's blocks come in order.
 *
 * A JSON-lines file comes as blocks of whole lines of about block_bytes
 * (a longer line is a block of its own); a text file is one document and
 * comes whole, as one block; a Parquet file comes as blocks of about
 * block_bytes of its rows' texts (prep/parquet_input.h), each row with
 * its text or why it has none. Every file ends with a block marked last,
 * which carries the stored file's SHA-256 (it may be empty). Memory: at
 * most `threads` units are open, and each holds at most queue_bytes of
 * blocks not yet taken (the unit being taken from: lead_bytes, so that
 * one large file is read a batch ahead), plus the one block being cut
 * (and, for a row group, the page being read). */
#ifndef COD_PREP_READER_H
#define COD_PREP_READER_H

#include <stddef.h>
#include <stdint.h>

#include "prep/block.h"
#include "prep/inputs.h"


struct reader;

/* Starts reading in (which must outlive the reader); text_key names a
 * Parquet file's text column (a dotted path). NULL with err when out of
 * memory or a thread cannot start. */
struct reader *reader_start(const struct input_list *in, const char *text_key, int threads, size_t block_bytes,
                            size_t queue_bytes, size_t lead_bytes, char *err, size_t errlen);
/* The next block in order (free it with block_free). NULL at the end
 * (err empty) or when a file could not be read (err names it and the
 * fault; the blocks before it have come). */
struct block *reader_next(struct reader *r, char *err, size_t errlen);
/* Stops the threads and frees what they read ahead. */
void reader_stop(struct reader *r);

#endif
