/* Instruction records read from their files, one at a time: a file whose
 * first byte (past blanks and a UTF-8 byte-order mark) is '[' holds one
 * JSON array of records (LLM-Adapters' .json files), any other JSON lines,
 * a record a line (blank lines skipped); plain, .gz, .zst or .xz
 * (text/decompress.h). Only the record being read is held as text, so a
 * file of any size streams. A record that is not a JSON object, or a file
 * that is not well formed, is an error naming the file and the record's
 * line. */
#ifndef COD_SFT_RECORDS_H
#define COD_SFT_RECORDS_H

#include <stddef.h>

#include <jansson.h>

struct sft_record {
    const char *file;
    long index;       /* the record's number in the whole set, from 0 */
    long line;        /* where it starts in its file, from 1 */
    json_t *obj;      /* borrowed for the call */
};

/* fn returns 0 to go on, -1 with err to stop. */
typedef int (*sft_record_fn)(void *ctx, const struct sft_record *r, char *err, size_t errlen);

/* Every record of the files pattern matches, in name order (field names
 * the set in a refusal: "data.train"). 0, or -1 with err. */
int sft_records_each(const char *pattern, const char *field, sft_record_fn fn, void *ctx,
                     char *err, size_t errlen);

#endif
