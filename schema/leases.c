/* The lease policy: which queued experiment a worker gets (priority,
 * then FIFO; a worker's device and free capacity decide what fits), how a
 * lease is kept (heartbeats), how a run ends (finish: succeeded only with
 * every point stored, released back to the queue without spending an
 * attempt), and what happens to a lease that lapses (the reaper: queued
 * again with attempts+1, or failed after max_attempts). */
#include "schema/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/device_name.h"

/* An offline or removed worker leases nothing: a long-poll it left parked
 * when it stopped must not claim work for it. */
static const char q_worker[] =
    "SELECT device, capacity FROM workers WHERE id = ?1 AND removed IS NULL"
    " AND stopped IS NULL";
static const char q_worker_used[] =
    "SELECT count(*), coalesce(sum(e.gpus), 0) FROM runs r"
    " JOIN experiments e ON e.id = r.experiment_id"
    " WHERE r.worker_id = ?1 AND r.state = 'active'";
static const char q_claim[] =
    "SELECT id, attempts, spec FROM experiments WHERE state = 'queued'"
    " AND (device = 'any' OR device = ?1) AND (?1 <> 'cuda' OR gpus <= ?2)"
    " ORDER BY priority DESC, id LIMIT 1";
static const char q_insert_run[] =
    "INSERT INTO runs (experiment_id, worker_id, state, started, lease_expires)"
    " VALUES (?1, ?2, 'active', ?3, ?4)";
static const char q_start_exp[] =
    "UPDATE experiments SET state = 'running', run_id = ?2,"
    " started = coalesce(started, ?3) WHERE id = ?1";
static const char q_run[] =
    "SELECT r.state, r.lease_expires, r.experiment_id, e.cancel_req, e.state, r.worker_id"
    " FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE r.id = ?1";
static const char q_end_run[] =
    "UPDATE runs SET state = 'ended' WHERE id = ?1";
static const char q_end_exp[] =
    "UPDATE experiments SET state = ?2, reason = ?3, finished = ?4, run_id = NULL"
    " WHERE id = ?1";
static const char q_step[] =
    "UPDATE experiments SET step = max(step, ?2) WHERE id = ?1";
static const char q_extend[] =
    "UPDATE runs SET lease_expires = ?2 WHERE id = ?1";
static const char q_points_held[] =
    "SELECT e.steps, (SELECT count(*) FROM metrics m WHERE m.experiment_id = e.id"
    " AND m.name = 'train/loss' AND m.layer = -1 AND m.step = e.steps),"
    " (SELECT count(*) FROM metrics m WHERE m.experiment_id = e.id)"
    " FROM experiments e WHERE e.id = ?1";
static const char q_release[] =
    "UPDATE experiments SET state = CASE WHEN cancel_req THEN 'cancelled' ELSE 'queued' END,"
    " reason = ?2, run_id = NULL, finished = CASE WHEN cancel_req THEN ?3 END WHERE id = ?1";
static const char q_lapsed[] =
    "SELECT r.id, r.experiment_id, e.attempts, e.max_attempts, e.cancel_req, r.worker_id"
    " FROM runs r JOIN experiments e ON e.id = r.experiment_id"
    " WHERE r.state = 'active' AND r.lease_expires < ?1";
static const char q_lose_run[] =
    "UPDATE runs SET state = 'lost' WHERE id = ?1";
static const char q_requeue[] =
    "UPDATE experiments SET state = ?2, attempts = ?3, reason = ?4, run_id = NULL,"
    " finished = CASE WHEN ?2 = 'queued' THEN NULL ELSE ?5 END WHERE id = ?1";
static const char q_bump_counter[] =
    "UPDATE counters SET value = value + ?2 WHERE name = ?1";

