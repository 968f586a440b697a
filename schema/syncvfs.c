/* The store's files go through a thin VFS over SQLite's default one that
 * counts the fsyncs SQLite asks for (xSync), so that /metrics can say how
 * many durable writes the server really did: with group commit (db.c) that
 * is what bounds its write rate, not the number of requests. Every call is
 * passed through unchanged. */
#include "schema/syncvfs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

static sqlite3_vfs counting, *base;
static atomic_long syncs;

/* A file of the base VFS, behind our methods. */
struct counted {
    sqlite3_file head;    /* pMethods: &methods */
    sqlite3_file *inner;  /* the base VFS's file, just after this struct */
};

#define INNER(f) (((struct counted *)(f))->inner)

static int c_close(sqlite3_file *f)
{
    return INNER(f)->pMethods->xClose(INNER(f));
}
static int c_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off)
{
    return INNER(f)->pMethods->xRead(INNER(f), p, n, off);
}
static int c_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
    return INNER(f)->pMethods->xWrite(INNER(f), p, n, off);
}
static int c_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return INNER(f)->pMethods->xTruncate(INNER(f), size);
}
static int c_sync(sqlite3_file *f, int flags)
{
    atomic_fetch_add(&syncs, 1);
    return INNER(f)->pMethods->xSync(INNER(f), flags);
}
static int c_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return INNER(f)->pMethods->xFileSize(INNER(f), size);
}
static int c_lock(sqlite3_file *f, int lock)
{
    return INNER(f)->pMethods->xLock(INNER(f), lock);
}
static int c_unlock(sqlite3_file *f, int lock)
{
    return INNER(f)->pMethods->xUnlock(INNER(f), lock);
}
static int c_check(sqlite3_file *f, int *out)
{
    return INNER(f)->pMethods->xCheckReservedLock(INNER(f), out);
}
static int c_control(sqlite3_file *f, int op, void *arg)
{
    return INNER(f)->pMethods->xFileControl(INNER(f), op, arg);
}
static int c_sector(sqlite3_file *f)
{
    return INNER(f)->pMethods->xSectorSize(INNER(f));
}
static int c_device(sqlite3_file *f)
{
    return INNER(f)->pMethods->xDeviceCharacteristics(INNER(f));
}
static int c_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **p)
{
    return INNER(f)->pMethods->xShmMap(INNER(f), pg, pgsz, extend, p);
}
static int c_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
    return INNER(f)->pMethods->xShmLock(INNER(f), offset, n, flags);
}
static void c_shm_barrier(sqlite3_file *f)
{
    INNER(f)->pMethods->xShmBarrier(INNER(f));
}
static int c_shm_unmap(sqlite3_file *f, int del)
{
    return INNER(f)->pMethods->xShmUnmap(INNER(f), del);
}
static int c_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **p)
{
    return INNER(f)->pMethods->xFetch(INNER(f), off, n, p);
}
static int c_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return INNER(f)->pMethods->xUnfetch(INNER(f), off, p);
}

/* Version 3 methods, as the unix VFS's files have; a file whose methods are
 * older never gets the calls it lacks (see c_open). */
static const sqlite3_io_methods methods = {
    3,          c_close,       c_read,      c_write,      c_truncate, c_sync,
    c_size,     c_lock,        c_unlock,    c_check,      c_control,  c_sector,
    c_device,   c_shm_map,     c_shm_lock,  c_shm_barrier, c_shm_unmap, c_fetch,
    c_unfetch,
};

static int c_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
    (void)vfs;
    struct counted *c = (struct counted *)f;
    c->inner = (sqlite3_file *)(c + 1);
    memset(c->inner, 0, (size_t)base->szOsFile);
    int rc = base->xOpen(base, name, c->inner, flags, out_flags);
    /* SQLite calls xClose only on a file whose pMethods is set */
    c->head.pMethods = rc == SQLITE_OK && c->inner->pMethods ? &methods : NULL;
    if (rc == SQLITE_OK && c->inner->pMethods && c->inner->pMethods->iVersion < 3) {
        c->inner->pMethods->xClose(c->inner);
        c->head.pMethods = NULL;
        return SQLITE_CANTOPEN;
    }
    return rc;
}

static int c_delete(sqlite3_vfs *v, const char *name, int dir_sync)
{
    (void)v;
    return base->xDelete(base, name, dir_sync);
}
static int c_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    (void)v;
    return base->xAccess(base, name, flags, out);
}
static int c_full(sqlite3_vfs *v, const char *name, int n, char *out)
{
    (void)v;
    return base->xFullPathname(base, name, n, out);
}
static void *c_dlopen(sqlite3_vfs *v, const char *name)
{
    (void)v;
    return base->xDlOpen(base, name);
}
static void c_dlerror(sqlite3_vfs *v, int n, char *msg)
{
    (void)v;
    base->xDlError(base, n, msg);
}
static void (*c_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
    (void)v;
    return base->xDlSym(base, h, sym);
}
static void c_dlclose(sqlite3_vfs *v, void *h)
{
    (void)v;
    base->xDlClose(base, h);
}
static int c_random(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return base->xRandomness(base, n, out);
}
static int c_sleep(sqlite3_vfs *v, int us)
{
    (void)v;
    return base->xSleep(base, us);
}
static int c_time(sqlite3_vfs *v, double *out)
{
    (void)v;
    return base->xCurrentTime(base, out);
}
static int c_last_error(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return base->xGetLastError ? base->xGetLastError(base, n, out) : 0;
}
static int c_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
    (void)v;
    return base->xCurrentTimeInt64(base, out);
}

static int registered = SQLITE_ERROR;

static void register_once(void)
{
    base = sqlite3_vfs_find(NULL);
    if (!base || base->iVersion < 2 || !base->xCurrentTimeInt64)
        return;
    counting = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(struct counted) + base->szOsFile,
        .mxPathname = base->mxPathname,
        .zName = SYNCVFS_NAME,
        .xOpen = c_open,
        .xDelete = c_delete,
        .xAccess = c_access,
        .xFullPathname = c_full,
        .xDlOpen = c_dlopen,
        .xDlError = c_dlerror,
        .xDlSym = c_dlsym,
        .xDlClose = c_dlclose,
        .xRandomness = c_random,
        .xSleep = c_sleep,
        .xCurrentTime = c_time,
        .xGetLastError = c_last_error,
        .xCurrentTimeInt64 = c_time64,
    };
    registered = sqlite3_vfs_register(&counting, 0);
}

int syncvfs_register(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_once);
    return registered;
}

long syncvfs_count(void)
{
    return atomic_load(&syncs);
}
