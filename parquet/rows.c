/* Rows as JSON objects (parquet.h's pq_rows_*): each top-level column asked
 * for becomes a field, assembled from its leaf columns' levels as
 * Hugging Face datasets' to_json writes it. The shapes read: a value; a
 * LIST of values (3-level as pyarrow writes it, 2-level as older writers
 * did, or a bare repeated value); a struct of those. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "parquet/column.h"

/* a list longer than this is an error: no dataset row holds one, and a
 * few bytes of RLE levels could otherwise describe billions of nulls */
#define PQ_MAX_LIST (1 << 22)

enum kind { F_VALUE, F_LIST, F_STRUCT };

struct field {
    enum kind kind;
    int node;           /* the field's own node */
    int leaf;           /* F_VALUE, F_LIST: the leaf node */
    int def_self;       /* the field is not null from this level on */
    int def_elem;       /* F_LIST: a list has an element from this level on */
    struct field *kids; /* F_STRUCT */
    int n_kids;
    struct pq_col *cur; /* the leaf's cursor in the current row group */
};

struct pq_rows {
    struct pq_file *f;
    struct field *fields;
    int n_fields;
    int group;          /* the row group read; -1 before the first */
    int64_t row, rows;  /* in the group */
    int64_t file_row;   /* the next row's index in the file, from 0 */
};

static int is_list(const struct pq_element *e) { return e->converted == PQ_CT_LIST || e->logical == PQ_LT_LIST; }
static int is_map(const struct pq_element *e)
{
    return e->converted == PQ_CT_MAP || e->converted == PQ_CT_MAP_KEY_VALUE || e->logical == PQ_LT_MAP;
}

static int refuse(const struct pq_file *f, int node, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: column '%s' is %s, which cod does not read", f->path, f->nodes[node].path, what);
    return -1;
}

static int leaf_ok(const struct pq_file *f, int node, char *err, size_t errlen)
{
    const char *no = pq_leaf_refused(f, node);
    return no ? refuse(f, node, no, err, errlen) : 0;
}

/* What node is as a field; in_struct: a field of a struct (which may hold
 * no struct of its own). */
static int classify(const struct pq_file *f, int node, int in_struct, struct field *out, char *err, size_t errlen)
{
    const struct pq_node *n = &f->nodes[node];
    *out = (struct field){.node = node, .leaf = -1, .def_self = n->def};
    if (n->column >= 0 && n->el->repetition != PQ_REPEATED) {
        out->kind = F_VALUE;
        out->leaf = node;
        return leaf_ok(f, node, err, errlen);
    }
    if (n->column >= 0) { /* a bare repeated value: a list that is never null */
        out->kind = F_LIST;
        out->leaf = node;
        out->def_self = f->nodes[n->parent].def;
        out->def_elem = n->def;
        return leaf_ok(f, node, err, errlen);
    }
    if (is_map(n->el))
        return refuse(f, node, "a MAP", err, errlen);
    if (is_list(n->el)) {
        if (n->n_kids != 1 || f->nodes[n->kids[0]].el->repetition != PQ_REPEATED)
            return refuse(f, node, "a LIST without its one repeated field", err, errlen);
        const struct pq_node *r = &f->nodes[n->kids[0]];
        int elem = n->kids[0];
        if (r->column < 0) {
            if (r->n_kids != 1)
                return refuse(f, node, "a list of structs (nesting deeper than one level)", err, errlen);
            elem = r->kids[0];
            if (f->nodes[elem].column < 0 || f->nodes[elem].el->repetition == PQ_REPEATED)
                return refuse(f, node, "a list of lists or structs (nesting deeper than one level)", err, errlen);
        }
        out->kind = F_LIST;
        out->leaf = elem;
        out->def_elem = r->def;
        return leaf_ok(f, elem, err, errlen);
    }
    if (n->el->repetition == PQ_REPEATED)
        return refuse(f, node, "a repeated group (a list of structs)", err, errlen);
    if (in_struct)
        return refuse(f, node, "a struct inside a struct (nesting deeper than one level)", err, errlen);
    if (n->n_kids < 1)
        return refuse(f, node, "a struct without fields", err, errlen);
    out->kind = F_STRUCT;
    if (!(out->kids = calloc((size_t)n->n_kids, sizeof(*out->kids)))) {
        snprintf(err, errlen, "%s: out of memory", f->path);
        return -1;
    }
    for (int i = 0; i < n->n_kids; i++) {
        out->n_kids++;
        if (classify(f, n->kids[i], 1, &out->kids[i], err, errlen) != 0)
            return -1;
    }
    return 0;
}

