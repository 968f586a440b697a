/* The worker registry: registering, a worker saying it stops, removing a
 * gone one, and each worker's state from what the server last heard of it
 * (store.h). */
#include "schema/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char q_insert_worker[] =
    "INSERT INTO workers (name, device, capacity, registered, last_seen, host, secret)"
    " VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6)";
static const char q_seen[] =
    "UPDATE workers SET last_seen = ?2 WHERE id = ?1";
static const char q_worker_stop[] =
    "UPDATE workers SET stopped = ?2 WHERE id = ?1 AND removed IS NULL";
static const char q_worker_gone[] =
    "SELECT w.last_seen, w.stopped IS NOT NULL, (SELECT count(*) FROM run_members m"
    " WHERE m.worker_id = w.id AND m.active = 1)"
    " FROM workers w WHERE w.id = ?1 AND w.removed IS NULL";
static const char q_worker_remove[] =
    "UPDATE workers SET removed = ?2 WHERE id = ?1";
static const char q_workers[] =
    "SELECT w.id, w.name, w.device, w.capacity, w.registered, w.last_seen,"
    " (SELECT group_concat(r.experiment_id) FROM run_members m JOIN runs r ON r.id = m.run_id"
    "  WHERE m.worker_id = w.id AND m.active = 1), w.stopped IS NOT NULL, w.host,"
    " w.waiting_until"
    " FROM workers w WHERE w.removed IS NULL ORDER BY w.id";

struct new_worker {
    const char *name, *device, *host;
    int capacity;
    int64_t *id;
    char secret[STORE_SECRET_SIZE];
};

static int register_worker(struct store *st, void *arg)
{
    struct new_worker *w = arg;
    struct conn *c = &st->writer;
    sqlite3_stmt *s = db_stmt(c, q_insert_worker);
    if (!s || db_new_secret(w->secret) != 0)
        return ST_ERROR;
    db_bind_text(s, 1, w->name);
    db_bind_text(s, 2, w->device);
    sqlite3_bind_int(s, 3, w->capacity);
    sqlite3_bind_double(s, 4, store_now());
    db_bind_text(s, 5, w->host);
    db_bind_text(s, 6, w->secret);
    if (db_exec(c, s) != 0)
        return ST_ERROR;
    *w->id = sqlite3_last_insert_rowid(c->db);
    return ST_OK;
}

int store_register_worker(struct store *st, const char *name, const char *device, int capacity,
                          const char *host, int64_t *id, char *secret)
{
    struct new_worker w = {name, device, host, capacity, id, ""};
    int rc = db_run(st, register_worker, &w);
    if (rc == ST_OK && secret)
        snprintf(secret, STORE_SECRET_SIZE, "%s", w.secret);
    return rc;
}

int db_touch_worker(struct conn *c, int64_t worker, double now)
{
    sqlite3_stmt *s = db_stmt(c, q_seen);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, worker);
    sqlite3_bind_double(s, 2, now);
    return db_exec(c, s);
}

/* A worker's state from what the server last heard of it (store.h). */
static const char *worker_state(int stopped, double age, double lost_after, int runs)
{
    return stopped ? "offline" : age > lost_after ? "lost" : runs ? "busy" : "idle";
}

static int worker_offline(struct store *st, void *arg)
{
    struct conn *c = &st->writer;
    sqlite3_stmt *s = db_stmt(c, q_worker_stop);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, *(int64_t *)arg);
    sqlite3_bind_double(s, 2, store_now());
    if (db_exec(c, s) != 0)
        return ST_ERROR;
    return sqlite3_changes(c->db) ? ST_OK : ST_NOTFOUND;
}

int store_worker_offline(struct store *st, int64_t worker)
{
    return db_run(st, worker_offline, &worker);
}

struct removal {
    int64_t worker;
    double lost_after;
    char *state;
    size_t n;
    int *runs;
};

static int remove_worker(struct store *st, void *arg)
{
    struct removal *m = arg;
    struct conn *c = &st->writer;
    double now = store_now();
    sqlite3_stmt *s;
    int rc = db_one_row(c, q_worker_gone, m->worker, &s);
    if (rc != ST_OK)
        return rc;
    *m->runs = sqlite3_column_int(s, 2);
    const char *is = worker_state(sqlite3_column_int(s, 1), now - sqlite3_column_double(s, 0),
                                  m->lost_after, *m->runs);
    snprintf(m->state, m->n, "%s", is);
    /* A worker still heard from, or one whose run has yet to lapse, stays. */
    if (*m->runs || (strcmp(is, "offline") && strcmp(is, "lost")))
        return ST_CONFLICT;
    if (!(s = db_stmt(c, q_worker_remove)))
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, m->worker);
    sqlite3_bind_double(s, 2, now);
    return db_exec(c, s) == 0 ? ST_OK : ST_ERROR;
}

int store_remove_worker(struct store *st, int64_t worker, double lost_after, char *state,
                        size_t n, int *runs)
{
    struct removal m = {worker, lost_after, state, n, runs};
    return db_run(st, remove_worker, &m);
}

void worker_rows_free(struct worker_row *w, int n)
{
    for (int i = 0; w && i < n; i++) {
        free(w[i].name);
        free(w[i].device);
        free(w[i].host);
        free(w[i].experiments);
    }
    free(w);
}

/* group_concat's comma-separated ids into w. */
static int experiments_of(const char *list, struct worker_row *w)
{
    int n = 0;
    for (const char *p = list; p && *p; p++)
        n += *p == ',';
    w->experiments = malloc((size_t)(n + 1) * sizeof *w->experiments);
    if (!w->experiments)
        return -1;
    for (const char *p = list; p && *p;) {
        char *e;
        w->experiments[w->n_experiments++] = strtoll(p, &e, 10);
        p = *e ? e + 1 : e;
    }
    return 0;
}

int db_worker_rows(struct conn *c, double lost_after, struct worker_row **rows, int *n)
{
    sqlite3_stmt *s = db_stmt(c, q_workers);
    *rows = NULL;
    *n = 0;
    if (!s)
        return ST_ERROR;
    double now = store_now();
    int rc = SQLITE_ERROR, cap = 0, bad = 0;
    while (!bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            struct worker_row *more = realloc(*rows, (size_t)cap * sizeof *more);
            if (!more) {
                bad = 1;
                break;
            }
            *rows = more;
        }
        struct worker_row *w = &(*rows)[(*n)++];
        memset(w, 0, sizeof *w);
        w->id = sqlite3_column_int64(s, 0);
        w->name = db_col_text(s, 1, &bad);
        w->device = db_col_text(s, 2, &bad);
        w->capacity = sqlite3_column_int(s, 3);
        w->registered = sqlite3_column_double(s, 4);
        w->heartbeat_age_s = now - sqlite3_column_double(s, 5);
        bad |= experiments_of((const char *)sqlite3_column_text(s, 6), w);
        w->state = worker_state(sqlite3_column_int(s, 7), w->heartbeat_age_s, lost_after,
                                w->n_experiments);
        w->host = db_col_text(s, 8, &bad);
        w->waiting = sqlite3_column_double(s, 9) >= now;
    }
    if (!bad && rc == SQLITE_DONE)
        return ST_OK;
    worker_rows_free(*rows, *n);
    *rows = NULL;
    *n = 0;
    return ST_ERROR;
}

int store_workers(struct store *st, double lost_after, struct worker_row **rows, int *n)
{
    struct conn *c = db_reader_get(st);
    int ret = db_worker_rows(c, lost_after, rows, n);
    db_reader_put(st, c);
    return ret;
}
