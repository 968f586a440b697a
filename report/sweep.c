/* The report's view of a sweep (sweep.h): the API's documents read into
 * the grid's axes (the variant, the settings, a group per cell) with their
 * labels, the groups' series, and the files and page pieces that the
 * tables (tables.c), the figures (figures.c) and the page (report.c) all
 * write through. It calls none of them. */
#include "report/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/text.h"
#include "spec/variant.h"

int rp_out_open(struct out *o)
{
    o->buf = NULL;
    o->len = 0;
    o->f = open_memstream(&o->buf, &o->len);
    return o->f ? 0 : -1;
}

/* Closes o and adds it to the files as name; -1 when writing failed. */
int rp_out_file(struct ctx *c, struct out *o, const char *name, const char *type)
{
    int bad = ferror(o->f);
    bad |= fclose(o->f) != 0;
    o->f = NULL;
    json_t *content = bad ? NULL : json_stringn(o->buf, o->len);
    free(o->buf);
    o->buf = NULL;
    if (!content || json_array_append_new(c->files, json_pack("{s:s,s:s,s:o}", "name", name, "type",
                                                              type, "content", content))) {
        snprintf(c->err, c->errlen, "cannot write %s: out of memory", name);
        return -1;
    }
    return 0;
}

double rp_jnum(const json_t *a, size_t i)
{
    const json_t *v = json_array_get(a, i);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* ---- the grid's axes ---- */

static void value_text(char *buf, size_t n, const json_t *v)
{
    if (json_is_object(v) || json_is_array(v)) {
        char *s = json_dumps(v, JSON_COMPACT);
        snprintf(buf, n, "%s", s ? s : "?");
        free(s);
    } else {
        text_value(buf, n, v);
    }
}

/* The paper's names for the norm presets (spec/variant.c's table). */
void rp_variant_label(const struct ctx *c, int v, char *buf, size_t n)
{
    const json_t *val = json_array_get(c->variants, (size_t)v);
    if (!c->vkey) {
        snprintf(buf, n, "all");
        return;
    }
    const char *label = !strcmp(c->vkey, "norm") && json_is_string(val)
                            ? variant_preset_label(json_string_value(val)) : NULL;
    if (label) {
        snprintf(buf, n, "%s", label);
        return;
    }
    char t[LABEL];
    value_text(t, sizeof t, val);
    if (!strcmp(c->vkey, "norm"))
        snprintf(buf, n, "%s", t);
    else
        snprintf(buf, n, "%.60s=%.90s", c->vkey, t);
}

int rp_group_of(const struct ctx *c, int s, int v) { return c->cell[s * c->nv + v]; }

/* The first group of setting s, for what its settings share (the model). */
static int first_group(const struct ctx *c, int s)
{
    for (int v = 0; v < c->nv; v++)
        if (rp_group_of(c, s, v) >= 0)
            return rp_group_of(c, s, v);
    return -1;
}

int rp_n_layers_of(const struct ctx *c, int g)
{
    return (int)json_integer_value(json_object_get(json_array_get(c->info, (size_t)g), "n_layers"));
}

/* A setting by its model's name when only the model's shape tells
 * settings apart (L12-d64), else by its key=value pairs (model.embed_std
 * is no part of the name). */
void rp_setting_label(const struct ctx *c, int s, char *buf, size_t n)
{
    int models = c->n_skeys > 0;
    for (int k = 0; k < c->n_skeys; k++)
        models &= !strncmp(c->skeys[k], "model", 5) && strcmp(c->skeys[k], "model.embed_std");
    const char *model =
        json_string_value(json_object_get(json_array_get(c->info, (size_t)first_group(c, s)), "model"));
    if (models && model) {
        snprintf(buf, n, "%s", model);
        return;
    }
    if (!c->n_skeys) {
        snprintf(buf, n, "%s", model ? model : "the sweep");
        return;
    }
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; k < c->n_skeys && len < n; k++) {
        char t[LABEL];
        value_text(t, sizeof t, json_object_get(json_array_get(c->settings, (size_t)s), c->skeys[k]));
        len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", k ? ", " : "", c->skeys[k], t);
    }
}

