/* Heartbeats kept in memory. A heartbeat that only extends a lease changes
 * nothing that must survive a crash by itself: the server that restarts
 * gives every running lease a full lease of grace (store_grace, leases.c)
 * before its reaper may act, so an extension lost with the process costs
 * nothing. So a heartbeat is checked on a read connection and noted here,
 * never waiting for the writer or for an fsync; the extensions (and the
 * step and the worker's last call that came with them) reach the database
 * with the next write transaction, which every batch is (db.c calls
 * db_beats_flush at the start of a batch, outside any request's savepoint,
 * so a refused request never undoes them; a batch whose commit fails, as
 * on a full disk, gives them back to be written again, so that a disk
 * outage longer than a lease takes no lease from a worker that kept
 * beating); when nothing else writes, the reaper's thread writes them
 * every BEATS_FLUSH_S (store_flush_beats, db.c), so that a flush stays
 * small: it holds the writer, and with it every lease, report and finish,
 * for as long as its SQL runs (at 10,000 workers and a flush a second,
 * 20-60 ms). A flush takes the notes out under the table's lock and writes
 * them without it: a heartbeat never waits for the SQL of a flush. The
 * notes stay after they are written, so that a read connection that does
 * not yet see the batch still finds the extension here; a note long
 * expired is dropped. It writes through a connection (conn.c) and calls
 * nothing above it: db.c's batches call it. */
#include "schema/db.h"

#include <stdlib.h>

struct beat {
    int64_t run, worker, exp;
    int rank;
    long step;
    double expires, seen;
    int used, dirty;
};

static const char q_member[] =
    "UPDATE run_members SET lease_expires = max(lease_expires, ?3) WHERE run_id = ?1 AND rank = ?2";
static const char q_run[] =
    "UPDATE runs SET lease_expires = (SELECT min(lease_expires) FROM run_members"
    " WHERE run_id = ?1) WHERE id = ?1 AND state = 'active'";
static const char q_step[] =
    "UPDATE experiments SET step = max(step, ?2) WHERE id = ?1";
static const char q_seen[] =
    "UPDATE workers SET last_seen = max(last_seen, ?2) WHERE id = ?1";

static size_t slot(const struct beats *b, int64_t run, int rank)
{
    uint64_t h = (uint64_t)run * 0x9E3779B97F4A7C15ull ^ (uint64_t)rank * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29)) & (b->cap - 1);
}

static struct beat *find(struct beats *b, int64_t run, int rank, int add)
{
    if (!b->cap)
        return NULL;
    for (size_t i = slot(b, run, rank);; i = (i + 1) & (b->cap - 1)) {
        struct beat *e = &b->tab[i];
        if (!e->used) {
            if (!add)
                return NULL;
            *e = (struct beat){.run = run, .rank = rank, .used = 1};
            b->n++;
            return e;
        }
        if (e->run == run && e->rank == rank)
            return e;
    }
}

static int mark_dirty(struct beats *b, size_t i)
{
    if (b->n_dirty == b->dirty_cap) {
        size_t cap = b->dirty_cap ? 2 * b->dirty_cap : 256;
        size_t *p = realloc(b->dirty, cap * sizeof *p);
        if (!p)
            return -1;
        b->dirty = p;
        b->dirty_cap = cap;
    }
    b->dirty[b->n_dirty++] = i;
    b->tab[i].dirty = 1;
    return 0;
}

/* A table of cap slots keeping the notes still of use: the dirty ones, and
 * the ones that have not expired before `keep`. */
static int rebuild(struct beats *b, size_t cap, double keep)
{
    struct beat *old = b->tab;
    size_t old_cap = b->cap;
    struct beat *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    b->tab = t;
    b->cap = cap;
    b->n = 0;
    b->n_dirty = 0;
    int rc = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].used && (old[i].dirty || old[i].expires >= keep)) {
            struct beat *e = find(b, old[i].run, old[i].rank, 1);
            *e = old[i];
            if (e->dirty)
                rc |= mark_dirty(b, (size_t)(e - b->tab));
        }
    free(old);
    return rc;
}

