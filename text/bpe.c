#include "text/bpe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int bpe_pairs_init(struct bpe_pairs *p, size_t max_pairs)
{
    memset(p, 0, sizeof(*p));
    size_t slots = 16;
    while (slots < 2 * max_pairs)
        slots *= 2;
    p->key = malloc(slots * sizeof(uint64_t));
    p->rank = malloc(slots * sizeof(uint32_t));
    p->result = malloc(slots * sizeof(uint32_t));
    if (!p->key || !p->rank || !p->result) {
        bpe_pairs_free(p);
        return -1;
    }
    memset(p->key, 0xff, slots * sizeof(uint64_t));
    p->mask = slots - 1;
    p->max = max_pairs;
    return 0;
}

void bpe_pairs_free(struct bpe_pairs *p)
{
    free(p->key);
    free(p->rank);
    free(p->result);
    memset(p, 0, sizeof(*p));
}

int bpe_pairs_set(struct bpe_pairs *p, uint32_t a, uint32_t b, uint32_t rank, uint32_t result)
{
    uint64_t k = (uint64_t)a << 32 | b;
    if (k == UINT64_MAX)
        return -1;
    size_t i = bpe_slot(k, p->mask);
    while (p->key[i] != UINT64_MAX && p->key[i] != k)
        i = (i + 1) & p->mask;
    if (p->key[i] == UINT64_MAX) {
        if (p->n >= p->max)
            return -1;
        p->n++;
        p->key[i] = k;
    }
    p->rank[i] = rank;
    p->result[i] = result;
    return 0;
}

void bpe_scratch_free(struct bpe_scratch *s)
{
    free(s->rank);
    free(s->prev);
    free(s->next);
    free(s->heap);
    memset(s, 0, sizeof(*s));
}

static int scratch_reserve(struct bpe_scratch *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < n)
        cap *= 2;
    uint32_t *rank = realloc(s->rank, cap * sizeof(*rank));
    if (rank)
        s->rank = rank;
    int32_t *prev = realloc(s->prev, cap * sizeof(*prev));
    if (prev)
        s->prev = prev;
    int32_t *next = realloc(s->next, cap * sizeof(*next));
    if (next)
        s->next = next;
    /* Each merge pops one entry and pushes at most two: 2n bounds the heap. */
    uint64_t *heap = realloc(s->heap, 2 * cap * sizeof(*heap));
    if (heap)
        s->heap = heap;
    if (!rank || !prev || !next || !heap)
        return -1;
    s->cap = cap;
    return 0;
}

/* Short pieces (nearly all words): scanning for the minimum beats a heap. */
static size_t merge_small(const struct bpe_pairs *p, uint32_t *ids, size_t n, uint32_t *rank)
{
    uint32_t res = 0;
    for (size_t i = 0; i + 1 < n; i++)
        rank[i] = bpe_pairs_get(p, ids[i], ids[i + 1], &res);
    while (n > 1) {
        size_t best = 0;
        uint32_t br = rank[0];
        for (size_t i = 1; i + 1 < n; i++)
            if (rank[i] < br)
                br = rank[i], best = i;
        if (br == BPE_NO_RANK)
            break;
        bpe_pairs_get(p, ids[best], ids[best + 1], &res);
        ids[best] = res;
        memmove(ids + best + 1, ids + best + 2, (n - best - 2) * sizeof(*ids));
        memmove(rank + best, rank + best + 1, (n - best - 2) * sizeof(*rank));
        n--;
        if (best > 0)
            rank[best - 1] = bpe_pairs_get(p, ids[best - 1], ids[best], &res);
        if (best + 1 < n)
            rank[best] = bpe_pairs_get(p, ids[best], ids[best + 1], &res);
    }
    return n;
}

/* Min-heap of (rank << 32 | left position): original positions keep their
 * order under merging, so comparing them is "leftmost first". */
static void heap_push(uint64_t *h, size_t *n, uint64_t v)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (h[up] <= v)
            break;
        h[i] = h[up];
        i = up;
    }
    h[i] = v;
}

static uint64_t heap_pop(uint64_t *h, size_t *n)
{
    uint64_t top = h[0], v = h[--*n];
    size_t i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m)
            break;
        if (c + 1 < m && h[c + 1] < h[c])
            c++;
        if (h[c] >= v)
            break;
        h[i] = h[c];
        i = c;
    }
    if (m)
        h[i] = v;
    return top;
}

