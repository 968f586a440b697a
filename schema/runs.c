/* A run as the files that write to it share it: its row as a write sees
 * it, its experiment's progress raised as reports and heartbeats arrive,
 * and a lost run's experiment queued again with an attempt spent (a lapsed
 * lease, leases.c; a gang that missed its rendezvous, gangs.c). The lease
 * policy (leases.c), the gangs (gangs.c) and the metrics (metrics.c) use
 * it; it uses only the connections (conn.c). */
#include "schema/db.h"

#include <stdio.h>
#include <string.h>

static const char q_run[] =
    "SELECT r.state, r.lease_expires, r.experiment_id, e.cancel_req, e.state, r.worker_id,"
    " r.world_size, e.attempts, e.max_attempts"
    " FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE r.id = ?1";
static const char q_step[] =
    "UPDATE experiments SET step = max(step, ?2) WHERE id = ?1";
static const char q_lose_run[] =
    "UPDATE runs SET state = 'lost' WHERE id = ?1";
static const char q_requeue[] =
    "UPDATE experiments SET state = ?2, attempts = ?3, reason = ?4, run_id = NULL,"
    " finished = CASE WHEN ?2 = 'queued' THEN NULL ELSE ?5 END WHERE id = ?1";

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
    r->world = sqlite3_column_int(s, 6);
    r->attempts = sqlite3_column_int(s, 7);
    r->max_attempts = sqlite3_column_int(s, 8);
    return ST_OK;
}

int db_run_row(struct store *st, int64_t run, double *now, struct run_row *r)
{
    *now = store_now();
    return db_read_run(&st->writer, run, *now, r);
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

int db_requeue(struct conn *c, int64_t run, int64_t exp, int attempts, int max_attempts,
               int cancel_req, const char *reason, double now)
{
    int spent = attempts + 1;
    const char *state = cancel_req ? "cancelled" : spent >= max_attempts ? "failed" : "queued";
    sqlite3_stmt *s = db_stmt(c, q_lose_run);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, run);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_requeue)))
        return -1;
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_text(s, 2, state, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 3, spent);
    sqlite3_bind_text(s, 4, reason, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(s, 5, now);
    return db_exec(c, s);
}
