/* The byte-pair merge loop shared by the GPT-2 and LLaMA tokenizers.
 *
 * Both reduce to the same rule once their files are loaded: a table says, for
 * a pair of adjacent token ids (a, b), the rank of merging them and the id of
 * the result; encoding repeatedly merges the adjacent pair of lowest rank,
 * the leftmost one on ties, until no pair in the table is left. GPT-2's
 * tiktoken ranks become this table by splitting every token at every byte;
 * LLaMA's merge list is this table already. */
#ifndef COD_TEXT_BPE_H
#define COD_TEXT_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "text/piece_cache.h"
#include "text/tokenizer.h"

#define BPE_NO_RANK UINT32_MAX

struct bpe_pairs {
    uint64_t *key; /* a << 32 | b; BPE_EMPTY_KEY when the slot is free */
    uint32_t *rank, *result;
    size_t mask, n, max;
};

/* Room for up to max_pairs pairs; 0 or -1 (out of memory). */
int bpe_pairs_init(struct bpe_pairs *p, size_t max_pairs);
void bpe_pairs_free(struct bpe_pairs *p);
/* Adds or replaces (a, b) -> (rank, result). -1 if the table is full. */
int bpe_pairs_set(struct bpe_pairs *p, uint32_t a, uint32_t b, uint32_t rank, uint32_t result);
/* The slot where the probe for key a << 32 | b starts: bits of the
 * product's high half, since a reaches none of its bits below 32 (the low
 * half's bits cluster every pair with the same b). */
static inline size_t bpe_slot(uint64_t k, size_t mask)
{
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

/* Rank of (a, b) (BPE_NO_RANK if absent) and, when present, *result. */
static inline uint32_t bpe_pairs_get(const struct bpe_pairs *p, uint32_t a, uint32_t b, uint32_t *result)
{
    uint64_t k = (uint64_t)a << 32 | b;
    size_t i = bpe_slot(k, p->mask);
    for (;;) {
        uint64_t s = p->key[i];
        if (s == k) {
            *result = p->result[i];
            return p->rank[i];
        }
        if (s == UINT64_MAX)
            return BPE_NO_RANK;
        i = (i + 1) & p->mask;
    }
}

/* Scratch space for bpe_merge, one per thread, grown on demand. */
struct bpe_scratch {
    uint32_t *rank;
    int32_t *prev, *next;
    uint64_t *heap;
    size_t cap;
};

void bpe_scratch_free(struct bpe_scratch *s);

/* Merges ids[0..n) in place; returns the new length, or (size_t)-1 when
 * scratch memory cannot be had. */
size_t bpe_merge(const struct bpe_pairs *p, uint32_t *ids, size_t n, struct bpe_scratch *s);

/* A thread's memo of merged pieces and the room to merge in. */
struct bpe_memo {
    struct piece_cache cache;
    struct bpe_scratch scratch;
    uint32_t *work;
    size_t work_cap;
};

int bpe_memo_init(struct bpe_memo *m);
void bpe_memo_free(struct bpe_memo *m);
/* Appends to out the merge of a piece's n symbols, remembered under key
 * (hash = strmap_hash(key, keyn)): syms, or where syms is NULL each byte of
 * bytes through byte_id. 0, or -1 with err (out of memory). */
int bpe_memo_merge(const struct bpe_pairs *p, struct bpe_memo *m, const void *key, size_t keyn,
                   uint64_t hash, const uint32_t *syms, const unsigned char *bytes,
                   const uint32_t *byte_id, size_t n, struct tok_ids *out, char *err,
                   size_t errlen);

#endif
