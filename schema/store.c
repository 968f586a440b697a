/* The store. Statements are prepared once per connection and kept (the
 * table below is all the SQL outside schema.sql); values are always bound. */
#include "schema/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "schema/migrate.h"

enum q {
    Q_BEGIN, Q_COMMIT, Q_ROLLBACK,
    Q_IDEM_EXP, Q_INSERT_EXP, Q_IDEM_SWEEP, Q_INSERT_SWEEP,
    Q_GET_EXP, Q_LIST_EXP, Q_LATEST_OF, Q_EXP_STATE, Q_CANCEL_QUEUED, Q_CANCEL_RUNNING,
    Q_INSERT_WORKER, Q_WORKER, Q_WORKER_USED, Q_CLAIM, Q_INSERT_RUN, Q_START_EXP, Q_SEEN,
    Q_RUN, Q_END_RUN, Q_END_EXP, Q_EXTEND, Q_STEP, Q_POINTS_HELD,
    Q_PUT_METRIC, Q_PUT_LATEST, Q_PUT_LOG,
    Q_LAPSED, Q_LOSE_RUN, Q_REQUEUE, Q_RELEASE, Q_BUMP_COUNTER, Q_COUNTER,
    Q_SERIES, Q_NEWEST_LAYER_STEP, Q_LAYERS, Q_LAYER_HISTORY, Q_LOGS, Q_SWEEP, Q_SWEEP_CELLS,
    Q_WORKERS, Q_WORKER_STOP, Q_WORKER_GONE, Q_WORKER_REMOVE, Q_STATES, Q_RUNNING, Q_EXISTS,
    Q_COUNT
};

