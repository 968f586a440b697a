/* The queue's entries: experiments and sweeps as submitted (an
 * Idempotency-Key makes a retry return what the first call made), and
 * cancelling one. What leaves the queue, and how, is leases.c. */
#include "schema/db.h"

#include <stdint.h>
#include <string.h>

/* ?14: the experiment it starts from (its model and norm where ?2, ?3 are
 * NULL); ?15: a later stage's, whose id goes into the spec's init.from */
static const char q_insert_exp[] =
    "INSERT INTO experiments (name, model, norm, device, gpus, priority, max_attempts,"
    " steps, spec, state, sweep_id, sweep_cell, idem_key, created, stage)"
    " VALUES (?1, coalesce(?2, (SELECT model FROM experiments WHERE id = ?14), 'start'),"
    " coalesce(?3, (SELECT norm FROM experiments WHERE id = ?14), 'start'), ?4, ?5, ?6, ?7, ?8,"
    " CASE WHEN ?15 IS NULL THEN ?9 ELSE json_set(?9, '$.init.from.experiment', ?15) END,"
    " 'queued', ?10, ?11, ?12, ?13, ?16)";
static const char q_idem_exp[] =
    "SELECT id, spec FROM experiments WHERE idem_key = ?1";
static const char q_idem_sweep[] =
    "SELECT id, body FROM sweeps WHERE idem_key = ?1";
static const char q_insert_sweep[] =
    "INSERT INTO sweeps (created, idem_key, body) VALUES (?1, ?2, ?3)";
static const char q_exp_state[] =
    "SELECT state FROM experiments WHERE id = ?1";
/* queued again after a run (a worker gone, a lease given back), it has
 * trained and may hold checkpoints: its reason must not say it never ran */
static const char q_cancel_queued[] =
    "UPDATE experiments SET state = 'cancelled', finished = ?2,"
    " reason = CASE WHEN started IS NULL THEN 'cancelled before it started'"
    " ELSE 'cancelled while queued to resume' END WHERE id = ?1";
static const char q_cancel_running[] =
    "UPDATE experiments SET cancel_req = 1 WHERE id = ?1";

/* The row an Idempotency-Key already made: ST_OK when it was made from the
 * same request (text: the complete spec, or the sweep's body), ST_CONFLICT
 * when the key is being reused for a different one. */