void beats_init(struct beats *b)
{
    *b = (struct beats){0};
    pthread_mutex_init(&b->lock, NULL);
}

void beats_free(struct beats *b)
{
    free(b->tab);
    free(b->dirty);
    free(b->unsettled);
    pthread_mutex_destroy(&b->lock);
}

int beats_note(struct beats *b, const struct beat_note *n)
{
    pthread_mutex_lock(&b->lock);
    if ((b->n + 1) * 2 > b->cap && rebuild(b, b->cap ? 2 * b->cap : 1024, 0) != 0) {
        pthread_mutex_unlock(&b->lock);
        return -1;
    }
    struct beat *e = find(b, n->run, n->rank, 1);
    e->worker = n->worker;
    e->exp = n->exp;
    if (n->expires > e->expires)
        e->expires = n->expires;
    if (n->step > e->step)
        e->step = n->step;
    e->seen = n->seen;
    int rc = e->dirty ? 0 : mark_dirty(b, (size_t)(e - b->tab));
    pthread_mutex_unlock(&b->lock);
    return rc;
}

double beats_expiry(struct beats *b, int64_t run, int rank)
{
    pthread_mutex_lock(&b->lock);
    struct beat *e = find(b, run, rank, 0);
    double t = e ? e->expires : 0;
    pthread_mutex_unlock(&b->lock);
    return t;
}

static int flush_one(struct conn *c, const struct beat *e)
{
    sqlite3_stmt *s = db_stmt(c, q_member);
    if (!s)
        return -1;
    sqlite3_bind_int64(s, 1, e->run);
    sqlite3_bind_int(s, 2, e->rank);
    sqlite3_bind_double(s, 3, e->expires);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_run)))
        return -1;
    sqlite3_bind_int64(s, 1, e->run);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_step)))
        return -1;
    sqlite3_bind_int64(s, 1, e->exp);
    sqlite3_bind_int64(s, 2, e->step);
    if (db_exec(c, s) != 0 || !(s = db_stmt(c, q_seen)))
        return -1;
    sqlite3_bind_int64(s, 1, e->worker);
    sqlite3_bind_double(s, 2, e->seen);
    return db_exec(c, s);
}

/* Notes taken for a write that did not reach the disk: the next flush
 * writes them, with whatever newer heartbeats have added to them. */
static void redirty(struct beats *b, const struct beat *out, size_t n)
{
    pthread_mutex_lock(&b->lock);
    for (size_t k = 0; k < n; k++) {
        struct beat *e = find(b, out[k].run, out[k].rank, 0);
        if (e && !e->dirty && mark_dirty(b, (size_t)(e - b->tab)) != 0)
            break;
    }
    pthread_mutex_unlock(&b->lock);
}

int db_beats_flush(struct beats *b, struct conn *c, double now)
{
    pthread_mutex_lock(&b->lock);
    size_t n = b->n_dirty;
    struct beat *out = n ? malloc(n * sizeof *out) : NULL;
    if (n && !out) {
        pthread_mutex_unlock(&b->lock);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        out[k] = b->tab[b->dirty[k]];
        b->tab[b->dirty[k]].dirty = 0;
    }
    b->n_dirty = 0;
    int rc = 0;
    /* notes that expired a while ago serve nobody: drop them now and then */
    if (now - b->pruned > 10) {
        b->pruned = now;
        rc = rebuild(b, b->cap ? b->cap : 1024, now - 60);
    }
    pthread_mutex_unlock(&b->lock);
    for (size_t k = 0; rc == 0 && k < n; k++)
        rc = flush_one(c, &out[k]);
    if (rc != 0) {
        redirty(b, out, n);
        free(out);
        return rc;
    }
    b->unsettled = out;
    b->n_unsettled = n;
    return 0;
}

void db_beats_settle(struct beats *b, int committed)
{
    if (!committed)
        redirty(b, b->unsettled, b->n_unsettled);
    free(b->unsettled);
    b->unsettled = NULL;
    b->n_unsettled = 0;
}
