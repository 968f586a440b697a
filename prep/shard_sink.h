/* One split's token stream (train or val) cut into llm.c shards NAME_000000.bin,
 * NAME_000001.bin, ... of exactly `limit` tokens each but the last, which
 * takes the rest (2 to limit + 1 tokens: a reader needs at least 2). The
 * tokens are written as they arrive, so memory does not grow with the shard
 * size. */
#ifndef COD_PREP_SHARD_SINK_H
#define COD_PREP_SHARD_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "common/shard.h"

struct shard_sink {
    const char *dir, *name;
    int token_bytes;
    int64_t limit;
    struct shard_writer w;
    int open;
    uint32_t pending; /* a full shard waits for 2 more tokens before it is closed */
    int n_pending;
    int shards;
};

void sink_init(struct shard_sink *s, const char *dir, const char *name, int token_bytes, int64_t limit);
/* 0, or -1 with err naming the shard. */
int sink_append(struct shard_sink *s, const uint32_t *tokens, size_t n, char *err, size_t errlen);
int sink_finish(struct shard_sink *s, char *err, size_t errlen);
/* Drops the shard being written (its temporary file). */
void sink_abort(struct shard_sink *s);

#endif
