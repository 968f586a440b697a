/* Human text for JSON values, durations and times (see format.h). */
#include "clients/cli/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The bytes of s's control character at p (1, or 2 for a C1 in UTF-8), or 0. */
static size_t control(const unsigned char *p)
{
    if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
        return 1;
    return *p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f ? 2 : 0;
}

const char *text_escape(const char *s, char *out, size_t n)
{
    size_t len = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && len + 1 < n;) {
        size_t k = control(p);
        char esc[8];
        if (k)
            snprintf(esc, sizeof esc, k == 1 ? "\\x%02x" : "\\u%04x", k == 1 ? *p : p[1]);
        const char *piece = k ? esc : (const char *)p;
        size_t m = k ? strlen(esc) : 1;
        if (len + m + 1 > n)
            break;
        memcpy(out + len, piece, m);
        len += m;
        p += k ? k : 1;
    }
    if (n)
        out[len] = 0;
    return out;
}

const char *text_safe(const char *s)
{
    static char *bufs[8];
    static size_t caps[8];
    static int next;
    int i = next++ % 8;
    size_t need = 6 * strlen(s) + 1;  /* every byte escaped at most to 6 */
    if (caps[i] < need) {
        char *b = realloc(bufs[i], need);
        if (!b)
            return "?";
        bufs[i] = b;
        caps[i] = need;
    }
    return text_escape(s, bufs[i], caps[i]);
}

const char *fmt_value(const json_t *v, char *buf, size_t n)
{
    if (!v || json_is_null(v))
        snprintf(buf, n, "-");
    else if (json_is_integer(v))
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%.4g", json_real_value(v));
    else if (json_is_string(v))
        text_escape(json_string_value(v), buf, n);
    else if (json_is_boolean(v))
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    else {
        char *s = json_dumps(v, JSON_COMPACT);
        snprintf(buf, n, "%s", s ? s : "?");
        free(s);
    }
    return buf;
}

const char *fmt_duration(double s, char *buf, size_t n)
{
    long t = (long)llround(s > 0 ? s : 0);
    if (t < 60)
        snprintf(buf, n, "%lds", t);
    else if (t < 3600)
        snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
    else if (t < 86400)
        snprintf(buf, n, "%ldh%02ldm", t / 3600, t % 3600 / 60);
    else
        snprintf(buf, n, "%ldd%02ldh", t / 86400, t % 86400 / 3600);
    return buf;
}

int text_width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

const char *fmt_time(const json_t *v, char *buf, size_t n)
{
    struct tm tm;
    time_t t = (time_t)json_number_value(v);
    if (!json_is_number(v) || !localtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, n, "-");
    return buf;
}
