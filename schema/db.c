/* The store's connections and transactions (db.h): a writer under a
 * mutex, a pool of readers, statements prepared once and kept.
 *
 * Group commit: writes that arrive together share one transaction and one
 * fsync. Each request runs in a savepoint of the writer's open transaction
 * (so a refused or failing request leaves no trace while the others
 * stand), then waits; the request that finds no other writer waiting for
 * the connection commits the whole batch (synchronous=FULL: on disk), and
 * only then does any request of it return. Nothing is answered before it
 * is durable, and a batch whose commit fails fails every request of it. A
 * batch is committed at BATCH_MAX requests or BATCH_MAX_S seconds of age
 * even while writers keep coming, which bounds the wait it adds. */
#include "schema/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schema/migrate.h"
#include "schema/syncvfs.h"

static const char q_begin[] =
    "BEGIN IMMEDIATE";
static const char q_commit[] =
    "COMMIT";
static const char q_rollback[] =
    "ROLLBACK";
static const char q_savepoint[] =
    "SAVEPOINT req";
static const char q_release[] =
    "RELEASE req";
static const char q_undo[] =
    "ROLLBACK TO req";

enum { BATCH_MAX = 256 };
#define BATCH_MAX_S 0.005

/* A request of the open batch, waiting for its commit. */
struct waiter {
    int rc;
    int done;
    struct waiter *next;
};

double store_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void db_log_sql(struct conn *c, const char *what)
{
    db_outage_note(c);
    fprintf(stderr, "cod-server: sqlite: %s: %s\n", what, sqlite3_errmsg(c->db));
}

sqlite3_stmt *db_stmt(struct conn *c, const char *sql)
{
    for (int i = 0; i < c->n_st; i++)
        if (c->st[i].sql == sql) {
            sqlite3_reset(c->st[i].st);
            sqlite3_clear_bindings(c->st[i].st);
            return c->st[i].st;
        }
    if (c->n_st == DB_MAX_STMTS) {
        fprintf(stderr, "cod-server: sqlite: more than %d statements: %s\n", DB_MAX_STMTS, sql);
        return NULL;
    }
    sqlite3_stmt *s;
    if (sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
        db_log_sql(c, sql);
        return NULL;
    }
    c->st[c->n_st].sql = sql;
    c->st[c->n_st++].st = s;
    return s;
}

/* Ends whatever statement of c is still stepping (and with it a read
 * transaction). A reset returns the error of a step that failed, which
 * many callers only pass on as ST_ERROR: it is noted here if the disk or
 * another process's lock caused it (outage.c). */
static void reset_all(struct conn *c)
{
    for (int i = 0; i < c->n_st; i++)
        if (sqlite3_reset(c->st[i].st) != SQLITE_OK)
            db_outage_note(c);
}

static int conn_open(struct conn *c, const char *path, int flags, struct db_outage *outage,
                     char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->outage = outage;
    if (syncvfs_register() != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot wrap SQLite's default VFS", path);
        return -1;
    }
    if (sqlite3_open_v2(path, &c->db, flags | SQLITE_OPEN_NOMUTEX, SYNCVFS_NAME) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, c->db ? sqlite3_errmsg(c->db) : "out of memory");
        return -1;
    }
    char *msg = NULL;
    /* synchronous=FULL: a 2xx means the write is on disk (docs/api.md). */
    if (sqlite3_busy_handler(c->db, db_lock_wait, c) != SQLITE_OK ||
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
    for (int i = 0; i < c->n_st; i++)
        sqlite3_finalize(c->st[i].st);
    c->n_st = 0;
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
    beats_init(&st->beats);
    pthread_mutex_init(&st->wlock, NULL);
    pthread_mutex_init(&st->gate, NULL);
    pthread_cond_init(&st->committed, NULL);
    pthread_mutex_init(&st->rlock, NULL);
    pthread_cond_init(&st->rfree, NULL);
    db_outage_init(&st->outage);
    if (conn_open(&st->writer, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &st->outage, err,
                  errlen) != 0)
        goto fail;
    char *msg = NULL, wal[96];
    snprintf(wal, sizeof wal, "PRAGMA journal_mode = WAL; PRAGMA journal_size_limit = %lld",
             STORE_WAL_LIMIT_BYTES);
    if (sqlite3_exec(st->writer.db, wal, NULL, NULL, &msg) != SQLITE_OK) {
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
        if (conn_open(&st->readers[i], path, SQLITE_OPEN_READONLY, &st->outage, err, errlen) != 0)
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
    beats_free(&st->beats);
    pthread_mutex_destroy(&st->wlock);
    pthread_mutex_destroy(&st->gate);
    pthread_cond_destroy(&st->committed);
    pthread_mutex_destroy(&st->rlock);
    pthread_cond_destroy(&st->rfree);
    db_outage_destroy(&st->outage);
    free(st);
}

struct conn *db_reader_get(struct store *st)
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

void db_reader_put(struct store *st, struct conn *c)
{
    reset_all(c);
    pthread_mutex_lock(&st->rlock);
    c->busy = 0;
    pthread_cond_signal(&st->rfree);
    pthread_mutex_unlock(&st->rlock);
}

/* Runs one statement to completion (writes). */
int db_exec(struct conn *c, sqlite3_stmt *s)
{
    if (!s)
        return -1;
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        db_log_sql(c, sqlite3_sql(s));
        return -1;
    }
    return 0;
}

