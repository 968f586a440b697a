/* The read-only views the API sends: an experiment (with its spec and the
 * newest value of every scalar), the experiment list, and the counts behind
 * /metrics (a sweep's views are schema/sweeps.c). */
#include "schema/db.h"
#include "schema/syncvfs.h"

#include <stdio.h>
#include <string.h>

static const char q_get_exp[] =
    "SELECT e.id, e.name, e.model, e.norm, e.device, e.state, e.attempts, e.max_attempts,"
    " e.priority, e.reason, e.sweep_id, e.run_id, r.worker_id, e.step, e.steps,"
    " e.created, e.started, e.finished, e.cancel_req, e.spec, e.stage"
    " FROM experiments e LEFT JOIN runs r ON r.id = e.run_id WHERE e.id = ?1";
static const char q_latest_of[] =
    "SELECT name, step, value FROM latest WHERE experiment_id = ?1 ORDER BY name";
static const char q_list_exp[] =
    "SELECT e.id, e.name, e.model, e.norm, e.device, e.state, e.attempts, e.max_attempts,"
    " e.priority, e.reason, e.sweep_id, e.run_id, r.worker_id, e.step, e.steps,"
    " e.created, e.started, e.finished, e.cancel_req, e.stage,"
    " (SELECT json_group_array(w.after_id) FROM waits w WHERE w.experiment_id = e.id)"
    " FROM experiments e LEFT JOIN runs r ON r.id = e.run_id"
    " WHERE (?1 IS NULL OR e.state = ?1) AND (?2 IS NULL OR e.sweep_id = ?2)"
    " AND (?3 IS NULL OR e.norm = ?3) AND (?4 IS NULL OR e.model = ?4)"
    " AND (?5 IS NULL OR e.id < ?5) ORDER BY e.id DESC LIMIT ?6";
static const char q_states[] =
    "SELECT state, count(*) FROM experiments GROUP BY state";
static const char q_counter[] =
    "SELECT value FROM counters WHERE name = ?1";
static const char q_running[] =
    "SELECT e.id, e.model, e.norm, l.value, t.value FROM experiments e"
    " LEFT JOIN latest l ON l.experiment_id = e.id AND l.name = 'train/loss'"
    " LEFT JOIN latest t ON t.experiment_id = e.id AND t.name = 'train/tokens_per_s'"
    " WHERE e.state = 'running' ORDER BY e.id";

static const char *const exp_cols[] = {
    "id", "name", "model", "norm", "device", "state", "attempts", "max_attempts", "priority",
    "reason", "sweep", "run", "worker", "step", "steps", "created", "started", "finished",
};

/* stage_col: where the query put the sweep's stage */
static json_t *exp_row(sqlite3_stmt *s, int stage_col)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int n = (int)(sizeof exp_cols / sizeof exp_cols[0]);
    for (int i = 0; i < n; i++)
        json_object_set_new(o, exp_cols[i], db_col_json(s, i));
    json_object_set_new(o, "cancel_requested", json_boolean(sqlite3_column_int(s, n)));
    json_object_set_new(o, "stage", json_integer(sqlite3_column_int(s, stage_col)));
    long steps = (long)sqlite3_column_int64(s, 14);
    json_object_set_new(o, "progress",
                        json_real(steps > 0 ? (double)sqlite3_column_int64(s, 13) / steps : 0.0));
    return o;
}

