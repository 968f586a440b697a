/* A connection of the store (db.h): opened with the store's busy handler
 * and durability settings, its statements prepared once and kept, reset
 * as a transaction or a read ends, and every SQLite failure logged and
 * noted as an outage when it came from outside (outage.c). Below the
 * store's writer, readers and group commit (db.c) and every file of SQL;
 * it calls none of them. */
#include "schema/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schema/syncvfs.h"

double store_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void db_log_sql(struct conn *c, const char *what)
{
    db_outage_note(c, store_now());
    fprintf(stderr, "cod-server: sqlite: %s: %s\n", what, sqlite3_errmsg(c->db));
}

static void note_used(struct conn *c, int i)
{
    if (!c->used[i]) {
        c->used[i] = 1;
        c->used_at[c->n_used++] = i;
    }
}

sqlite3_stmt *db_stmt(struct conn *c, const char *sql)
{
    for (int i = 0; i < c->n_st; i++)
        if (c->st[i].sql == sql) {
            sqlite3_reset(c->st[i].st);
            sqlite3_clear_bindings(c->st[i].st);
            note_used(c, i);
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
    c->st[c->n_st].st = s;
    note_used(c, c->n_st++);
    return s;
}

/* Ends whatever statement of c is still stepping (and with it a read
 * transaction). A reset returns the error of a step that failed, which
 * many callers only pass on as ST_ERROR: it is noted here if the disk or
 * another process's lock caused it (outage.c). */
void db_reset_used(struct conn *c)
{
    for (int k = 0; k < c->n_used; k++) {
        int i = c->used_at[k];
        c->used[i] = 0;
        if (sqlite3_reset(c->st[i].st) != SQLITE_OK)
            db_outage_note(c, store_now());
    }
    c->n_used = 0;
}

int db_conn_open(struct conn *c, const char *path, int flags, struct db_outage *outage,
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

void db_conn_close(struct conn *c)
{
    for (int i = 0; i < c->n_st; i++)
        sqlite3_finalize(c->st[i].st);
    c->n_st = c->n_used = 0;
    memset(c->used, 0, sizeof c->used);
    sqlite3_close(c->db);
    c->db = NULL;
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

char *db_col_text(sqlite3_stmt *s, int i, int *bad)
{
    const char *t = (const char *)sqlite3_column_text(s, i);
    char *copy = t ? strdup(t) : NULL;
    *bad |= t && !copy;
    return copy;
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