static const char *const sql[Q_COUNT] = {
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    [Q_IDEM_EXP] = "SELECT id, spec FROM experiments WHERE idem_key = ?1",
    [Q_INSERT_EXP] = "INSERT INTO experiments (name, model, norm, device, gpus, priority, max_attempts,"
                     " steps, spec, state, sweep_id, sweep_cell, idem_key, created)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'queued', ?10, ?11, ?12, ?13)",
    [Q_IDEM_SWEEP] = "SELECT id, body FROM sweeps WHERE idem_key = ?1",
    [Q_INSERT_SWEEP] = "INSERT INTO sweeps (created, idem_key, body) VALUES (?1, ?2, ?3)",
    [Q_GET_EXP] = "SELECT e.id, e.name, e.model, e.norm, e.device, e.state, e.attempts, e.max_attempts,"
                  " e.priority, e.reason, e.sweep_id, e.run_id, r.worker_id, e.step, e.steps,"
                  " e.created, e.started, e.finished, e.cancel_req, e.spec"
                  " FROM experiments e LEFT JOIN runs r ON r.id = e.run_id WHERE e.id = ?1",
    [Q_LIST_EXP] = "SELECT e.id, e.name, e.model, e.norm, e.device, e.state, e.attempts, e.max_attempts,"
                   " e.priority, e.reason, e.sweep_id, e.run_id, r.worker_id, e.step, e.steps,"
                   " e.created, e.started, e.finished, e.cancel_req"
                   " FROM experiments e LEFT JOIN runs r ON r.id = e.run_id"
                   " WHERE (?1 IS NULL OR e.state = ?1) AND (?2 IS NULL OR e.sweep_id = ?2)"
                   " AND (?3 IS NULL OR e.norm = ?3) AND (?4 IS NULL OR e.model = ?4)"
                   " AND (?5 IS NULL OR e.id < ?5) ORDER BY e.id DESC LIMIT ?6",
    [Q_LATEST_OF] = "SELECT name, step, value FROM latest WHERE experiment_id = ?1 ORDER BY name",
    [Q_EXP_STATE] = "SELECT state FROM experiments WHERE id = ?1",
    [Q_CANCEL_QUEUED] = "UPDATE experiments SET state = 'cancelled', finished = ?2,"
                        " reason = 'cancelled before it started' WHERE id = ?1",
    [Q_CANCEL_RUNNING] = "UPDATE experiments SET cancel_req = 1 WHERE id = ?1",
    [Q_INSERT_WORKER] = "INSERT INTO workers (name, device, capacity, registered, last_seen)"
                        " VALUES (?1, ?2, ?3, ?4, ?4)",
    /* An offline or removed worker leases nothing: a long-poll it left parked
     * when it stopped must not claim work for it. */
    [Q_WORKER] = "SELECT device, capacity FROM workers WHERE id = ?1 AND removed IS NULL"
                 " AND stopped IS NULL",
    [Q_WORKER_USED] = "SELECT count(*), coalesce(sum(e.gpus), 0) FROM runs r"
                      " JOIN experiments e ON e.id = r.experiment_id"
                      " WHERE r.worker_id = ?1 AND r.state = 'active'",
    [Q_CLAIM] = "SELECT id, attempts, spec FROM experiments WHERE state = 'queued'"
                " AND (device = 'any' OR device = ?1) AND (?1 <> 'cuda' OR gpus <= ?2)"
                " ORDER BY priority DESC, id LIMIT 1",
    [Q_INSERT_RUN] = "INSERT INTO runs (experiment_id, worker_id, state, started, lease_expires)"
                     " VALUES (?1, ?2, 'active', ?3, ?4)",
    [Q_START_EXP] = "UPDATE experiments SET state = 'running', run_id = ?2,"
                    " started = coalesce(started, ?3) WHERE id = ?1",
    [Q_SEEN] = "UPDATE workers SET last_seen = ?2 WHERE id = ?1",
    [Q_RUN] = "SELECT r.state, r.lease_expires, r.experiment_id, e.cancel_req, e.state, r.worker_id"
              " FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE r.id = ?1",
    [Q_END_RUN] = "UPDATE runs SET state = 'ended' WHERE id = ?1",
    [Q_END_EXP] = "UPDATE experiments SET state = ?2, reason = ?3, finished = ?4, run_id = NULL"
                  " WHERE id = ?1",
    [Q_EXTEND] = "UPDATE runs SET lease_expires = ?2 WHERE id = ?1",
    [Q_STEP] = "UPDATE experiments SET step = max(step, ?2) WHERE id = ?1",
    [Q_POINTS_HELD] = "SELECT e.steps, (SELECT count(*) FROM metrics m WHERE m.experiment_id = e.id"
                      " AND m.name = 'train/loss' AND m.layer = -1 AND m.step = e.steps),"
                      " (SELECT count(*) FROM metrics m WHERE m.experiment_id = e.id)"
                      " FROM experiments e WHERE e.id = ?1",
    [Q_PUT_METRIC] = "INSERT INTO metrics (experiment_id, name, step, layer, value)"
                     " VALUES (?1, ?2, ?3, ?4, ?5)"
                     " ON CONFLICT DO UPDATE SET value = excluded.value",
    [Q_PUT_LATEST] = "INSERT INTO latest (experiment_id, name, step, value) VALUES (?1, ?2, ?3, ?4)"
                     " ON CONFLICT DO UPDATE SET step = excluded.step, value = excluded.value"
                     " WHERE excluded.step >= latest.step",
    [Q_PUT_LOG] = "INSERT OR IGNORE INTO logs (experiment_id, run_id, seq, ts, line)"
                  " VALUES (?1, ?2, ?3, ?4, ?5)",
    [Q_LAPSED] = "SELECT r.id, r.experiment_id, e.attempts, e.max_attempts, e.cancel_req, r.worker_id"
                 " FROM runs r JOIN experiments e ON e.id = r.experiment_id"
                 " WHERE r.state = 'active' AND r.lease_expires < ?1",
    [Q_LOSE_RUN] = "UPDATE runs SET state = 'lost' WHERE id = ?1",
    [Q_REQUEUE] = "UPDATE experiments SET state = ?2, attempts = ?3, reason = ?4, run_id = NULL,"
                  " finished = CASE WHEN ?2 = 'queued' THEN NULL ELSE ?5 END WHERE id = ?1",
    [Q_RELEASE] = "UPDATE experiments SET state = CASE WHEN cancel_req THEN 'cancelled' ELSE 'queued' END,"
                  " reason = ?2, run_id = NULL, finished = CASE WHEN cancel_req THEN ?3 END WHERE id = ?1",
    [Q_BUMP_COUNTER] = "UPDATE counters SET value = value + ?2 WHERE name = ?1",
    [Q_COUNTER] = "SELECT value FROM counters WHERE name = ?1",
    [Q_SERIES] = "SELECT name, step, value FROM metrics WHERE experiment_id = ?1 AND layer = -1"
                 " AND (?2 IS NULL OR name = ?2) AND step >= ?3 AND step <= ?4 ORDER BY name, step",
    [Q_NEWEST_LAYER_STEP] = "SELECT max(step) FROM metrics WHERE experiment_id = ?1 AND name = ?2"
                            " AND layer >= 0",
    [Q_LAYERS] = "SELECT layer, value FROM metrics WHERE experiment_id = ?1 AND name = ?2"
                 " AND step = ?3 AND layer >= 0 ORDER BY layer",
    [Q_LAYER_HISTORY] = "SELECT step, layer, value FROM metrics WHERE experiment_id = ?1"
                        " AND name = ?2 AND layer >= 0 ORDER BY step, layer",
    [Q_LOGS] = "SELECT id, run_id, ts, line FROM logs WHERE experiment_id = ?1 AND id > ?2"
               " ORDER BY id LIMIT ?3",
    [Q_SWEEP] = "SELECT created, body FROM sweeps WHERE id = ?1",
    [Q_SWEEP_CELLS] = "SELECT e.id, e.state, e.sweep_cell, l.value, l.step FROM experiments e"
                      " LEFT JOIN latest l ON l.experiment_id = e.id AND l.name = 'eval/ppl'"
                      " WHERE e.sweep_id = ?1 ORDER BY e.id",
    [Q_WORKERS] = "SELECT w.id, w.name, w.device, w.capacity, w.registered, w.last_seen,"
                  " (SELECT group_concat(experiment_id) FROM runs"
                  "  WHERE worker_id = w.id AND state = 'active'), w.stopped IS NOT NULL"
                  " FROM workers w WHERE w.removed IS NULL ORDER BY w.id",
    [Q_WORKER_STOP] = "UPDATE workers SET stopped = ?2 WHERE id = ?1 AND removed IS NULL",
    [Q_WORKER_GONE] = "SELECT w.last_seen, w.stopped IS NOT NULL, (SELECT count(*) FROM runs"
                      " WHERE worker_id = w.id AND state = 'active')"
                      " FROM workers w WHERE w.id = ?1 AND w.removed IS NULL",
    [Q_WORKER_REMOVE] = "UPDATE workers SET removed = ?2 WHERE id = ?1",
    [Q_STATES] = "SELECT state, count(*) FROM experiments GROUP BY state",
    [Q_RUNNING] = "SELECT e.id, e.model, e.norm, l.value, t.value FROM experiments e"
                  " LEFT JOIN latest l ON l.experiment_id = e.id AND l.name = 'train/loss'"
                  " LEFT JOIN latest t ON t.experiment_id = e.id AND t.name = 'train/tokens_per_s'"
                  " WHERE e.state = 'running' ORDER BY e.id",
    [Q_EXISTS] = "SELECT 1 FROM experiments WHERE id = ?1",
};

struct conn {
    sqlite3 *db;
    sqlite3_stmt *st[Q_COUNT];
    int busy;
};

struct store {
    struct conn writer;
    pthread_mutex_t wlock;
    struct conn *readers;
    int n_readers;
    pthread_mutex_t rlock;
    pthread_cond_t rfree;
};

double store_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void log_sql(struct conn *c, const char *what)
{
    fprintf(stderr, "cod-server: sqlite: %s: %s\n", what, sqlite3_errmsg(c->db));
}

