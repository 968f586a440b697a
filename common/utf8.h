/* UTF-8 validation: one sequence at a time (the tokenizers encode invalid
 * bytes apart so that every text round-trips), or a whole text (Parquet's
 * strings, which must be UTF-8). */
#ifndef COD_COMMON_UTF8_H
#define COD_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if the bytes there
 * are not one (overlong forms, surrogates and values past U+10FFFF are not). */
static inline size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    size_t k;
    unsigned min;
    if (c >= 0xc2 && c <= 0xdf)
        k = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        k = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        k = 4, min = 0x10000;
    else
        return 0;
    if (k > n)
        return 0;
    unsigned v = c & (0x7f >> k);
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    return k;
}

/* 1 if the n bytes at s are UTF-8 throughout; ASCII goes eight bytes at a time */
static inline int utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (w & 0x8080808080808080ull)
                break;
            p += 8;
        }
        if (p >= end)
            break;
        size_t k = utf8_len(p, (size_t)(end - p));
        if (!k)
            return 0;
        p += k;
    }
    return 1;
}

#endif
