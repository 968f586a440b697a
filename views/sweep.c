/* A sweep's views from the store's rows: see sweep.h. */
#include "views/sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/replicates.h"
#include "views/stats.h"
#include "views/tasks.h"

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* A JSON text column parsed; null when there is none or it does not parse. */
static json_t *parsed(const char *text)
{
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    return v ? v : json_null();
}

/* {"task/boolq/acc": v, ...} as {"boolq": {"acc": v}, ...} */
static json_t *task_scores(const char *text)
{
    json_t *flat = text ? json_loads(text, 0, NULL) : NULL, *out = json_object(), *v;
    const char *k;
    json_object_foreach(flat, k, v) {
        const char *task = k + 5, *slash = strrchr(task, '/');
        if (!slash || slash == task)
            continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(slash - task), task);
        json_t *t = json_object_get(out, name);
        if (!t)
            json_object_set_new(out, name, t = json_object());
        json_object_set(t, slash + 1, v);
    }
    json_decref(flat);
    return out;
}

static json_t *cell_view(const struct sweep_cell *c)
{
    return json_pack("{s:I,s:o,s:o,s:o,s:o,s:o,s:o}", "experiment", (json_int_t)c->experiment,
                     "state", str_or_null(c->state), "params", parsed(c->params), "eval/ppl",
                     c->has_ppl ? json_real(c->ppl) : json_null(), "step",
                     c->has_step ? json_integer(c->step) : json_null(), "eval/loss",
                     c->has_loss ? json_real(c->loss) : json_null(), "reason",
                     str_or_null(c->reason));
}

static json_t *stage_view(const struct sweep_cell *c)
{
    return json_pack("{s:I,s:o,s:o,s:i,s:o,s:o,s:o}", "experiment", (json_int_t)c->experiment,
                     "state", str_or_null(c->state), "params", parsed(c->params), "stage",
                     c->stage, "reason", str_or_null(c->reason), "name", str_or_null(c->name),
                     "tasks", task_scores(c->tasks));
}

/* The rows' cells (stages: the later stages') as the view lists them. */
static json_t *cells_view(const struct sweep_rows *r, int stages)
{
    const struct sweep_cell *cells = stages ? r->stages : r->cells;
    int n = stages ? r->n_stages : r->n_cells;
    json_t *arr = json_array();
    for (int i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, stages ? stage_view(&cells[i]) : cell_view(&cells[i]))) {
            json_decref(arr);
            arr = NULL;
        }
    return arr;
}

int views_sweep(struct store *st, int64_t id, json_t **out)
{
    struct sweep_rows r;
    int ret = store_sweep(st, id, &r);
    if (ret != ST_OK)
        return ret;
    ret = ST_ERROR;
    json_t *body = r.body ? json_loads(r.body, 0, NULL) : NULL, *cells = cells_view(&r, 0);
    json_t *stages = cells_view(&r, 1), *groups = NULL, *comparisons = NULL, *finetune = NULL;
    if (!cells || !stages || replicates_group(cells, &groups, &comparisons) != 0 ||
        tasks_table(stages, &finetune) != 0)
        goto done;
    json_t *grid = body ? json_object_get(body, "grid") : NULL;
    /* the sweep's own name, else its base spec's */
    const char *name = json_string_value(json_object_get(body, "name"));
    name = name ? name : json_string_value(json_object_get(json_object_get(body, "base"), "name"));
    int seeded = grid && json_object_get(grid, REPLICATE_KEY);
    *out = json_pack("{s:I,s:o,s:f,s:O,s:o,s:O,s:O,s:O,s:O,s:O}", "id", (json_int_t)id, "name",
                     name ? json_string(name) : json_null(), "created", r.created, "grid",
                     grid ? grid : json_null(), "replicates",
                     seeded ? json_string(REPLICATE_KEY) : json_null(), "cells", cells, "groups",
                     groups, "comparisons", comparisons, "stages", stages, "finetune", finetune);
    ret = *out ? ST_OK : ST_ERROR;
done:
    sweep_rows_free(&r);
    json_decref(body);
    json_decref(cells);
    json_decref(groups);
    json_decref(comparisons);
    json_decref(stages);
    json_decref(finetune);
    return ret;
}

/* Columns of one group's series, a row per (step, layer). */
struct columns {
    json_t *a[5];  /* step, layer, mean, sd, n */
};
static const char *const column_names[5] = {"step", "layer", "mean", "sd", "n"};

static int columns_new(struct columns *c)
{
    int bad = 0;
    for (int i = 0; i < 5; i++)
        bad |= !(c->a[i] = json_array());
    return bad ? -1 : 0;
}