/* Ends the open batch, with wlock held: its commit (or, when the
 * transaction is already gone or its commit fails, its failure) is told to
 * every request of it. */
static void batch_end(struct store *st)
{
    struct conn *c = &st->writer;
    int ok = !sqlite3_get_autocommit(c->db) && db_exec(c, db_stmt(c, q_commit)) == 0;
    if (!ok && !sqlite3_get_autocommit(c->db))
        db_exec(c, db_stmt(c, q_rollback));
    reset_all(c);
    st->in_txn = 0;
    st->batch_size = 0;
    st->commits++;
    pthread_mutex_lock(&st->gate);
    for (struct waiter *w = st->batch; w; w = w->next) {
        if (!ok)
            w->rc = ST_ERROR;
        w->done = 1;
    }
    st->batch = NULL;
    pthread_cond_broadcast(&st->committed);
    pthread_mutex_unlock(&st->gate);
}

/* With wlock held, before letting it go: the batch is committed now unless
 * another writer is about to join it (and it is still young and small). */
static void batch_maybe_end(struct store *st)
{
    if (!st->in_txn)
        return;
    pthread_mutex_lock(&st->gate);
    int others = st->wanting;
    pthread_mutex_unlock(&st->gate);
    if (st->solo || !others || st->batch_size >= BATCH_MAX ||
        store_now() - st->batch_started > BATCH_MAX_S)
        batch_end(st);
}

int db_begin(struct store *st)
{
    struct conn *c = &st->writer;
    pthread_mutex_lock(&st->gate);
    st->wanting++;
    pthread_mutex_unlock(&st->gate);
    pthread_mutex_lock(&st->wlock);
    pthread_mutex_lock(&st->gate);
    st->wanting--;
    pthread_mutex_unlock(&st->gate);
    if (!st->in_txn) {
        if (db_exec(c, db_stmt(c, q_begin)) != 0) {
            pthread_mutex_unlock(&st->wlock);
            return -1;
        }
        st->in_txn = 1;
        st->batch_started = store_now();
    }
    /* the heartbeats noted meanwhile go with the batch, outside any
     * request's savepoint */
    if (db_beats_flush(&st->beats, c, store_now()) != 0 ||
        db_exec(c, db_stmt(c, q_savepoint)) != 0) {
        /* the batch so far must not wait for this request */
        if (sqlite3_get_autocommit(c->db))
            batch_end(st);
        else
            batch_maybe_end(st);
        pthread_mutex_unlock(&st->wlock);
        return -1;
    }
    return 0;
}

int db_end(struct store *st, int rc)
{
    struct conn *c = &st->writer;
    if (rc == ST_OK && db_exec(c, db_stmt(c, q_release)) != 0)
        rc = ST_ERROR;
    if (rc != ST_OK && !sqlite3_get_autocommit(c->db) &&
        (db_exec(c, db_stmt(c, q_undo)) != 0 || db_exec(c, db_stmt(c, q_release)) != 0))
        rc = ST_ERROR;
    reset_all(c);
    struct waiter me = {rc, 0, NULL};
    pthread_mutex_lock(&st->gate);
    me.next = st->batch;
    st->batch = &me;
    pthread_mutex_unlock(&st->gate);
    st->batch_size++;
    /* SQLite rolls the whole transaction back on some errors (a full or
     * failing disk): then the batch is gone, and fails */
    if (sqlite3_get_autocommit(c->db))
        batch_end(st);
    else
        batch_maybe_end(st);
    pthread_mutex_unlock(&st->wlock);
    pthread_mutex_lock(&st->gate);
    while (!me.done)
        pthread_cond_wait(&st->committed, &st->gate);
    pthread_mutex_unlock(&st->gate);
    return me.rc;
}

void store_set_group_commit(struct store *st, int on)
{
    pthread_mutex_lock(&st->wlock);
    st->solo = !on;
    pthread_mutex_unlock(&st->wlock);
}

long db_commits(struct store *st)
{
    pthread_mutex_lock(&st->wlock);
    long n = st->commits;
    pthread_mutex_unlock(&st->wlock);
    return n;
}

int db_one_row(struct conn *c, const char *sql, int64_t id, sqlite3_stmt **out)
{
    sqlite3_stmt *s = *out = db_stmt(c, sql);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    return rc == SQLITE_ROW ? ST_OK : rc == SQLITE_DONE ? ST_NOTFOUND : ST_ERROR;
}

void db_bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

json_t *db_col_json(sqlite3_stmt *s, int i)
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
    struct conn *c = db_reader_get(st);
    sqlite3_stmt *s;
    int rc = -1;
    if (sqlite3_prepare_v2(c->db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW) {
            snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
            rc = 0;
        }
        sqlite3_finalize(s);
    }
    db_reader_put(st, c);
    return rc;
}

