/* Schema migrations keyed on PRAGMA user_version: migration N brings a
 * database from version N-1 to N, each in its own transaction. */
#ifndef COD_MIGRATE_H
#define COD_MIGRATE_H

#include <stddef.h>
#include <sqlite3.h>

int migrate(sqlite3 *db, char *err, size_t errlen);

#endif
