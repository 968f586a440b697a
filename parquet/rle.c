/* The RLE / bit-packed hybrid: see rle.h. */
#include "parquet/rle.h"

void rle_init(struct rle *r, const uint8_t *p, size_t n, int bw)
{
    *r = (struct rle){.p = p, .end = p + n, .bw = bw};
}

int rle_width(uint32_t max)
{
    int w = 0;
    while (max) {
        w++;
        max >>= 1;
    }
    return w;
}

/* Reads the next run's header. 0, or -1 at the end or on a malformed one. */
static int next_run(struct rle *r)
{
    uint64_t h = 0;
    int shift = 0;
    for (;;) {
        if (r->p >= r->end || shift > 35)
            return -1;
        uint8_t b = *r->p++;
        h |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    if (h & 1) {
        uint64_t groups = h >> 1, bytes = groups * (uint64_t)r->bw, have = (uint64_t)(r->end - r->p);
        r->packed = 1;
        r->bp = r->p;
        r->bit = 0;
        r->bits = 8 * (bytes < have ? bytes : have);
        r->left = groups * 8;
        r->p += bytes < have ? bytes : have;
    } else {
        size_t k = (size_t)(r->bw + 7) / 8;
        if ((size_t)(r->end - r->p) < k)
            return -1;
        uint32_t v = 0;
        for (size_t i = 0; i < k; i++)
            v |= (uint32_t)r->p[i] << (8 * i);
        r->p += k;
        r->packed = 0;
        r->value = v;
        r->left = h >> 1;
    }
    return 0;
}

int rle_next(struct rle *r, uint32_t *v)
{
    while (r->left == 0)
        if (next_run(r) != 0)
            return -1;
    if (!r->packed) {
        r->left--;
        *v = r->value;
        return 0;
    }
    if (r->bit + (uint64_t)r->bw > r->bits)
        return -1;
    uint32_t x = 0;
    for (int got = 0; got < r->bw;) {
        uint64_t at = r->bit + (uint64_t)got;
        unsigned off = (unsigned)(at & 7);
        int take = 8 - (int)off < r->bw - got ? 8 - (int)off : r->bw - got;
        x |= (uint32_t)((r->bp[at >> 3] >> off) & ((1u << take) - 1)) << got;
        got += take;
    }
    r->bit += (uint64_t)r->bw;
    r->left--;
    *v = x;
    return 0;
}
