/* The read-only rows behind the API's views: an experiment (with its spec,
 * its chain's links and the newest value of every scalar) and the
 * experiment list, which views/experiment.c shapes, and the counts behind
 * /metrics, views/counts.c's (a sweep's rows are schema/sweeps.c). */
#include "schema/db.h"
#include "schema/syncvfs.h"

#include <stdlib.h>
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

/* The columns both queries share, in their order. */
static int exp_fill(sqlite3_stmt *s, struct exp_row *e)
{
    int bad = 0;
    memset(e, 0, sizeof *e);
    e->id = sqlite3_column_int64(s, 0);
    e->name = db_col_text(s, 1, &bad);
    e->model = db_col_text(s, 2, &bad);
    e->norm = db_col_text(s, 3, &bad);
    e->device = db_col_text(s, 4, &bad);
    e->state = db_col_text(s, 5, &bad);
    e->attempts = sqlite3_column_int(s, 6);
    e->max_attempts = sqlite3_column_int(s, 7);
    e->priority = sqlite3_column_int(s, 8);
    e->reason = db_col_text(s, 9, &bad);
    e->sweep = sqlite3_column_int64(s, 10);
    e->run = sqlite3_column_int64(s, 11);
    e->worker = sqlite3_column_int64(s, 12);
    e->step = sqlite3_column_int64(s, 13);
    e->steps = sqlite3_column_int64(s, 14);
    e->created = sqlite3_column_double(s, 15);
    e->has_started = sqlite3_column_type(s, 16) != SQLITE_NULL;
    e->started = sqlite3_column_double(s, 16);
    e->has_finished = sqlite3_column_type(s, 17) != SQLITE_NULL;
    e->finished = sqlite3_column_double(s, 17);
    e->cancel_req = sqlite3_column_int(s, 18);
    return bad ? -1 : 0;
}

void exp_row_free(struct exp_row *e)
{
    free(e->name);
    free(e->model);
    free(e->norm);
    free(e->device);
    free(e->state);
    free(e->reason);
    free(e->after_ids);
    for (int i = 0; i < e->n_after; i++) {
        free(e->after[i].name);
        free(e->after[i].state);
    }
    for (int i = 0; i < e->n_then; i++) {
        free(e->then[i].name);
        free(e->then[i].state);
    }
    free(e->after);
    free(e->then);
    free(e->spec);
    for (int i = 0; i < e->n_latest; i++)
        free(e->latest[i].name);
    free(e->latest);
    memset(e, 0, sizeof *e);
}

/* The experiment's scalars' newest points into e. */
static int latest_of(struct conn *c, int64_t id, struct exp_row *e)
{
    sqlite3_stmt *s = db_stmt(c, q_latest_of);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, id);
    int rc, cap = 0, bad = 0;
    while (!bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (e->n_latest == cap) {
            cap = cap ? 2 * cap : 16;
            struct latest_point *more = realloc(e->latest, (size_t)cap * sizeof *more);
            if (!more)
                return -1;
            e->latest = more;
        }
        struct latest_point *p = &e->latest[e->n_latest++];
        p->name = db_col_text(s, 0, &bad);
        p->step = sqlite3_column_int64(s, 1);
        p->has_value = sqlite3_column_type(s, 2) != SQLITE_NULL;
        p->value = sqlite3_column_double(s, 2);
    }
    return !bad && rc == SQLITE_DONE ? 0 : -1;
}

int store_get_experiment(struct store *st, int64_t id, struct exp_row *out)
{
    struct conn *c = db_reader_get(st);
    int ret = ST_ERROR;
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s = db_stmt(c, q_get_exp);
    if (!s)
        goto done;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s), bad = 0;
    if (rc == SQLITE_DONE) {
        ret = ST_NOTFOUND;
        goto done;
    }
    if (rc != SQLITE_ROW || exp_fill(s, out))
        goto done;
    out->stage = sqlite3_column_int(s, 20);
    out->spec = db_col_text(s, 19, &bad);
    if (bad || db_chain_links(c, id, out) != ST_OK || latest_of(c, id, out))
        goto done;
    ret = ST_OK;
