/* Opening a Parquet file: its footer and its schema tree (see file.h). */
#include "parquet/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PQ_MAX_DEPTH 32
/* a footer larger than this is not one pyarrow wrote */
#define PQ_MAX_FOOTER (256u << 20)

int pq_pread(const struct pq_file *f, void *buf, size_t len, int64_t off, char *err, size_t errlen)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(f->fd, (char *)buf + got, len - got, (off_t)(off + (int64_t)got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            snprintf(err, errlen, "%s: cannot read %zu bytes at %lld: %s", f->path, len, (long long)off,
                     n < 0 ? strerror(errno) : "the file is shorter than it was");
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

int pq_child(const struct pq_file *f, int parent, const char *name, size_t len)
{
    const struct pq_node *p = &f->nodes[parent];
    for (int i = 0; i < p->n_kids; i++) {
        const char *k = f->nodes[p->kids[i]].el->name;
        if (strlen(k) == len && memcmp(k, name, len) == 0)
            return p->kids[i];
    }
    return -1;
}

void pq_child_names(const struct pq_file *f, int node, char *out, size_t n)
{
    const struct pq_node *p = &f->nodes[node];
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < p->n_kids && at + 1 < n; i++) {
        int k = snprintf(out + at, n - at, "%s%s", i ? ", " : "", f->nodes[p->kids[i]].el->name);
        if (k < 0)
            break;
        at += (size_t)k;
    }
    if (!p->n_kids)
        snprintf(out, n, "none");
}

const char *pq_leaf_refused(const struct pq_file *f, int node)
{
    const struct pq_element *e = f->nodes[node].el;
    int lt = e->logical, ct = e->converted;
    switch (e->type) {
    case PQ_BYTE_ARRAY:
        if ((lt && lt != PQ_LT_STRING && lt != PQ_LT_ENUM && lt != PQ_LT_JSON) ||
            (!lt && ct >= 0 && ct != PQ_CT_UTF8 && ct != PQ_CT_ENUM && ct != PQ_CT_JSON))
            return "a BYTE_ARRAY that is not text (a decimal, BSON or another logical type)";
        return NULL;
    case PQ_INT32:
    case PQ_INT64:
        if (lt == PQ_LT_INTEGER) {
            if (!e->int_signed && e->int_bits == 64)
                return "an unsigned 64-bit integer";
            return NULL;
        }
        if (lt && lt != PQ_LT_UNKNOWN)
            return e->type == PQ_INT32 ? "an INT32 that is not an integer (a date, a time or a decimal)"
                                       : "an INT64 that is not an integer (a timestamp, a time or a decimal)";
        if (ct == PQ_CT_UINT_64)
            return "an unsigned 64-bit integer";
        if (ct >= 0 && !(ct >= PQ_CT_UINT_8 && ct <= PQ_CT_INT_64))
            return e->type == PQ_INT32 ? "an INT32 that is not an integer (a date, a time or a decimal)"
                                       : "an INT64 that is not an integer (a timestamp, a time or a decimal)";
        return NULL;
    case PQ_BOOLEAN:
    case PQ_FLOAT:
    case PQ_DOUBLE:
        return lt && lt != PQ_LT_UNKNOWN ? "a number with a logical type cod does not read" : NULL;
    case PQ_INT96:
        return "INT96 (an old timestamp)";
    case PQ_FIXED_LEN_BYTE_ARRAY:
        return "FIXED_LEN_BYTE_ARRAY (a decimal, a UUID or a float16)";
    default:
        return "a physical type cod does not know";
    }
}

/* Builds the node of element *at and, depth first, its children's. */
static int build(struct pq_file *f, int *at, int parent, int depth, int **pool, char *why, size_t whylen)
{
    if (*at >= f->meta.n_el) {
        snprintf(why, whylen, "its schema lists fewer elements than its groups' children");
        return -1;
    }
    if (depth > PQ_MAX_DEPTH) {
        snprintf(why, whylen, "its schema is nested over %d deep", PQ_MAX_DEPTH);
        return -1;
    }
    int me = f->n_nodes++, idx = (*at)++;
    struct pq_node *n = &f->nodes[me];
    const struct pq_element *e = &f->meta.el[idx];
    *n = (struct pq_node){.el = e, .parent = parent, .column = -1};
    if (parent >= 0) {
        const struct pq_node *p = &f->nodes[parent];
        if (e->repetition < PQ_REQUIRED || e->repetition > PQ_REPEATED) {
            snprintf(why, whylen, "its schema element '%s' has no valid repetition (%d)", e->name, e->repetition);
            return -1;
        }
        n->def = p->def + (e->repetition != PQ_REQUIRED);
        n->rep = p->rep + (e->repetition == PQ_REPEATED);
        size_t len = strlen(p->path) + strlen(e->name) + 2;
        if (!(n->path = malloc(len))) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        snprintf(n->path, len, "%s%s%s", p->path, p->path[0] ? "." : "", e->name);
    } else if (!(n->path = strdup(""))) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (e->num_children < 0 || e->num_children > f->meta.n_el - *at ||
        e->num_children > f->kid_pool + f->meta.n_el - *pool) {
        snprintf(why, whylen, "its schema element '%s' claims %d children", e->name, e->num_children);
        return -1;
    }
    if (e->num_children == 0 && parent >= 0) {
        if (e->type < 0) {
            snprintf(why, whylen, "its schema element '%s' is a group without children", n->path);
            return -1;
        }
        n->column = f->n_leaves;
        f->leaf[f->n_leaves++] = me;
        return 0;
    }
    if (e->type >= 0 && parent >= 0) {
        snprintf(why, whylen, "its schema element '%s' has a type and children", n->path);
        return -1;
    }
    n->kids = *pool;
    n->n_kids = e->num_children;
    *pool += e->num_children;
    for (int i = 0; i < e->num_children; i++) {
        int kid = f->n_nodes;
        if (build(f, at, me, depth + 1, pool, why, whylen) != 0)
            return -1;
        f->nodes[me].kids[i] = kid;
    }
    return 0;
}

static int check_groups(struct pq_file *f, char *why, size_t whylen)
{
    for (int g = 0; g < f->meta.n_groups; g++) {
        const struct pq_group *rg = &f->meta.groups[g];
        if (rg->n_chunks != f->n_leaves) {
            snprintf(why, whylen, "row group %d has %d column chunks, its schema %d columns", g, rg->n_chunks,
                     f->n_leaves);
            return -1;
        }
        if (rg->rows < 0) {
            snprintf(why, whylen, "row group %d has %lld rows", g, (long long)rg->rows);
            return -1;
        }
    }
    return 0;
}

static int read_footer(struct pq_file *f, char *why, size_t whylen, char *err, size_t errlen)
{
    unsigned char head[4], tail[8];
    if (f->size < 12) {
        snprintf(why, whylen, "%lld bytes, too short for a Parquet file (a truncated file?)", (long long)f->size);
        return -1;
    }
    if (pq_pread(f, head, 4, 0, err, errlen) != 0 || pq_pread(f, tail, 8, f->size - 8, err, errlen) != 0)
        return -2;
    if (memcmp(tail + 4, "PARE", 4) == 0) {
        snprintf(why, whylen, "its footer is encrypted (Parquet modular encryption), which cod does not read");
        return -1;
    }
    if (memcmp(head, "PAR1", 4) != 0 || memcmp(tail + 4, "PAR1", 4) != 0) {
        snprintf(why, whylen, "%s", memcmp(head, "PAR1", 4) != 0 ? "not a Parquet file (no PAR1 at its start)"
                                                                   : "no PAR1 at its end (a truncated file?)");
        return -1;
    }
    uint32_t flen = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 | (uint32_t)tail[3] << 24;
    if ((int64_t)flen > f->size - 12 || flen > PQ_MAX_FOOTER) {
        snprintf(why, whylen, "its footer claims %u bytes, more than the file's %lld (a truncated file?)", flen,
                 (long long)f->size);
        return -1;
    }
    f->data_end = f->size - 8 - flen;
    unsigned char *buf = malloc(flen ? flen : 1);
    if (!buf) {
        snprintf(why, whylen, "out of memory for its footer of %u bytes", flen);
        return -1;
    }
    int rc = pq_pread(f, buf, flen, f->data_end, err, errlen) != 0 ? -2 : 0;
    if (rc == 0 && pq_meta_parse(buf, flen, &f->meta, why, whylen) != 0)
        rc = -1;
    free(buf);
    return rc;
}

struct pq_file *pq_open(const char *path, char *err, size_t errlen)
{
    struct pq_file *f = calloc(1, sizeof(*f));
    char why[400] = "";
    if (!f || !(f->path = strdup(path))) {
        free(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (f->fd < 0 || fstat(f->fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        pq_close(f);
        return NULL;
    }
    f->size = st.st_size;
    int rc = read_footer(f, why, sizeof(why), err, errlen);
    if (rc == 0 && f->meta.encrypted)
        snprintf(why, sizeof(why), "its columns are encrypted (Parquet modular encryption), which cod does not read");
    else if (rc == 0 && (f->meta.n_el < 1 || f->meta.el[0].num_children < 0))
        snprintf(why, sizeof(why), "its footer has no schema");
    else if (rc == 0) {
        int n = f->meta.n_el, at = 0, *pool;
        f->nodes = calloc((size_t)n, sizeof(*f->nodes));
        f->kid_pool = calloc((size_t)n, sizeof(int));
        f->leaf = calloc((size_t)n, sizeof(int));
        if (!f->nodes || !f->kid_pool || !f->leaf)
            snprintf(why, sizeof(why), "out of memory for its schema");
        else if ((pool = f->kid_pool), build(f, &at, -1, 0, &pool, why, sizeof(why)) == 0) {
            if (at != n)
                snprintf(why, sizeof(why), "its schema lists %d elements, its tree %d", n, at);
            else
                check_groups(f, why, sizeof(why));
        }
    }
    if (rc == -2 || why[0]) {
        if (why[0])
            snprintf(err, errlen, "%s: %s", path, why);
        pq_close(f);
        return NULL;
    }
    return f;
}

void pq_close(struct pq_file *f)
{
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    for (int i = 0; i < f->n_nodes; i++)
        free(f->nodes[i].path);
    free(f->nodes);
    free(f->kid_pool);
    free(f->leaf);
    pq_meta_free(&f->meta);
    free(f->path);
    free(f);
}

const char *pq_path(const struct pq_file *f) { return f->path; }
int64_t pq_num_rows(const struct pq_file *f) { return f->meta.rows; }
int pq_row_groups(const struct pq_file *f) { return f->meta.n_groups; }
int64_t pq_group_rows(const struct pq_file *f, int group) { return f->meta.groups[group].rows; }

/* A chunk's pages start at its dictionary page, when it has one before its data. */
static int64_t chunk_start(const struct pq_chunk *c)
{
    return c->dict_off > 0 && c->dict_off < c->data_off ? c->dict_off : c->data_off;
}

void pq_group_span(const struct pq_file *f, int group, int64_t *from, int64_t *to)
{
    const struct pq_group *g = &f->meta.groups[group];
    *from = INT64_MAX;
    *to = 0;
    for (int i = 0; i < g->n_chunks; i++) {
        int64_t s = chunk_start(&g->chunks[i]), e = s + g->chunks[i].compressed;
        if (s < *from)
            *from = s;
        if (e > *to)
            *to = e;
    }
    if (*from > *to)
        *from = *to;
}

int pq_text_column(const struct pq_file *f, const char *dotted, char *err, size_t errlen)
{
    int node = 0;
    for (const char *p = dotted;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        int kid = pq_child(f, node, p, len);
        if (kid < 0) {
            char names[1000];
            pq_child_names(f, node, names, sizeof(names));
            snprintf(err, errlen, "%s: no column '%.*s'%s%s (%s there: %s)", f->path, (int)(p - dotted + len),
                     dotted, node ? " in " : "", node ? f->nodes[node].path : "", node ? "its fields" : "columns",
                     names);
            return -1;
        }
        node = kid;
        if (f->nodes[node].rep > 0) {
            snprintf(err, errlen, "%s: column '%s' is a list, not a string (a text column is one string a row)",
                     f->path, f->nodes[node].path);
            return -1;
        }
        if (!dot)
            break;
        p = dot + 1;
    }
    const struct pq_node *n = &f->nodes[node];
    if (n->column < 0) {
        snprintf(err, errlen, "%s: column '%s' is a %s, not a string", f->path, n->path,
                 n->el->converted == PQ_CT_LIST || n->el->logical == PQ_LT_LIST ? "list"
                 : n->el->converted == PQ_CT_MAP || n->el->logical == PQ_LT_MAP ? "map"
                                                                                : "struct");
        return -1;
    }
    const char *no = pq_leaf_refused(f, node);
    if (no || n->el->type != PQ_BYTE_ARRAY) {
        snprintf(err, errlen, "%s: column '%s' is %s, not a string", f->path, n->path, no ? no : pq_type_name(n->el->type));
        return -1;
    }
    return n->column;
}
