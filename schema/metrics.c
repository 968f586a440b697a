/* Metric storage: a run's reported points and log lines (idempotent: the
 * same name, step and layer rewrites its row; the newest value of each
 * scalar kept in `latest`), and the series, per-layer values and logs read
 * back for the API. */
#include "schema/db.h"

#include <string.h>

static const char q_put_latest[] =
    "INSERT INTO latest (experiment_id, name, step, value) VALUES (?1, ?2, ?3, ?4)"
    " ON CONFLICT DO UPDATE SET step = excluded.step, value = excluded.value"
    " WHERE excluded.step >= latest.step";
static const char q_put_metric[] =
    "INSERT INTO metrics (experiment_id, name, step, layer, value)"
    " VALUES (?1, ?2, ?3, ?4, ?5)"
    " ON CONFLICT DO UPDATE SET value = excluded.value";
static const char q_put_log[] =
    "INSERT OR IGNORE INTO logs (experiment_id, run_id, seq, ts, line)"
    " VALUES (?1, ?2, ?3, ?4, ?5)";
static const char q_exists[] =
    "SELECT 1 FROM experiments WHERE id = ?1";
static const char q_series[] =
    "SELECT name, step, value FROM metrics WHERE experiment_id = ?1 AND layer = -1"
    " AND (?2 IS NULL OR name = ?2) AND step >= ?3 AND step <= ?4 ORDER BY name, step";
static const char q_newest_layer_step[] =
    "SELECT max(step) FROM metrics WHERE experiment_id = ?1 AND name = ?2"
    " AND layer >= 0";
static const char q_layers[] =
    "SELECT layer, value FROM metrics WHERE experiment_id = ?1 AND name = ?2"
    " AND step = ?3 AND layer >= 0 ORDER BY layer";
static const char q_layer_history[] =
    "SELECT step, layer, value FROM metrics WHERE experiment_id = ?1"
    " AND name = ?2 AND layer >= 0 ORDER BY step, layer";
static const char q_logs[] =
    "SELECT id, run_id, ts, line FROM logs WHERE experiment_id = ?1 AND id > ?2"
    " ORDER BY id LIMIT ?3";

static int put_latest(struct conn *c, int64_t exp, const struct metric_point *p)
{
    sqlite3_stmt *s = db_stmt(c, q_put_latest);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, p->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, p->step);
    if (p->is_null)
        sqlite3_bind_null(s, 4);
    else
        sqlite3_bind_double(s, 4, p->value);
    return db_exec(c, s);
}

static int report(struct store *st, int64_t run, const struct metric_point *pts, int n,
                  const struct log_line *lines, int nl)
{
    struct conn *c = &st->writer;
    double now;
    struct run_row r;
    int rc = db_run_row(st, run, &now, &r);
    if (rc != ST_OK)
        return rc;
    if (!r.active)
        return ST_CONFLICT;
    long max_step = 0;
    /* The newest point of each scalar name in the batch: only those touch
     * the latest table (a batch is usually one name over many steps). */
    enum { MAX_NAMES = 64 };
    int newest[MAX_NAMES], n_names = 0;
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *s = db_stmt(c, q_put_metric);
        if (!s)
            return ST_ERROR;
        sqlite3_bind_int64(s, 1, r.exp);
        sqlite3_bind_text(s, 2, pts[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 3, pts[i].step);
        sqlite3_bind_int(s, 4, pts[i].layer);
        if (pts[i].is_null)
            sqlite3_bind_null(s, 5);
        else
            sqlite3_bind_double(s, 5, pts[i].value);
        if (db_exec(c, s) != 0)
            return ST_ERROR;
        if (pts[i].step > max_step)
            max_step = pts[i].step;
        if (pts[i].layer >= 0)
            continue;
        int k = 0;
        while (k < n_names && strcmp(pts[newest[k]].name, pts[i].name))
            k++;
        if (k < n_names) {
            if (pts[i].step >= pts[newest[k]].step)
                newest[k] = i;
            continue;
        }
        if (n_names == MAX_NAMES && put_latest(c, r.exp, &pts[newest[--n_names]]) != 0)
            return ST_ERROR;  /* table full: flush one, reuse its slot */
        newest[n_names++] = i;
    }
    for (int k = 0; k < n_names; k++)
        if (put_latest(c, r.exp, &pts[newest[k]]) != 0)
            return ST_ERROR;
    for (int i = 0; i < nl; i++) {
        sqlite3_stmt *s = db_stmt(c, q_put_log);
        if (!s)
            return ST_ERROR;
        sqlite3_bind_int64(s, 1, r.exp);
        sqlite3_bind_int64(s, 2, run);
        sqlite3_bind_int64(s, 3, lines[i].seq);
        sqlite3_bind_double(s, 4, now);
        sqlite3_bind_text(s, 5, lines[i].line, -1, SQLITE_STATIC);
        if (db_exec(c, s) != 0)
            return ST_ERROR;
    }
    if (db_touch_worker(c, r.worker, now) != 0 || (n && db_advance_step(c, r.exp, max_step) != 0))
        return ST_ERROR;
    return ST_OK;
}

struct batch {
    int64_t run;
    const struct metric_point *pts;
    const struct log_line *lines;
    int n, nl;
};

static int report_job(struct store *st, void *arg)
{
    struct batch *b = arg;
    return report(st, b->run, b->pts, b->n, b->lines, b->nl);
}

int store_report(struct store *st, int64_t run, const struct metric_point *pts, int n,
                 const struct log_line *lines, int nl)
{
    struct batch b = {run, pts, lines, n, nl};
    return db_run(st, report_job, &b);
}

