/* The Parquet reader's pieces where a file from a writer cannot reach
 * every case: the RLE / bit-packed hybrid (the format's own example, every
 * width, a last group cut short), fields of a newer Thrift schema skipped
 * whatever their type, pages whose compressed data says another size than
 * their header, an encrypted footer; and, through the tests' writer, rows
 * and strings over row groups and pages with nulls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/utf8.h"
#include "parquet/codec.h"
#include "parquet/meta.h"
#include "parquet/parquet.h"
#include "parquet/rle.h"
#include "parquet/thrift.h"
#include "tests/check.h"
#include "tests/parquet/writer.h"

static void test_rle_spec_example(void)
{
    /* parquet-format's Encodings.md: 0..7 bit-packed in 3 bits */
    const uint8_t bp[] = {0x03, 0x88, 0xc6, 0xfa};
    struct rle r;
    rle_init(&r, bp, sizeof(bp), 3);
    for (uint32_t i = 0, v; i < 8; i++)
        CHECK(rle_next(&r, &v) == 0 && v == i, "value %u", i);
    uint32_t v;
    CHECK(rle_next(&r, &v) != 0, "the runs end");
    /* an RLE run: 300 times the value 5 in 3 bits (one byte) */
    const uint8_t run[] = {0xd8, 0x04, 0x05};
    rle_init(&r, run, sizeof(run), 3);
    int n = 0;
    while (rle_next(&r, &v) == 0 && v == 5)
        n++;
    CHECK(n == 300, "%d values", n);
}

static void test_rle_widths(void)
{
    for (int bw = 1; bw <= 32; bw++) {
        uint8_t buf[1 + 4 * 32] = {0x05}; /* two groups of 8, bit-packed */
        uint32_t want[16];
        for (int i = 0; i < 16; i++) {
            uint64_t x = (0x9e3779b97f4a7c15ull * (uint64_t)(i + bw)) >> 17;
            want[i] = bw == 32 ? (uint32_t)x : (uint32_t)x & ((1u << bw) - 1);
            for (int b = 0; b < bw; b++)
                if (want[i] >> b & 1)
                    buf[1 + (i * bw + b) / 8] |= (uint8_t)(1u << ((i * bw + b) % 8));
        }
        struct rle r;
        /* the last group's padding left off: the values whose bits are there come */
        size_t n = 1 + (size_t)(15 * bw + 7) / 8;
        rle_init(&r, buf, n, bw);
        int ok = 1;
        uint32_t v;
        for (int i = 0; i < 15; i++)
            ok &= rle_next(&r, &v) == 0 && v == want[i];
        CHECK(ok, "width %d", bw);
        /* the 16th value comes only when its bits are all there */
        int whole = 16 * bw <= 8 * (int)(n - 1);
        CHECK((rle_next(&r, &v) == 0) == whole && (!whole || v == want[15]), "width %d: the 16th value", bw);
    }
    CHECK(rle_width(0) == 0 && rle_width(1) == 1 && rle_width(2) == 2 && rle_width(3) == 2 && rle_width(4) == 3,
          "widths");
}

static void test_thrift_skips_unknown_fields(void)
{
    /* a struct with i32 field 1 = 7 (zigzag 14), then fields 20.. of every
     * other type that a newer writer might add, then i32 field 21 = -1 */
    const uint8_t b[] = {0x15, 0x0e,                         /* 1: i32 7 */
                         0x01, 0x28,                         /* 20 (long form): bool true */
                         0x13, 0x7f,                         /* byte */
                         0x14, 0x02,                         /* i16 */
                         0x16, 0x80, 0x01,                   /* i64 */
                         0x17, 1, 2, 3, 4, 5, 6, 7, 8,       /* double */
                         0x18, 0x03, 'a', 'b', 'c',          /* binary */
                         0x19, 0x21, 0x01,                   /* list<bool> of 2: a byte each */
                         0x02,
                         0x1b, 0x01, 0x55, 0x02, 0x04,       /* map<i32,i32> {1: 2} */
                         0x1c, 0x15, 0x02, 0x00,             /* struct {1: i32 1} */
                         0x55, 0x01,                         /* 33: i32 -1 */
                         0x00};
    struct tc t;
    tc_init(&t, b, sizeof(b));
    int16_t last = 0, id;
    int32_t one = 0, later = 0;
    for (int ft; (ft = tc_field(&t, &last, &id)) != TC_STOP;)
        if (id == 1 && ft == TC_I32)
            one = tc_i32(&t);
        else if (id == 33 && ft == TC_I32)
            later = tc_i32(&t);
        else
            tc_skip(&t, ft);
    CHECK(tc_ok(&t) && one == 7 && later == -1, "ok %d, %d, %d (%s)", tc_ok(&t), one, later, t.why);
    /* cut anywhere: a short read, never a read past the end */
    for (size_t n = 0; n + 1 < sizeof(b); n++) {
        tc_init(&t, b, n);
        last = 0;
        for (int ft; (ft = tc_field(&t, &last, &id)) != TC_STOP;)
            tc_skip(&t, ft);
        CHECK(!tc_ok(&t) && t.short_read, "cut at %zu", n);
    }
}

