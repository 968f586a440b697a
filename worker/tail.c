/* Growing line files read from an offset: see tail.h. */
#include "worker/tail.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"

int tail_init(struct tail *t, const char *path, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    return path_copy(t->path, sizeof t->path, path, err, errlen);
}

int tail_read(const struct tail *t, int max_lines, char **buf, int *n_lines, long *n_bytes,
              char *err, size_t errlen)
{
    *buf = NULL;
    *n_lines = 0;
    *n_bytes = 0;
    FILE *f = fopen(t->path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "%s: %s", t->path, strerror(errno));
        return -1;
    }
    if (fseek(f, t->offset, SEEK_SET) != 0) {
        snprintf(err, errlen, "%s: seek to %ld: %s", t->path, t->offset, strerror(errno));
        fclose(f);
        return -1;
    }
    size_t cap = 0, len = 0;
    char *out = NULL, *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    int rc = 0;
    while (*n_lines < max_lines && (got = getline(&line, &lcap, f)) > 0) {
        if (line[got - 1] != '\n')
            break; /* still being written */
        if (len + (size_t)got + 1 > cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            while (ncap < len + (size_t)got + 1)
                ncap *= 2;
            char *p = realloc(out, ncap);
            if (!p) {
                snprintf(err, errlen, "out of memory reading %s", t->path);
                rc = -1;
                break;
            }
            out = p;
            cap = ncap;
        }
        memcpy(out + len, line, (size_t)got);
        len += (size_t)got;
        out[len] = '\0';
        (*n_lines)++;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error", t->path);
        rc = -1;
    }
    free(line);
    fclose(f);
    if (rc != 0) {
        free(out);
        *n_lines = 0;
        return -1;
    }
    *buf = out;
    *n_bytes = (long)len;
    return 0;
}

void tail_advance(struct tail *t, int n_lines, long n_bytes)
{
    t->lines += n_lines;
    t->offset += n_bytes;
}

long tail_count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : -1;
    char buf[65536];
    size_t got;
    long n = 0;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + got - p))); p++)
            n++;
    int bad = ferror(f);
    fclose(f);
    return bad ? -1 : n;
}
