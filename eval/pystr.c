#include "eval/pystr.h"

#include <stdlib.h>
#include <string.h>

#include <unicode/ucasemap.h>

/* the code point at s[*i], which moves past it */
static uint32_t next_cp(const char *s, size_t n, size_t *i)
{
    const unsigned char *p = (const unsigned char *)s + *i;
    uint32_t c = p[0];
    size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (*i + k > n)
        k = n - *i;
    if (k > 1)
        c &= 0x7f >> k;
    for (size_t j = 1; j < k; j++)
        c = c << 6 | (p[j] & 0x3f);
    *i += k;
    return c;
}

int py_isspace(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
           c == 0x202f || c == 0x205f || c == 0x3000;
}

size_t py_len(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += ((unsigned char)s[i] & 0xc0) != 0x80;
    return count;
}

size_t py_rstrip_len(const char *s, size_t n)
{
    size_t keep = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c = next_cp(s, n, &i);
        if (!py_isspace(c))
            keep = i;
    }
    return keep;
}

size_t py_lstrip_at(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t at = i;
        if (!py_isspace(next_cp(s, n, &i)))
            return at;
    }
    return n;
}

static char *dup_range(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

char *py_strip(const char *s)
{
    size_t n = strlen(s), a = py_lstrip_at(s, n);
    return dup_range(s + a, py_rstrip_len(s + a, n - a));
}

char *py_capitalize(const char *s)
{
    size_t n = strlen(s);
    int ascii = 1;
    for (size_t i = 0; i < n; i++)
        ascii &= (unsigned char)s[i] < 0x80;
    if (ascii) {
        char *d = dup_range(s, n);
        for (size_t i = 0; d && i < n; i++)
            if (i == 0 && d[i] >= 'a' && d[i] <= 'z')
                d[i] = (char)(d[i] - 'a' + 'A');
            else if (i > 0 && d[i] >= 'A' && d[i] <= 'Z')
                d[i] = (char)(d[i] - 'A' + 'a');
        return d;
    }
    /* the whole string one title segment whose first code point is
     * title-cased whatever it is: str.capitalize() */
    UErrorCode st = U_ZERO_ERROR;
    UCaseMap *cm = ucasemap_open("", U_TITLECASE_WHOLE_STRING | U_TITLECASE_NO_BREAK_ADJUSTMENT,
                                 &st);
    if (U_FAILURE(st))
        return NULL;
    size_t cap = 3 * n + 8;
    char *d = malloc(cap);
    int32_t len = d ? ucasemap_utf8ToTitle(cm, d, (int32_t)cap, s, (int32_t)n, &st) : 0;
    ucasemap_close(cm);
    if (!d || U_FAILURE(st) || (size_t)len >= cap) {
        free(d);
        return NULL;
    }
    d[len] = 0;
    return d;
}

/* s with every occurrence of `from` replaced by `to`, left to right
 * without overlaps (str.replace); to is no longer than from */
static void replace_in_place(char *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to);
    char *w = s;
    for (const char *r = s; *r;) {
        if (!strncmp(r, from, fl)) {
            memcpy(w, to, tl);
            w += tl;
            r += fl;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
}

char *hellaswag_preprocess(const char *s)
{
    char *t = py_strip(s);
    if (!t)
        return NULL;
    replace_in_place(t, " [title]", ". ");
    char *w = t;
    for (const char *r = t; *r;) {
        const char *close = NULL;
        if (*r == '[')
            for (const char *q = r + 1; *q && *q != '\n'; q++)
                if (*q == ']') {
                    close = q;
                    break;
                }
        if (close)
            r = close + 1;
        else
            *w++ = *r++;
    }
    *w = 0;
    replace_in_place(t, "  ", " ");
    return t;
}