static void test_codec_sizes(void)
{
    struct pq_inflate *z = NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    char why[300];
    /* snappy: a literal of 5 bytes */
    const uint8_t sn[] = {0x05, 0x10, 'h', 'e', 'l', 'l', 'o'};
    CHECK(pq_decompress(&z, PQ_SNAPPY, sn, sizeof(sn), 5, &buf, &cap, why, sizeof(why)) == 0 && !memcmp(buf, "hello", 5),
          "%s", why);
    CHECK(pq_decompress(&z, PQ_SNAPPY, sn, sizeof(sn), 6, &buf, &cap, why, sizeof(why)) != 0 &&
              strstr(why, "snappy data says it is 5 bytes, the page header 6"), "%s", why);
    /* gzip of "hello" said to be 4 and 6 bytes */
    const uint8_t gz[] = {0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0,
                          0x86, 0xa6, 0x10, 0x36, 0x05, 0, 0, 0};
    CHECK(pq_decompress(&z, PQ_GZIP, gz, sizeof(gz), 5, &buf, &cap, why, sizeof(why)) == 0 && !memcmp(buf, "hello", 5),
          "%s", why);
    CHECK(pq_decompress(&z, PQ_GZIP, gz, sizeof(gz), 4, &buf, &cap, why, sizeof(why)) != 0 && strstr(why, "more than"),
          "%s", why);
    CHECK(pq_decompress(&z, PQ_GZIP, gz, sizeof(gz), 6, &buf, &cap, why, sizeof(why)) != 0 && strstr(why, "fewer than"),
          "%s", why);
    CHECK(pq_decompress(&z, PQ_GZIP, gz, 12, 5, &buf, &cap, why, sizeof(why)) != 0 && strstr(why, "gzip"), "%s", why);
    /* a zstd frame that claims 1 GB from 20 bytes allocates no such thing */
    const uint8_t zs[] = {0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x05, 0x29, 0x00, 0x00, 'h', 'e', 'l', 'l', 'o'};
    CHECK(pq_decompress(&z, PQ_ZSTD, zs, sizeof(zs), 5, &buf, &cap, why, sizeof(why)) == 0 && !memcmp(buf, "hello", 5),
          "%s", why);
    CHECK(pq_decompress(&z, PQ_ZSTD, zs, sizeof(zs), 1u << 30, &buf, &cap, why, sizeof(why)) != 0 && cap < (1u << 20),
          "%s, cap %zu", why, cap);
    CHECK(pq_decompress(&z, PQ_LZ4_RAW, zs, sizeof(zs), 5, &buf, &cap, why, sizeof(why)) != 0 && strstr(why, "LZ4_RAW"),
          "%s", why);
    free(buf);
    pq_inflate_free(z);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "%s", path);
}

static void test_refused_files(void)
{
    char path[] = "/tmp/cod-test-parquet-XXXXXX", err[2048];
    int fd = mkstemp(path);
    close(fd);
    write_file(path, "PAR1\x00\x00\x00\x00\x04\x00\x00\x00PARE", 16);
    CHECK(!pq_open(path, err, sizeof(err)) && strstr(err, path) && strstr(err, "encrypted"), "%s", err);
    write_file(path, "PAR1\x15\x02\x00\x03\x00\x00\x00PAR1", 15);
    CHECK(!pq_open(path, err, sizeof(err)) && strstr(err, "has no schema"), "%s", err);
    write_file(path, "PAR1\x29\x1c\x00\x03\x00\x00\x00PAR1", 15);
    CHECK(!pq_open(path, err, sizeof(err)) && strstr(err, "footer (FileMetaData, 3 bytes) is malformed: ends inside"),
          "%s", err);
    unlink(path);
}

