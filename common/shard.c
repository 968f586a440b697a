#include "common/shard.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/path.h"

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Why a header and a file size are not a token shard, or NULL when they
 * are one; *tb and *count are then its token width and count. */
static const char *header_problem(const unsigned char *h, int64_t size, int *tb, uint32_t *count)
{
    uint32_t magic = le32(h), version = le32(h + 4);
    *count = le32(h + 8);
    *tb = magic == SHARD_MAGIC_U16 ? 2 : magic == SHARD_MAGIC_U32 ? 4 : 0;
    if (!*tb)
        return "bad magic (not an llm.c token shard)";
    if (version != SHARD_VERSION)
        return "unsupported shard version";
    if ((int64_t)SHARD_HEADER_BYTES + (int64_t)*count * *tb != size)
        return "file size does not match the header's token count";
    if (*count < 2)
        return "holds fewer than 2 tokens";
    return NULL;
}

/* Opens path and checks that it can hold a header: the descriptor and its
 * size, or -1 with err filled. */
static int open_sized(const char *path, int64_t *size, char *err, size_t errlen)
{
    struct stat st;
    /* Opening a FIFO waits for a writer: a spec naming one would hang the
     * server's check, or a worker, for good. Only a regular file is a shard. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        return -1;
    }
    int fd = fio_open_stat(path, &st, err, errlen);
    if (fd < 0)
        return -1;
    if (st.st_size < SHARD_HEADER_BYTES) {
        snprintf(err, errlen, "%s: too short for a token shard header (%lld bytes)", path,
                 (long long)st.st_size);
        close(fd);
        return -1;
    }
    *size = st.st_size;
    return fd;
}

int shard_check(const char *path, struct shard_info *info, char *err, size_t errlen)
{
    int64_t size;
    int fd = open_sized(path, &size, err, errlen);
    if (fd < 0)
        return -1;
    unsigned char h[SHARD_HEADER_BYTES];
    ssize_t got;
    do
        got = pread(fd, h, sizeof h, 0);
    while (got < 0 && errno == EINTR);
    int saved = errno;
    close(fd);
    if (got != (ssize_t)sizeof h) {
        snprintf(err, errlen, "%s: cannot read the header: %s", path,
                 got < 0 ? strerror(saved) : "short read");
        return -1;
    }
    uint32_t count;
    const char *why = header_problem(h, size, &info->token_bytes, &count);
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    info->n_tokens = count;
    return 0;
}

int shard_open(struct shard *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    if (path_copy(s->path, sizeof(s->path), path, err, errlen) != 0)
        return -1;
    int64_t size;
    int fd = open_sized(path, &size, err, errlen);
    if (fd < 0)
        return -1;
    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        return -1;
    }
    int tb;
    uint32_t count;
    const char *why = header_problem(map, size, &tb, &count);
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        munmap(map, (size_t)size);
        return -1;
    }
    s->token_bytes = tb;
    s->n_tokens = count;
    s->map = map;
    s->map_len = (size_t)size;
    return 0;
}

void shard_close(struct shard *s)
{
    if (s->map)
        munmap((void *)s->map, s->map_len);
    s->map = NULL;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int b = 0; b < 4; b++)
        p[b] = (unsigned char)(v >> (8 * b));
}

enum { WRITER_BUF = 1 << 18 };

int shard_writer_open(struct shard_writer *w, const char *path, int token_bytes, char *err, size_t errlen)
{
    memset(w, 0, sizeof(*w));
    w->out.fd = -1;
    if (token_bytes != 2 && token_bytes != 4) {
        snprintf(err, errlen, "%s: token width must be 2 or 4 bytes", path);
        return -1;
    }
    w->token_bytes = token_bytes;
    if (!(w->buf = malloc(WRITER_BUF))) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if (fio_temp_open(&w->out, path, err, errlen) != 0) {
        free(w->buf);
        w->buf = NULL;
        return -1;
    }
    /* The count is written by shard_writer_close, when it is known. */
    unsigned char header[SHARD_HEADER_BYTES] = {0};
    put_le32(header, token_bytes == 2 ? SHARD_MAGIC_U16 : SHARD_MAGIC_U32);
    put_le32(header + 4, SHARD_VERSION);
    if (fio_write_all(w->out.fd, header, sizeof(header)) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        shard_writer_abort(w);
        return -1;
    }
    return 0;
}