static void free_field(struct field *x)
{
    for (int i = 0; i < x->n_kids; i++)
        free_field(&x->kids[i]);
    free(x->kids);
    pq_col_close(x->cur);
    x->cur = NULL;
}

static int row_error(const struct pq_rows *r, const struct field *x, const char *why, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: row %lld, column '%s': %s", r->f->path, (long long)r->file_row,
             r->f->nodes[x->node].path, why);
    return -1;
}

/* A leaf's value as JSON. */
static json_t *value_json(const struct pq_rows *r, const struct field *x, const struct pq_value *v, char *err,
                          size_t errlen)
{
    const struct pq_element *e = r->f->nodes[x->leaf].el;
    json_t *j = NULL;
    switch (e->type) {
    case PQ_BYTE_ARRAY:
        if (!utf8_valid(v->s, v->len)) {
            row_error(r, x, "a string that is not UTF-8", err, errlen);
            return NULL;
        }
        j = json_stringn_nocheck(v->s, v->len);
        break;
    case PQ_INT32: {
        int uns = e->logical == PQ_LT_INTEGER ? !e->int_signed
                                              : e->converted >= PQ_CT_UINT_8 && e->converted < PQ_CT_UINT_64;
        j = json_integer(uns ? (json_int_t)(uint32_t)v->i : (json_int_t)v->i);
        break;
    }
    case PQ_INT64:
        j = json_integer((json_int_t)v->i);
        break;
    case PQ_BOOLEAN:
        j = json_boolean(v->i);
        break;
    default: /* FLOAT, DOUBLE: NaN and the infinities as null, as to_json writes them */
        j = isfinite(v->d) ? json_real(v->d) : json_null();
    }
    if (!j)
        snprintf(err, errlen, "%s: out of memory", r->f->path);
    return j;
}

/* o[x's name] = v (taken). */
static int set_field(const struct pq_rows *r, json_t *o, const struct field *x, json_t *v, char *err, size_t errlen)
{
    if (json_object_set_new(o, r->f->nodes[x->node].el->name, v) == 0)
        return 0;
    return row_error(r, x, "a name that is not UTF-8", err, errlen);
}

/* The next entry of a leaf, which must start a row. */
static int first_entry(struct pq_rows *r, struct field *x, struct pq_value *v, char *err, size_t errlen)
{
    int k = pq_col_next(x->cur, v, err, errlen);
    if (k < 0)
        return -1;
    if (k == 0)
        return row_error(r, x, "its values end before the row group's rows", err, errlen);
    if (v->rep != 0)
        return row_error(r, x, "a row that starts inside a list", err, errlen);
    return 0;
}

/* A field of the row; *def: the level of its first entry (a struct's first
 * field tells whether the struct is there). */
static json_t *field_json(struct pq_rows *r, struct field *x, int *def, char *err, size_t errlen)
{
    struct pq_value v;
    if (x->kind == F_STRUCT) {
        json_t *o = json_object();
        int first = 0;
        if (!o) {
            snprintf(err, errlen, "%s: out of memory", r->f->path);
            return NULL;
        }
        for (int i = 0; i < x->n_kids; i++) {
            int d;
            json_t *k = field_json(r, &x->kids[i], &d, err, errlen);
            if (!k || set_field(r, o, &x->kids[i], k, err, errlen) != 0) {
                json_decref(o);
                return NULL;
            }
            if (i == 0)
                first = d;
        }
        *def = first;
        if (first < x->def_self) {
            json_decref(o);
            return json_null();
        }
        return o;
    }
    if (first_entry(r, x, &v, err, errlen) != 0)
        return NULL;
    *def = v.def;
    if (v.def < x->def_self)
        return json_null();
    if (x->kind == F_VALUE)
        return v.has ? value_json(r, x, &v, err, errlen) : json_null();
    json_t *a = json_array();
    if (!a) {
        snprintf(err, errlen, "%s: out of memory", r->f->path);
        return NULL;
    }
    if (v.def < x->def_elem) {
        int rep, k = pq_col_peek(x->cur, &rep, err, errlen);
        if (k < 0 || (k == 1 && rep != 0)) {
            if (k == 1)
                row_error(r, x, "an empty list with elements", err, errlen);
            json_decref(a);
            return NULL;
        }
        return a;
    }
    for (size_t n = 0;; n++) {
        if (n == PQ_MAX_LIST) {
            row_error(r, x, "a list of more than 4,194,304 elements", err, errlen);
            json_decref(a);
            return NULL;
        }
        json_t *e = v.has ? value_json(r, x, &v, err, errlen) : json_null();
        if (!e || json_array_append_new(a, e) != 0) {
            json_decref(a);
            return NULL;
        }
        int rep, k = pq_col_peek(x->cur, &rep, err, errlen);
        if (k < 0) {
            json_decref(a);
            return NULL;
        }
        if (k == 0 || rep == 0)
            return a;
        if (pq_col_next(x->cur, &v, err, errlen) != 1 || v.def < x->def_elem) {
            if (v.def < x->def_elem)
                row_error(r, x, "a list element below the list's level", err, errlen);
            json_decref(a);
            return NULL;
        }
    }
}