int rp_sweep_read(struct ctx *c, const json_t *doc)
{
    c->view = json_object_get(doc, "sweep");
    c->groups = json_object_get(c->view, "groups");
    c->info = json_object_get(doc, "groups");
    c->series = json_object_get(doc, "series");
    const json_t *grid = json_object_get(c->view, "grid");
    if (!json_is_object(grid) || !json_is_array(c->groups) ||
        json_array_size(c->info) != json_array_size(c->groups) || !json_is_object(c->series)) {
        snprintf(c->err, c->errlen, "the report needs the sweep view, its groups and their series");
        return -1;
    }
    const char *k;
    json_t *v;
    c->vkey = json_object_get(grid, "norm") ? "norm" : NULL;
    json_object_foreach((json_t *)grid, k, v) {
        if (!strcmp(k, "train.seed"))
            continue;
        if (!json_object_get(grid, "norm"))
            c->vkey = k;  /* the last key */
    }
    json_object_foreach((json_t *)grid, k, v) {
        if (!strcmp(k, "train.seed") || (c->vkey && !strcmp(k, c->vkey)))
            continue;
        if (c->n_skeys == MAX_KEYS) {
            snprintf(c->err, c->errlen, "the report draws grids of at most %d keys", MAX_KEYS);
            return -1;
        }
        c->skeys[c->n_skeys++] = k;
    }
    c->variants = c->vkey ? json_incref(json_object_get(grid, c->vkey)) : json_pack("[n]");
    c->settings = json_array();
    c->nv = (int)json_array_size(c->variants);
    size_t i;
    if (!c->variants || !c->settings)
        goto oom;
    json_t *g;
    json_array_foreach(c->groups, i, g) {
        json_t *p = json_deep_copy(json_object_get(g, "params"));
        if (!p)
            goto oom;
        if (c->vkey)
            json_object_del(p, c->vkey);
        size_t s, found = json_array_size(c->settings);
        json_t *x;
        json_array_foreach(c->settings, s, x) if (json_equal(x, p)) {
            found = s;
            break;
        }
        if (found == json_array_size(c->settings) && json_array_append(c->settings, p)) {
            json_decref(p);
            goto oom;
        }
        json_decref(p);
    }
    c->ns = (int)json_array_size(c->settings);
    c->cell = malloc((size_t)(c->ns * c->nv + 1) * sizeof *c->cell);
    if (!c->cell)
        goto oom;
    for (int j = 0; j < c->ns * c->nv; j++)
        c->cell[j] = -1;
    json_array_foreach(c->groups, i, g) {
        const json_t *params = json_object_get(g, "params");
        int vi = 0, si = -1;
        if (c->vkey)
            for (vi = 0; vi < c->nv; vi++)
                if (json_equal(json_array_get(c->variants, (size_t)vi), json_object_get(params, c->vkey)))
                    break;
        for (int s = 0; s < c->ns; s++) {
            int same = 1;
            for (int kk = 0; kk < c->n_skeys; kk++)
                same &= json_equal(json_object_get(json_array_get(c->settings, (size_t)s), c->skeys[kk]),
                                   json_object_get(params, c->skeys[kk]));
            if (same) {
                si = s;
                break;
            }
        }
        if (vi < c->nv && si >= 0)
            c->cell[si * c->nv + vi] = (int)i;
    }
    return 0;
oom:
    snprintf(c->err, c->errlen, "out of memory");
    return -1;
}

/* ---- a group's series (the API's columns) ---- */

int rp_col_of(const struct ctx *c, const char *name, int group, struct col *o)
{
    const json_t *g = NULL, *x;
    size_t i;
    memset(o, 0, sizeof *o);
    json_array_foreach(json_object_get(json_object_get(c->series, name), "groups"), i, x)
        if (json_integer_value(json_object_get(x, "group")) == group)
            g = x;
    if (!g)
        return -1;
    o->step = json_object_get(g, "step");
    o->layer = json_object_get(g, "layer");
    o->mean = json_object_get(g, "mean");
    o->sd = json_object_get(g, "sd");
    o->n = json_object_get(g, "n");
    o->len = json_array_size(o->step);
    return 0;
}

double rp_last_step(const struct col *o)
{
    double last = NAN;
    for (size_t i = 0; i < o->len; i++)
        if (!(rp_jnum(o->step, i) <= last))
            last = rp_jnum(o->step, i);
    return last;
}

/* The series' values at its last step, by layer (from layer `from` on). */
int rp_by_layer(const struct col *o, int from, double *x, double *y, double *e)
{
    double last = rp_last_step(o);
    int n = 0;
    for (size_t i = 0; i < o->len; i++)
        if (rp_jnum(o->step, i) == last && rp_jnum(o->layer, i) >= from) {
            x[n] = rp_jnum(o->layer, i);
            y[n] = rp_jnum(o->mean, i);
            e[n++] = rp_jnum(o->sd, i);
        }
    return n;
}

/* The series over steps: a scalar's, or one layer's (layer ≥ 0). */
int rp_over_steps(const struct col *o, int layer, double *x, double *y, double *e)
{
    int n = 0;
    for (size_t i = 0; i < o->len; i++)
        if (layer < 0 ? json_is_null(json_array_get(o->layer, i)) : rp_jnum(o->layer, i) == layer) {
            x[n] = rp_jnum(o->step, i);
            y[n] = rp_jnum(o->mean, i);
            e[n++] = rp_jnum(o->sd, i);
        }
    return n;
}

double rp_value_at(const struct col *o, double step, int layer)
{
    for (size_t i = 0; i < o->len; i++)
        if (rp_jnum(o->step, i) == step && rp_jnum(o->layer, i) == layer)
            return rp_jnum(o->mean, i);
    return NAN;
}

/* <tag>text</tag>, the text escaped */
void rp_element(FILE *f, const char *tag, const char *text)
{
    fprintf(f, "<%s>", tag);
    text_html(f, text);
    fprintf(f, "</%s>", tag);
}

void rp_data_link(FILE *f, const char *csv)
{
    fprintf(f, "<p class=\"data\">Data: <a href=\"%s\">%s</a></p>\n", csv, csv);
}

void rp_group_label(const struct ctx *c, int g, char *buf, size_t n)
{
    for (int s = 0; s < c->ns; s++)
        for (int v = 0; v < c->nv; v++)
            if (rp_group_of(c, s, v) == g) {
                char a[LABEL], b[LABEL];
                rp_setting_label(c, s, a, sizeof a);
                rp_variant_label(c, v, b, sizeof b);
                snprintf(buf, n, "%s %s", b, a);
                return;
            }
    snprintf(buf, n, "group %d", g);
}

void rp_sweep_free(struct ctx *c)
{
    json_decref(c->variants);
    json_decref(c->settings);
    free(c->cell);
}
