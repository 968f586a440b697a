/* Chains of experiments: an experiment that waits for others (docs/api.md,
 * "Chains"). Linking a new one to those it waits for sets its first state
 * (waiting, queued when they have all succeeded, blocked when one never
 * will); from then on the triggers of schema/chains.sql move it as they
 * end. The chain around an experiment for its view, and a chain cancelled
 * from its first experiment, are here too. */
#include "schema/db.h"

#include <stdio.h>
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

static json_t *links(struct conn *c, const char *sql, int64_t id)
{
    json_t *a = json_array();
    sqlite3_stmt *s = db_stmt(c, sql);
    if (!a || !s) {
        json_decref(a);
        return NULL;
    }
    sqlite3_bind_int64(s, 1, id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        json_array_append_new(a, json_pack("{s:o,s:o,s:o}", "id", db_col_json(s, 0), "name",
                                           db_col_json(s, 1), "state", db_col_json(s, 2)));
    if (rc != SQLITE_DONE) {
        json_decref(a);
        return NULL;
    }
    return a;
}

int db_chain_view(struct conn *c, int64_t id, json_t *o)
{
    json_t *after = links(c, q_after, id), *then = links(c, q_then, id);
    if (!after || !then || json_object_set_new(o, "after", after) ||
        json_object_set_new(o, "then", then)) {
        if (!json_object_get(o, "after"))
            json_decref(after);
        if (!json_object_get(o, "then"))
            json_decref(then);
        return ST_ERROR;
    }
    return ST_OK;
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
