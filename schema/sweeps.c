/* A sweep's views: its grid with every cell, the cells' replicate groups
 * and the paired comparisons between groups (schema/replicates.c), and a
 * metric averaged over each group's replicates, step by step and layer by
 * layer (schema/stats.c). */
#include "schema/db.h"
#include "schema/replicates.h"
#include "schema/stats.h"
#include "schema/tasks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char q_sweep[] =
    "SELECT created, body FROM sweeps WHERE id = ?1";
static const char q_sweep_cells[] =
    "SELECT e.id, e.state, e.sweep_cell, p.value, p.step, l.value, e.reason FROM experiments e"
    " LEFT JOIN latest p ON p.experiment_id = e.id AND p.name = 'eval/ppl'"
    " LEFT JOIN latest l ON l.experiment_id = e.id AND l.name = 'eval/loss'"
    " WHERE e.sweep_id = ?1 AND e.stage = 0 ORDER BY e.id";
/* a sweep's later stages, each with its tasks' scores as a JSON object of
 * the latest task/NAME/MEASURE values */
static const char q_stage_cells[] =
    "SELECT e.id, e.state, e.sweep_cell, e.stage, e.reason, e.name,"
    " (SELECT json_group_object(l.name, l.value) FROM latest l"
    "  WHERE l.experiment_id = e.id AND l.name LIKE 'task/%')"
    " FROM experiments e WHERE e.sweep_id = ?1 AND e.stage > 0 ORDER BY e.id";
/* ?1: a JSON array of experiment ids */
static const char q_group_series[] =
    "SELECT step, layer, value FROM metrics"
    " WHERE name = ?2 AND experiment_id IN (SELECT value FROM json_each(?1))"
    " ORDER BY step, layer";

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

static json_t *stage_cells(struct conn *c, int64_t id)
{
    json_t *stages = json_array();
    sqlite3_stmt *s = db_stmt(c, q_stage_cells);
    if (!stages || !s) {
        json_decref(stages);
        return NULL;
    }
    sqlite3_bind_int64(s, 1, id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        json_t *cell = json_loads((const char *)sqlite3_column_text(s, 2), 0, NULL);
        json_array_append_new(
            stages, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "experiment", db_col_json(s, 0),
                              "state", db_col_json(s, 1), "params", cell ? cell : json_null(),
                              "stage", db_col_json(s, 3), "reason", db_col_json(s, 4), "name",
                              db_col_json(s, 5), "tasks",
                              task_scores((const char *)sqlite3_column_text(s, 6))));
    }
    if (rc != SQLITE_DONE) {
        json_decref(stages);
        return NULL;
    }
    return stages;
}

static int sweep_view(struct conn *c, int64_t id, json_t **out)
{
    int ret = ST_ERROR;
    json_t *body = NULL, *cells = json_array(), *groups = NULL, *comparisons = NULL;
    json_t *stages = NULL, *finetune = NULL;
    sqlite3_stmt *s = db_stmt(c, q_sweep);
    if (!s || !cells)
        goto done;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        ret = ST_NOTFOUND;
    if (rc != SQLITE_ROW)
        goto done;
    double created = sqlite3_column_double(s, 0);
    body = json_loads((const char *)sqlite3_column_text(s, 1), 0, NULL);
    if (!(s = db_stmt(c, q_sweep_cells)))
        goto done;
    sqlite3_bind_int64(s, 1, id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        json_t *cell = json_loads((const char *)sqlite3_column_text(s, 2), 0, NULL);
        json_array_append_new(cells, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "experiment",
                                               db_col_json(s, 0), "state", db_col_json(s, 1), "params",
                                               cell ? cell : json_null(), "eval/ppl",
                                               db_col_json(s, 3), "step", db_col_json(s, 4),
                                               "eval/loss", db_col_json(s, 5), "reason",
                                               db_col_json(s, 6)));
    }
    if (rc != SQLITE_DONE || replicates_group(cells, &groups, &comparisons) != 0 ||
        !(stages = stage_cells(c, id)) || tasks_table(stages, &finetune) != 0)
        goto done;
    json_t *grid = body ? json_object_get(body, "grid") : NULL;
    /* the sweep's own name, else its base spec's */
    const char *name = json_string_value(json_object_get(body, "name"));
    name = name ? name : json_string_value(json_object_get(json_object_get(body, "base"), "name"));
    int seeded = grid && json_object_get(grid, REPLICATE_KEY);
    *out = json_pack("{s:I,s:o,s:f,s:O,s:o,s:O,s:O,s:O,s:O,s:O}", "id", (json_int_t)id, "name",
                     name ? json_string(name) : json_null(), "created", created, "grid", grid ? grid : json_null(), "replicates",
                     seeded ? json_string(REPLICATE_KEY) : json_null(), "cells", cells, "groups",
                     groups, "comparisons", comparisons, "stages", stages, "finetune", finetune);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(body);
    json_decref(cells);
    json_decref(groups);
    json_decref(comparisons);
    json_decref(stages);
    json_decref(finetune);
    return ret;
}

