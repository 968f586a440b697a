/* The strings of one column, a row at a time (parquet.h's pq_text_*):
 * cod-prep's way in, which builds no JSON. The row count is the row
 * group's: a chunk with more or fewer values is an error. */
#include <stdio.h>
#include <stdlib.h>

#include "parquet/column.h"

struct pq_text {
    struct pq_col *c;
    int64_t rows, seen;
};

struct pq_text *pq_text_open(const struct pq_file *f, int group, int column, char *err, size_t errlen)
{
    const struct pq_node *leaf = &f->nodes[f->leaf[column]];
    if (leaf->rep > 0 || leaf->el->type != PQ_BYTE_ARRAY) {
        snprintf(err, errlen, "%s: column '%s' is not one string a row", f->path, leaf->path);
        return NULL;
    }
    struct pq_text *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "%s: out of memory", f->path);
        return NULL;
    }
    t->rows = f->meta.groups[group].rows;
    if (!(t->c = pq_col_open(f, group, column, err, errlen))) {
        free(t);
        return NULL;
    }
    return t;
}

int pq_text_next(struct pq_text *t, const char **s, size_t *len, char *err, size_t errlen)
{
    struct pq_value v;
    int r = pq_col_next(t->c, &v, err, errlen);
    if (r < 0)
        return -1;
    if (r == 0 || t->seen == t->rows) {
        if (r == 0 && t->seen == t->rows)
            return 0;
        snprintf(err, errlen, "%s: %s values, the row group %lld rows", pq_col_where(t->c),
                 r ? "more" : "fewer", (long long)t->rows);
        return -1;
    }
    t->seen++;
    *s = v.has ? v.s : NULL;
    *len = v.has ? v.len : 0;
    return 1;
}

int64_t pq_text_offset(const struct pq_text *t) { return pq_col_offset(t->c); }

void pq_text_close(struct pq_text *t)
{
    if (!t)
        return;
    pq_col_close(t->c);
    free(t);
}