static int writer_flush(struct shard_writer *w, char *err, size_t errlen)
{
    if (w->buf_n && fio_write_all(w->out.fd, w->buf, w->buf_n) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", w->out.path, strerror(errno));
        return -1;
    }
    w->buf_n = 0;
    return 0;
}

int shard_writer_append(struct shard_writer *w, const uint32_t *tokens, size_t n, char *err, size_t errlen)
{
    if ((uint64_t)w->n + n > UINT32_MAX) {
        snprintf(err, errlen, "%s: token count %llu does not fit a shard header", w->out.path,
                 (unsigned long long)w->n + n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t t = tokens[i];
        if (w->token_bytes == 2 && t > 0xFFFF) {
            snprintf(err, errlen, "%s: token %u at %lld does not fit 16 bits", w->out.path, t,
                     (long long)w->n + (long long)i);
            return -1;
        }
        if (w->buf_n + 4 > WRITER_BUF && writer_flush(w, err, errlen) != 0)
            return -1;
        for (int b = 0; b < w->token_bytes; b++)
            w->buf[w->buf_n++] = (unsigned char)(t >> (8 * b));
    }
    w->n += (int64_t)n;
    return 0;
}

int shard_writer_close(struct shard_writer *w, char *err, size_t errlen)
{
    unsigned char count[4];
    put_le32(count, (uint32_t)w->n);
    int rc = writer_flush(w, err, errlen);
    if (rc == 0 && pwrite(w->out.fd, count, 4, 8) != 4) {
        snprintf(err, errlen, "%s: cannot write: %s", w->out.path, strerror(errno));
        rc = -1;
    }
    free(w->buf);
    w->buf = NULL;
    if (rc != 0) {
        fio_temp_abort(&w->out);
        return -1;
    }
    return fio_temp_commit(&w->out, 0, err, errlen);
}

void shard_writer_abort(struct shard_writer *w)
{
    free(w->buf);
    w->buf = NULL;
    if (w->out.fd >= 0)
        fio_temp_abort(&w->out);
}

int shard_write(const char *path, const uint32_t *tokens, int64_t n, int token_bytes,
                char *err, size_t errlen)
{
    if (n < 0 || n > (int64_t)UINT32_MAX) {
        snprintf(err, errlen, "%s: token count %lld does not fit a shard header", path, (long long)n);
        return -1;
    }
    struct shard_writer w;
    if (shard_writer_open(&w, path, token_bytes, err, errlen) != 0)
        return -1;
    if (shard_writer_append(&w, tokens, (size_t)n, err, errlen) != 0) {
        shard_writer_abort(&w);
        return -1;
    }
    return shard_writer_close(&w, err, errlen);
}

int shard_glob(const char *pattern, char ***paths, int *n, char *err, size_t errlen)
{
    glob_t g;
    int rc = glob(pattern, 0, NULL, &g);
    if (rc == GLOB_NOMATCH || (rc == 0 && g.gl_pathc == 0)) {
        snprintf(err, errlen, "no file matches %s", pattern);
        globfree(&g);
        return -1;
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot expand %s", pattern);
        globfree(&g);
        return -1;
    }
    char **out = calloc(g.gl_pathc, sizeof(char *));
    if (!out) {
        snprintf(err, errlen, "out of memory");
        globfree(&g);
        return -1;
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        out[i] = strdup(g.gl_pathv[i]);
        if (!out[i]) {
            shard_free_paths(out, (int)i);
            globfree(&g);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    *paths = out;
    *n = (int)g.gl_pathc;
    globfree(&g);
    return 0;
}

void shard_free_paths(char **paths, int n)
{
    for (int i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}
