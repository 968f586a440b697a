/* The positions of a batch that hold a target. In documents packing a
 * short document's row ends in pads; the per-layer statistics and the
 * angular distance are over the other positions alone, packed together
 * first (the ops reduce over contiguous rows). In stream packing every
 * position holds one and nothing is copied. */
#ifndef COD_ROWS_H
#define COD_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ops.h"

struct rows {
    const int32_t *tgt;  /* the batch's targets, [B·T]: -1 where none */
    int B, T;
    int64_t n;           /* positions with a target */
    act **pack;          /* two scratch buffers of B·T·d, or NULL when n = B·T */
};

/* pack: two act buffers of the batch's size (rows_alloc), or NULL in stream packing. */
void rows_of(struct rows *r, const int32_t *tgt, int B, int T, act **pack);
/* src [B·T, d] at the positions with a target, packed into pack[slot]
 * (its first n rows), or src itself when every position has one. */
const act *rows_pack(const struct ops *o, const struct rows *r, const act *src, int d, int slot);

int rows_alloc(const struct ops *o, act **pack, size_t n);
void rows_free(const struct ops *o, act **pack);

#endif
