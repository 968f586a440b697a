/* A row set: training rows of tokens, each token marked as a target the
 * loss counts or not (docs/formats.md). Instruction data becomes row sets
 * (sft/ writes them, the trainer's loader reads them): a row is one record
 * (its prompt, its response, the end token) or a block of packed records,
 * and only a response's tokens are targets unless the prompt's count too.
 *
 * The file, little-endian: a 64-byte header ("codrows1", the longest row,
 * the counts, where the index lies), then each row's tokens (uint32) and
 * its flags (uint8, 1 = a target; a row's first token is never one),
 * padded to 4 bytes, then the index: per row its byte offset (uint64), its
 * length and its targets (uint32 each). Written as PATH.tmp, fsynced and
 * renamed, as a shard is; memory-mapped to read. */
#ifndef COD_ROWSET_H
#define COD_ROWSET_H

#include <stddef.h>
#include <stdint.h>

#include "common/fileio.h"

struct rowset_entry {
    uint64_t offset;
    uint32_t len, targets;
};

struct rowset {
    char path[4096];
    const unsigned char *map;
    size_t map_len;
    int64_t n_rows, n_tokens, n_targets;
    int row_tokens;                     /* the longest row may hold */
    const struct rowset_entry *index;   /* [n_rows] */
};

/* Maps a row set and checks its header, index and flags. 0, or -1 with err naming the file. */
int rowset_open(struct rowset *r, const char *path, char *err, size_t errlen);
void rowset_close(struct rowset *r);

static inline const uint32_t *rowset_tokens(const struct rowset *r, int64_t k)
{
    return (const uint32_t *)(const void *)(r->map + r->index[k].offset);
}

static inline const uint8_t *rowset_flags(const struct rowset *r, int64_t k)
{
    return r->map + r->index[k].offset + 4 * (size_t)r->index[k].len;
}

/* Written a row at a time: the rows' tokens go to disk as they come, the
 * index (16 bytes a row) stays in memory until close. */
struct rowset_writer {
    struct fio_temp out;
    int row_tokens;
    uint64_t at;                 /* bytes written */
    struct rowset_entry *index;
    size_t n, cap;
    int64_t n_tokens, n_targets;
};
int rowset_writer_open(struct rowset_writer *w, const char *path, int row_tokens, char *err,
                       size_t errlen);
/* A row of n tokens (2 <= n <= row_tokens) and their flags. */
int rowset_writer_add(struct rowset_writer *w, const uint32_t *tok, const uint8_t *target, int n,
                      char *err, size_t errlen);
int rowset_writer_close(struct rowset_writer *w, char *err, size_t errlen);
void rowset_writer_abort(struct rowset_writer *w);

#endif
