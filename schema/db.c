/* The store's connections and transactions (db.h): a writer under a
 * mutex, a pool of readers, statements prepared once and kept. */
#include "schema/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schema/migrate.h"

static const char q_begin[] =
    "BEGIN IMMEDIATE";
static const char q_commit[] =
    "COMMIT";
static const char q_rollback[] =
    "ROLLBACK";

double store_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void db_log_sql(struct conn *c, const char *what)
{
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
 * transaction). */
static void reset_all(struct conn *c)
{
    for (int i = 0; i < c->n_st; i++)
        sqlite3_reset(c->st[i].st);
}

static int conn_open(struct conn *c, const char *path, int flags, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (sqlite3_open_v2(path, &c->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, c->db ? sqlite3_errmsg(c->db) : "out of memory");
        return -1;
    }
    char *msg = NULL;
    /* synchronous=FULL: a 2xx means the write is on disk (docs/api.md). */
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

int db_begin(struct store *st)
{
    pthread_mutex_lock(&st->wlock);
    if (db_exec(&st->writer, db_stmt(&st->writer, q_begin)) != 0) {
        pthread_mutex_unlock(&st->wlock);
        return -1;
    }
    return 0;
}

int db_end(struct store *st, int rc)
{
    struct conn *c = &st->writer;
    if (rc == ST_OK) {
        if (db_exec(c, db_stmt(c, q_commit)) != 0) {
            db_exec(c, db_stmt(c, q_rollback));
            rc = ST_ERROR;
        }
    } else {
        db_exec(c, db_stmt(c, q_rollback));
    }
    reset_all(c);
    pthread_mutex_unlock(&st->wlock);
    return rc;
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