/* The connection's prepared statement for q, reset and unbound. */
static sqlite3_stmt *S(struct conn *c, enum q q)
{
    if (!c->st[q]) {
        if (sqlite3_prepare_v3(c->db, sql[q], -1, SQLITE_PREPARE_PERSISTENT, &c->st[q], NULL) !=
            SQLITE_OK) {
            log_sql(c, sql[q]);
            return NULL;
        }
    } else {
        sqlite3_reset(c->st[q]);
        sqlite3_clear_bindings(c->st[q]);
    }
    return c->st[q];
}

static int conn_open(struct conn *c, const char *path, int flags, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (sqlite3_open_v2(path, &c->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, c->db ? sqlite3_errmsg(c->db) : "out of memory");
        return -1;
    }
    char *msg = NULL;
    /* synchronous=FULL: a 2xx means the write is on disk (DESIGN §7, §9). */
    if (sqlite3_busy_timeout(c->db, 10000) != SQLITE_OK ||
        sqlite3_exec(c->db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;", NULL, NULL,
                     &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errmsg(c->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static void conn_close(struct conn *c)
{
    for (int i = 0; i < Q_COUNT; i++)
        sqlite3_finalize(c->st[i]);
    sqlite3_close(c->db);
    c->db = NULL;
}

int store_open(const char *path, int readers, struct store **out, char *err, size_t errlen)
{
    struct store *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    pthread_mutex_init(&st->wlock, NULL);
    pthread_mutex_init(&st->rlock, NULL);
    pthread_cond_init(&st->rfree, NULL);
    if (conn_open(&st->writer, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, err, errlen) != 0)
        goto fail;
    char *msg = NULL;
    if (sqlite3_exec(st->writer.db, "PRAGMA journal_mode = WAL", NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: WAL: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        goto fail;
    }
    if (migrate(st->writer.db, err, errlen) != 0)
        goto fail;
    st->n_readers = readers < 1 ? 1 : readers;
    st->readers = calloc((size_t)st->n_readers, sizeof *st->readers);
    if (!st->readers) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (int i = 0; i < st->n_readers; i++)
        if (conn_open(&st->readers[i], path, SQLITE_OPEN_READONLY, err, errlen) != 0)
            goto fail;
    *out = st;
    return 0;
fail:
    store_close(st);
    return -1;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    for (int i = 0; st->readers && i < st->n_readers; i++)
        if (st->readers[i].db)
            conn_close(&st->readers[i]);
    free(st->readers);
    if (st->writer.db) {
        /* Fold the WAL back so the file is whole on its own after a clean stop. */
        sqlite3_wal_checkpoint_v2(st->writer.db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
        conn_close(&st->writer);
    }
    pthread_mutex_destroy(&st->wlock);
    pthread_mutex_destroy(&st->rlock);
    pthread_cond_destroy(&st->rfree);
    free(st);
}

static struct conn *reader_get(struct store *st)
{
    pthread_mutex_lock(&st->rlock);
    for (;;) {
        for (int i = 0; i < st->n_readers; i++)
            if (!st->readers[i].busy) {
                st->readers[i].busy = 1;
                pthread_mutex_unlock(&st->rlock);
                return &st->readers[i];
            }
        pthread_cond_wait(&st->rfree, &st->rlock);
    }
}

static void reader_put(struct store *st, struct conn *c)
{
    for (int i = 0; i < Q_COUNT; i++)
        if (c->st[i])
            sqlite3_reset(c->st[i]);  /* ends the read transaction */
    pthread_mutex_lock(&st->rlock);
    c->busy = 0;
    pthread_cond_signal(&st->rfree);
    pthread_mutex_unlock(&st->rlock);
}

/* Runs one statement to completion (writes). */
static int exec_done(struct conn *c, sqlite3_stmt *s)
{
    if (!s)
        return -1;
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        log_sql(c, sqlite3_sql(s));
        return -1;
    }
    return 0;
}

static int begin(struct store *st)
{
    pthread_mutex_lock(&st->wlock);
    if (exec_done(&st->writer, S(&st->writer, Q_BEGIN)) != 0) {
        pthread_mutex_unlock(&st->wlock);
        return -1;
    }
    return 0;
}

/* Ends the write transaction begun by begin(): ST_OK commits, anything else
 * rolls back, so a refused request leaves no trace. Returns rc, or ST_ERROR
 * when the commit itself failed. */
static int end(struct store *st, int rc)
{
    struct conn *c = &st->writer;
    if (rc == ST_OK) {
        if (exec_done(c, S(c, Q_COMMIT)) != 0) {
            exec_done(c, S(c, Q_ROLLBACK));
            rc = ST_ERROR;
        }
    } else {
        exec_done(c, S(c, Q_ROLLBACK));
    }
    for (int i = 0; i < Q_COUNT; i++)
        if (c->st[i])
            sqlite3_reset(c->st[i]);
    pthread_mutex_unlock(&st->wlock);
    return rc;
}

/* Steps q, bound to id, onto its row: ST_OK with *out there, ST_NOTFOUND
 * when there is none, or ST_ERROR. */
static int one_row(struct conn *c, enum q q, int64_t id, sqlite3_stmt **out)
{
    sqlite3_stmt *s = *out = S(c, q);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    return rc == SQLITE_ROW ? ST_OK : rc == SQLITE_DONE ? ST_NOTFOUND : ST_ERROR;
}

static void bind_text_or_null(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

static json_t *col_json(sqlite3_stmt *s, int i)
{
    switch (sqlite3_column_type(s, i)) {
    case SQLITE_NULL: return json_null();
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(s, i));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(s, i));
    default: return json_string((const char *)sqlite3_column_text(s, i));
    }
}

int store_integrity(struct store *st, char *buf, size_t len)
{
    struct conn *c = reader_get(st);
    sqlite3_stmt *s;
    int rc = -1;
    if (sqlite3_prepare_v2(c->db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) {
            snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
            rc = 0;
        }
        sqlite3_finalize(s);
    }
    reader_put(st, c);
    return rc;
}

/* ---- creation ---- */

/* The row an Idempotency-Key already made: ST_OK when it was made from the
 * same request (text: the complete spec, or the sweep's body), ST_CONFLICT
 * when the key is being reused for a different one. */
static int lookup_idem(struct conn *c, enum q q, const char *key, const char *text, int64_t *id)
{
    sqlite3_stmt *s = S(c, q);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(s, 0);
        const char *was = (const char *)sqlite3_column_text(s, 1);
        return was && text && !strcmp(was, text) ? ST_OK : ST_CONFLICT;
    }
    return rc == SQLITE_DONE ? ST_NOTFOUND : ST_ERROR;
}

static int insert_exp(struct conn *c, const struct new_experiment *e, int64_t sweep,
                      const char *idem_key, double now, int64_t *id)
{
    sqlite3_stmt *s = S(c, Q_INSERT_EXP);
    if (!s)
        return ST_ERROR;
    bind_text_or_null(s, 1, e->name);
    bind_text_or_null(s, 2, e->model);
    bind_text_or_null(s, 3, e->norm);
    bind_text_or_null(s, 4, e->device);
    sqlite3_bind_int(s, 5, e->gpus);
    sqlite3_bind_int(s, 6, e->priority);
    sqlite3_bind_int(s, 7, e->max_attempts);
    sqlite3_bind_int64(s, 8, e->steps);
    bind_text_or_null(s, 9, e->spec_json);
    if (sweep)
        sqlite3_bind_int64(s, 10, sweep);
    bind_text_or_null(s, 11, e->cell_json);
    bind_text_or_null(s, 12, idem_key);
    sqlite3_bind_double(s, 13, now);
    if (exec_done(c, s) != 0)
        return ST_ERROR;
    *id = sqlite3_last_insert_rowid(c->db);
    return ST_OK;
}

int store_create_experiment(struct store *st, const struct new_experiment *e, const char *idem_key,
                            int64_t *id, int *replayed)
{
    *replayed = 0;
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    if (idem_key) {
        int rc = lookup_idem(c, Q_IDEM_EXP, idem_key, e->spec_json, id);
        if (rc == ST_OK || rc == ST_CONFLICT) {
            *replayed = rc == ST_OK;
            end(st, ST_CONFLICT);  /* nothing to write */
            return rc;
        }
        if (rc == ST_ERROR)
            return end(st, ST_ERROR);
    }
    return end(st, insert_exp(c, e, 0, idem_key, store_now(), id));
}

int store_create_sweep(struct store *st, const char *body, const char *idem_key,
                       const struct new_experiment *cells, int n, int64_t *sweep_id, int *replayed)
{
    *replayed = 0;
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    if (idem_key) {
        int rc = lookup_idem(c, Q_IDEM_SWEEP, idem_key, body, sweep_id);
        if (rc == ST_OK || rc == ST_CONFLICT) {
            *replayed = rc == ST_OK;
            end(st, ST_CONFLICT);
            return rc;
        }
        if (rc == ST_ERROR)
            return end(st, ST_ERROR);
    }
    double now = store_now();
    sqlite3_stmt *s = S(c, Q_INSERT_SWEEP);
    if (!s)
        return end(st, ST_ERROR);
    sqlite3_bind_double(s, 1, now);
    bind_text_or_null(s, 2, idem_key);
    bind_text_or_null(s, 3, body);
    if (exec_done(c, s) != 0)
        return end(st, ST_ERROR);
    *sweep_id = sqlite3_last_insert_rowid(c->db);
    for (int i = 0; i < n; i++) {
        int64_t id;
        if (insert_exp(c, &cells[i], *sweep_id, NULL, now, &id) != ST_OK)
            return end(st, ST_ERROR);
    }
    return end(st, ST_OK);
}

/* ---- experiment views ---- */

static const char *const exp_cols[] = {
    "id", "name", "model", "norm", "device", "state", "attempts", "max_attempts", "priority",
    "reason", "sweep", "run", "worker", "step", "steps", "created", "started", "finished",
};

static json_t *exp_row(sqlite3_stmt *s)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int n = (int)(sizeof exp_cols / sizeof exp_cols[0]);
    for (int i = 0; i < n; i++)
        json_object_set_new(o, exp_cols[i], col_json(s, i));
    json_object_set_new(o, "cancel_requested", json_boolean(sqlite3_column_int(s, n)));
    long steps = (long)sqlite3_column_int64(s, 14);
    json_object_set_new(o, "progress",
                        json_real(steps > 0 ? (double)sqlite3_column_int64(s, 13) / steps : 0.0));
    return o;
}

int store_get_experiment(struct store *st, int64_t id, json_t **out)
{
    struct conn *c = reader_get(st);
    int ret = ST_ERROR;
    json_t *o = NULL;
    sqlite3_stmt *s = S(c, Q_GET_EXP);
    if (!s)
        goto done;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) {
        ret = ST_NOTFOUND;
        goto done;
    }
    if (rc != SQLITE_ROW || !(o = exp_row(s)))
        goto done;
    json_t *spec = json_loads((const char *)sqlite3_column_text(s, 19), 0, NULL);
    json_object_set_new(o, "spec", spec ? spec : json_null());
    json_t *latest = json_object();
    s = S(c, Q_LATEST_OF);
    if (!s || !latest) {
        json_decref(latest);
        goto done;
    }
    sqlite3_bind_int64(s, 1, id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        json_t *m = json_pack("{s:o,s:o}", "step", col_json(s, 1), "value", col_json(s, 2));
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
    reader_put(st, c);
    return ret;
}

int store_list_experiments(struct store *st, const struct exp_filter *f, json_t **out)
{
    struct conn *c = reader_get(st);
    int ret = ST_ERROR;
    json_t *arr = json_array();
    sqlite3_stmt *s = S(c, Q_LIST_EXP);
    if (!s || !arr)
        goto done;
    bind_text_or_null(s, 1, f->state);
    if (f->sweep)
        sqlite3_bind_int64(s, 2, f->sweep);
    bind_text_or_null(s, 3, f->norm);
    bind_text_or_null(s, 4, f->model);
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
        json_array_append_new(arr, exp_row(s));
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
    reader_put(st, c);
    return ret;
}

int store_cancel(struct store *st, int64_t id)
{
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    sqlite3_stmt *s;
    int rc = one_row(c, Q_EXP_STATE, id, &s);
    if (rc != ST_OK)
        return end(st, rc);
    char state[16];
    snprintf(state, sizeof state, "%s", (const char *)sqlite3_column_text(s, 0));
    if (!strcmp(state, "queued")) {
        s = S(c, Q_CANCEL_QUEUED);
        if (!s)
            return end(st, ST_ERROR);
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_double(s, 2, store_now());
    } else if (!strcmp(state, "running")) {
        s = S(c, Q_CANCEL_RUNNING);
        if (!s)
            return end(st, ST_ERROR);
        sqlite3_bind_int64(s, 1, id);
    } else {
        return end(st, ST_CONFLICT);
    }
    return end(st, exec_done(c, s) == 0 ? ST_OK : ST_ERROR);
}

/* ---- the worker protocol ---- */

int store_register_worker(struct store *st, const char *name, const char *device, int capacity,
                          int64_t *id)
{
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    sqlite3_stmt *s = S(c, Q_INSERT_WORKER);
    if (!s)
        return end(st, ST_ERROR);
    bind_text_or_null(s, 1, name);
    bind_text_or_null(s, 2, device);
    sqlite3_bind_int(s, 3, capacity);
    sqlite3_bind_double(s, 4, store_now());
    if (exec_done(c, s) != 0)
        return end(st, ST_ERROR);
    *id = sqlite3_last_insert_rowid(c->db);
    return end(st, ST_OK);
}

static int touch_worker(struct conn *c, int64_t worker, double now)
{
    sqlite3_stmt *s = S(c, Q_SEEN);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, worker);
    sqlite3_bind_double(s, 2, now);
    return exec_done(c, s);
}

/* A worker's state from what the server last heard of it (store.h). */
static const char *worker_state(int stopped, double age, double lost_after, int runs)
{
    return stopped ? "offline" : age > lost_after ? "lost" : runs ? "busy" : "idle";
}

int store_worker_offline(struct store *st, int64_t worker)
{
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    sqlite3_stmt *s = S(c, Q_WORKER_STOP);
    if (!s)
        return end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, worker);
    sqlite3_bind_double(s, 2, store_now());
    if (exec_done(c, s) != 0)
        return end(st, ST_ERROR);
    return end(st, sqlite3_changes(c->db) ? ST_OK : ST_NOTFOUND);
}

