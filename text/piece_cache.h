/* A per-thread memo of "this piece of text encodes to these ids". Text is
 * mostly the same few thousand words over and over, so remembering them
 * skips the merge loop for nearly every piece. Bounded: when full it is
 * simply emptied, which costs a few re-merges and no bookkeeping. */
#ifndef COD_TEXT_PIECE_CACHE_H
#define COD_TEXT_PIECE_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct piece_cache {
    uint32_t *slots; /* entry index + 1; 0 = empty */
    size_t mask;
    struct piece_entry { uint64_t hash; uint32_t koff, klen, voff, vlen; } *ent;
    size_t n, max;
    unsigned char *keys;
    size_t keys_n, keys_cap;
    uint32_t *vals;
    size_t vals_n, vals_cap;
};

/* Keys longer than this are not worth remembering. */
#define PIECE_CACHE_MAX_KEY 256

int piece_cache_init(struct piece_cache *c);
void piece_cache_free(struct piece_cache *c);
/* 1 with *ids, *n (valid until the next put) when found, else 0. */
int piece_cache_get(const struct piece_cache *c, const void *key, size_t len, uint64_t hash,
                    const uint32_t **ids, size_t *n);
/* Remembers key -> ids; silently does nothing for keys that are too long. */
void piece_cache_put(struct piece_cache *c, const void *key, size_t len, uint64_t hash,
                     const uint32_t *ids, size_t n);

#endif
