/* The secrets of workers and of runs' ranks (store.h): made from the
 * kernel's randomness when a worker registers or a rank is leased, and
 * read back for the API to compare with what a call carries. */
#include "schema/db.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static const char q_worker_secret[] =
    "SELECT coalesce(secret, '') FROM workers WHERE id = ?1";
static const char q_member_secret[] =
    "SELECT (SELECT coalesce(m.secret, '') FROM run_members m WHERE m.run_id = r.id"
    " AND m.rank = ?2) FROM runs r WHERE r.id = ?1";

int db_new_secret(char *out)
{
    unsigned char raw[(STORE_SECRET_SIZE - 1) / 2];
    for (size_t got = 0; got < sizeof raw;) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

/* The one text column of sql's row for (a, b) into out. */
static int read_secret(struct store *st, const char *sql, int64_t a, int b, char *out, size_t n)
{
    out[0] = 0;
    struct conn *c = db_reader_get(st);
    sqlite3_stmt *s = db_stmt(c, sql);
    int rc = ST_ERROR;
    if (s) {
        sqlite3_bind_int64(s, 1, a);
        if (sql == q_member_secret)
            sqlite3_bind_int(s, 2, b);
        int step = sqlite3_step(s);
        if (step == SQLITE_DONE) {
            rc = ST_NOTFOUND;
        } else if (step == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(s, 0);
            rc = v ? ST_OK : ST_INVALID;
            snprintf(out, n, "%s", v ? v : "");
        } else {
            db_log_sql(c, sql);
        }
    }
    db_reader_put(st, c);
    return rc;
}

int store_worker_secret(struct store *st, int64_t worker, char *secret, size_t n)
{
    return read_secret(st, q_worker_secret, worker, 0, secret, n);
}

int store_member_secret(struct store *st, int64_t run, int rank, char *secret, size_t n)
{
    return read_secret(st, q_member_secret, run, rank, secret, n);
}