int store_remove_worker(struct store *st, int64_t worker, double lost_after, char *state,
                        size_t n, int *runs)
{
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    double now = store_now();
    sqlite3_stmt *s;
    int rc = one_row(c, Q_WORKER_GONE, worker, &s);
    if (rc != ST_OK)
        return end(st, rc);
    *runs = sqlite3_column_int(s, 2);
    const char *is = worker_state(sqlite3_column_int(s, 1), now - sqlite3_column_double(s, 0),
                                  lost_after, *runs);
    snprintf(state, n, "%s", is);
    /* A worker still heard from, or one whose run has yet to lapse, stays. */
    if (*runs || (strcmp(is, "offline") && strcmp(is, "lost")))
        return end(st, ST_CONFLICT);
    if (!(s = S(c, Q_WORKER_REMOVE)))
        return end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, worker);
    sqlite3_bind_double(s, 2, now);
    return end(st, exec_done(c, s) == 0 ? ST_OK : ST_ERROR);
}

int store_lease(struct store *st, int64_t worker, double lease_s, json_t **out)
{
    *out = NULL;
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    double now = store_now();
    sqlite3_stmt *s;
    int rc = one_row(c, Q_WORKER, worker, &s);
    if (rc != ST_OK)
        return end(st, rc);
    char device[16];
    snprintf(device, sizeof device, "%s", (const char *)sqlite3_column_text(s, 0));
    int capacity = sqlite3_column_int(s, 1);
    if (touch_worker(c, worker, now) != 0 || !(s = S(c, Q_WORKER_USED)))
        return end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, worker);
    if (sqlite3_step(s) != SQLITE_ROW)
        return end(st, ST_ERROR);
    int runs = sqlite3_column_int(s, 0), gpus_used = sqlite3_column_int(s, 1);
    int is_cuda = !strcmp(device, "cuda");
    int room = is_cuda ? capacity - gpus_used : capacity - runs;
    if (room <= 0)
        return end(st, ST_OK);  /* commits only the last_seen touch */
    if (!(s = S(c, Q_CLAIM)))
        return end(st, ST_ERROR);
    sqlite3_bind_text(s, 1, device, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 2, room);
    rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        return end(st, ST_OK);
    if (rc != SQLITE_ROW)
        return end(st, ST_ERROR);
    int64_t exp = sqlite3_column_int64(s, 0);
    int attempts = sqlite3_column_int(s, 1);
    json_t *spec = json_loads((const char *)sqlite3_column_text(s, 2), 0, NULL);
    if (!(s = S(c, Q_INSERT_RUN))) {
        json_decref(spec);
        return end(st, ST_ERROR);
    }
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, worker);
    sqlite3_bind_double(s, 3, now);
    sqlite3_bind_double(s, 4, now + lease_s);
    if (exec_done(c, s) != 0 || !(s = S(c, Q_START_EXP))) {
        json_decref(spec);
        return end(st, ST_ERROR);
    }
    int64_t run = sqlite3_last_insert_rowid(c->db);
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, run);
    sqlite3_bind_double(s, 3, now);
    if (exec_done(c, s) != 0) {
        json_decref(spec);
        return end(st, ST_ERROR);
    }
    rc = end(st, ST_OK);
    if (rc == ST_OK)
        *out = json_pack("{s:I,s:I,s:i,s:f,s:o}", "run", (json_int_t)run, "experiment",
                         (json_int_t)exp, "attempt", attempts + 1, "lease_seconds", lease_s,
                         "spec", spec ? spec : json_null());
    else
        json_decref(spec);
    return rc;
}

