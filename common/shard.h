/* llm.c token shards: a 1024-byte header of 256 little-endian int32
 * (magic, version, token count, ...) followed by the tokens. Magic 20240520
 * holds uint16 tokens; SHARD_MAGIC_U32 holds uint32 tokens for vocabularies
 * over 65535. Shards are memory-mapped; offsets are 64-bit throughout. */
#ifndef COD_SHARD_H
#define COD_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "common/fileio.h"

#define SHARD_HEADER_INTS 256
#define SHARD_HEADER_BYTES (SHARD_HEADER_INTS * 4)
#define SHARD_MAGIC_U16 20240520
#define SHARD_MAGIC_U32 20240801
#define SHARD_VERSION 1

struct shard {
    char path[4096];
    int token_bytes;          /* 2 or 4 */
    int64_t n_tokens;
    const unsigned char *map; /* whole file */
    size_t map_len;
};

/* What a shard's header says. */
struct shard_info {
    int token_bytes;          /* 2 or 4 */
    int64_t n_tokens;
};

/* Checks a shard without reading its tokens: the header (magic, version,
 * count) and that the file's size matches it. It costs one open and one
 * 1 KiB read whatever the shard's size, so that cod-server can check a
 * submission's data without scanning it. 0, or -1 with err naming the file. */
int shard_check(const char *path, struct shard_info *info, char *err, size_t errlen);

/* Maps a shard and checks its header and size. 0 on success, else -1 with err filled. */
int shard_open(struct shard *s, const char *path, char *err, size_t errlen);
void shard_close(struct shard *s);

static inline uint32_t shard_token(const struct shard *s, int64_t i)
{
    const unsigned char *p = s->map + SHARD_HEADER_BYTES + (size_t)i * (size_t)s->token_bytes;
    if (s->token_bytes == 2)
        return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Writes a complete shard atomically: to PATH.tmp, fsync, rename to PATH,
 * fsync the directory. token_bytes is 2 (every token must be < 65536) or 4. */
int shard_write(const char *path, const uint32_t *tokens, int64_t n, int token_bytes,
                char *err, size_t errlen);

/* A shard written as its tokens arrive, for a writer that cannot hold a
 * whole shard: open creates PATH.tmp with the header, append adds tokens,
 * close writes the count into the header, fsyncs and renames it to PATH
 * (as shard_write does). A failed append leaves the writer for abort,
 * which removes PATH.tmp; a failed close removes it itself. */
struct shard_writer {
    struct fio_temp out;
    int token_bytes;
    int64_t n;
    unsigned char *buf;
    size_t buf_n;
};
int shard_writer_open(struct shard_writer *w, const char *path, int token_bytes, char *err, size_t errlen);
int shard_writer_append(struct shard_writer *w, const uint32_t *tokens, size_t n, char *err, size_t errlen);
int shard_writer_close(struct shard_writer *w, char *err, size_t errlen);
void shard_writer_abort(struct shard_writer *w);

/* Expands a glob pattern into a sorted list of paths (caller frees with
 * shard_free_paths). An empty match is an error naming the pattern. */
int shard_glob(const char *pattern, char ***paths, int *n, char *err, size_t errlen);
void shard_free_paths(char **paths, int n);

#endif
