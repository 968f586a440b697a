/* Gangs: a run held by several workers at once, one per rank, scheduled
 * all or nothing (leases.c decides when to form one; this file forms it),
 * each rank with its own lease, and the rendezvous through which the ranks
 * meet. Placement packs a gang onto the fewest hosts: the waiting workers
 * are taken host by host, the hosts with the most first, so that ranks
 * that share a machine (and NVLink) are neighbours. */
#include "schema/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char q_waiting[] =
    "SELECT w.id, w.host, w.secret IS NOT NULL FROM workers w"
    " WHERE w.device = 'cuda' AND w.removed IS NULL AND w.stopped IS NULL"
    " AND w.waiting_until >= ?1"
    " AND w.capacity > (SELECT count(*) FROM run_members m"
    "  WHERE m.worker_id = w.id AND m.active = 1)"
    " ORDER BY w.host, w.id";
static const char q_live_cuda[] =
    "SELECT count(*) FROM workers WHERE device = 'cuda' AND removed IS NULL"
    " AND stopped IS NULL AND last_seen >= ?1";
static const char q_insert_gang_run[] =
    "INSERT INTO runs (experiment_id, worker_id, state, started, lease_expires, world_size,"
    " rendezvous_by) VALUES (?1, ?2, 'active', ?3, ?4, ?5, ?6)";
static const char q_insert_member[] =
    "INSERT INTO run_members (run_id, rank, worker_id, lease_expires, told, secret)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
/* written only when it changes: a worker that was not parked (every CPU
 * worker) costs its lease no row rewrite */
static const char q_not_waiting[] =
    "UPDATE workers SET waiting_until = 0 WHERE id = ?1 AND waiting_until <> 0";
static const char q_member[] =
    "SELECT worker_id FROM run_members WHERE run_id = ?1 AND rank = ?2";
static const char q_member_lease[] =
    "UPDATE run_members SET lease_expires = ?3 WHERE run_id = ?1 AND rank = ?2";
static const char q_run_lease[] =
    "UPDATE runs SET lease_expires = (SELECT min(lease_expires) FROM run_members"
    " WHERE run_id = ?1) WHERE id = ?1";
static const char q_rdv_get[] =
    "SELECT rendezvous FROM runs WHERE id = ?1";
static const char q_rdv_set[] =
    "UPDATE runs SET rendezvous = ?2 WHERE id = ?1";
/* named, as without statistics SQLite would take runs_active and read every
 * active run (schema/rendezvous_due.sql) */
static const char q_rdv_late[] =
    "SELECT r.id, r.experiment_id, e.attempts, e.max_attempts, e.cancel_req, r.world_size"
    " FROM runs r INDEXED BY runs_rendezvous_due JOIN experiments e ON e.id = r.experiment_id"
    " WHERE r.state = 'active' AND r.world_size > 1 AND r.rendezvous IS NULL"
    " AND r.rendezvous_by < ?1";

int db_live_cuda_workers(struct conn *c, double since, int *n)
{
    sqlite3_stmt *s = db_stmt(c, q_live_cuda);
    if (!s)
        return -1;
    sqlite3_bind_double(s, 1, since);
    if (sqlite3_step(s) != SQLITE_ROW)
        return -1;
    *n = sqlite3_column_int(s, 0);
    return 0;
}

int db_not_waiting(struct conn *c, int64_t worker)
{
    sqlite3_stmt *s = db_stmt(c, q_not_waiting);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, worker);
    return db_exec(c, s);
}

struct waiting {
    int64_t id;
    char host[128];
    int host_count;
    int with_secret;
};

/* hosts with the most waiting workers first, then by name, then by id */
static int by_packing(const void *a, const void *b)
{
    const struct waiting *x = a, *y = b;
    if (x->host_count != y->host_count)
        return y->host_count - x->host_count;
    int h = strcmp(x->host, y->host);
    return h ? h : (x->id > y->id) - (x->id < y->id);
}

int db_form_gang(struct conn *c, int64_t exp, int n, double now, double lease_s,
                 double rendezvous_s, int64_t *run, int64_t *members)
{
    *run = 0;
    sqlite3_stmt *s = db_stmt(c, q_waiting);
    if (!s)
        return -1;
    sqlite3_bind_double(s, 1, now);
    struct waiting *w = NULL;
    int count = 0, cap = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            void *p = realloc(w, (size_t)cap * sizeof *w);
            if (!p) {
                free(w);
                return -1;
            }
            w = p;
        }
        w[count].id = sqlite3_column_int64(s, 0);
        snprintf(w[count].host, sizeof w[count].host, "%s",
                 (const char *)sqlite3_column_text(s, 1));
        w[count].with_secret = sqlite3_column_int(s, 2);
        count++;
    }
    if (rc != SQLITE_DONE) {
        free(w);
        return -1;
    }
    if (count < n) {
        free(w);
        return 0;
    }
    /* rows come sorted by host: count each host's run of rows */
    for (int i = 0; i < count;) {
        int j = i;
        while (j < count && !strcmp(w[j].host, w[i].host))
            j++;
        for (int k = i; k < j; k++)
            w[k].host_count = j - i;
        i = j;
    }
    qsort(w, (size_t)count, sizeof *w, by_packing);
    if (!(s = db_stmt(c, q_insert_gang_run))) {
        free(w);
        return -1;
    }
    sqlite3_bind_int64(s, 1, exp);
    sqlite3_bind_int64(s, 2, w[0].id);
    sqlite3_bind_double(s, 3, now);
    sqlite3_bind_double(s, 4, now + lease_s);
    sqlite3_bind_int(s, 5, n);
    sqlite3_bind_double(s, 6, now + rendezvous_s);
    if (db_exec(c, s) != 0) {
        free(w);
        return -1;
    }
    *run = sqlite3_last_insert_rowid(c->db);
    for (int rank = 0; rank < n; rank++) {
        if (db_add_member(c, *run, rank, w[rank].id, now + lease_s, 0, w[rank].with_secret, NULL) != 0 ||
            db_not_waiting(c, w[rank].id) != 0) {
            free(w);
            return -1;
        }
        members[rank] = w[rank].id;
    }
    free(w);
    return 0;
}