struct run_row {
    int active;       /* holds an unexpired lease */
    int64_t exp, worker;
    int cancel_req;
    char run_state[16], exp_state[16];
};

static int read_run(struct conn *c, int64_t run, double now, struct run_row *r)
{
    sqlite3_stmt *s = S(c, Q_RUN);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, run);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        return ST_NOTFOUND;
    if (rc != SQLITE_ROW)
        return ST_ERROR;
    snprintf(r->run_state, sizeof r->run_state, "%s", (const char *)sqlite3_column_text(s, 0));
    /* A lapsed lease is lost even before the reaper has seen it. */
    r->active = !strcmp(r->run_state, "active") && sqlite3_column_double(s, 1) >= now;
    r->exp = sqlite3_column_int64(s, 2);
    r->cancel_req = sqlite3_column_int(s, 3);
    snprintf(r->exp_state, sizeof r->exp_state, "%s", (const char *)sqlite3_column_text(s, 4));
    r->worker = sqlite3_column_int64(s, 5);
    return ST_OK;
}

static int end_experiment(struct conn *c, int64_t run, int64_t exp, const char *state,
                          const char *reason, double now)
{
    sqlite3_stmt *s = S(c, Q_END_RUN);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, run);
    if (exec_done(c, s) != 0 || !(s = S(c, Q_END_EXP)))
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, state, -1, SQLITE_TRANSIENT);
    bind_text_or_null(s, 3, reason);
    sqlite3_bind_double(s, 4, now);
    return exec_done(c, s);
}