/* Opens (group >= 0) or closes (group < 0) the cursors of every field's leaves. */
static int cursors(struct pq_rows *r, struct field *x, int group, char *err, size_t errlen)
{
    for (int i = 0; i < x->n_kids; i++)
        if (cursors(r, &x->kids[i], group, err, errlen) != 0)
            return -1;
    if (x->kind == F_STRUCT)
        return 0;
    if (group < 0) {
        pq_col_close(x->cur);
        x->cur = NULL;
        return 0;
    }
    x->cur = pq_col_open(r->f, group, r->f->nodes[x->leaf].column, err, errlen);
    return x->cur ? 0 : -1;
}

/* After a row group's rows: every leaf must be at its chunk's end. */
static int check_ends(struct pq_rows *r, struct field *x, char *err, size_t errlen)
{
    for (int i = 0; i < x->n_kids; i++)
        if (check_ends(r, &x->kids[i], err, errlen) != 0)
            return -1;
    if (x->kind == F_STRUCT)
        return 0;
    struct pq_value v;
    int k = pq_col_next(x->cur, &v, err, errlen);
    if (k > 0)
        snprintf(err, errlen, "%s: more values than the row group's %lld rows", pq_col_where(x->cur),
                 (long long)r->rows);
    return k == 0 ? 0 : -1;
}

struct pq_rows *pq_rows_open(const char *path, const char *const *columns, size_t n, char *err, size_t errlen)
{
    struct pq_rows *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    r->group = -1;
    if (!(r->f = pq_open(path, err, errlen))) {
        free(r);
        return NULL;
    }
    const struct pq_node *root = &r->f->nodes[0];
    size_t want = n ? n : (size_t)root->n_kids;
    if (!(r->fields = calloc(want ? want : 1, sizeof(*r->fields)))) {
        snprintf(err, errlen, "%s: out of memory", path);
        pq_rows_close(r);
        return NULL;
    }
    for (size_t i = 0; i < want; i++) {
        int node = n ? pq_child(r->f, 0, columns[i], strlen(columns[i])) : root->kids[i];
        if (node < 0) {
            char names[1000];
            pq_child_names(r->f, 0, names, sizeof(names));
            snprintf(err, errlen, "%s: no column '%s' (columns there: %s)", path, columns[i], names);
            pq_rows_close(r);
            return NULL;
        }
        r->n_fields++;
        if (classify(r->f, node, 0, &r->fields[i], err, errlen) != 0) {
            pq_rows_close(r);
            return NULL;
        }
    }
    return r;
}

int pq_rows_next(struct pq_rows *r, json_t **row, char *err, size_t errlen)
{
    *row = NULL;
    if (r->group >= r->f->meta.n_groups)
        return 0;
    while (r->group < 0 || r->row == r->rows) {
        if (r->group >= 0)
            for (int i = 0; i < r->n_fields; i++) {
                if (check_ends(r, &r->fields[i], err, errlen) != 0)
                    return -1;
                cursors(r, &r->fields[i], -1, err, errlen);
            }
        if (r->group + 1 >= r->f->meta.n_groups) {
            r->group = r->f->meta.n_groups;
            r->row = r->rows = 0;
            return 0;
        }
        r->group++;
        r->row = 0;
        r->rows = r->f->meta.groups[r->group].rows;
        for (int i = 0; i < r->n_fields; i++)
            if (cursors(r, &r->fields[i], r->group, err, errlen) != 0)
                return -1;
    }
    json_t *o = json_object();
    if (!o) {
        snprintf(err, errlen, "%s: out of memory", r->f->path);
        return -1;
    }
    for (int i = 0; i < r->n_fields; i++) {
        int def;
        json_t *v = field_json(r, &r->fields[i], &def, err, errlen);
        if (!v || set_field(r, o, &r->fields[i], v, err, errlen) != 0) {
            json_decref(o);
            return -1;
        }
    }
    r->row++;
    r->file_row++;
    *row = o;
    return 1;
}

void pq_rows_close(struct pq_rows *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n_fields; i++)
        free_field(&r->fields[i]);
    free(r->fields);
    pq_close(r->f);
    free(r);
}