/* Long pieces (a page without spaces, a run of symbols): O(n log n). Stale
 * heap entries are skipped by re-reading the pair's current rank, and every
 * live pair always has an entry, so the first valid entry popped is the
 * lowest-ranked leftmost pair. */
static size_t merge_large(const struct bpe_pairs *p, uint32_t *ids, size_t n, struct bpe_scratch *s)
{
    int32_t *prev = s->prev, *next = s->next;
    uint64_t *heap = s->heap;
    size_t hn = 0;
    uint32_t res = 0;
    for (size_t i = 0; i < n; i++) {
        prev[i] = (int32_t)i - 1;
        next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    for (size_t i = 0; i + 1 < n; i++) {
        uint32_t r = bpe_pairs_get(p, ids[i], ids[i + 1], &res);
        if (r != BPE_NO_RANK)
            heap_push(heap, &hn, (uint64_t)r << 32 | i);
    }
    /* ids[i] == UINT32_MAX marks a node merged into its left neighbour. */
    while (hn) {
        uint64_t top = heap_pop(heap, &hn);
        uint32_t r = (uint32_t)(top >> 32);
        int32_t i = (int32_t)(uint32_t)top;
        if (ids[i] == UINT32_MAX || next[i] < 0)
            continue;
        int32_t j = next[i];
        if (bpe_pairs_get(p, ids[i], ids[j], &res) != r)
            continue;
        ids[i] = res;
        ids[j] = UINT32_MAX;
        next[i] = next[j];
        if (next[j] >= 0)
            prev[next[j]] = i;
        if (prev[i] >= 0) {
            uint32_t r2 = bpe_pairs_get(p, ids[prev[i]], ids[i], &res);
            if (r2 != BPE_NO_RANK)
                heap_push(heap, &hn, (uint64_t)r2 << 32 | (uint32_t)prev[i]);
        }
        if (next[i] >= 0) {
            uint32_t r2 = bpe_pairs_get(p, ids[i], ids[next[i]], &res);
            if (r2 != BPE_NO_RANK)
                heap_push(heap, &hn, (uint64_t)r2 << 32 | (uint32_t)i);
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] != UINT32_MAX)
            ids[m++] = ids[i];
    return m;
}

size_t bpe_merge(const struct bpe_pairs *p, uint32_t *ids, size_t n, struct bpe_scratch *s)
{
    if (n < 2)
        return n;
    if (n > INT32_MAX)
        return (size_t)-1;
    if (scratch_reserve(s, n) != 0)
        return (size_t)-1;
    if (n <= 48)
        return merge_small(p, ids, n, s->rank);
    return merge_large(p, ids, n, s);
}

int bpe_memo_init(struct bpe_memo *m)
{
    memset(m, 0, sizeof(*m));
    return piece_cache_init(&m->cache);
}

void bpe_memo_free(struct bpe_memo *m)
{
    piece_cache_free(&m->cache);
    bpe_scratch_free(&m->scratch);
    free(m->work);
    memset(m, 0, sizeof(*m));
}

int bpe_memo_merge(const struct bpe_pairs *p, struct bpe_memo *m, const void *key, size_t keyn,
                   uint64_t hash, const uint32_t *syms, const unsigned char *bytes,
                   const uint32_t *byte_id, size_t n, struct tok_ids *out, char *err,
                   size_t errlen)
{
    const uint32_t *ids;
    size_t k;
    if (!piece_cache_get(&m->cache, key, keyn, hash, &ids, &k)) {
        if (n > m->work_cap) {
            uint32_t *w = realloc(m->work, n * sizeof(*w));
            if (!w) {
                snprintf(err, errlen, "out of memory for a piece of %zu symbols", n);
                return -1;
            }
            m->work = w;
            m->work_cap = n;
        }
        for (size_t i = 0; i < n; i++)
            m->work[i] = syms ? syms[i] : byte_id[bytes[i]];
        k = bpe_merge(p, m->work, n, &m->scratch);
        if (k == (size_t)-1) {
            snprintf(err, errlen, "out of memory for a piece of %zu symbols", n);
            return -1;
        }
        ids = m->work;
        piece_cache_put(&m->cache, key, keyn, hash, ids, k);
    }
    if (tok_ids_reserve(out, k) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(out->v + out->n, ids, k * sizeof(*ids));
    out->n += k;
    return 0;
}