done:
    db_reader_put(st, c);
    if (ret != ST_OK)
        exp_row_free(out);
    return ret;
}

int store_list_experiments(struct store *st, const struct exp_filter *f, struct exp_row **rows,
                           int *n, int *more)
{
    struct conn *c = db_reader_get(st);
    int ret = ST_ERROR;
    *rows = calloc((size_t)f->limit + 1, sizeof **rows);
    *n = *more = 0;
    sqlite3_stmt *s = db_stmt(c, q_list_exp);
    if (!s || !*rows)
        goto done;
    db_bind_text(s, 1, f->state);
    if (f->sweep)
        sqlite3_bind_int64(s, 2, f->sweep);
    db_bind_text(s, 3, f->norm);
    db_bind_text(s, 4, f->model);
    if (f->before)
        sqlite3_bind_int64(s, 5, f->before);
    sqlite3_bind_int(s, 6, f->limit + 1);  /* one more says whether a next page exists */
    int rc, bad = 0;
    while (!bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == f->limit) {
            *more = 1;
            break;
        }
        struct exp_row *e = &(*rows)[(*n)++];
        bad |= exp_fill(s, e);
        e->stage = sqlite3_column_int(s, 19);
        e->after_ids = db_col_text(s, 20, &bad);
    }
    if (!bad && (rc == SQLITE_ROW || rc == SQLITE_DONE))
        ret = ST_OK;
done:
    db_reader_put(st, c);
    if (ret != ST_OK && *rows) {
        for (int i = 0; i < *n; i++)
            exp_row_free(&(*rows)[i]);
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return ret;
}

void store_counts_free(struct store_counts *k)
{
    for (int i = 0; i < k->n_states; i++)
        free(k->states[i].state);
    for (int i = 0; i < k->n_running; i++) {
        free(k->running[i].model);
        free(k->running[i].norm);
    }
    free(k->states);
    free(k->running);
    worker_rows_free(k->workers, k->n_workers);
    memset(k, 0, sizeof *k);
}

int store_stats(struct store *st, double lost_after, struct store_counts *out)
{
    struct conn *c = db_reader_get(st);
    int ret = ST_ERROR, rc = SQLITE_ERROR, bad = 0, cap = 0;
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s = db_stmt(c, q_states);
    if (!s || db_worker_rows(c, lost_after, &out->workers, &out->n_workers) != ST_OK)
        goto done;
    while (!bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (out->n_states == cap) {
            cap = cap ? 2 * cap : 8;
            struct state_count *more = realloc(out->states, (size_t)cap * sizeof *more);
            if (!more)
                goto done;
            out->states = more;
        }
        struct state_count *k = &out->states[out->n_states++];
        k->state = db_col_text(s, 0, &bad);
        k->n = sqlite3_column_int64(s, 1);
    }
    if (bad || rc != SQLITE_DONE || !(s = db_stmt(c, q_counter)))
        goto done;
    sqlite3_bind_text(s, 1, "lease_expiries", -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW)
        out->lease_expiries = sqlite3_column_int64(s, 0);
    if (!(s = db_stmt(c, q_running)))
        goto done;
    cap = 0;
    while (!bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (out->n_running == cap) {
            cap = cap ? 2 * cap : 8;
            struct running_row *more = realloc(out->running, (size_t)cap * sizeof *more);
            if (!more)
                goto done;
            out->running = more;
        }
        struct running_row *r = &out->running[out->n_running++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(s, 0);
        r->model = db_col_text(s, 1, &bad);
        r->norm = db_col_text(s, 2, &bad);
        r->has_loss = sqlite3_column_type(s, 3) != SQLITE_NULL;
        r->loss = sqlite3_column_double(s, 3);
        r->has_tokens_per_s = sqlite3_column_type(s, 4) != SQLITE_NULL;
        r->tokens_per_s = sqlite3_column_double(s, 4);
    }
    if (bad || rc != SQLITE_DONE)
        goto done;
    db_counts(st, &out->commits, &out->jobs);
    out->fsyncs = syncvfs_count();
    ret = ST_OK;
done:
    db_reader_put(st, c);
    if (ret != ST_OK)
        store_counts_free(out);
    return ret;
}
