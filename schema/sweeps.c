/* A sweep's rows: the sweep, its cells with their final eval/ppl and
 * eval/loss, its later stages with their task scores, and the points a
 * replicate group averages. The groups, their statistics and the view the
 * API sends are views/sweep.c's. */
#include "schema/db.h"

#include <inttypes.h>
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

static int num_col(sqlite3_stmt *s, int i, double *v)
{
    if (sqlite3_column_type(s, i) == SQLITE_NULL)
        return 0;
    *v = sqlite3_column_double(s, i);
    return 1;
}

static void cell_free(struct sweep_cell *c)
{
    free(c->state);
    free(c->reason);
    free(c->name);
    free(c->params);
    free(c->tasks);
}

void sweep_rows_free(struct sweep_rows *r)
{
    for (int i = 0; i < r->n_cells; i++)
        cell_free(&r->cells[i]);
    for (int i = 0; i < r->n_stages; i++)
        cell_free(&r->stages[i]);
    free(r->cells);
    free(r->stages);
    free(r->body);
    memset(r, 0, sizeof *r);
}

/* A new zeroed cell at the end of *cells. */
static struct sweep_cell *push_cell(struct sweep_cell **cells, int *n, int *cap)
{
    if (*n == *cap) {
        int want = *cap ? 2 * *cap : 16;
        struct sweep_cell *more = realloc(*cells, (size_t)want * sizeof *more);
        if (!more)
            return NULL;
        *cells = more;
        *cap = want;
    }
    struct sweep_cell *c = &(*cells)[(*n)++];
    memset(c, 0, sizeof *c);
    return c;
}

/* The stage-0 cells (stages 0) or the later stages' (stages 1) into r. */
static int read_cells(struct conn *c, int64_t id, int stages, struct sweep_rows *r)
{
    sqlite3_stmt *s = db_stmt(c, stages ? q_stage_cells : q_sweep_cells);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, id);
    struct sweep_cell **cells = stages ? &r->stages : &r->cells;
    int *n = stages ? &r->n_stages : &r->n_cells, cap = 0, rc, bad = 0;
    while (!bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        struct sweep_cell *cell = push_cell(cells, n, &cap);
        if (!cell)
            return ST_ERROR;
        cell->experiment = sqlite3_column_int64(s, 0);
        cell->state = db_col_text(s, 1, &bad);
        cell->params = db_col_text(s, 2, &bad);
        if (stages) {
            cell->stage = sqlite3_column_int(s, 3);
            cell->reason = db_col_text(s, 4, &bad);
            cell->name = db_col_text(s, 5, &bad);
            cell->tasks = db_col_text(s, 6, &bad);
            continue;
        }
        cell->has_ppl = num_col(s, 3, &cell->ppl);
        cell->has_step = sqlite3_column_type(s, 4) != SQLITE_NULL;
        cell->step = sqlite3_column_int64(s, 4);
        cell->has_loss = num_col(s, 5, &cell->loss);
        cell->reason = db_col_text(s, 6, &bad);
    }
    return !bad && rc == SQLITE_DONE ? ST_OK : ST_ERROR;
}

int store_sweep(struct store *st, int64_t id, struct sweep_rows *out)
{
    struct conn *c = db_reader_get(st);
    int ret = ST_ERROR, bad = 0;
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s = db_stmt(c, q_sweep);
    if (!s)
        goto done;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        ret = ST_NOTFOUND;
    if (rc != SQLITE_ROW)
        goto done;
    out->created = sqlite3_column_double(s, 0);
    out->body = db_col_text(s, 1, &bad);
    if (bad)
        goto done;
    if ((ret = read_cells(c, id, 0, out)) == ST_OK)
        ret = read_cells(c, id, 1, out);
done:
    db_reader_put(st, c);
    if (ret != ST_OK)
        sweep_rows_free(out);
    return ret;
}

/* exps as a JSON array's text, for json_each. */
static char *id_list(const int64_t *exps, int n)
{
    size_t cap = 3 + (size_t)n * 21, len = 0;  /* "[", n ids with their commas, "]", NUL */
    char *t = malloc(cap);
    if (!t)
        return NULL;
    t[len++] = '[';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, "%s%" PRId64, i ? "," : "", exps[i]);
    snprintf(t + len, cap - len, "]");
    return t;
}

int store_points_of(struct store *st, const int64_t *exps, int n, const char *name,
                    store_point_fn fn, void *ctx)
{
    char *ids = id_list(exps, n);
    struct conn *c = db_reader_get(st);
    int ret = ST_ERROR, rc = SQLITE_ERROR;
    sqlite3_stmt *s = db_stmt(c, q_group_series);
    if (!s || !ids)
        goto done;
    sqlite3_bind_text(s, 1, ids, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int is_null = sqlite3_column_type(s, 2) == SQLITE_NULL;
        if (fn(ctx, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), is_null,
               is_null ? 0 : sqlite3_column_double(s, 2)))
            break;
    }
    ret = rc == SQLITE_DONE ? ST_OK : ST_ERROR;
done:
    db_reader_put(st, c);
    free(ids);
    return ret;
}