int store_lease(struct store *st, int64_t worker, double lease_s, json_t **out)
{
    *out = NULL;
    if (db_begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    double now = store_now();
    sqlite3_stmt *s;
    int rc = db_one_row(c, q_worker, worker, &s);
    if (rc != ST_OK)
        return db_end(st, rc);
    char device[16];
    snprintf(device, sizeof device, "%s", (const char *)sqlite3_column_text(s, 0));
    int capacity = sqlite3_column_int(s, 1);
    if (db_touch_worker(c, worker, now) != 0 || !(s = db_stmt(c, q_worker_used)))
        return db_end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, worker);
    if (sqlite3_step(s) != SQLITE_ROW)
        return db_end(st, ST_ERROR);
    int runs = sqlite3_column_int(s, 0), gpus_used = sqlite3_column_int(s, 1);
    struct device_name dn;
    int is_cuda = device_parse(device, &dn) == 0 && dn.kind == DEVICE_CUDA;
    int room = is_cuda ? capacity - gpus_used : capacity - runs;
    if (room <= 0)
        return db_end(st, ST_OK);  /* commits only the last_seen touch */
    if (!(s = db_stmt(c, q_claim)))
        return db_end(st, ST_ERROR);
    sqlite3_bind_text(s, 1, device, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 2, room);
    rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        return db_end(st, ST_OK);
    if (rc != SQLITE_ROW)
        return db_end(st, ST_ERROR);
    int64_t exp = sqlite3_column_int64(s, 0);
    int attempts = sqlite3_column_int(s, 1);
    json_t *spec = json_loads((const char *)sqlite3_column_text(s, 2), 0, NULL);
    if (!(s = db_stmt(c, q_insert_run))) {
        json_decref(spec);
        return db_end(st, ST_ERROR);
    }
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, worker);
    sqlite3_bind_double(s, 3, now);
    sqlite3_bind_double(s, 4, now + lease_s);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_start_exp))) {
        json_decref(spec);
        return db_end(st, ST_ERROR);
    }
    int64_t run = sqlite3_last_insert_rowid(c->db);
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, run);
    sqlite3_bind_double(s, 3, now);
    if (db_exec(c, s) != 0) {
        json_decref(spec);
        return db_end(st, ST_ERROR);
    }
    rc = db_end(st, ST_OK);
    if (rc == ST_OK)
        *out = json_pack("{s:I,s:I,s:i,s:f,s:o}", "run", (json_int_t)run, "experiment",
                         (json_int_t)exp, "attempt", attempts + 1, "lease_seconds", lease_s,
                         "spec", spec ? spec : json_null());
    else
        json_decref(spec);
    return rc;
}

static int db_read_run(struct conn *c, int64_t run, double now, struct run_row *r)
{
    sqlite3_stmt *s = db_stmt(c, q_run);
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

int db_begin_run(struct store *st, int64_t run, double *now, struct run_row *r)
{
    if (db_begin(st) != 0)
        return ST_ERROR;
    *now = store_now();
    int rc = db_read_run(&st->writer, run, *now, r);
    return rc == ST_OK ? ST_OK : db_end(st, rc);
}

static int end_experiment(struct conn *c, int64_t run, int64_t exp, const char *state,
                          const char *reason, double now)
{
    sqlite3_stmt *s = db_stmt(c, q_end_run);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, run);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_end_exp)))
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, state, -1, SQLITE_TRANSIENT);
    db_bind_text(s, 3, reason);
    sqlite3_bind_double(s, 4, now);
    return db_exec(c, s);
}

int db_advance_step(struct conn *c, int64_t exp, long step)
{
    sqlite3_stmt *s = db_stmt(c, q_step);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, step);
    return db_exec(c, s);
}

int store_heartbeat(struct store *st, int64_t run, long step, double lease_s, int *cancel)
{
    *cancel = 0;
    struct conn *c = &st->writer;
    double now;
    struct run_row r;
    int rc = db_begin_run(st, run, &now, &r);
    if (rc != ST_OK)
        return rc;
    if (!r.active)
        return db_end(st, ST_CONFLICT);
    if (db_touch_worker(c, r.worker, now) != 0 || db_advance_step(c, r.exp, step) != 0)
        return db_end(st, ST_ERROR);
    if (r.cancel_req) {
        *cancel = 1;
        if (end_experiment(c, run, r.exp, "cancelled", "cancelled while running", now) != 0)
            return db_end(st, ST_ERROR);
        return db_end(st, ST_OK);
    }
    sqlite3_stmt *s = db_stmt(c, q_extend);
    if (!s)
        return db_end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, run);
    sqlite3_bind_double(s, 2, now + lease_s);
    return db_end(st, db_exec(c, s) == 0 ? ST_OK : ST_ERROR);
}

