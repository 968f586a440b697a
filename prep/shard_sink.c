/* A split's shards, written as the tokens come: see shard_sink.h. */
#include "prep/shard_sink.h"

#include <stdio.h>

#include "common/path.h"

void sink_init(struct shard_sink *s, const char *dir, const char *name, int token_bytes, int64_t limit)
{
    *s = (struct shard_sink){.dir = dir, .name = name, .token_bytes = token_bytes, .limit = limit};
}

static int open_next(struct shard_sink *s, char *err, size_t errlen)
{
    char path[4200];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/%s_%06d.bin", s->dir, s->name, s->shards) != 0 ||
        shard_writer_open(&s->w, path, s->token_bytes, err, errlen) != 0)
        return -1;
    s->open = 1;
    s->shards++;
    return 0;
}

static int close_current(struct shard_sink *s, char *err, size_t errlen)
{
    s->open = 0;
    return shard_writer_close(&s->w, err, errlen);
}

int sink_append(struct shard_sink *s, const uint32_t *tokens, size_t n, char *err, size_t errlen)
{
    while (n > 0) {
        if (s->open && s->w.n == s->limit) {
            if (s->n_pending + n < 2) {
                s->pending = *tokens++;
                s->n_pending = 1;
                n--;
                continue;
            }
            if (close_current(s, err, errlen) != 0 || open_next(s, err, errlen) != 0)
                return -1;
            if (s->n_pending && shard_writer_append(&s->w, &s->pending, 1, err, errlen) != 0)
                return -1;
            s->n_pending = 0;
        }
        if (!s->open && open_next(s, err, errlen) != 0)
            return -1;
        size_t room = (size_t)(s->limit - s->w.n), k = n < room ? n : room;
        if (shard_writer_append(&s->w, tokens, k, err, errlen) != 0)
            return -1;
        tokens += k;
        n -= k;
    }
    return 0;
}

int sink_finish(struct shard_sink *s, char *err, size_t errlen)
{
    if (!s->open)
        return 0;
    if (s->n_pending && shard_writer_append(&s->w, &s->pending, 1, err, errlen) != 0)
        return -1;
    s->n_pending = 0;
    return close_current(s, err, errlen);
}

void sink_abort(struct shard_sink *s)
{
    if (s->open)
        shard_writer_abort(&s->w);
    s->open = 0;
}