static int advance_step(struct conn *c, int64_t exp, long step)
{
    sqlite3_stmt *s = S(c, Q_STEP);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, step);
    return exec_done(c, s);
}

int store_heartbeat(struct store *st, int64_t run, long step, double lease_s, int *cancel)
{
    *cancel = 0;
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    double now = store_now();
    struct run_row r;
    int rc = read_run(c, run, now, &r);
    if (rc != ST_OK)
        return end(st, rc);
    if (!r.active)
        return end(st, ST_CONFLICT);
    if (touch_worker(c, r.worker, now) != 0 || advance_step(c, r.exp, step) != 0)
        return end(st, ST_ERROR);
    if (r.cancel_req) {
        *cancel = 1;
        if (end_experiment(c, run, r.exp, "cancelled", "cancelled while running", now) != 0)
            return end(st, ST_ERROR);
        return end(st, ST_OK);
    }
    sqlite3_stmt *s = S(c, Q_EXTEND);
    if (!s)
        return end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, run);
    sqlite3_bind_double(s, 2, now + lease_s);
    return end(st, exec_done(c, s) == 0 ? ST_OK : ST_ERROR);
}

static int put_latest(struct conn *c, int64_t exp, const struct metric_point *p)
{
    sqlite3_stmt *s = S(c, Q_PUT_LATEST);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, p->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, p->step);
    if (p->is_null)
        sqlite3_bind_null(s, 4);
    else
        sqlite3_bind_double(s, 4, p->value);
    return exec_done(c, s);
}

int store_report(struct store *st, int64_t run, const struct metric_point *pts, int n,
                 const struct log_line *lines, int nl)
{
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    double now = store_now();
    struct run_row r;
    int rc = read_run(c, run, now, &r);
    if (rc != ST_OK)
        return end(st, rc);
    if (!r.active)
        return end(st, ST_CONFLICT);
    long max_step = 0;
    /* The newest point of each scalar name in the batch: only those touch
     * the latest table (a batch is usually one name over many steps). */
    enum { MAX_NAMES = 64 };
    int newest[MAX_NAMES], n_names = 0;
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *s = S(c, Q_PUT_METRIC);
        if (!s)
            return end(st, ST_ERROR);
        sqlite3_bind_int64(s, 1, r.exp);
        sqlite3_bind_text(s, 2, pts[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 3, pts[i].step);
        sqlite3_bind_int(s, 4, pts[i].layer);
        if (pts[i].is_null)
            sqlite3_bind_null(s, 5);
        else
            sqlite3_bind_double(s, 5, pts[i].value);
        if (exec_done(c, s) != 0)
            return end(st, ST_ERROR);
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
            return end(st, ST_ERROR);  /* table full: flush one, reuse its slot */
        newest[n_names++] = i;
    }
    for (int k = 0; k < n_names; k++)
        if (put_latest(c, r.exp, &pts[newest[k]]) != 0)
            return end(st, ST_ERROR);
    for (int i = 0; i < nl; i++) {
        sqlite3_stmt *s = S(c, Q_PUT_LOG);
        if (!s)
            return end(st, ST_ERROR);
        sqlite3_bind_int64(s, 1, r.exp);
        sqlite3_bind_int64(s, 2, run);
        sqlite3_bind_int64(s, 3, lines[i].seq);
        sqlite3_bind_double(s, 4, now);
        sqlite3_bind_text(s, 5, lines[i].line, -1, SQLITE_STATIC);
        if (exec_done(c, s) != 0)
            return end(st, ST_ERROR);
    }
    if (touch_worker(c, r.worker, now) != 0 || (n && advance_step(c, r.exp, max_step) != 0))
        return end(st, ST_ERROR);
    return end(st, ST_OK);
}

/* What the server holds of an experiment's points, for a finish "succeeded". */
static int points_held(struct conn *c, int64_t exp, struct points_held *h)
{
    sqlite3_stmt *s = S(c, Q_POINTS_HELD);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, exp);
    if (sqlite3_step(s) != SQLITE_ROW) {
        log_sql(c, sqlite3_sql(s));
        return ST_ERROR;
    }
    h->final_step = (long)sqlite3_column_int64(s, 0);
    h->final_loss = sqlite3_column_int(s, 1) > 0;
    h->points = (long)sqlite3_column_int64(s, 2);
    return ST_OK;
}

