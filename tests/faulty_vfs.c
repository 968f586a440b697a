/* The failing disk of tests/faulty_vfs.h: a VFS whose files wrap the
 * default VFS's files, passing every call through except the writes, syncs
 * and reads that the plan (or the control file) says must fail. */
#include "tests/faulty_vfs.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

/* One open file: the wrapper, then the real VFS's file right after it. */
struct ffile {
    sqlite3_file base;
    const char *name; /* SQLite keeps it valid until xClose; NULL for a temporary file */
    sqlite3_file *real;
};

static sqlite3_vfs *real_vfs;
static sqlite3_vfs shim;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int ops, err;
    long skip, count;
} plan;
static long failed;
/* COD_FAULTY_VFS when preloaded: the file whose words say what fails */
static char control[4096];

/* What the control file asks for: 1 with *ops and *err, 0 when it is absent. */
static int read_control(int *ops, int *err)
{
    FILE *f = fopen(control, "r");
    if (!f)
        return 0;
    char word[32];
    *ops = 0;
    *err = EIO;
    while (fscanf(f, "%31s", word) == 1) {
        if (!strcmp(word, "write"))
            *ops |= FAULTY_WRITE;
        else if (!strcmp(word, "sync"))
            *ops |= FAULTY_SYNC;
        else if (!strcmp(word, "read"))
            *ops |= FAULTY_READ;
        else if (!strcmp(word, "ENOSPC"))
            *err = ENOSPC;
        else if (!strcmp(word, "EIO"))
            *err = EIO;
        else
            fprintf(stderr, "faulty_vfs: %s: unknown word \"%s\"\n", control, word);
    }
    fclose(f);
    return 1;
}

/* The errno that operation op on the file must fail with now, or 0. */
static int fault(int op, const struct ffile *f)
{
    int err = 0;
    pthread_mutex_lock(&lock);
    if (control[0]) {
        int ops, e;
        if (read_control(&ops, &e) && (ops & op))
            err = e;
    } else if ((plan.ops & op) && plan.count != 0) {
        if (plan.skip > 0) {
            plan.skip--;
        } else {
            err = plan.err;
            if (plan.count > 0)
                plan.count--;
        }
    }
    failed += err != 0;
    pthread_mutex_unlock(&lock);
    if (err)
        fprintf(stderr, "faulty_vfs: %s of %s fails: %s\n",
                op == FAULTY_WRITE ? "a write" : op == FAULTY_SYNC ? "an fsync" : "a read",
                f->name ? f->name : "a temporary file", strerror(err));
    return err;
}

#define REAL(f) (((struct ffile *)(f))->real)

static int f_close(sqlite3_file *f)
{
    return REAL(f)->pMethods->xClose(REAL(f));
}

static int f_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    if (fault(FAULTY_READ, (struct ffile *)f))
        return SQLITE_IOERR_READ;
    return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}

static int f_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    int err = fault(FAULTY_WRITE, (struct ffile *)f);
    if (err)
        return err == ENOSPC ? SQLITE_FULL : SQLITE_IOERR_WRITE;
    return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}

static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int f_sync(sqlite3_file *f, int flags)
{
    if (fault(FAULTY_SYNC, (struct ffile *)f))
        return SQLITE_IOERR_FSYNC;
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int f_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int f_lock(sqlite3_file *f, int level)
{
    return REAL(f)->pMethods->xLock(REAL(f), level);
}

static int f_unlock(sqlite3_file *f, int level)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), level);
}

static int f_reserved(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int f_control(sqlite3_file *f, int op, void *arg)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int f_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int f_device(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

/* The WAL's shared memory is mapped, not written: it passes through. */
static int f_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), page, size, extend, out);
}

static int f_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}

static void f_shm_barrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int f_shm_unmap(sqlite3_file *f, int delete_flag)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), delete_flag);
}

static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **out)
{
    return REAL(f)->pMethods->xFetch(REAL(f), off, n, out);
}

static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

/* Version 3, as the unix VFS's files are (WAL needs the xShm calls). */
static const sqlite3_io_methods methods = {
    .iVersion = 3,
    .xClose = f_close,
    .xRead = f_read,
    .xWrite = f_write,
    .xTruncate = f_truncate,
    .xSync = f_sync,
    .xFileSize = f_size,
    .xLock = f_lock,
    .xUnlock = f_unlock,
    .xCheckReservedLock = f_reserved,
    .xFileControl = f_control,
    .xSectorSize = f_sector,
    .xDeviceCharacteristics = f_device,
    .xShmMap = f_shm_map,
    .xShmLock = f_shm_lock,
    .xShmBarrier = f_shm_barrier,
    .xShmUnmap = f_shm_unmap,
    .xFetch = f_fetch,
    .xUnfetch = f_unfetch,
};

static int f_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out)
{
    (void)vfs;
    struct ffile *f = (struct ffile *)file;
    f->name = name;
    f->real = (sqlite3_file *)(f + 1);
    int rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out);
    /* SQLite closes a file whose methods are set, even after a failed open. */
    f->base.pMethods = f->real->pMethods ? &methods : NULL;
    return rc;
}

int faulty_vfs_install(void)
{
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs || real_vfs->iVersion < 1)
        return -1;
    /* Everything but opening is the real VFS's: the copy keeps its fields
     * (mxPathname, pAppData) that those calls read. */
    shim = *real_vfs;
    shim.zName = "faulty";
    shim.szOsFile = (int)sizeof(struct ffile) + real_vfs->szOsFile;
    shim.xOpen = f_open;
    return sqlite3_vfs_register(&shim, 1) == SQLITE_OK ? 0 : -1;
}

void faulty_vfs_fail(int ops, int err, long skip, long count)
{
    pthread_mutex_lock(&lock);
    plan.ops = ops;
    plan.err = err;
    plan.skip = skip;
    plan.count = count;
    pthread_mutex_unlock(&lock);
}

void faulty_vfs_clear(void)
{
    faulty_vfs_fail(0, 0, 0, 0);
}

long faulty_vfs_failed(void)
{
    pthread_mutex_lock(&lock);
    long n = failed;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Preloaded into a program with COD_FAULTY_VFS set: installs itself before
 * main, so the program opens its database through it. */
__attribute__((constructor)) static void from_environment(void)
{
    const char *c = getenv("COD_FAULTY_VFS");
    if (!c || !*c)
        return;
    if (strlen(c) >= sizeof control) {
        fprintf(stderr, "faulty_vfs: COD_FAULTY_VFS is too long\n");
        return;
    }
    memcpy(control, c, strlen(c) + 1);
    if (faulty_vfs_install() != 0) {
        fprintf(stderr, "faulty_vfs: cannot install\n");
        control[0] = 0;
        return;
    }
    fprintf(stderr, "faulty_vfs: installed; operations fail while %s says so\n", control);
}
