/* One server per database: cod-server holds an exclusive lock on DB.lock
 * (beside the database, symlinks resolved) from before it opens the
 * database until after it has closed it, so that a second server on the
 * same file is refused whatever port it asks for. The lock is the kernel's
 * (flock): it goes with the process, a kill -9 included. */
#ifndef COD_DBLOCK_H
#define COD_DBLOCK_H

#include <stddef.h>

/* Takes the lock of the database at db_path and writes this process's id
 * into the lock file. Returns the lock's descriptor, or -1 with err naming
 * the holder ("in use by another cod-server, pid N") or what failed. */
int dblock_acquire(const char *db_path, char *err, size_t errlen);
void dblock_release(int fd);

#endif