int store_finish(struct store *st, int64_t run, const char *outcome, const char *reason,
                 long points, struct points_held *held)
{
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    double now = store_now();
    struct run_row r;
    int rc = read_run(c, run, now, &r);
    if (rc != ST_OK)
        return end(st, rc);
    int release = !strcmp(outcome, "released");
    if (!r.active) {
        /* A retried finish of the same outcome is answered as the first was. */
        int same = !strcmp(r.run_state, "ended") && (release || !strcmp(r.exp_state, outcome));
        end(st, ST_CONFLICT);
        return same ? ST_OK : ST_CONFLICT;
    }
    if (touch_worker(c, r.worker, now) != 0)
        return end(st, ST_ERROR);
    if (!strcmp(outcome, "succeeded")) {
        /* Succeeded means every point is here: at least the final step's
         * loss, and as many points as the worker's files hold. */
        if (points_held(c, r.exp, held) != ST_OK)
            return end(st, ST_ERROR);
        if (!held->final_loss || held->points < points)
            return end(st, ST_INCOMPLETE);
    }
    if (!release)
        return end(st, end_experiment(c, run, r.exp, outcome, reason, now) ? ST_ERROR : ST_OK);
    /* Given back (the worker is stopping): queued again without spending an
     * attempt, since nothing failed; a cancel asked meanwhile wins. */
    char why[200];
    snprintf(why, sizeof why, "released by worker %lld%s%s", (long long)r.worker,
             reason ? ": " : "", reason ? reason : "");
    sqlite3_stmt *s = S(c, Q_END_RUN);
    if (!s)
        return end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, run);
    if (exec_done(c, s) != 0 || !(s = S(c, Q_RELEASE)))
        return end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, r.exp);
    sqlite3_bind_text(s, 2, why, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(s, 3, now);
    return end(st, exec_done(c, s) == 0 ? ST_OK : ST_ERROR);
}

int store_reap(struct store *st, int *expired)
{
    *expired = 0;
    if (begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    double now = store_now();
    struct lapsed {
        int64_t run, exp, worker;
        int attempts, max_attempts, cancel_req;
    } *l = NULL;
    int n = 0, cap = 0, rc;
    sqlite3_stmt *s = S(c, Q_LAPSED);
    if (!s)
        return end(st, ST_ERROR);
    sqlite3_bind_double(s, 1, now);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            void *p = realloc(l, (size_t)cap * sizeof *l);
            if (!p) {
                free(l);
                return end(st, ST_ERROR);
            }
            l = p;
        }
        l[n++] = (struct lapsed){sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                                 sqlite3_column_int64(s, 5), sqlite3_column_int(s, 2),
                                 sqlite3_column_int(s, 3), sqlite3_column_int(s, 4)};
    }
    if (rc != SQLITE_DONE) {
        free(l);
        return end(st, ST_ERROR);
    }
    for (int i = 0; i < n; i++) {
        int attempts = l[i].attempts + 1;
        const char *state = l[i].cancel_req            ? "cancelled"
                            : attempts >= l[i].max_attempts ? "failed"
                                                            : "queued";
        char reason[160];
        snprintf(reason, sizeof reason, "lease lapsed (worker %lld lost) on attempt %d of %d",
                 (long long)l[i].worker, attempts, l[i].max_attempts);
        if (!(s = S(c, Q_LOSE_RUN)))
            break;
        sqlite3_bind_int64(s, 1, l[i].run);
        if (exec_done(c, s) != 0 || !(s = S(c, Q_REQUEUE)))
            break;
        sqlite3_bind_int64(s, 1, l[i].exp);
        sqlite3_bind_text(s, 2, state, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 3, attempts);
        sqlite3_bind_text(s, 4, reason, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(s, 5, now);
        if (exec_done(c, s) != 0)
            break;
        (*expired)++;
    }
    free(l);
    if (*expired != n)
        return end(st, ST_ERROR);
    if (n) {
        if (!(s = S(c, Q_BUMP_COUNTER)))
            return end(st, ST_ERROR);
        sqlite3_bind_text(s, 1, "lease_expiries", -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 2, n);
        if (exec_done(c, s) != 0)
            return end(st, ST_ERROR);
    }
    rc = end(st, ST_OK);
    if (rc != ST_OK)
        *expired = 0;
    return rc;
}

/* ---- series, layers, logs, sweeps, workers ---- */

static int exists(struct conn *c, int64_t exp)
{
    sqlite3_stmt *s = S(c, Q_EXISTS);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, exp);
    int rc = sqlite3_step(s);
    return rc == SQLITE_ROW ? ST_OK : rc == SQLITE_DONE ? ST_NOTFOUND : ST_ERROR;
}

int store_metrics(struct store *st, int64_t exp, const char *name, long from, long to, long every,
                  json_t **out)
{
    struct conn *c = reader_get(st);
    int ret = exists(c, exp);
    json_t *series = json_object();
    if (ret != ST_OK || !series)
        goto done;
    ret = ST_ERROR;
    sqlite3_stmt *s = S(c, Q_SERIES);
    if (!s)
        goto done;
    sqlite3_bind_int64(s, 1, exp);
    bind_text_or_null(s, 2, name);
    sqlite3_bind_int64(s, 3, from);
    sqlite3_bind_int64(s, 4, to);
    int rc;
    long k = 0;
    json_t *cur = NULL, *last = NULL;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const char *nm = (const char *)sqlite3_column_text(s, 0);
        json_t *pt = json_pack("[o,o]", col_json(s, 1), col_json(s, 2));
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
    reader_put(st, c);
    return ret;
}

int store_layers(struct store *st, int64_t exp, const char *name, long step, json_t **out)
{
    struct conn *c = reader_get(st);
    int ret = exists(c, exp);
    json_t *vals = json_array();
    if (ret != ST_OK || !vals)
        goto done;
    ret = ST_ERROR;
    sqlite3_stmt *s;
    int rc;
    if (step < 0) {
        if (!(s = S(c, Q_NEWEST_LAYER_STEP)))
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
    if (!(s = S(c, Q_LAYERS)))
        goto done;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 3, step);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        json_array_append_new(vals, json_pack("{s:o,s:o}", "layer", col_json(s, 0), "value",
                                              col_json(s, 1)));
    if (rc != SQLITE_DONE)
        goto done;
    *out = json_pack("{s:I,s:s,s:I,s:O}", "experiment", (json_int_t)exp, "name", name, "step",
                     (json_int_t)step, "layers", vals);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(vals);
    reader_put(st, c);
    return ret;
}

