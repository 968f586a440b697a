/* Streams of stored files through zlib, libzstd and liblzma: see decompress.h. */
#include "text/decompress.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "common/path.h"
#include "text/sha256.h"

enum { IN_CAP = 1 << 18 };

struct dz {
    char path[4096];
    int fd;
    enum dz_format fmt;
    unsigned char *in;
    size_t in_pos, in_len;
    int in_eof;
    int64_t consumed;
    struct sha256_stream *sha;
    int started;  /* compressed input fed since the last member, frame or stream began */
    int finished; /* the data's end was seen (gzip: the current member's) */
    z_stream gz;
    int gz_ready;
    ZSTD_DCtx *zs;
    lzma_stream xz;
    int xz_ready;
};

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

enum dz_format dz_format_of(const char *path, size_t *stem_len)
{
    static const struct {
        const char *suffix;
        enum dz_format fmt;
    } table[] = {{".gz", DZ_GZIP}, {".zst", DZ_ZSTD}, {".xz", DZ_XZ}};
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (ends_with(path, n, table[i].suffix)) {
            *stem_len = n - strlen(table[i].suffix);
            return table[i].fmt;
        }
    *stem_len = n;
    return DZ_PLAIN;
}

struct dz *dz_open(const char *path, char *err, size_t errlen)
{
    struct dz *z = calloc(1, sizeof(*z));
    if (!z) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    z->fd = -1;
    size_t stem;
    z->fmt = dz_format_of(path, &stem);
    if (path_copy(z->path, sizeof(z->path), path, err, errlen) != 0)
        goto fail;
    if (!(z->sha = sha256_begin())) {
        snprintf(err, errlen, "%s: cannot start a sha256 (libcrypto failed)", path);
        goto fail;
    }
    if (z->fmt != DZ_PLAIN && !(z->in = malloc(IN_CAP))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    if (z->fmt == DZ_GZIP) {
        /* 15 + 16: a gzip header and trailer, the largest window */
        if (inflateInit2(&z->gz, 15 + 16) != Z_OK) {
            snprintf(err, errlen, "%s: zlib cannot start: %s", path, z->gz.msg ? z->gz.msg : "out of memory");
            goto fail;
        }
        z->gz_ready = 1;
    } else if (z->fmt == DZ_ZSTD) {
        if (!(z->zs = ZSTD_createDCtx())) {
            snprintf(err, errlen, "%s: out of memory for zstd", path);
            goto fail;
        }
    } else if (z->fmt == DZ_XZ) {
        z->xz = (lzma_stream)LZMA_STREAM_INIT;
        if (lzma_stream_decoder(&z->xz, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
            snprintf(err, errlen, "%s: out of memory for xz", path);
            goto fail;
        }
        z->xz_ready = 1;
    }
    z->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (z->fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto fail;
    }
    return z;
fail:
    dz_close(z);
    return NULL;
}

/* Reads the stored file: into buf (plain) or the input buffer. */
static ssize_t raw_read(struct dz *z, void *buf, size_t cap, char *err, size_t errlen)
{
    for (;;) {
        ssize_t r = read(z->fd, buf, cap);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "%s: read: %s", z->path, strerror(errno));
            return -1;
        }
        if (r > 0 && sha256_update(z->sha, buf, (size_t)r) != 0) {
            snprintf(err, errlen, "%s: sha256 failed (libcrypto)", z->path);
            return -1;
        }
        z->consumed += r;
        return r;
    }
}

static int refill(struct dz *z, char *err, size_t errlen)
{
    if (z->in_pos < z->in_len || z->in_eof)
        return 0;
    ssize_t r = raw_read(z, z->in, IN_CAP, err, errlen);
    if (r < 0)
        return -1;
    z->in_pos = 0;
    z->in_len = (size_t)r;
    z->in_eof = r == 0;
    return 0;
}

static const char *const format_name[] = {"plain", "gzip", "zstd", "xz"};

/* At the end of the stored file: the data ended cleanly, or it is cut short. */
static ssize_t at_eof(struct dz *z, size_t produced, char *err, size_t errlen)
{
    if (produced)
        return (ssize_t)produced;
    if (z->consumed == 0) {
        snprintf(err, errlen, "%s: empty file, not %s data", z->path, format_name[z->fmt]);
        return -1;
    }
    if (z->started && !z->finished) {
        snprintf(err, errlen, "%s: truncated %s data (the file ends inside it)", z->path, format_name[z->fmt]);
        return -1;
    }
    return 0;
}

/* One call of a decoder on the input buffered, its output at
 * buf + *produced: 0, or -1 with err for corrupt data. It sets
 * z->finished when a member, frame or stream has ended. */
typedef int (*step_fn)(struct dz *z, unsigned char *buf, size_t cap, size_t *produced, char *err, size_t errlen);

