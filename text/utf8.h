/* UTF-8 validation, one sequence at a time: the tokenizers encode invalid
 * bytes apart so that every text round-trips. */
#ifndef COD_TEXT_UTF8_H
#define COD_TEXT_UTF8_H

#include <stddef.h>

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

#endif