int store_get_experiment(struct store *st, int64_t id, json_t **out)
{
    struct conn *c = db_reader_get(st);
    int ret = ST_ERROR;
    json_t *o = NULL;
    sqlite3_stmt *s = db_stmt(c, q_get_exp);
    if (!s)
        goto done;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        ret = ST_NOTFOUND;
        goto done;
    }
    if (rc != SQLITE_ROW || !(o = exp_row(s, 20)) || db_chain_view(c, id, o) != ST_OK)
        goto done;
    json_t *spec = json_loads((const char *)sqlite3_column_text(s, 19), 0, NULL);
    json_object_set_new(o, "spec", spec ? spec : json_null());
    json_t *latest = json_object();
    s = db_stmt(c, q_latest_of);
    if (!s || !latest) {
        json_decref(latest);
        goto done;
    }
    sqlite3_bind_int64(s, 1, id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        json_t *m = json_pack("{s:o,s:o}", "step", db_col_json(s, 1), "value", db_col_json(s, 2));
        json_object_set_new(latest, (const char *)sqlite3_column_text(s, 0), m);
    }
    json_object_set_new(o, "latest", latest);
    if (rc != SQLITE_DONE)
        goto done;
    *out = o;
    o = NULL;
    ret = ST_OK;
done:
    json_decref(o);
    db_reader_put(st, c);
    return ret;
}

int store_list_experiments(struct store *st, const struct exp_filter *f, json_t **out)
{
    struct conn *c = db_reader_get(st);
    int ret = ST_ERROR;
    json_t *arr = json_array();
    sqlite3_stmt *s = db_stmt(c, q_list_exp);
    if (!s || !arr)
        goto done;
    db_bind_text(s, 1, f->state);
    if (f->sweep)
        sqlite3_bind_int64(s, 2, f->sweep);
    db_bind_text(s, 3, f->norm);
    db_bind_text(s, 4, f->model);
    if (f->before)
        sqlite3_bind_int64(s, 5, f->before);
    sqlite3_bind_int(s, 6, f->limit + 1);  /* one more says whether a next page exists */
    int rc, n = 0;
    int64_t last = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == f->limit) {
            n++;
            break;
        }
        json_t *row = exp_row(s, 19);
        json_t *after = json_loads((const char *)sqlite3_column_text(s, 20), 0, NULL);
        json_object_set_new(row, "after", after ? after : json_array());
        json_array_append_new(arr, row);
        last = sqlite3_column_int64(s, 0);
        n++;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        goto done;
    char cur[32];
    snprintf(cur, sizeof cur, "%lld", (long long)last);
    *out = json_pack("{s:o,s:o}", "experiments", arr,
                     "next_cursor", n > f->limit ? json_string(cur) : json_null());
    arr = NULL;
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(arr);
    db_reader_put(st, c);
    return ret;
}

int store_stats(struct store *st, double lost_after, json_t **out)
{
    struct conn *c = db_reader_get(st);
    int ret = ST_ERROR, rc;
    json_t *states = json_object(), *running = json_array(), *workers = db_worker_rows(c, lost_after);
    json_int_t expiries = 0;
    sqlite3_stmt *s = db_stmt(c, q_states);
    if (!s || !states || !running || !workers)
        goto done;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        json_object_set_new(states, (const char *)sqlite3_column_text(s, 0), db_col_json(s, 1));
    if (rc != SQLITE_DONE || !(s = db_stmt(c, q_counter)))
        goto done;
    sqlite3_bind_text(s, 1, "lease_expiries", -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW)
        expiries = sqlite3_column_int64(s, 0);
    if (!(s = db_stmt(c, q_running)))
        goto done;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        json_array_append_new(running, json_pack("{s:o,s:o,s:o,s:o,s:o}", "id", db_col_json(s, 0),
                                                 "model", db_col_json(s, 1), "norm", db_col_json(s, 2),
                                                 "loss", db_col_json(s, 3), "tokens_per_s",
                                                 db_col_json(s, 4)));
    if (rc != SQLITE_DONE)
        goto done;
    long commits, jobs;
    db_counts(st, &commits, &jobs);
    *out = json_pack("{s:O,s:O,s:O,s:I,s:I,s:I,s:I}", "states", states, "workers", workers,
                     "running", running, "lease_expiries", expiries, "commits",
                     (json_int_t)commits, "jobs", (json_int_t)jobs, "fsyncs",
                     (json_int_t)syncvfs_count());
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(states);
    json_decref(running);
    json_decref(workers);
    db_reader_put(st, c);
    return ret;
}
