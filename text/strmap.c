#include "text/strmap.h"

#include <stdlib.h>
#include <string.h>

uint64_t strmap_hash(const void *key, size_t len)
{
    /* FNV-1a, then a final mix so that the low bits used as the slot index
     * depend on every byte. */
    const unsigned char *p = key;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

int strmap_init(struct strmap *m, size_t max_entries)
{
    memset(m, 0, sizeof(*m));
    size_t slots = 16;
    while (slots < 2 * max_entries)
        slots *= 2;
    m->slots = calloc(slots, sizeof(uint32_t));
    m->ent = malloc((max_entries ? max_entries : 1) * sizeof(*m->ent));
    m->blob_cap = 1 << 16;
    m->blob = malloc(m->blob_cap);
    if (!m->slots || !m->ent || !m->blob) {
        strmap_free(m);
        return -1;
    }
    m->mask = slots - 1;
    m->cap = max_entries;
    return 0;
}

void strmap_free(struct strmap *m)
{
    free(m->slots);
    free(m->ent);
    free(m->blob);
    memset(m, 0, sizeof(*m));
}

static size_t find(const struct strmap *m, const void *key, size_t len, uint64_t h)
{
    size_t i = (size_t)h & m->mask;
    for (;;) {
        uint32_t s = m->slots[i];
        if (!s)
            return i;
        const struct strmap_entry *e = &m->ent[s - 1];
        if (e->hash == h && e->len == len && memcmp(m->blob + e->off, key, len) == 0)
            return i;
        i = (i + 1) & m->mask;
    }
}

int strmap_put(struct strmap *m, const void *key, size_t len, uint32_t val)
{
    uint64_t h = strmap_hash(key, len);
    size_t i = find(m, key, len, h);
    if (m->slots[i])
        return 1;
    if (m->n >= m->cap || len > UINT32_MAX)
        return -1;
    if (m->blob_n + len > m->blob_cap) {
        size_t nc = m->blob_cap;
        while (m->blob_n + len > nc)
            nc *= 2;
        unsigned char *nb = realloc(m->blob, nc);
        if (!nb)
            return -1;
        m->blob = nb;
        m->blob_cap = nc;
    }
    memcpy(m->blob + m->blob_n, key, len);
    m->ent[m->n] = (struct strmap_entry){h, m->blob_n, (uint32_t)len, val};
    m->blob_n += len;
    m->slots[i] = (uint32_t)++m->n;
    return 0;
}

int strmap_get(const struct strmap *m, const void *key, size_t len, uint32_t *val)
{
    return strmap_get_hashed(m, key, len, strmap_hash(key, len), val);
}

int strmap_get_hashed(const struct strmap *m, const void *key, size_t len, uint64_t hash, uint32_t *val)
{
    size_t i = find(m, key, len, hash);
    if (!m->slots[i])
        return 0;
    *val = m->ent[m->slots[i] - 1].val;
    return 1;
}
