/* Page decompression: see codec.h. */
#include "parquet/codec.h"

#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "parquet/meta.h"

struct pq_inflate {
    ZSTD_DCtx *zstd;
    z_stream gz;
    int gz_ready;
};

int pq_codec_known(int codec)
{
    return codec == PQ_UNCOMPRESSED || codec == PQ_SNAPPY || codec == PQ_GZIP || codec == PQ_ZSTD;
}

/* Makes *buf hold at least n bytes. */
static int reserve(uint8_t **buf, size_t *cap, size_t n)
{
    if (*cap >= n)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < n)
        c = c > SIZE_MAX / 2 ? n : 2 * c;
    uint8_t *b = realloc(*buf, c);
    if (!b)
        return -1;
    *buf = b;
    *cap = c;
    return 0;
}

/* The first size to give a stream decoder: what a ratio of 8 would give,
 * at most what the page says. */
static size_t first_size(size_t n, size_t want)
{
    size_t guess = n > SIZE_MAX / 8 ? SIZE_MAX : 8 * n + 4096;
    return guess < want ? guess : want;
}

static int zstd(struct pq_inflate *z, const uint8_t *src, size_t n, size_t want, uint8_t **buf, size_t *cap,
                char *why, size_t whylen)
{
    if (!z->zstd && !(z->zstd = ZSTD_createDCtx())) {
        snprintf(why, whylen, "out of memory for a zstd decoder");
        return -1;
    }
    ZSTD_DCtx_reset(z->zstd, ZSTD_reset_session_only);
    ZSTD_inBuffer in = {src, n, 0};
    size_t out = 0;
    if (reserve(buf, cap, first_size(n, want) + 1) != 0) {
        snprintf(why, whylen, "out of memory for a page of %zu bytes", want);
        return -1;
    }
    for (;;) {
        /* one byte of room past what the page says, to see that it says too little */
        size_t room = (*cap < want + 1 ? *cap : want + 1) - out;
        ZSTD_outBuffer o = {*buf + out, room, 0};
        size_t in_before = in.pos;
        size_t rc = ZSTD_decompressStream(z->zstd, &o, &in);
        out += o.pos;
        if (ZSTD_isError(rc)) {
            snprintf(why, whylen, "corrupt zstd data (%s)", ZSTD_getErrorName(rc));
            return -1;
        }
        if (out > want)
            break;
        if (rc == 0 && in.pos == in.size)
            break;
        if (o.pos < room && (in.pos == in.size || (o.pos == 0 && in.pos == in_before))) {
            snprintf(why, whylen, "zstd data cut short");
            return -1;
        }
        if (out == *cap && reserve(buf, cap, *cap + 1) != 0) {
            snprintf(why, whylen, "out of memory for a page of %zu bytes", want);
            return -1;
        }
    }
    if (out != want) {
        snprintf(why, whylen, "zstd data decompresses to %s bytes, the page header says %zu",
                 out > want ? "more than its" : "fewer than its", want);
        return -1;
    }
    return 0;
}

static int gzip(struct pq_inflate *z, const uint8_t *src, size_t n, size_t want, uint8_t **buf, size_t *cap,
                char *why, size_t whylen)
{
    /* 32 + 15: a gzip or a zlib header, as writers differ */
    if (!z->gz_ready) {
        memset(&z->gz, 0, sizeof(z->gz));
        if (inflateInit2(&z->gz, 32 + 15) != Z_OK) {
            snprintf(why, whylen, "out of memory for a gzip decoder");
            return -1;
        }
        z->gz_ready = 1;
    } else
        inflateReset(&z->gz);
    if (reserve(buf, cap, first_size(n, want) + 1) != 0) {
        snprintf(why, whylen, "out of memory for a page of %zu bytes", want);
        return -1;
    }
    z->gz.next_in = (Bytef *)src;
    z->gz.avail_in = (uInt)n;
    size_t out = 0;
    for (;;) {
        size_t room = (*cap < want + 1 ? *cap : want + 1) - out;
        uInt give = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
        z->gz.next_out = *buf + out;
        z->gz.avail_out = give;
        int rc = inflate(&z->gz, Z_NO_FLUSH);
        out += give - z->gz.avail_out;
        if (out > want)
            break;
        if (rc == Z_STREAM_END) {
            /* members one after another, as some writers leave them */
            if (z->gz.avail_in == 0)
                break;
            inflateReset(&z->gz);
            continue;
        }
        if (rc != Z_OK && !(rc == Z_BUF_ERROR && z->gz.avail_out == 0)) {
            snprintf(why, whylen, "corrupt gzip data (%s)",
                     rc == Z_BUF_ERROR ? "cut short" : z->gz.msg ? z->gz.msg : "inflate failed");
            return -1;
        }
        if (out == *cap && reserve(buf, cap, *cap + 1) != 0) {
            snprintf(why, whylen, "out of memory for a page of %zu bytes", want);
            return -1;
        }
    }
    if (out != want) {
        snprintf(why, whylen, "gzip data decompresses to %s bytes, the page header says %zu",
                 out > want ? "more than its" : "fewer than its", want);
        return -1;
    }
    return 0;
}

int pq_decompress(struct pq_inflate **zp, int codec, const uint8_t *src, size_t n, size_t want, uint8_t **buf,
                  size_t *cap, char *why, size_t whylen)
{
    if (!*zp && !(*zp = calloc(1, sizeof(**zp)))) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    switch (codec) {
    case PQ_SNAPPY: {
        size_t len;
        if (snappy_uncompressed_length((const char *)src, n, &len) != SNAPPY_OK) {
            snprintf(why, whylen, "corrupt snappy data (no length)");
            return -1;
        }
        if (len != want) {
            snprintf(why, whylen, "snappy data says it is %zu bytes, the page header %zu", len, want);
            return -1;
        }
        /* a snappy element of 3 bytes gives 64 at most: a length past that is a lie */
        if (want / 22 > n + 64) {
            snprintf(why, whylen, "snappy data of %zu bytes cannot make %zu", n, want);
            return -1;
        }
        if (reserve(buf, cap, want ? want : 1) != 0) {
            snprintf(why, whylen, "out of memory for a page of %zu bytes", want);
            return -1;
        }
        if (snappy_uncompress((const char *)src, n, (char *)*buf, &len) != SNAPPY_OK || len != want) {
            snprintf(why, whylen, "corrupt snappy data");
            return -1;
        }
        return 0;
    }
    case PQ_ZSTD:
        return zstd(*zp, src, n, want, buf, cap, why, whylen);
    case PQ_GZIP:
        return gzip(*zp, src, n, want, buf, cap, why, whylen);
    default:
        snprintf(why, whylen, "codec %s (%d) is not read", pq_codec_name(codec), codec);
        return -1;
    }
}

void pq_inflate_free(struct pq_inflate *z)
{
    if (!z)
        return;
    ZSTD_freeDCtx(z->zstd);
    if (z->gz_ready)
        inflateEnd(&z->gz);
    free(z);
}
