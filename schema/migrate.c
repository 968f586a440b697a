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

static const char chains_v7[] =
#include "build/gen/chains_sql.inc"
    ;
static const char secrets_v8[] =
#include "build/gen/secrets_sql.inc"
    ;

static const char *const migrations[] = {schema_v1,          worker_states_v2, gangs_v3,
                                         active_members_v4,  rendezvous_due_v5,
                                         recipe_fields_v6,   chains_v7,        secrets_v8};
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

/* sqlite3_exec's callback: counts the rows a statement gives. */
static int count_row(void *arg, int n, char **values, char **names)
{
    (void)n, (void)values, (void)names;
    ++*(int *)arg;
    return 0;
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
    /* A migration that builds a table again drops the old one, which the
     * foreign keys would refuse: they are off while migrations run (SQLite
     * changes the setting only outside a transaction), and each migration
     * checks them before it commits. */
    if (v < N_MIGRATIONS && sqlite3_exec(db, "PRAGMA foreign_keys = OFF", NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "foreign keys off for the migrations: %s", sqlite3_errmsg(db));
        return -1;
    }
    int rc = 0;
    for (; rc == 0 && v < N_MIGRATIONS; v++) {
        char *msg = NULL;
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
        int bad_keys = 0;
        if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, migrations[v], NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, "PRAGMA foreign_key_check", count_row, &bad_keys, &msg) != SQLITE_OK ||
            bad_keys ||
            sqlite3_exec(db, bump, NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            snprintf(err, errlen, "migration %d: %s", v + 1,
                     msg ? msg : bad_keys ? "it leaves rows whose foreign keys point nowhere"
                                          : sqlite3_errmsg(db));
            sqlite3_free(msg);
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            rc = -1;
        }
    }
    if (sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK && rc == 0) {
        snprintf(err, errlen, "foreign keys on after the migrations: %s", sqlite3_errmsg(db));
        rc = -1;
    }
    return rc;
}