static int gz_step(struct dz *z, unsigned char *buf, size_t cap, size_t *produced, char *err, size_t errlen)
{
    if (z->finished) { /* another member follows */
        if (inflateReset(&z->gz) != Z_OK) {
            snprintf(err, errlen, "%s: zlib cannot restart", z->path);
            return -1;
        }
        z->finished = 0;
    }
    z->gz.next_in = z->in + z->in_pos;
    z->gz.avail_in = (uInt)(z->in_len - z->in_pos);
    z->gz.next_out = buf + *produced;
    z->gz.avail_out = (uInt)(cap - *produced > (1u << 30) ? 1u << 30 : cap - *produced);
    uInt out_before = z->gz.avail_out;
    int ret = inflate(&z->gz, Z_NO_FLUSH);
    z->in_pos = z->in_len - z->gz.avail_in;
    *produced += out_before - z->gz.avail_out;
    if (ret == Z_STREAM_END)
        z->finished = 1;
    else if (ret != Z_OK && ret != Z_BUF_ERROR) {
        snprintf(err, errlen, "%s: corrupt gzip data (zlib: %s)", z->path,
                 z->gz.msg ? z->gz.msg : ret == Z_MEM_ERROR ? "out of memory" : "bad data");
        return -1;
    }
    return 0;
}

static int zstd_step(struct dz *z, unsigned char *buf, size_t cap, size_t *produced, char *err, size_t errlen)
{
    ZSTD_inBuffer in = {z->in, z->in_len, z->in_pos};
    ZSTD_outBuffer out = {buf, cap, *produced};
    size_t ret = ZSTD_decompressStream(z->zs, &out, &in);
    z->in_pos = in.pos;
    *produced = out.pos;
    if (ZSTD_isError(ret)) {
        snprintf(err, errlen, "%s: corrupt zstd data (%s)", z->path, ZSTD_getErrorName(ret));
        return -1;
    }
    /* 0: a frame ended and was flushed whole; another may follow */
    z->finished = ret == 0;
    return 0;
}

static int xz_step(struct dz *z, unsigned char *buf, size_t cap, size_t *produced, char *err, size_t errlen)
{
    z->xz.next_in = z->in + z->in_pos;
    z->xz.avail_in = z->in_len - z->in_pos;
    z->xz.next_out = buf + *produced;
    z->xz.avail_out = cap - *produced;
    /* the end of the file is told, so that liblzma checks the stream is whole */
    lzma_ret ret = lzma_code(&z->xz, z->in_eof ? LZMA_FINISH : LZMA_RUN);
    z->in_pos = z->in_len - z->xz.avail_in;
    *produced = cap - z->xz.avail_out;
    if (ret == LZMA_STREAM_END)
        z->finished = 1;
    else if (ret != LZMA_OK && ret != LZMA_BUF_ERROR) {
        snprintf(err, errlen, "%s: corrupt xz data (liblzma error %d%s)", z->path, (int)ret,
                 ret == LZMA_FORMAT_ERROR ? ": not xz" : ret == LZMA_DATA_ERROR ? ": bad data" : "");
        return -1;
    }
    return 0;
}

/* Fills buf through a decoder. When the input is used up, the data has
 * ended cleanly if no member, frame or stream is open; else the decoder
 * may still hold output (it stopped when buf was full) and is called again
 * without input, and if it gives nothing the file was cut short. */
static ssize_t decode(struct dz *z, step_fn step, unsigned char *buf, size_t cap, char *err, size_t errlen)
{
    size_t produced = 0;
    while (produced < cap) {
        if (refill(z, err, errlen) != 0)
            return -1;
        int done = z->in_pos == z->in_len;
        if (done && (!z->started || z->finished))
            return at_eof(z, produced, err, errlen);
        size_t before = produced;
        if (step(z, buf, cap, &produced, err, errlen) != 0)
            return -1;
        z->started = 1;
        if (done && !z->finished && produced == before)
            return at_eof(z, produced, err, errlen);
    }
    return (ssize_t)produced;
}

ssize_t dz_read(struct dz *z, void *buf, size_t cap, char *err, size_t errlen)
{
    switch (z->fmt) {
    case DZ_GZIP:
        return decode(z, gz_step, buf, cap, err, errlen);
    case DZ_ZSTD:
        return decode(z, zstd_step, buf, cap, err, errlen);
    case DZ_XZ:
        return decode(z, xz_step, buf, cap, err, errlen);
    default:
        return raw_read(z, buf, cap, err, errlen);
    }
}

int64_t dz_consumed(const struct dz *z) { return z->consumed; }

int dz_sha256(struct dz *z, char hex[65])
{
    unsigned char md[32];
    hex[0] = 0;
    int rc = sha256_end(z->sha, md);
    z->sha = NULL;
    if (rc == 0)
        sha256_to_hex(md, hex);
    return rc;
}

void dz_close(struct dz *z)
{
    if (!z)
        return;
    if (z->fd >= 0)
        close(z->fd);
    if (z->sha) {
        unsigned char md[32];
        sha256_end(z->sha, md);
    }
    if (z->gz_ready)
        inflateEnd(&z->gz);
    ZSTD_freeDCtx(z->zs);
    if (z->xz_ready)
        lzma_end(&z->xz);
    free(z->in);
    free(z);
}
