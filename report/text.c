#include "report/text.h"

#include <math.h>
#include <string.h>

void text_html(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

void text_csv(FILE *f, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void text_csv_json(FILE *f, const json_t *v)
{
    if (json_is_integer(v))
        fprintf(f, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        fprintf(f, "%.17g", json_real_value(v));
    else if (json_is_string(v))
        text_csv(f, json_string_value(v));
    else if (json_is_boolean(v))
        fputs(json_is_true(v) ? "true" : "false", f);
}

void text_short(FILE *f, double x)
{
    if (!isfinite(x))
        fputs("–", f);
    else if (x != 0 && (fabs(x) >= 1e5 || fabs(x) < 1e-3))
        fprintf(f, "%.3g", x);
    else
        fprintf(f, "%.4g", x);
}

void text_value(char *buf, size_t n, const json_t *v)
{
    if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_number(v))
        snprintf(buf, n, "%g", json_number_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    else
        snprintf(buf, n, "–");
}