int store_layer_history(struct store *st, int64_t exp, const char *name, json_t **out)
{
    struct conn *c = reader_get(st);
    int ret = exists(c, exp);
    json_t *steps = json_array(), *rows = json_array();
    if (ret != ST_OK || !steps || !rows)
        goto done;
    ret = ST_ERROR;
    sqlite3_stmt *s = S(c, Q_LAYER_HISTORY);
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
        json_array_append_new(row, col_json(s, 2));
    }
    if (rc != SQLITE_DONE)
        goto done;
    *out = json_pack("{s:I,s:s,s:O,s:O}", "experiment", (json_int_t)exp, "name", name, "steps",
                     steps, "values", rows);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(steps);
    json_decref(rows);
    reader_put(st, c);
    return ret;
}

int store_logs(struct store *st, int64_t exp, int64_t after, int limit, json_t **out)
{
    struct conn *c = reader_get(st);
    int ret = exists(c, exp);
    json_t *lines = json_array();
    if (ret != ST_OK || !lines)
        goto done;
    ret = ST_ERROR;
    sqlite3_stmt *s = S(c, Q_LOGS);
    if (!s)
        goto done;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, after);
    sqlite3_bind_int(s, 3, limit);
    int rc;
    int64_t last = after;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        last = sqlite3_column_int64(s, 0);
        json_array_append_new(lines, json_pack("{s:o,s:o,s:o,s:o}", "id", col_json(s, 0), "run",
                                               col_json(s, 1), "ts", col_json(s, 2), "line",
                                               col_json(s, 3)));
    }
    if (rc != SQLITE_DONE)
        goto done;
    *out = json_pack("{s:I,s:O,s:I}", "experiment", (json_int_t)exp, "lines", lines, "next",
                     (json_int_t)last);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(lines);
    reader_put(st, c);
    return ret;
}

int store_sweep(struct store *st, int64_t id, json_t **out)
{
    struct conn *c = reader_get(st);
    int ret = ST_ERROR;
    json_t *body = NULL, *cells = json_array();
    sqlite3_stmt *s = S(c, Q_SWEEP);
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
    if (!(s = S(c, Q_SWEEP_CELLS)))
        goto done;
    sqlite3_bind_int64(s, 1, id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        json_t *cell = json_loads((const char *)sqlite3_column_text(s, 2), 0, NULL);
        json_array_append_new(cells, json_pack("{s:o,s:o,s:o,s:o,s:o}", "experiment",
                                               col_json(s, 0), "state", col_json(s, 1), "params",
                                               cell ? cell : json_null(), "eval/ppl",
                                               col_json(s, 3), "step", col_json(s, 4)));
    }
    if (rc != SQLITE_DONE)
        goto done;
    json_t *grid = body ? json_object_get(body, "grid") : NULL;
    *out = json_pack("{s:I,s:f,s:O,s:O}", "id", (json_int_t)id, "created", created, "grid",
                     grid ? grid : json_null(), "cells", cells);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(body);
    json_decref(cells);
    reader_put(st, c);
    return ret;
}

static json_t *worker_rows(struct conn *c, double lost_after)
{
    sqlite3_stmt *s = S(c, Q_WORKERS);
    json_t *arr = json_array();
    if (!s || !arr) {
        json_decref(arr);
        return NULL;
    }
    double now = store_now();
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        double age = now - sqlite3_column_double(s, 5);
        json_t *exps = json_array();
        const char *list = (const char *)sqlite3_column_text(s, 6);
        for (const char *p = list; p && *p;) {
            char *e;
            json_array_append_new(exps, json_integer(strtoll(p, &e, 10)));
            p = *e ? e + 1 : e;
        }
        const char *state = worker_state(sqlite3_column_int(s, 7), age, lost_after,
                                         (int)json_array_size(exps));
        json_array_append_new(arr, json_pack("{s:o,s:o,s:o,s:o,s:o,s:f,s:s,s:o}", "id",
                                             col_json(s, 0), "name", col_json(s, 1), "device",
                                             col_json(s, 2), "capacity", col_json(s, 3),
                                             "registered", col_json(s, 4), "heartbeat_age_s",
                                             age, "state", state, "experiments", exps));
    }
    if (rc != SQLITE_DONE) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

int store_workers(struct store *st, double lost_after, json_t **out)
{
    struct conn *c = reader_get(st);
    json_t *arr = worker_rows(c, lost_after);
    reader_put(st, c);
    if (!arr)
        return ST_ERROR;
    *out = json_pack("{s:o}", "workers", arr);
    return *out ? ST_OK : ST_ERROR;
}

int store_stats(struct store *st, double lost_after, json_t **out)
{
    struct conn *c = reader_get(st);
    int ret = ST_ERROR, rc;
    json_t *states = json_object(), *running = json_array(), *workers = worker_rows(c, lost_after);
    json_int_t expiries = 0;
    sqlite3_stmt *s = S(c, Q_STATES);
    if (!s || !states || !running || !workers)
        goto done;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        json_object_set_new(states, (const char *)sqlite3_column_text(s, 0), col_json(s, 1));
    if (rc != SQLITE_DONE || !(s = S(c, Q_COUNTER)))
        goto done;
    sqlite3_bind_text(s, 1, "lease_expiries", -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW)
        expiries = sqlite3_column_int64(s, 0);
    if (!(s = S(c, Q_RUNNING)))
        goto done;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        json_array_append_new(running, json_pack("{s:o,s:o,s:o,s:o,s:o}", "id", col_json(s, 0),
                                                 "model", col_json(s, 1), "norm", col_json(s, 2),
                                                 "loss", col_json(s, 3), "tokens_per_s",
                                                 col_json(s, 4)));
    if (rc != SQLITE_DONE)
        goto done;
    *out = json_pack("{s:O,s:O,s:O,s:I}", "states", states, "workers", workers, "running",
                     running, "lease_expiries", expiries);
    ret = *out ? ST_OK : ST_ERROR;
done:
    json_decref(states);
    json_decref(running);
    json_decref(workers);
    reader_put(st, c);
    return ret;
}