int db_add_member(struct conn *c, int64_t run, int rank, int64_t worker, double expires, int told,
                  int with_secret, char *secret)
{
    char made[STORE_SECRET_SIZE] = "";
    if (with_secret && db_new_secret(made) != 0)
        return -1;
    sqlite3_stmt *s = db_stmt(c, q_insert_member);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, run);
    sqlite3_bind_int(s, 2, rank);
    sqlite3_bind_int64(s, 3, worker);
    sqlite3_bind_double(s, 4, expires);
    sqlite3_bind_int(s, 5, told);
    db_bind_text(s, 6, with_secret ? made : NULL);
    if (secret)
        snprintf(secret, STORE_SECRET_SIZE, "%s", made);
    return db_exec(c, s);
}

int db_member_worker(struct conn *c, int64_t run, int rank, int64_t *worker)
{
    sqlite3_stmt *s = db_stmt(c, q_member);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, run);
    sqlite3_bind_int(s, 2, rank);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE)
        return ST_NOTFOUND;
    if (rc != SQLITE_ROW)
        return ST_ERROR;
    *worker = sqlite3_column_int64(s, 0);
    return ST_OK;
}

int db_extend_member(struct conn *c, int64_t run, int rank, double expires)
{
    sqlite3_stmt *s = db_stmt(c, q_member_lease);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, run);
    sqlite3_bind_int(s, 2, rank);
    sqlite3_bind_double(s, 3, expires);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_run_lease)))
        return -1;
    sqlite3_bind_int64(s, 1, run);
    return db_exec(c, s);
}

static int rendezvous_set(struct store *st, int64_t run, const char *id)
{
    struct conn *c = &st->writer;
    double now;
    struct run_row r;
    int rc = db_run_row(st, run, &now, &r);
    if (rc != ST_OK)
        return rc;
    if (!r.active)
        return ST_CONFLICT;
    sqlite3_stmt *s = db_stmt(c, q_rdv_get);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, run);
    if (sqlite3_step(s) != SQLITE_ROW)
        return ST_ERROR;
    const char *have = (const char *)sqlite3_column_text(s, 0);
    if (have) /* posted already: the same id again is a retry, another one refused */
        return strcmp(have, id) ? ST_INVALID : ST_OK;
    if (!(s = db_stmt(c, q_rdv_set)))
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, run);
    sqlite3_bind_text(s, 2, id, -1, SQLITE_TRANSIENT);
    return db_exec(c, s) == 0 ? ST_OK : ST_ERROR;
}

struct rendezvous {
    int64_t run;
    const char *id;
};

static int rendezvous_job(struct store *st, void *arg)
{
    struct rendezvous *v = arg;
    return rendezvous_set(st, v->run, v->id);
}

int store_rendezvous_set(struct store *st, int64_t run, const char *id)
{
    struct rendezvous v = {run, id};
    return db_run(st, rendezvous_job, &v);
}

int store_rendezvous_get(struct store *st, int64_t run, char *id, size_t len)
{
    id[0] = 0;
    struct conn *c = db_reader_get(st);
    sqlite3_stmt *s = db_stmt(c, q_rdv_get);
    int rc = ST_ERROR;
    if (s) {
        sqlite3_bind_int64(s, 1, run);
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE)
            rc = ST_NOTFOUND;
        else if (step == SQLITE_ROW) {
            const char *have = (const char *)sqlite3_column_text(s, 0);
            if (have)
                snprintf(id, len, "%s", have);
            rc = ST_OK;
        }
    }
    db_reader_put(st, c);
    return rc;
}

int db_reap_rendezvous(struct conn *c, double now, double rendezvous_s, int *n)
{
    *n = 0;
    sqlite3_stmt *s = db_stmt(c, q_rdv_late);
    if (!s)
        return -1;
    sqlite3_bind_double(s, 1, now);
    struct late {
        int64_t run, exp;
        int attempts, max_attempts, cancel_req, world;
    } *l = NULL;
    int count = 0, cap = 0, rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (count == cap) {
            cap = cap ? 2 * cap : 8;
            void *p = realloc(l, (size_t)cap * sizeof *l);
            if (!p) {
                free(l);
                return -1;
            }
            l = p;
        }
        l[count++] = (struct late){sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
                                   sqlite3_column_int(s, 2), sqlite3_column_int(s, 3),
                                   sqlite3_column_int(s, 4), sqlite3_column_int(s, 5)};
    }
    int bad = rc != SQLITE_DONE;
    for (int i = 0; !bad && i < count; i++) {
        char reason[160];
        snprintf(reason, sizeof reason, "the gang of %d did not rendezvous within %.0f s",
                 l[i].world, rendezvous_s);
        bad = db_requeue(c, l[i].run, l[i].exp, l[i].attempts, l[i].max_attempts, l[i].cancel_req,
                         reason, now) != 0;
        *n += !bad;
    }
    free(l);
    return bad ? -1 : 0;
}
