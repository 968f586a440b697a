/* The database lock: see dblock.h. A lock file of its own, not a lock on
 * the database file: closing any descriptor of that file would drop the
 * POSIX locks SQLite holds on it. */
#include "daemon/dblock.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/path.h"

/* The lock file's path: beside the real database file, so that two paths
 * to one database (a symlink, a relative path) take one lock. */
static int lock_path(const char *db, char *out, size_t n, char *err, size_t errlen)
{
    char real[PATH_MAX];
    if (realpath(db, real)) {
        snprintf(out, n, "%s.lock", real);
        return 0;
    }
    if (errno != ENOENT) {
        snprintf(err, errlen, "%s: %s", db, strerror(errno));
        return -1;
    }
    /* Not created yet: its directory is what must be real. */
    char dir[PATH_MAX], base[PATH_MAX];
    if (path_copy(dir, sizeof dir, db, err, errlen) || path_copy(base, sizeof base, db, err, errlen))
        return -1;
    if (!realpath(dirname(dir), real)) {
        snprintf(err, errlen, "%s: %s", db, strerror(errno));
        return -1;
    }
    snprintf(out, n, "%s/%s.lock", real, basename(base));
    return 0;
}

int dblock_acquire(const char *db_path, char *err, size_t errlen)
{
    char path[PATH_MAX + 16];
    if (lock_path(db_path, path, sizeof path, err, errlen) != 0)
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char pid[32] = "";
        ssize_t got = e == EWOULDBLOCK ? pread(fd, pid, sizeof pid - 1, 0) : -1;
        if (got > 0)
            pid[strcspn(pid, "\n")] = '\0';
        if (e == EWOULDBLOCK)
            snprintf(err, errlen,
                     "database %s is in use by another cod-server%s%s (its lock %s is held): "
                     "one server per database",
                     db_path, got > 0 ? ", pid " : "", got > 0 ? pid : "", path);
        else
            snprintf(err, errlen, "locking %s: %s", path, strerror(e));
        close(fd);
        return -1;
    }
    char line[32];
    int len = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)len, 0) != len) {
        snprintf(err, errlen, "writing %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* The file stays: were it removed, a server that opened it just before and
 * one that creates it anew could both hold "the" lock. */
void dblock_release(int fd)
{
    if (fd >= 0)
        close(fd);
}
