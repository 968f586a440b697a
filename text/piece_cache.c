#include "text/piece_cache.h"

#include <stdlib.h>
#include <string.h>

enum { SLOTS = 1 << 17, ENTRIES = 1 << 16, KEY_BYTES = 1 << 21, VAL_IDS = 1 << 19 };

int piece_cache_init(struct piece_cache *c)
{
    memset(c, 0, sizeof(*c));
    c->slots = calloc(SLOTS, sizeof(uint32_t));
    c->ent = malloc(ENTRIES * sizeof(*c->ent));
    c->keys = malloc(KEY_BYTES);
    c->vals = malloc(VAL_IDS * sizeof(uint32_t));
    if (!c->slots || !c->ent || !c->keys || !c->vals) {
        piece_cache_free(c);
        return -1;
    }
    c->mask = SLOTS - 1;
    c->max = ENTRIES;
    c->keys_cap = KEY_BYTES;
    c->vals_cap = VAL_IDS;
    return 0;
}

void piece_cache_free(struct piece_cache *c)
{
    free(c->slots);
    free(c->ent);
    free(c->keys);
    free(c->vals);
    memset(c, 0, sizeof(*c));
}

static size_t find(const struct piece_cache *c, const void *key, size_t len, uint64_t h)
{
    size_t i = (size_t)h & c->mask;
    for (;;) {
        uint32_t s = c->slots[i];
        if (!s)
            return i;
        const struct piece_entry *e = &c->ent[s - 1];
        if (e->hash == h && e->klen == len && memcmp(c->keys + e->koff, key, len) == 0)
            return i;
        i = (i + 1) & c->mask;
    }
}

int piece_cache_get(const struct piece_cache *c, const void *key, size_t len, uint64_t hash,
                    const uint32_t **ids, size_t *n)
{
    if (len > PIECE_CACHE_MAX_KEY)
        return 0;
    size_t i = find(c, key, len, hash);
    if (!c->slots[i])
        return 0;
    const struct piece_entry *e = &c->ent[c->slots[i] - 1];
    *ids = c->vals + e->voff;
    *n = e->vlen;
    return 1;
}

void piece_cache_put(struct piece_cache *c, const void *key, size_t len, uint64_t hash,
                     const uint32_t *ids, size_t n)
{
    if (len > PIECE_CACHE_MAX_KEY || n > len + 1)
        return;
    if (c->n == c->max || c->keys_n + len > c->keys_cap || c->vals_n + n > c->vals_cap) {
        memset(c->slots, 0, (c->mask + 1) * sizeof(uint32_t));
        c->n = c->keys_n = c->vals_n = 0;
    }
    size_t i = find(c, key, len, hash);
    if (c->slots[i])
        return;
    memcpy(c->keys + c->keys_n, key, len);
    memcpy(c->vals + c->vals_n, ids, n * sizeof(uint32_t));
    c->ent[c->n] = (struct piece_entry){hash, (uint32_t)c->keys_n, (uint32_t)len, (uint32_t)c->vals_n,
                                        (uint32_t)n};
    c->keys_n += len;
    c->vals_n += n;
    c->slots[i] = (uint32_t)++c->n;
}