static void columns_free(struct columns *c)
{
    for (int i = 0; i < 5; i++)
        json_decref(c->a[i]);
}

static int put_row(struct columns *c, json_int_t step, json_int_t layer, const double *v, int n)
{
    struct summary s;
    stats_summary(v, n, &s);
    return json_array_append_new(c->a[0], json_integer(step)) ||
           json_array_append_new(c->a[1], layer < 0 ? json_null() : json_integer(layer)) ||
           json_array_append_new(c->a[2], n ? json_real(s.mean) : json_null()) ||
           json_array_append_new(c->a[3], isfinite(s.sd) ? json_real(s.sd) : json_null()) ||
           json_array_append_new(c->a[4], json_integer(n));
}

/* A group's series as its points arrive, sorted by (step, layer): a key's
 * values are consecutive. kept: the rows out; pending: the current step's
 * rows when it is not kept, which go out only if it turns out to be the last. */
struct series {
    struct columns kept, pending;
    double *v;
    size_t cap;
    long every, k;
    json_int_t step, layer;
    int n, have, keep, bad;
};

static int add_point(void *ctx, int64_t st, int64_t ly, int is_null, double value)
{
    struct series *s = ctx;
    if (s->have && (st != s->step || ly != s->layer)) {
        s->bad |= put_row(s->keep ? &s->kept : &s->pending, s->step, s->layer, s->v, s->n);
        s->n = 0;
    }
    if (!s->have || st != s->step) {
        s->keep = ++s->k % s->every == 0;
        for (int i = 0; i < 5; i++)
            s->bad |= json_array_clear(s->pending.a[i]);
    }
    s->step = st;
    s->layer = ly;
    s->have = 1;
    if (!is_null && (size_t)s->n < s->cap)
        s->v[s->n++] = value;
    return 0;
}

/* name's points of the group's averaged experiments, gathered per (step,
 * layer) into the mean, the standard deviation and the number of finite
 * values (a non-finite point is left out, never averaged as a number).
 * Every every-th step is kept, and the last: a thinned curve ends where
 * the runs did. */
static int group_series(struct store *st, const json_t *g, const char *name, long every,
                        json_t **out)
{
    json_t *ids = json_object_get(g, "averaged"), *id;
    size_t n = json_array_size(ids), i;
    int64_t *exps = malloc((n + 1) * sizeof *exps);
    struct series s = {.cap = n + 1, .every = every, .k = -1, .step = -1, .layer = -1};
    s.v = malloc(s.cap * sizeof *s.v);
    int ret = ST_ERROR;
    if (!exps || !s.v || columns_new(&s.kept) || columns_new(&s.pending))
        goto done;
    json_array_foreach(ids, i, id) exps[i] = json_integer_value(id);
    if ((ret = store_points_of(st, exps, (int)n, name, add_point, &s)) != ST_OK)
        goto done;
    ret = ST_ERROR;
    if (s.have)
        s.bad |= put_row(s.keep ? &s.kept : &s.pending, s.step, s.layer, s.v, s.n);
    for (int c = 0; c < 5 && !s.keep; c++)
        s.bad |= json_array_extend(s.kept.a[c], s.pending.a[c]);
    if (s.bad)
        goto done;
    *out = json_pack("{s:O,s:O,s:O}", "group", json_object_get(g, "group"), "params",
                     json_object_get(g, "params"), "experiments", ids);
    for (int c = 0; *out && c < 5; c++)
        if (json_object_set(*out, column_names[c], s.kept.a[c])) {
            json_decref(*out);
            *out = NULL;
        }
    ret = *out ? ST_OK : ST_ERROR;
done:
    free(exps);
    free(s.v);
    columns_free(&s.kept);
    columns_free(&s.pending);
    return ret;
}

int views_sweep_series(struct store *st, int64_t id, const json_t *view, const char *name,
                       long every, json_t **out)
{
    json_t *own = NULL, *series = json_array(), *g;
    int ret = view ? ST_OK : views_sweep(st, id, &own);
    view = view ? view : own;
    size_t i;
    if (ret == ST_OK && !series)
        ret = ST_ERROR;
    if (ret != ST_OK)
        goto done;
    json_array_foreach(json_object_get(view, "groups"), i, g) {
        json_t *one = NULL;
        if ((ret = group_series(st, g, name, every, &one)) != ST_OK)
            goto done;
        json_array_append_new(series, one);
    }
    *out = json_pack("{s:I,s:s,s:O}", "sweep", (json_int_t)id, "name", name, "groups", series);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(own);
    json_decref(series);
    return ret;
}
