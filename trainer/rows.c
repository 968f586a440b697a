/* A batch's positions with a target: see rows.h. */
#include "trainer/rows.h"

void rows_of(struct rows *r, const int32_t *tgt, int B, int T, act **pack)
{
    r->tgt = tgt;
    r->B = B;
    r->T = T;
    r->n = 0;
    for (size_t i = 0; i < (size_t)B * T; i++)
        r->n += tgt[i] >= 0;
    r->pack = r->n < (int64_t)B * T ? pack : NULL;
}

const act *rows_pack(const struct ops *o, const struct rows *r, const act *src, int d, int slot)
{
    if (!r->pack)
        return src;
    act *dst = r->pack[slot];
    size_t N = (size_t)r->B * r->T, out = 0;
    for (size_t i = 0; i < N;) {
        if (r->tgt[i] < 0) {
            i++;
            continue;
        }
        size_t j = i;
        while (j < N && r->tgt[j] >= 0)
            j++;
        o->copy_act(act_at(o, dst, out * d), act_at_c(o, src, i * d), (j - i) * d);
        out += j - i;
        i = j;
    }
    return dst;
}

int rows_alloc(const struct ops *o, act **pack, size_t n)
{
    pack[0] = o->alloc_act(n);
    pack[1] = pack[0] ? o->alloc_act(n) : NULL;
    if (pack[1])
        return 0;
    rows_free(o, pack);
    return -1;
}

void rows_free(const struct ops *o, act **pack)
{
    for (int i = 0; i < 2; i++) {
        if (pack[i])
            o->free(pack[i]);
        pack[i] = NULL;
    }
}