static int exists(struct conn *c, int64_t exp)
{
    sqlite3_stmt *s = db_stmt(c, q_exists);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, exp);
    int rc = sqlite3_step(s);
    return rc == SQLITE_ROW ? ST_OK : rc == SQLITE_DONE ? ST_NOTFOUND : ST_ERROR;
}

int store_metrics(struct store *st, int64_t exp, const char *name, long from, long to, long every,
                  json_t **out)
{
    struct conn *c = db_reader_get(st);
    int ret = exists(c, exp);
    json_t *series = json_object();
    if (ret != ST_OK || !series)
        goto done;
    ret = ST_ERROR;
    sqlite3_stmt *s = db_stmt(c, q_series);
    if (!s)
        goto done;
    sqlite3_bind_int64(s, 1, exp);
    db_bind_text(s, 2, name);
    sqlite3_bind_int64(s, 3, from);
    sqlite3_bind_int64(s, 4, to);
    int rc;
    long k = 0;
    json_t *cur = NULL, *last = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *nm = (const char *)sqlite3_column_text(s, 0);
        json_t *pt = json_pack("[o,o]", db_col_json(s, 1), db_col_json(s, 2));
        if (!cur || !json_object_get(series, nm)) {
            if (cur && last)
                json_array_append(cur, last);
            cur = json_array();
            json_object_set_new(series, nm, cur);
            k = 0;
            json_decref(last);
            last = NULL;
        }
        /* Every k-th point, and the newest one, so a downsampled curve ends where the run is. */
        if (k++ % every == 0) {
            json_array_append_new(cur, pt);
            json_decref(last);
            last = NULL;
        } else {
            json_decref(last);
            last = pt;
        }
    }
    if (cur && last)
        json_array_append(cur, last);
    json_decref(last);
    if (rc != SQLITE_DONE)
        goto done;
    *out = json_pack("{s:I,s:O}", "experiment", (json_int_t)exp, "series", series);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(series);
    db_reader_put(st, c);
    return ret;
}

int store_layers(struct store *st, int64_t exp, const char *name, long step, json_t **out)
{
    struct conn *c = db_reader_get(st);
    int ret = exists(c, exp);
    json_t *vals = json_array();
    if (ret != ST_OK || !vals)
        goto done;
    ret = ST_ERROR;
    sqlite3_stmt *s;
    int rc;
    if (step < 0) {
        if (!(s = db_stmt(c, q_newest_layer_step)))
            goto done;
        sqlite3_bind_int64(s, 1, exp);
        sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(s) != SQLITE_ROW)
            goto done;
        if (sqlite3_column_type(s, 0) == SQLITE_NULL) {
            ret = ST_NOTFOUND;
            goto done;
        }
        step = (long)sqlite3_column_int64(s, 0);
    }
    if (!(s = db_stmt(c, q_layers)))
        goto done;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 3, step);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        json_array_append_new(vals, json_pack("{s:o,s:o}", "layer", db_col_json(s, 0), "value",
                                              db_col_json(s, 1)));
    if (rc != SQLITE_DONE)
        goto done;
    *out = json_pack("{s:I,s:s,s:I,s:O}", "experiment", (json_int_t)exp, "name", name, "step",
                     (json_int_t)step, "layers", vals);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(vals);
    db_reader_put(st, c);
    return ret;
}

int store_layer_history(struct store *st, int64_t exp, const char *name, json_t **out)
{
    struct conn *c = db_reader_get(st);
    int ret = exists(c, exp);
    json_t *steps = json_array(), *rows = json_array();
    if (ret != ST_OK || !steps || !rows)
        goto done;
    ret = ST_ERROR;
    sqlite3_stmt *s = db_stmt(c, q_layer_history);
    if (!s)
        goto done;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
    int rc;
    json_t *row = NULL;
    json_int_t step = -1;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (!row || sqlite3_column_int64(s, 0) != step) {
            step = sqlite3_column_int64(s, 0);
            if (!(row = json_array()) || json_array_append_new(rows, row) != 0)
                goto done;
            json_array_append_new(steps, json_integer(step));
        }
        /* A layer missing at this step (block layers start at 1) stays null, so that
         * index = layer in every row. */
        size_t layer = (size_t)sqlite3_column_int64(s, 1);
        while (json_array_size(row) < layer)
            json_array_append_new(row, json_null());
        json_array_append_new(row, db_col_json(s, 2));
    }
    if (rc != SQLITE_DONE)
        goto done;
    *out = json_pack("{s:I,s:s,s:O,s:O}", "experiment", (json_int_t)exp, "name", name, "steps",
                     steps, "values", rows);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(steps);
    json_decref(rows);
    db_reader_put(st, c);
    return ret;
}

int store_logs(struct store *st, int64_t exp, int64_t after, int limit, json_t **out)
{
    struct conn *c = db_reader_get(st);
    int ret = exists(c, exp);
    json_t *lines = json_array();
    if (ret != ST_OK || !lines)
        goto done;
    ret = ST_ERROR;
    sqlite3_stmt *s = db_stmt(c, q_logs);
    if (!s)
        goto done;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, after);
    sqlite3_bind_int(s, 3, limit);
    int rc;
    int64_t last = after;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        last = sqlite3_column_int64(s, 0);
        json_array_append_new(lines, json_pack("{s:o,s:o,s:o,s:o}", "id", db_col_json(s, 0), "run",
                                               db_col_json(s, 1), "ts", db_col_json(s, 2), "line",
                                               db_col_json(s, 3)));
    }
    if (rc != SQLITE_DONE)
        goto done;
    *out = json_pack("{s:I,s:O,s:I}", "experiment", (json_int_t)exp, "lines", lines, "next",
                     (json_int_t)last);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(lines);
    db_reader_put(st, c);
    return ret;
}
