/* Chains of experiments: an experiment that waits for others (docs/api.md,
 * "Chains"). Linking a new one to those it waits for sets its first state
 * (waiting, queued when they have all succeeded, blocked when one never
 * will); from then on the triggers of schema/chains.sql move it as they
 * end. The chain around an experiment for its view, and a chain cancelled
 * from its first experiment, are here too. */
#include "schema/db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char q_dep[] =
    "SELECT state, name, reason FROM experiments WHERE id = ?1";
static const char q_link[] =
    "INSERT OR IGNORE INTO waits (experiment_id, after_id) VALUES (?1, ?2)";
/* whether id is among the experiments its dependencies wait for, however
 * far back: a chain that closes on itself */
static const char q_cycle[] =
    "WITH RECURSIVE up(x) AS (SELECT after_id FROM waits WHERE experiment_id = ?1"
    " UNION SELECT w.after_id FROM waits w JOIN up ON w.experiment_id = up.x)"
    " SELECT count(*) FROM up WHERE x = ?1";
static const char q_first_state[] =
    "UPDATE experiments SET state = ?2, reason = ?3, finished = ?4 WHERE id = ?1";
static const char q_after[] =
    "SELECT e.id, e.name, e.state FROM waits w JOIN experiments e ON e.id = w.after_id"
    " WHERE w.experiment_id = ?1 ORDER BY e.id";
static const char q_then[] =
    "SELECT e.id, e.name, e.state FROM waits w JOIN experiments e ON e.id = w.experiment_id"
    " WHERE w.after_id = ?1 ORDER BY e.id";
/* every experiment that waits on ?1, directly or through others */
#define DOWN                                                                                 \
    "WITH RECURSIVE down(x) AS (SELECT experiment_id FROM waits WHERE after_id = ?1"         \
    " UNION SELECT w.experiment_id FROM waits w JOIN down ON w.after_id = down.x)"
static const char q_cancel_waiting[] =
    DOWN " UPDATE experiments SET state = 'cancelled', finished = ?2,"
         " reason = 'cancelled with its chain, from experiment ' || ?1"
         " WHERE id IN (SELECT x FROM down) AND state IN ('waiting', 'queued')";
static const char q_cancel_running[] =
    DOWN " UPDATE experiments SET cancel_req = 1"
         " WHERE id IN (SELECT x FROM down) AND state = 'running'";
static const char q_chain_count[] =
    DOWN " SELECT count(*) FROM down";

int db_chain_link(struct conn *c, int64_t id, const int64_t *after, int n, double now,
                  int64_t *bad)
{
    int waiting = 0;
    char reason[700] = "";
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *s;
        int rc = db_one_row(c, q_dep, after[i], &s);
        if (rc == ST_NOTFOUND)
            *bad = after[i];
        if (rc != ST_OK)
            return rc == ST_NOTFOUND ? ST_INVALID : rc;
        const char *state = (const char *)sqlite3_column_text(s, 0);
        if (!reason[0] && (!strcmp(state, "failed") || !strcmp(state, "cancelled") ||
                           !strcmp(state, "blocked"))) {
            const char *why = (const char *)sqlite3_column_text(s, 2);
            snprintf(reason, sizeof reason, "waits for experiment %lld (%.128s), which %s%s%.400s",
                     (long long)after[i], (const char *)sqlite3_column_text(s, 1),
                     !strcmp(state, "blocked") ? "is blocked" : state, why ? ": " : "",
                     why ? why : "");
        }
        waiting |= strcmp(state, "succeeded") != 0;
        if (!(s = db_stmt(c, q_link)))
            return ST_ERROR;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, after[i]);
        if (db_exec(c, s))
            return ST_ERROR;
    }
    sqlite3_stmt *s;
    int rc = db_one_row(c, q_cycle, id, &s);
    if (rc != ST_OK)
        return rc == ST_NOTFOUND ? ST_ERROR : rc;
    if (sqlite3_column_int(s, 0) > 0) {
        *bad = id;
        return ST_INVALID;
    }
    if (!reason[0] && !waiting)
        return ST_OK;
    if (!(s = db_stmt(c, q_first_state)))
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, reason[0] ? "blocked" : "waiting", -1, SQLITE_STATIC);
    db_bind_text(s, 3, reason[0] ? reason : NULL);
    if (reason[0])
        sqlite3_bind_double(s, 4, now);
    return db_exec(c, s) ? ST_ERROR : ST_OK;
}

static int links(struct conn *c, const char *sql, int64_t id, struct exp_link **out, int *n)
{
    sqlite3_stmt *s = db_stmt(c, sql);
    if (!s)
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, id);
    int rc, cap = 0, bad = 0;
    while (!bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 4;
            struct exp_link *more = realloc(*out, (size_t)cap * sizeof *more);
            if (!more)
                return ST_ERROR;
            *out = more;
        }
        struct exp_link *l = &(*out)[(*n)++];
        l->id = sqlite3_column_int64(s, 0);
        l->name = db_col_text(s, 1, &bad);
        l->state = db_col_text(s, 2, &bad);
    }
    return !bad && rc == SQLITE_DONE ? ST_OK : ST_ERROR;
}

int db_chain_links(struct conn *c, int64_t id, struct exp_row *e)
{
    int rc = links(c, q_after, id, &e->after, &e->n_after);
    return rc == ST_OK ? links(c, q_then, id, &e->then, &e->n_then) : rc;
}

int db_chain_cancel(struct conn *c, int64_t id, double now, int *n)
{
    sqlite3_stmt *s;
    int rc = db_one_row(c, q_chain_count, id, &s);
    if (rc != ST_OK)
        return rc == ST_NOTFOUND ? ST_ERROR : rc;
    *n = sqlite3_column_int(s, 0);
    if (!(s = db_stmt(c, q_cancel_waiting)))
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_double(s, 2, now);
    if (db_exec(c, s) || !(s = db_stmt(c, q_cancel_running)))
        return ST_ERROR;
    sqlite3_bind_int64(s, 1, id);
    return db_exec(c, s) ? ST_ERROR : ST_OK;
}
