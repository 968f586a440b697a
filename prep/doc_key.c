/* Document keys and the set of those seen: see doc_key.h. */
#include "prep/doc_key.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text/sha256.h"

static int ascii_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int doc_key_of(const unsigned char *text, size_t len, struct doc_key *k)
{
    /* normalised through a small buffer: no copy of the document */
    unsigned char buf[1 << 14];
    size_t n = 0;
    struct sha256_stream *s = sha256_begin();
    if (!s)
        return -1;
    int rc = 0, pending_space = 0, any = 0;
    for (size_t i = 0; i < len && rc == 0; i++) {
        unsigned char c = text[i];
        if (ascii_space(c)) {
            pending_space = any;
            continue;
        }
        if (n + 2 > sizeof(buf)) {
            rc = sha256_update(s, buf, n);
            n = 0;
        }
        if (pending_space)
            buf[n++] = ' ';
        pending_space = 0;
        any = 1;
        buf[n++] = c;
    }
    if (rc == 0 && n)
        rc = sha256_update(s, buf, n);
    if (sha256_end(s, k->md) != 0)
        rc = -1;
    return rc;
}

int doc_key_held_out(const struct doc_key *k, double fraction)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | k->md[i];
    /* fraction * 2^64 as an integer: exact for any fraction a double holds below 1 */
    double t = ldexp(fraction, 64);
    if (t <= 0)
        return 0;
    return v < (uint64_t)t;
}

static size_t slot_of(const unsigned char *key, size_t mask)
{
    uint64_t h;
    memcpy(&h, key + 8, sizeof(h)); /* already uniform: a SHA-256's bytes */
    return (size_t)h & mask;
}

static int is_zero(const unsigned char *key)
{
    static const unsigned char zero[16];
    return memcmp(key, zero, 16) == 0;
}

static int grow(struct dedup *d)
{
    size_t cap = d->cap ? d->cap * 2 : 1024;
    unsigned char(*slot)[16] = calloc(cap, 16);
    if (!slot)
        return -1;
    for (size_t i = 0; i < d->cap; i++)
        if (!is_zero(d->slot[i])) {
            size_t j = slot_of(d->slot[i], cap - 1);
            while (!is_zero(slot[j]))
                j = (j + 1) & (cap - 1);
            memcpy(slot[j], d->slot[i], 16);
        }
    free(d->slot);
    d->slot = slot;
    d->cap = cap;
    return 0;
}

int dedup_add(struct dedup *d, const struct doc_key *k)
{
    if (is_zero(k->md)) {
        int fresh = !d->zero_seen;
        d->zero_seen = 1;
        return fresh;
    }
    if (2 * (d->n + 1) > d->cap && grow(d) != 0)
        return -1;
    size_t j = slot_of(k->md, d->cap - 1);
    while (!is_zero(d->slot[j])) {
        if (memcmp(d->slot[j], k->md, 16) == 0)
            return 0;
        j = (j + 1) & (d->cap - 1);
    }
    memcpy(d->slot[j], k->md, 16);
    d->n++;
    return 1;
}

void dedup_free(struct dedup *d)
{
    free(d->slot);
    memset(d, 0, sizeof(*d));
}
