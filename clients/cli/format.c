/* Human text for JSON values, durations and times (see format.h). */
#include "clients/cli/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

const char *fmt_value(const json_t *v, char *buf, size_t n)
{
    if (!v || json_is_null(v))
        snprintf(buf, n, "-");
    else if (json_is_integer(v))
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%.4g", json_real_value(v));
    else if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
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
