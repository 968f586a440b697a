/* Outages: the database unavailable for a reason outside the store (db.h).
 * A disk that fails or is full, or a lock another process holds on the
 * database (an sqlite3 shell's transaction, a VACUUM) for longer than the
 * lock timeout, fails a request that would succeed a moment later; the
 * store's own errors (a broken statement, out of memory) would not. The
 * store notes the first kind as it logs SQLite's failures and as it resets
 * the statements that failed, so that the API can answer 503 (try again)
 * rather than 500, and it waits for other processes' locks with a busy
 * handler of its own that says in the log when a write is held up, which
 * a silent wait would hide. The connections (conn.c) call it; it calls
 * nothing of the store. */
#include "schema/db.h"

#include <stdio.h>

/* The SQLite results that come from the disk or from another process's
 * lock (primary codes: their extended codes only say which syscall). */
static int outside_the_store(int code)
{
    switch (code & 0xff) {
    case SQLITE_IOERR:    /* a read, write, fsync or truncate failed */
    case SQLITE_FULL:     /* the disk is full */
    case SQLITE_CANTOPEN: /* the WAL or the database file cannot be opened now */
    case SQLITE_BUSY:     /* another process held its lock past the lock timeout */
        return 1;
    default:
        return 0;
    }
}

void db_outage_init(struct db_outage *o)
{
    pthread_mutex_init(&o->lock, NULL);
    o->at = 0;
    o->code = SQLITE_OK;
    o->lock_wait_s = 10;
}

void db_outage_destroy(struct db_outage *o)
{
    pthread_mutex_destroy(&o->lock);
}

void db_outage_note(struct conn *c, double now)
{
    int code = sqlite3_extended_errcode(c->db);
    if (!outside_the_store(code))
        return;
    pthread_mutex_lock(&c->outage->lock);
    c->outage->at = now;
    c->outage->code = code;
    pthread_mutex_unlock(&c->outage->lock);
}

int store_unavailable_since(struct store *st, double since, char *why, size_t len)
{
    pthread_mutex_lock(&st->outage.lock);
    int seen = st->outage.at > 0 && st->outage.at >= since;
    int code = st->outage.code;
    pthread_mutex_unlock(&st->outage.lock);
    if (seen)
        snprintf(why, len, "%s", sqlite3_errstr(code));
    return seen;
}

void store_set_lock_timeout(struct store *st, double seconds)
{
    pthread_mutex_lock(&st->outage.lock);
    st->outage.lock_wait_s = seconds;
    pthread_mutex_unlock(&st->outage.lock);
}

/* SQLite's own busy timeout sleeps 1, 2, 5 … ms, then 100 ms at a time;
 * the same here, so a lock released soon costs little. */
static const int wait_ms[] = {1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
enum { N_WAITS = (int)(sizeof wait_ms / sizeof *wait_ms) };

/* What the first `tries` sleeps of one wait add up to, in ms. */
static double waited_ms(int tries)
{
    double ms = 0;
    for (int i = 0; i < tries && i < N_WAITS; i++)
        ms += wait_ms[i];
    if (tries > N_WAITS)
        ms += (double)(tries - N_WAITS) * wait_ms[N_WAITS - 1];
    return ms;
}

int db_lock_wait(void *conn, int tries)
{
    struct conn *c = conn;
    pthread_mutex_lock(&c->outage->lock);
    double limit_ms = c->outage->lock_wait_s * 1e3;
    pthread_mutex_unlock(&c->outage->lock);
    double done = waited_ms(tries);
    if (done >= limit_ms)
        return 0; /* SQLITE_BUSY: noted as an outage when the store logs it */
    if (tries == 0)
        fprintf(stderr,
                "cod-server: sqlite: the database is locked by another connection; "
                "waiting up to %g s for it\n", limit_ms / 1e3);
    double ms = wait_ms[tries < N_WAITS ? tries : N_WAITS - 1];
    if (done + ms > limit_ms)
        ms = limit_ms - done;
    sqlite3_sleep(ms < 1 ? 1 : (int)ms);
    return 1;
}