int store_sweep(struct store *st, int64_t id, json_t **out)
{
    struct conn *c = db_reader_get(st);
    int ret = sweep_view(c, id, out);
    db_reader_put(st, c);
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

/* name's points of the group's averaged experiments, gathered per (step,
 * layer) into the mean, the standard deviation and the number of finite
 * values (a non-finite point is left out, never averaged as a number).
 * Every every-th step is kept, and the last: a thinned curve ends where
 * the runs did. */
static int group_series(struct conn *c, json_t *g, const char *name, long every, json_t **out)
{
    json_t *ids = json_object_get(g, "averaged");
    char *idtext = json_dumps(ids, JSON_COMPACT);
    size_t cap = json_array_size(ids) + 1;
    double *v = malloc(cap * sizeof *v);
    /* kept: the rows out; pending: the current step's rows when it is not
     * kept, which go out only if it turns out to be the last */
    struct columns kept = {0}, pending = {0};
    int ret = ST_ERROR;
    sqlite3_stmt *s = db_stmt(c, q_group_series);
    if (!s || !idtext || !v || columns_new(&kept) || columns_new(&pending))
        goto done;
    sqlite3_bind_text(s, 1, idtext, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
    /* rows come sorted by (step, layer): a key's values are consecutive */
    json_int_t step = -1, layer = -1;
    long k = -1;
    int n = 0, have = 0, keep = 0, bad = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        json_int_t st = sqlite3_column_int64(s, 0), ly = sqlite3_column_int64(s, 1);
        if (have && (st != step || ly != layer)) {
            bad |= put_row(keep ? &kept : &pending, step, layer, v, n);
            n = 0;
        }
        if (!have || st != step) {
            keep = ++k % every == 0;
            for (int i = 0; i < 5; i++)
                bad |= json_array_clear(pending.a[i]);
        }
        step = st;
        layer = ly;
        have = 1;
        if (sqlite3_column_type(s, 2) != SQLITE_NULL && (size_t)n < cap)
            v[n++] = sqlite3_column_double(s, 2);
    }
    if (have)
        bad |= put_row(keep ? &kept : &pending, step, layer, v, n);
    for (int i = 0; i < 5 && !keep; i++)
        bad |= json_array_extend(kept.a[i], pending.a[i]);
    if (rc != SQLITE_DONE || bad)
        goto done;
    *out = json_pack("{s:O,s:O,s:O}", "group", json_object_get(g, "group"), "params",
                     json_object_get(g, "params"), "experiments", ids);
    for (int i = 0; *out && i < 5; i++)
        if (json_object_set(*out, column_names[i], kept.a[i])) {
            json_decref(*out);
            *out = NULL;
        }
    ret = *out ? ST_OK : ST_ERROR;
done:
    free(idtext);
    free(v);
    columns_free(&kept);
    columns_free(&pending);
    return ret;
}

int store_sweep_series(struct store *st, int64_t id, const json_t *view, const char *name, long every,
                       json_t **out)
{
    struct conn *c = db_reader_get(st);
    json_t *own = NULL, *series = json_array(), *g;
    int ret = view ? ST_OK : sweep_view(c, id, &own);
    view = view ? view : own;
    size_t i;
    if (ret != ST_OK || !series)
        goto done;
    json_array_foreach(json_object_get(view, "groups"), i, g) {
        json_t *one;
        if ((ret = group_series(c, g, name, every, &one)) != ST_OK)
            goto done;
        json_array_append_new(series, one);
    }
    *out = json_pack("{s:I,s:s,s:O}", "sweep", (json_int_t)id, "name", name, "groups", series);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(own);
    json_decref(series);
    db_reader_put(st, c);
    return ret;
}
