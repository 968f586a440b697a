/* A VFS over SQLite's default one that counts fsyncs (syncvfs.c): the
 * store opens its files through it, and /metrics reports the count. */
#ifndef COD_SCHEMA_SYNCVFS_H
#define COD_SCHEMA_SYNCVFS_H

#include <sqlite3.h>

#define SYNCVFS_NAME "cod-syncs"

/* Registers the VFS once per process (not as the default): SQLITE_OK, or
 * an SQLite error when the default VFS cannot be wrapped. */
int syncvfs_register(void);
/* The fsyncs SQLite asked for through it, in this process. */
long syncvfs_count(void);

#endif
