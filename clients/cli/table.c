/* Text tables (see table.h). Widths count UTF-8 code points so that
 * non-ASCII text lines up. */
#include "clients/cli/table.h"

#include "clients/cli/format.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, int ncols)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
}

void table_add(struct table *t, const char *fmt, ...)
{
    if (t->oom)
        return;
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        char **cells = realloc(t->cells, (size_t)cap * sizeof *cells);
        if (!cells) {
            t->oom = 1;
            return;
        }
        t->cells = cells;
        t->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&t->cells[t->n], fmt, ap);
    va_end(ap);
    if (rc < 0) {
        t->oom = 1;
        return;
    }
    /* a cell may quote the server: no control character reaches the terminal */
    const char *safe = text_safe(t->cells[t->n]);
    if (strcmp(safe, t->cells[t->n])) {
        char *copy = strdup(safe);
        if (!copy) {
            free(t->cells[t->n]);
            t->oom = 1;
            return;
        }
        free(t->cells[t->n]);
        t->cells[t->n] = copy;
    }
    t->n++;
}

static int numeric(const char *s)
{
    char *end;
    strtod(s, &end);
    return end != s && (*end == 0 || *end == '%');
}

int table_print(const struct cli *c, struct table *t, int indent)
{
    int rows = (t->n + t->ncols - 1) / t->ncols;
    int *w = calloc((size_t)t->ncols, sizeof *w), *right = calloc((size_t)t->ncols, sizeof *right);
    if (t->oom || !w || !right) {
        free(w);
        free(right);
        table_free(t);
        return fail(c, EXIT_REFUSED, "out of memory");
    }
    for (int col = 0; col < t->ncols; col++) {
        /* A column of numbers (and "-" for none) reads best right-aligned. */
        int others = 0;
        for (int r = 0; r < rows; r++) {
            int i = r * t->ncols + col;
            if (i >= t->n)
                continue;
            int cw = text_width(t->cells[i]);
            if (cw > w[col])
                w[col] = cw;
            others += r > 0 && strcmp(t->cells[i], "-") && !numeric(t->cells[i]);
        }
        right[col] = others == 0;
    }
    for (int r = 0; r < rows; r++) {
        printf("%*s", indent, "");
        for (int col = 0; col < t->ncols && r * t->ncols + col < t->n; col++) {
            const char *s = t->cells[r * t->ncols + col];
            int pad = w[col] - text_width(s), last = col == t->ncols - 1;
            if (right[col])
                printf("%*s%s", pad, "", s);
            else
                printf("%s%*s", s, last ? 0 : pad, "");
            if (!last)
                fputs("  ", stdout);
        }
        fputc('\n', stdout);
    }
    free(w);
    free(right);
    table_free(t);
    return 0;
}

void table_free(struct table *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}
