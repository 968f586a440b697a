#include "common/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/path.h"

int fio_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        /* Linux writes at most ~2 GiB per call; loop for larger buffers. */
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int fio_fsync_path(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int fio_fsync_dir_of(const char *path)
{
    char tmp[8192];
    if (path_copy(tmp, sizeof(tmp), path, NULL, 0) != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return fio_fsync_path(dirname(tmp));
}

int fio_mkdir_p(const char *path, char *err, size_t errlen)
{
    char tmp[4096];
    if (path_copy(tmp, sizeof(tmp), path, err, errlen) != 0)
        return -1;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            goto fail;
        *p = '/';
    }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
        goto fail;
    /* EEXIST also answers for a file of that name, which is no place to write into. */
    struct stat st;
    if (stat(tmp, &st) != 0)
        goto fail;
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "mkdir %s: not a directory", tmp);
        return -1;
    }
    return 0;
fail:
    snprintf(err, errlen, "mkdir %s: %s", tmp, strerror(errno));
    return -1;
}

int fio_open_stat(const char *path, struct stat *st, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int fio_read_file(const char *path, unsigned char **data, size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    struct stat st;
    int fd = fio_open_stat(path, &st, err, errlen);
    if (fd < 0)
        return -1;
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a directory", path);
        close(fd);
        return -1;
    }
    /* st_size is only a hint: /proc files and pipes report 0 and grow while read. */
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory for %zu bytes", path, cap);
        close(fd);
        return -1;
    }
    for (;;) {
        if (n + 1 >= cap) {
            size_t ncap = cap * 2;
            unsigned char *nb = realloc(buf, ncap);
            if (!nb) {
                snprintf(err, errlen, "%s: out of memory for %zu bytes", path, ncap);
                free(buf);
                close(fd);
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "%s: read: %s", path, strerror(errno));
            free(buf);
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

int fio_temp_open(struct fio_temp *t, const char *path, char *err, size_t errlen)
{
    t->fd = -1;
    if (path_copy(t->path, sizeof(t->path), path, err, errlen) ||
        path_fmt(t->tmp, sizeof(t->tmp), err, errlen, "%s.tmp", path))
        return -1;
    t->fd = open(t->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (t->fd < 0) {
        snprintf(err, errlen, "%s: %s", t->tmp, strerror(errno));
        return -1;
    }
    return 0;
}

void fio_temp_abort(struct fio_temp *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    unlink(t->tmp);
}

int fio_temp_commit(struct fio_temp *t, int rc, char *err, size_t errlen)
{
    int saved = errno;
    if (rc == 0 && fsync(t->fd) != 0) {
        rc = -1;
        saved = errno;
    }
    if (close(t->fd) != 0 && rc == 0) {
        rc = -1;
        saved = errno;
    }
    t->fd = -1;
    if (rc == 0 && (rename(t->tmp, t->path) != 0 || fio_fsync_dir_of(t->path) != 0)) {
        rc = -1;
        saved = errno;
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", t->path, strerror(saved));
        unlink(t->tmp);
    }
    return rc;
}

int fio_write_text(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
    struct fio_temp t;
    if (fio_temp_open(&t, path, err, errlen) != 0)
        return -1;
    return fio_temp_commit(&t, fio_write_all(t.fd, text, len), err, errlen);
}

int fio_write_json(json_t *j, const char *dir, const char *name, char *err, size_t errlen)
{
    char path[4400];
    if (path_fmt(path, sizeof(path), err, errlen, "%s/%s", dir, name) != 0) {
        json_decref(j);
        return -1;
    }
    if (!j) {
        snprintf(err, errlen, "out of memory building %s", path);
        return -1;
    }
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(j);
    if (!text) {
        snprintf(err, errlen, "out of memory writing %s", path);
        return -1;
    }
    int rc = fio_mkdir_p(dir, err, errlen);
    if (rc == 0)
        rc = fio_write_text(path, text, strlen(text), err, errlen);
    free(text);
    return rc;
}