/* rows and strings over row groups and pages, nulls among them */
static void test_round_trip(void)
{
    char path[] = "/tmp/cod-test-parquet-XXXXXX", err[2048];
    int fd = mkstemp(path);
    close(fd);
    for (int codec = 0; codec < 7; codec++) {
        if (codec != 0 && codec != 1 && codec != 2 && codec != 6)
            continue;
        for (int v2 = 0; v2 < 2; v2++) {
            const char *names[] = {"text", "n", "x"};
            enum pqw_type types[] = {PQW_STRING, PQW_INT64, PQW_DOUBLE};
            struct pqw_opts o = {.codec = codec, .codec_id = -1, .v2 = v2, .dict = codec == 1, .page_bytes = 40,
                                 .group_rows = 7};
            struct pqw *w = pqw_open(path, names, types, 3, &o);
            CHECK(w != NULL, "writer");
            if (!w)
                return;
            for (int64_t i = 0; i < 50; i++) {
                char s[32];
                double x = (double)i / 4;
                snprintf(s, sizeof(s), "text %lld", (long long)(i % 9));
                const void *vals[] = {i % 5 == 2 ? NULL : s, i % 3 ? &i : NULL, &x};
                size_t lens[] = {strlen(s), 0, 0};
                pqw_row(w, vals, lens);
            }
            CHECK(pqw_close(w) == 0, "close");
            struct pq_rows *r = pq_rows_open(path, NULL, 0, err, sizeof(err));
            CHECK(r != NULL, "%s", err);
            json_t *row;
            int64_t i = 0, bad = 0;
            while (r && pq_rows_next(r, &row, err, sizeof(err)) == 1) {
                char s[32];
                snprintf(s, sizeof(s), "text %lld", (long long)(i % 9));
                json_t *want = json_pack("{s:o, s:o, s:f}", "text", i % 5 == 2 ? json_null() : json_string(s), "n",
                                         i % 3 ? json_integer(i) : json_null(), "x", (double)i / 4);
                bad += !json_equal(row, want);
                json_decref(want);
                json_decref(row);
                i++;
            }
            CHECK(i == 50 && bad == 0, "codec %d v2 %d: %lld rows, %lld differ (%s)", codec, v2, (long long)i,
                  (long long)bad, err);
            pq_rows_close(r);
            struct pq_file *f = pq_open(path, err, sizeof(err));
            int col = f ? pq_text_column(f, "text", err, sizeof(err)) : -1, nulls = 0, rows = 0;
            CHECK(col == 0 && pq_row_groups(f) == 8 && pq_num_rows(f) == 50, "%s", err);
            for (int g = 0; f && g < pq_row_groups(f); g++) {
                struct pq_text *t = pq_text_open(f, g, col, err, sizeof(err));
                const char *s;
                size_t n;
                while (t && pq_text_next(t, &s, &n, err, sizeof(err)) == 1) {
                    nulls += !s;
                    rows++;
                }
                pq_text_close(t);
            }
            CHECK(rows == 50 && nulls == 10, "codec %d v2 %d: %d rows, %d nulls", codec, v2, rows, nulls);
            CHECK(pq_text_column(f, "n", err, sizeof(err)) < 0 && strstr(err, "column 'n' is INT64, not a string"),
                  "%s", err);
            pq_close(f);
        }
    }
    unlink(path);
}

static void test_utf8(void)
{
    CHECK(utf8_valid("plain ascii text, long enough for words", 39), "ascii");
    CHECK(utf8_valid("\xce\xb4\xf0\x9f\x98\x80", 6), "greek and an emoji");
    CHECK(!utf8_valid("\xc0\xaf", 2) && !utf8_valid("\xed\xa0\x80", 3) && !utf8_valid("ab\xf0\x9f\x98", 5),
          "overlong, a surrogate, cut short");
}

int main(void)
{
    RUN(test_rle_spec_example);
    RUN(test_rle_widths);
    RUN(test_thrift_skips_unknown_fields);
    RUN(test_codec_sizes);
    RUN(test_refused_files);
    RUN(test_round_trip);
    RUN(test_utf8);
    CHECK_EXIT();
}
