/* A document's identity, for exact deduplication and for the train/val
 * split: the SHA-256 of its text with every run of ASCII whitespace
 * (space, tab, CR, LF, VT, FF) made one space and the ends trimmed; in
 * Python, hashlib.sha256(b" ".join(text.split())) of the UTF-8 bytes.
 * Two documents that differ only in whitespace are the same document.
 *
 * The split follows from the key alone, so adding, removing or reordering
 * inputs moves no document between train and val: a document is held out
 * when the key's first 8 bytes, read as a big-endian integer, are below
 * fraction * 2^64. */
#ifndef COD_PREP_DOC_KEY_H
#define COD_PREP_DOC_KEY_H

#include <stddef.h>
#include <stdint.h>

struct doc_key {
    unsigned char md[32];
};

/* 0, or -1 when libcrypto failed. */
int doc_key_of(const unsigned char *text, size_t len, struct doc_key *k);
/* Whether the document is held out at that fraction (in [0, 1)). */
int doc_key_held_out(const struct doc_key *k, double fraction);

/* The keys seen so far: an open-addressed table of the keys' first 16
 * bytes (a collision among 10^12 documents has a chance below 10^-14),
 * about 32 bytes a distinct document. */
struct dedup {
    unsigned char (*slot)[16];
    size_t cap, n;
    int zero_seen; /* the all-zero key marks an empty slot, so it is kept apart */
};

/* 1 when k is new (and now remembered), 0 when seen before, -1 out of memory. */
int dedup_add(struct dedup *d, const struct doc_key *k);
void dedup_free(struct dedup *d);

#endif
