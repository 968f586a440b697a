/* Checked path building: see path.h. */
#include "common/path.h"

#include <stdarg.h>
#include <stdio.h>

static int vfmt(char *out, size_t cap, char *err, size_t errlen, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(out, cap, fmt, ap);
    if (n >= 0 && (size_t)n < cap) {
        va_end(again);
        return 0;
    }
    /* Name what did not fit, cut to the error buffer, so the caller can say which. */
    char head[160];
    vsnprintf(head, sizeof head, fmt, again);
    va_end(again);
    if (err && errlen)
        snprintf(err, errlen, "path too long (%d bytes, at most %zu): %s...", n, cap ? cap - 1 : 0,
                 head);
    if (cap)
        out[0] = 0;
    return -1;
}

int path_fmt(char *out, size_t cap, char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vfmt(out, cap, err, errlen, fmt, ap);
    va_end(ap);
    return rc;
}

int path_copy(char *out, size_t cap, const char *src, char *err, size_t errlen)
{
    return path_fmt(out, cap, err, errlen, "%s", src);
}
