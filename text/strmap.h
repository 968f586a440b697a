/* A fixed-capacity hash map from byte strings to uint32 values. Tokenizers
 * use it for "which token are these bytes?", the one lookup that every
 * encode and every vocabulary load does, so it must not allocate per call. */
#ifndef COD_TEXT_STRMAP_H
#define COD_TEXT_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap {
    uint32_t *slots;       /* entry index + 1; 0 = empty */
    size_t mask;
    struct strmap_entry { uint64_t hash; size_t off; uint32_t len, val; } *ent;
    size_t n, cap;          /* entries used, entries allowed */
    unsigned char *blob;    /* key bytes */
    size_t blob_n, blob_cap;
};

uint64_t strmap_hash(const void *key, size_t len);
/* Room for up to max_entries keys; 0 or -1 (out of memory). */
int strmap_init(struct strmap *m, size_t max_entries);
void strmap_free(struct strmap *m);
/* Inserts a copy of key. Returns 0 if inserted, 1 if the key was already
 * there (its value is left alone), -1 if out of memory or full. */
int strmap_put(struct strmap *m, const void *key, size_t len, uint32_t val);
/* 1 and *val if found, else 0. */
int strmap_get(const struct strmap *m, const void *key, size_t len, uint32_t *val);
/* The same with hash = strmap_hash(key, len) already at hand. */
int strmap_get_hashed(const struct strmap *m, const void *key, size_t len, uint64_t hash, uint32_t *val);

#endif