static int lookup_idem(struct conn *c, const char *sql, const char *key, const char *text, int64_t *id)
{
    sqlite3_stmt *s = db_stmt(c, sql);
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

/* prev: the row inserted before it (a later stage's start), or 0 */
static int insert_exp(struct conn *c, const struct new_experiment *e, int64_t sweep,
                      const char *idem_key, double now, int64_t prev, int64_t *id)
{
    int64_t start = e->stage > 0 ? prev : e->start;
    sqlite3_stmt *s = db_stmt(c, q_insert_exp);
    if (!s)
        return ST_ERROR;
    db_bind_text(s, 1, e->name);
    db_bind_text(s, 2, e->model);
    db_bind_text(s, 3, e->norm);
    db_bind_text(s, 4, e->device);
    sqlite3_bind_int(s, 5, e->gpus);
    sqlite3_bind_int(s, 6, e->priority);
    sqlite3_bind_int(s, 7, e->max_attempts);
    sqlite3_bind_int64(s, 8, e->steps);
    db_bind_text(s, 9, e->spec_json);
    if (sweep)
        sqlite3_bind_int64(s, 10, sweep);
    db_bind_text(s, 11, e->cell_json);
    db_bind_text(s, 12, idem_key);
    sqlite3_bind_double(s, 13, now);
    if (start)
        sqlite3_bind_int64(s, 14, start);
    if (e->stage > 0)
        sqlite3_bind_int64(s, 15, prev);
    sqlite3_bind_int(s, 16, e->stage);
    if (db_exec(c, s) != 0)
        return ST_ERROR;
    *id = sqlite3_last_insert_rowid(c->db);
    int64_t bad;
    if (e->stage > 0 && db_chain_link(c, *id, &prev, 1, now, &bad) != ST_OK)
        return ST_ERROR;
    return e->n_after ? db_chain_link(c, *id, e->after, e->n_after, now, &bad) : ST_OK;
}

/* A submission, one experiment or a sweep's cells. With an idempotency key
 * already used, nothing is written: ST_OK (*replayed) when the body is the
 * same, ST_CONFLICT when not; db_run answers either once what was read is
 * on disk. */
struct submission {
    const char *body, *idem_key;  /* body: a sweep's */
    const struct new_experiment *cells;
    int n, sweep;                 /* not a sweep: one experiment, cells[0] */
    int64_t *id;
    int *replayed;
};

static int submit(struct store *st, void *arg)
{
    struct submission *u = arg;
    struct conn *c = &st->writer;
    if (u->idem_key) {
        int rc = u->sweep ? lookup_idem(c, q_idem_sweep, u->idem_key, u->body, u->id)
                      : lookup_idem(c, q_idem_exp, u->idem_key, u->cells->spec_json, u->id);
        if (rc == ST_OK || rc == ST_CONFLICT) {
            *u->replayed = rc == ST_OK;
            return rc;
        }
        if (rc == ST_ERROR)
            return ST_ERROR;
    }
    double now = store_now();
    if (!u->sweep)
        return insert_exp(c, u->cells, 0, u->idem_key, now, 0, u->id);
    sqlite3_stmt *s = db_stmt(c, q_insert_sweep);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_double(s, 1, now);
    db_bind_text(s, 2, u->idem_key);
    db_bind_text(s, 3, u->body);
    if (db_exec(c, s) != 0)
        return ST_ERROR;
    *u->id = sqlite3_last_insert_rowid(c->db);
    int64_t prev = 0;
    for (int i = 0; i < u->n; i++) {
        int64_t id;
        int rc = insert_exp(c, &u->cells[i], *u->id, NULL, now, prev, &id);
        if (rc != ST_OK)
            return rc;
        prev = id;
    }
    return ST_OK;
}

int store_create_experiment(struct store *st, const struct new_experiment *e, const char *idem_key,
                            int64_t *id, int *replayed)
{
    *replayed = 0;
    struct submission u = {NULL, idem_key, e, 1, 0, id, replayed};
    return db_run(st, submit, &u);
}

int store_create_sweep(struct store *st, const char *body, const char *idem_key,
                       const struct new_experiment *cells, int n, int64_t *sweep_id, int *replayed)
{
    *replayed = 0;
    struct submission u = {body, idem_key, cells, n, 1, sweep_id, replayed};
    return db_run(st, submit, &u);
}

static int cancel(struct store *st, void *arg)
{
    int64_t id = *(int64_t *)arg;
    struct conn *c = &st->writer;
    sqlite3_stmt *s;
    int rc = db_one_row(c, q_exp_state, id, &s);
    if (rc != ST_OK)
        return rc;
    char state[16];
    snprintf(state, sizeof state, "%s", (const char *)sqlite3_column_text(s, 0));
    if (!strcmp(state, "queued") || !strcmp(state, "waiting")) {
        s = db_stmt(c, q_cancel_queued);
        if (!s)
            return ST_ERROR;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_double(s, 2, store_now());
    } else if (!strcmp(state, "running")) {
        s = db_stmt(c, q_cancel_running);
        if (!s)
            return ST_ERROR;
        sqlite3_bind_int64(s, 1, id);
    } else {
        return ST_CONFLICT;
    }
    return db_exec(c, s) == 0 ? ST_OK : ST_ERROR;
}

int store_cancel(struct store *st, int64_t id)
{
    return db_run(st, cancel, &id);
}

struct chain_cancel {
    int64_t id;
    int *n;
};

/* Those that wait first, so that none is blocked on its way to cancelled. */
static int cancel_chain(struct store *st, void *arg)
{
    struct chain_cancel *a = arg;
    int rc = db_chain_cancel(&st->writer, a->id, store_now(), a->n);
    if (rc != ST_OK)
        return rc;
    rc = cancel(st, &a->id);
    return rc == ST_CONFLICT ? ST_OK : rc;
}

int store_cancel_chain(struct store *st, int64_t id, int *n)
{
    struct chain_cancel a = {id, n};
    *n = 0;
    return db_run(st, cancel_chain, &a);
}
