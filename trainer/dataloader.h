/* Training and held-out sequences from token shards. The shards are read as
 * chunks of seq_len+1 tokens (inputs and next-token targets); chunks never
 * cross a shard boundary. Sample i of training is a pure function of
 * (seed, i): each epoch visits every chunk once in a seeded order, so a run
 * resumed at step s reads exactly what the uninterrupted run would have. */
#ifndef COD_DATALOADER_H
#define COD_DATALOADER_H

#include <stdint.h>

#include "common/shard.h"

struct loader {
    struct shard *shards;
    int n_shards;
    int64_t *first_chunk;   /* [n_shards + 1] prefix sums */
    int64_t n_chunks;
    int64_t n_tokens;
    int T;
    uint64_t seed;
};

int loader_open(struct loader *l, const char *pattern, int T, uint64_t seed, char *err,
                size_t errlen);
void loader_close(struct loader *l);
/* Chunk k in file order (held-out evaluation reads these). */
void loader_chunk(const struct loader *l, int64_t k, int32_t *tok, int32_t *tgt);
/* Sample i of the shuffled, endless training stream. */
void loader_sample(const struct loader *l, int64_t i, int32_t *tok, int32_t *tgt);
/* Largest token id in the loaded shards. */
uint32_t loader_max_token(const struct loader *l);

#endif