/* What the server holds of an experiment's points, for a finish "succeeded". */
static int points_held(struct conn *c, int64_t exp, struct points_held *h)
{
    sqlite3_stmt *s = db_stmt(c, q_points_held);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, exp);
    if (sqlite3_step(s) != SQLITE_ROW) {
        db_log_sql(c, sqlite3_sql(s));
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
    struct conn *c = &st->writer;
    double now;
    struct run_row r;
    int rc = db_begin_run(st, run, &now, &r);
    if (rc != ST_OK)
        return rc;
    int release = !strcmp(outcome, "released");
    if (!r.active) {
        /* A retried finish of the same outcome is answered as the first was. */
        int same = !strcmp(r.run_state, "ended") && (release || !strcmp(r.exp_state, outcome));
        db_end(st, ST_CONFLICT);
        return same ? ST_OK : ST_CONFLICT;
    }
    if (db_touch_worker(c, r.worker, now) != 0)
        return db_end(st, ST_ERROR);
    if (!strcmp(outcome, "succeeded")) {
        /* Succeeded means every point is here: at least the final step's
         * loss, and as many points as the worker's files hold. */
        if (points_held(c, r.exp, held) != ST_OK)
            return db_end(st, ST_ERROR);
        if (!held->final_loss || held->points < points)
            return db_end(st, ST_INCOMPLETE);
    }
    if (!release)
        return db_end(st, end_experiment(c, run, r.exp, outcome, reason, now) ? ST_ERROR : ST_OK);
    /* Given back (the worker is stopping): queued again without spending an
     * attempt, since nothing failed; a cancel asked meanwhile wins. */
    char why[200];
    snprintf(why, sizeof why, "released by worker %lld%s%s", (long long)r.worker,
             reason ? ": " : "", reason ? reason : "");
    sqlite3_stmt *s = db_stmt(c, q_end_run);
    if (!s)
        return db_end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, run);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_release)))
        return db_end(st, ST_ERROR);
    sqlite3_bind_int64(s, 1, r.exp);
    sqlite3_bind_text(s, 2, why, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(s, 3, now);
    return db_end(st, db_exec(c, s) == 0 ? ST_OK : ST_ERROR);
}

int store_reap(struct store *st, int *expired)
{
    *expired = 0;
    if (db_begin(st) != 0)
        return ST_ERROR;
    struct conn *c = &st->writer;
    double now = store_now();
    struct lapsed {
        int64_t run, exp, worker;
        int attempts, max_attempts, cancel_req;
    } *l = NULL;
    int n = 0, cap = 0, rc;
    sqlite3_stmt *s = db_stmt(c, q_lapsed);
    if (!s)
        return db_end(st, ST_ERROR);
    sqlite3_bind_double(s, 1, now);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            void *p = realloc(l, (size_t)cap * sizeof *l);
            if (!p) {
                free(l);
                return db_end(st, ST_ERROR);
            }
            l = p;
        }
        l[n++] = (struct lapsed){sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                                 sqlite3_column_int64(s, 5), sqlite3_column_int(s, 2),
                                 sqlite3_column_int(s, 3), sqlite3_column_int(s, 4)};
    }
    if (rc != SQLITE_DONE) {
        free(l);
        return db_end(st, ST_ERROR);
    }
    for (int i = 0; i < n; i++) {
        int attempts = l[i].attempts + 1;
        const char *state = l[i].cancel_req            ? "cancelled"
                            : attempts >= l[i].max_attempts ? "failed"
                                                            : "queued";
        char reason[160];
        snprintf(reason, sizeof reason, "lease lapsed (worker %lld lost) on attempt %d of %d",
                 (long long)l[i].worker, attempts, l[i].max_attempts);
        if (!(s = db_stmt(c, q_lose_run)))
            break;
        sqlite3_bind_int64(s, 1, l[i].run);
        if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_requeue)))
            break;
        sqlite3_bind_int64(s, 1, l[i].exp);
        sqlite3_bind_text(s, 2, state, -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 3, attempts);
        sqlite3_bind_text(s, 4, reason, -1, SQLITE_TRANSIENT);
        sqlite3_bind_double(s, 5, now);
        if (db_exec(c, s) != 0)
            break;
        (*expired)++;
    }
    free(l);
    if (*expired != n)
        return db_end(st, ST_ERROR);
    if (n) {
        if (!(s = db_stmt(c, q_bump_counter)))
            return db_end(st, ST_ERROR);
        sqlite3_bind_text(s, 1, "lease_expiries", -1, SQLITE_STATIC);
        sqlite3_bind_int(s, 2, n);
        if (db_exec(c, s) != 0)
            return db_end(st, ST_ERROR);
    }
    rc = db_end(st, ST_OK);
    if (rc != ST_OK)
        *expired = 0;
    return rc;
}
