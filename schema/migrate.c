/* Migrations: the text of schema/schema.sql (migration 1) and of each later
 * migration's file is compiled in (the Makefile turns each into a C string)
 * so that the files stay the one definition. */
#include "schema/migrate.h"

#include <stdio.h>

static const char schema_v1[] =
#include "build/gen/schema_sql.inc"
    ;

static const char worker_states_v2[] =
#include "build/gen/worker_states_sql.inc"
    ;

static const char gangs_v3[] =
#include "build/gen/gangs_sql.inc"
    ;

static const char active_members_v4[] =
#include "build/gen/active_members_sql.inc"
    ;

static const char rendezvous_due_v5[] =
#include "build/gen/rendezvous_due_sql.inc"
    ;

static const char recipe_fields_v6[] =
#include "build/gen/recipe_fields_sql.inc"
    ;

static const char secrets_v7[] =
#include "build/gen/secrets_sql.inc"
    ;

static const char *const migrations[] = {schema_v1,          worker_states_v2, gangs_v3,
                                         active_members_v4,  rendezvous_due_v5, recipe_fields_v6,
                                         secrets_v7};
#define N_MIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))

static int user_version(sqlite3 *db, int *v)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *v = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : -1;
}

int migrate(sqlite3 *db, char *err, size_t errlen)
{
    int v;
    if (user_version(db, &v) != 0) {
        snprintf(err, errlen, "reading user_version: %s", sqlite3_errmsg(db));
        return -1;
    }
    if (v > N_MIGRATIONS) {
        snprintf(err, errlen, "database schema version %d is newer than this server (%d)", v,
                 N_MIGRATIONS);
        return -1;
    }
    for (; v < N_MIGRATIONS; v++) {
        char *msg = NULL;
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
        if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, migrations[v], NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, bump, NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            snprintf(err, errlen, "migration %d: %s", v + 1, msg ? msg : sqlite3_errmsg(db));
            sqlite3_free(msg);
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
    }
    return 0;
}
