/* Training and held-out rows from token shards, as data.packing says.
 * Each row is seq_len inputs and their next-token targets.
 *   stream: the shards cut into chunks of seq_len+1 tokens, documents end
 *     to end; chunks never cross a shard boundary.
 *   documents: one document a row, from its doc token, its first seq_len+1
 *     tokens (the rest of a longer one is never read); a shorter one is
 *     right-padded: inputs take the pad id, targets -1, which the loss and
 *     every token count leave out. A document may cross shards (cod-prep's
 *     shards are a fixed number of tokens); one of fewer than 2 tokens has
 *     no target and is no row.
 *   rows: a row set (common/rowset.h) of instruction data: one row a
 *     record or a block of packed records, its targets only the tokens it
 *     marks (a response's), the rest of the row padded as in documents.
 * Sample i of training is a pure function of (seed, i): each epoch visits
 * every row once in a seeded order, so a run resumed at step s reads
 * exactly what the uninterrupted run would have. */
#ifndef COD_DATALOADER_H
#define COD_DATALOADER_H

#include <stdint.h>

#include "common/rowset.h"
#include "common/shard.h"
#include "spec/spec.h"

/* Where a shard set's documents begin (spec/data.h's data_docs). */
struct loader_docs {
    uint32_t doc_token;
    int at_end;        /* the doc token ends each document instead of starting it */
    uint32_t pad;      /* the input id of a padded position */
};

struct loader {
    struct shard *shards;
    int n_shards;
    int64_t *first_chunk;   /* [n_shards + 1] prefix sums of the stream's chunks */
    int64_t *first_token;   /* [n_shards + 1] prefix sums of tokens */
    int64_t n_chunks;       /* the rows: the stream's chunks, or the documents */
    int64_t n_tokens;
    int T;
    uint64_t seed;
    int documents;
    int64_t *doc_start;     /* documents: [n_chunks], where each starts among the set's tokens */
    int32_t *doc_len;       /* [n_chunks], its tokens, at most T + 1 (what its row takes) */
    uint32_t pad;
    int partial;            /* a row may hold fewer than T targets (documents, rows) */
    struct rowset rows;     /* rows: the row set (n_shards 0) */
};

/* docs NULL: stream packing. */
int loader_open(struct loader *l, const char *pattern, int T, uint64_t seed,
                const struct loader_docs *docs, char *err, size_t errlen);
/* Opens a spec's shard set (its data.train or data.val, named by field) as
 * its data.packing says, reading the document boundaries from meta.json. */
int loader_open_spec(struct loader *l, const struct job_spec *s, const char *pattern,
                     const char *field, char *err, size_t errlen);
/* A row set's rows of up to T + 1 tokens; pad is the input id of a padded position. */
int loader_open_rows(struct loader *l, const char *path, int T, uint64_t seed, uint32_t pad,
                     char *err, size_t errlen);
void loader_close(struct loader *l);
/* Row k in file order (held-out evaluation reads these); returns its
 * targets (seq_len but in documents packing). */
int loader_chunk(const struct loader *l, int64_t k, int32_t *tok, int32_t *tgt);
/* Rows first .. first+n-1 in file order, one after another in tok and tgt
 * (n · seq_len entries each): a held-out batch. */
void loader_rows(const struct loader *l, int64_t first, int n, int32_t *tok, int32_t *tgt);
/* The row of sample i of the shuffled, endless training stream. */
int64_t loader_sample_row(const struct loader *l, int64_t i);
/* Sample i of the shuffled, endless training stream; returns its targets. */
int loader_sample(const struct loader *l, int64_t i, int32_t *tok, int32_t *tgt);
/* The targets row k holds, without reading it. */
int loader_targets(const struct loader *l, int64_t k);
/* The positions of row k that hold a token, not a pad (a row set's prompt
 * tokens are inputs but no targets). */
int loader_inputs(const struct loader *l, int64_t k);
/* How many leading rows hold at least `tokens` targets; all of them when
 * the set holds fewer. */
int64_t loader_rows_for(const struct loader *l, int64_t tokens);
/* Largest token id in the loaded shards. */
uint32_t loader_max_token(const struct loader *l);

#endif
