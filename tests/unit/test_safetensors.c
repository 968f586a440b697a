/* safetensors: a round trip of every dtype with metadata, the file layout
 * byte for byte (so that other readers accept it), atomic replacement, fp16
 * widened exactly, and
 * clear errors for corrupt headers, truncated files, bad offsets, missing
 * tensors and wrong shapes. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/fileio.h"
#include "tests/check.h"
#include "trainer/safetensors.h"

static char dir[64];

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The file's bytes through the project's own reader; NULL (and a failed
 * check naming the reason) when it cannot be read. */
static unsigned char *slurp(const char *path, size_t *len)
{
    unsigned char *b;
    char err[512];
    if (fio_read_file(path, &b, len, err, sizeof(err)) != 0) {
        CHECK(0, "%s", err);
        return NULL;
    }
    return b;
}

static void spit(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "fopen %s", path);
    if (f) {
        CHECK(fwrite(buf, 1, len, f) == len, "fwrite %s", path);
        fclose(f);
    }
}

/* A file made by hand: header text (unpadded) and data bytes. */
static void write_raw(const char *path, const char *header, const void *data, size_t dlen)
{
    size_t h = strlen(header);
    unsigned char *b = malloc(8 + h + dlen + 1);
    if (!b)
        return;
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    if (dlen)
        memcpy(b + 8 + h, data, dlen);
    spit(path, b, 8 + h + dlen);
    free(b);
}

static float f32[6] = {1.5f, -2.25f, 3.0f, 0.1f, 1e-30f, -7.0f};
static double f64[4] = {1.0 / 3.0, -2.0, 1e300, 0.0};
static uint16_t bf16[4] = {0x3F80, 0xC000, 0x4049, 0x0000}; /* 1, -2, 3.140625, 0 */
static int64_t i64[3] = {-1, 0, 1LL << 40};
static float scalar = 42.0f;

static int write_sample(const char *path, char *err, size_t errlen)
{
    struct st_tensor t[6] = {
        {.name = "a.weight", .dtype = ST_F32, .ndim = 2, .shape = {2, 3}, .data = f32},
        {.name = "b", .dtype = ST_F64, .ndim = 1, .shape = {4}, .data = f64},
        {.name = "c", .dtype = ST_BF16, .ndim = 2, .shape = {2, 2}, .data = bf16},
        {.name = "d", .dtype = ST_I64, .ndim = 1, .shape = {3}, .data = i64},
        {.name = "scalar", .dtype = ST_F32, .ndim = 0, .data = &scalar},
        {.name = "empty", .dtype = ST_F32, .ndim = 2, .shape = {0, 5}, .data = NULL},
    };
    const char *meta[] = {"format", "pt", "producer", "cod"};
    return st_write(path, t, 6, meta, 2, err, errlen);
}

static void test_round_trip(void)
{
    char p[256], err[512];
    path_in(p, sizeof(p), "rt.safetensors");
    int rc = write_sample(p, err, sizeof(err));
    CHECK(rc == 0, "write: %s", err);
    if (rc)
        return;
    struct st_file f;
    rc = st_read(p, &f, err, sizeof(err));
    CHECK(rc == 0, "read: %s", err);
    if (rc)
        return;
    CHECK(f.n == 6, "%d tensors", f.n);
    const struct st_tensor *a = st_find(&f, "a.weight"), *b = st_find(&f, "b"),
                           *c = st_find(&f, "c"), *d = st_find(&f, "d"),
                           *s = st_find(&f, "scalar"), *e = st_find(&f, "empty");
    CHECK(a && b && c && d && s && e, "find");
    CHECK(st_find(&f, "__metadata__") == NULL && st_find(&f, "zz") == NULL, "no such tensors");
    if (a && b && c && d && s && e) {
        CHECK(a->dtype == ST_F32 && a->ndim == 2 && a->shape[0] == 2 && a->shape[1] == 3 &&
                  !memcmp(a->data, f32, sizeof(f32)),
              "a");
        CHECK(b->dtype == ST_F64 && b->ndim == 1 && !memcmp(b->data, f64, sizeof(f64)), "b");
        CHECK(c->dtype == ST_BF16 && !memcmp(c->data, bf16, sizeof(bf16)), "c");
        CHECK(d->dtype == ST_I64 && !memcmp(d->data, i64, sizeof(i64)), "d");
        CHECK(s->ndim == 0 && !memcmp(s->data, &scalar, 4), "scalar");
        CHECK(e->ndim == 2 && e->shape[0] == 0 && e->shape[1] == 5, "empty");
    }
    /* conversions */
    float fa[6], fb[4], fc[4];
    double da[6], db[4], dc[4];
    int64_t sa[2] = {2, 3}, sb[1] = {4}, sc[2] = {2, 2};
    CHECK(st_get_f32(&f, "a.weight", sa, 2, fa, err, sizeof(err)) == 0 &&
              !memcmp(fa, f32, sizeof(fa)),
          "f32 as f32: %s", err);
    CHECK(st_get_f32(&f, "b", sb, 1, fb, err, sizeof(err)) == 0 && fb[0] == (float)(1.0 / 3.0) &&
              fb[1] == -2.0f,
          "f64 as f32: %s", err);
    CHECK(st_get_f32(&f, "c", sc, 2, fc, err, sizeof(err)) == 0 && fc[0] == 1.0f &&
              fc[1] == -2.0f &&
              fc[2] == 3.140625f && fc[3] == 0.0f,
          "bf16 as f32: %s", err);
    CHECK(st_get_f64(&f, "a.weight", sa, 2, da, err, sizeof(err)) == 0 && da[1] == -2.25 &&
              da[3] == (double)0.1f,
          "f32 as f64: %s", err);
    CHECK(st_get_f64(&f, "b", sb, 1, db, err, sizeof(err)) == 0 && !memcmp(db, f64, sizeof(db)),
          "f64 as f64: %s", err);
    CHECK(st_get_f64(&f, "c", sc, 2, dc, err, sizeof(err)) == 0 && dc[2] == 3.140625,
          "bf16 as f64");
    float one;
    CHECK(st_get_f32(&f, "scalar", NULL, 0, &one, err, sizeof(err)) == 0 && one == 42.0f, "scalar");
    int64_t se[2] = {0, 5};
    CHECK(st_get_f32(&f, "empty", se, 2, NULL, err, sizeof(err)) == 0, "empty: %s", err);
    st_free(&f);
    CHECK(f.buf == NULL && f.tensors == NULL && f.n == 0, "st_free clears");
    unlink(p);
}

/* The layout other readers rely on: u64 length, space-padded JSON header
 * of a multiple of 8 bytes, tensors back to back in the order given. */
static void test_layout(void)
{
    char p[256], err[512];
    path_in(p, sizeof(p), "layout.safetensors");
    if (write_sample(p, err, sizeof(err))) {
        CHECK(0, "write: %s", err);
        return;
    }
    size_t len;
    unsigned char *b = slurp(p, &len);
    CHECK(b != NULL, "slurp");
    if (!b)
        return;
    uint64_t h = 0;
    for (int i = 0; i < 8; i++)
        h |= (uint64_t)b[i] << (8 * i);
    CHECK(h % 8 == 0, "header length %llu not a multiple of 8", (unsigned long long)h);
    size_t data = 4 * 6 + 8 * 4 + 2 * 4 + 8 * 3 + 4;
    CHECK(len == 8 + h + data, "file %zu bytes, header %llu, data %zu", len, (unsigned long long)h,
          data);
    CHECK(b[8] == '{' && (b[8 + h - 1] == '}' || b[8 + h - 1] == ' '), "padding");
    json_error_t je;
    json_t *root = json_loadb((const char *)b + 8, (size_t)h, 0, &je);
    CHECK(root != NULL, "header: %s", je.text);
    if (root) {
        json_t *meta = json_object_get(root, "__metadata__");
        CHECK(!strcmp(json_string_value(json_object_get(meta, "format")), "pt") &&
                  !strcmp(json_string_value(json_object_get(meta, "producer")), "cod"),
              "metadata");
        static const char *const order[] = {"a.weight", "b", "c", "d", "scalar", "empty"};
        json_int_t at = 0;
        for (int i = 0; i < 6; i++) {
            json_t *e = json_object_get(root, order[i]);
            json_t *off = json_object_get(e, "data_offsets");
            CHECK(json_integer_value(json_array_get(off, 0)) == at, "%s begins at %lld", order[i],
                  (long long)json_integer_value(json_array_get(off, 0)));
            at = json_integer_value(json_array_get(off, 1));
        }
        CHECK(!strcmp(json_string_value(json_object_get(json_object_get(root, "c"), "dtype")),
                      "BF16"),
              "dtype name");
        CHECK(json_array_size(json_object_get(json_object_get(root, "scalar"), "shape")) == 0,
              "scalar shape []");
        CHECK(!memcmp(b + 8 + h, f32, sizeof(f32)), "first tensor's bytes");
        json_decref(root);
    }
    free(b);
    unlink(p);
}

static void test_atomic(void)
{
    char p[256], tmp[300], err[512];
    path_in(p, sizeof(p), "atomic.safetensors");
    snprintf(tmp, sizeof(tmp), "%s.tmp", p);
    CHECK(write_sample(p, err, sizeof(err)) == 0, "write: %s", err);
    CHECK(exists(p) && !exists(tmp), "no temporary left");
    /* overwrite with a smaller file */
    struct st_tensor one = {.name = "x", .dtype = ST_F64, .ndim = 1, .shape = {2}, .data = f64};
    CHECK(st_write(p, &one, 1, NULL, 0, err, sizeof(err)) == 0, "rewrite: %s", err);
    CHECK(!exists(tmp), "no temporary after rewrite");
    struct st_file f;
    if (st_read(p, &f, err, sizeof(err)) == 0) {
        CHECK(f.n == 1 && st_find(&f, "x") && !st_find(&f, "a.weight"), "replaced");
        st_free(&f);
    } else {
        CHECK(0, "read: %s", err);
    }
    /* a refused write leaves the old file and no temporary */
    struct st_tensor dup[2] = {one, one};
    CHECK(st_write(p, dup, 2, NULL, 0, err, sizeof(err)) == -1 && strstr(err, "duplicate"),
          "duplicate names: %s", err);
    struct st_tensor nodata = {.name = "y", .dtype = ST_F32, .ndim = 1, .shape = {3}};
    CHECK(st_write(p, &nodata, 1, NULL, 0, err, sizeof(err)) == -1 && strstr(err, "tensor y"),
          "no data: %s", err);
    struct st_tensor neg = {.name = "z", .dtype = ST_F32, .ndim = 1, .shape = {-1}, .data = f32};
    CHECK(st_write(p, &neg, 1, NULL, 0, err, sizeof(err)) == -1 && strstr(err, "shape"),
          "negative shape: %s", err);
    CHECK(exists(p) && !exists(tmp), "old file kept, no temporary");
    if (st_read(p, &f, err, sizeof(err)) == 0) {
        CHECK(f.n == 1 && st_find(&f, "x"), "old file intact");
        st_free(&f);
    }
    /* a directory that does not exist: an error naming the path */
    char missing[300];
    snprintf(missing, sizeof(missing), "%s/no/such/dir/x.safetensors", dir);
    CHECK(st_write(missing, &one, 1, NULL, 0, err, sizeof(err)) == -1 &&
              strstr(err, "no/such/dir"),
          "missing dir: %s", err);
    unlink(p);
}

static void expect_read_error(const char *path, const char *needle)
{
    struct st_file f;
    char err[512] = "";
    int rc = st_read(path, &f, err, sizeof(err));
    CHECK(rc == -1, "%s: read succeeded, expected \"%s\"", path, needle);
    if (rc == 0) {
        st_free(&f);
        return;
    }
    CHECK(strstr(err, path) != NULL, "error does not name the file: %s", err);
    CHECK(strstr(err, needle) != NULL, "error \"%s\" lacks \"%s\"", err, needle);
}

static void test_corrupt(void)
{
    char p[256], err[512];
    path_in(p, sizeof(p), "corrupt.safetensors");
    if (write_sample(p, err, sizeof(err))) {
        CHECK(0, "write: %s", err);
        return;
    }
    size_t len;
    unsigned char *b = slurp(p, &len);
    if (!b)
        return;
    /* a broken brace in the header */
    b[8] = 'x';
    spit(p, b, len);
    expect_read_error(p, "corrupt header");
    b[8] = '{';
    /* a header length that points past the file */
    b[0] ^= 0x40;
    b[1] ^= 0x10;
    spit(p, b, len);
    expect_read_error(p, "truncated");
    /* an absurd header length */
    b[7] = 0x7f;
    spit(p, b, len);
    expect_read_error(p, "implausible");
    free(b);

    float four[4] = {1, 2, 3, 4};
    write_raw(p, "[1,2]", NULL, 0);
    expect_read_error(p, "not a JSON object");
    write_raw(p, "{\"t\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", four, 2);
    expect_read_error(p, "unsupported dtype");
    write_raw(p, "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}}", four, 12);
    expect_read_error(p, "does not match");
    write_raw(p, "{\"t\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", four, 8);
    expect_read_error(p, "beyond the end");
    write_raw(p, "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", four, 16);
    expect_read_error(p, "out of order");
    write_raw(p, "{\"t\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", four, 16);
    expect_read_error(p, "shape");
    write_raw(p, "{\"t\":{\"dtype\":\"F32\",\"shape\":[2]}}", four, 16);
    expect_read_error(p, "data_offsets");
    write_raw(p,
              "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
              "\"u\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
              four, 16);
    expect_read_error(p, "overlap");
    write_raw(p, "{\"__metadata__\":{\"k\":1}}", NULL, 0);
    expect_read_error(p, "__metadata__");
    write_raw(p, "{\"t\":5}", NULL, 0);
    expect_read_error(p, "tensor t");
    /* a hand-made, unpadded but valid file is read, offsets in any order */
    write_raw(p,
              "{\"u\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
              "\"t\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[0,8]}}",
              four, 16);
    struct st_file f;
    int64_t s12[2] = {1, 2};
    float got[2];
    if (st_read(p, &f, err, sizeof(err)) == 0) {
        CHECK(st_get_f32(&f, "t", s12, 2, got, err, sizeof(err)) == 0 && got[1] == 2, "t");
        CHECK(st_get_f32(&f, "u", s12 + 1, 1, got, err, sizeof(err)) == 0 && got[0] == 3, "u");
        st_free(&f);
    } else {
        CHECK(0, "hand-made file: %s", err);
    }
    unlink(p);
}

static void test_truncated(void)
{
    char p[256], err[512];
    path_in(p, sizeof(p), "trunc.safetensors");
    if (write_sample(p, err, sizeof(err))) {
        CHECK(0, "write: %s", err);
        return;
    }
    size_t len;
    unsigned char *b = slurp(p, &len);
    if (!b)
        return;
    spit(p, b, len - 5);
    expect_read_error(p, "truncated");
    spit(p, b, 30);
    expect_read_error(p, "truncated");
    spit(p, b, 4);
    expect_read_error(p, "truncated");
    spit(p, b, 0);
    expect_read_error(p, "truncated");
    free(b);
    unlink(p);
    struct st_file f;
    CHECK(st_read(p, &f, err, sizeof(err)) == -1 && strstr(err, p), "missing file: %s", err);
}

/* fp16, as pretrained models ship it: normal, negative, subnormal, zero,
 * infinite values widened exactly; mapped as well as read */
static void test_f16(void)
{
    char p[256];
    snprintf(p, sizeof(p), "%s/f16.safetensors", dir);
    const uint16_t h[6] = {0x3c00, 0xc100, 0x0001, 0x8000, 0x7c00, 0x3555};
    const float want[6] = {1.0f, -2.5f, 5.9604645e-8f, -0.0f, INFINITY, 0.33325195f};
    write_raw(p, "{\"t\":{\"dtype\":\"F16\",\"shape\":[6],\"data_offsets\":[0,12]}}", h, 12);
    for (int mapped = 0; mapped < 2; mapped++) {
        struct st_file f;
        char err[512];
        float got[6];
        int64_t shape[1] = {6};
        int rc = mapped ? st_map(p, &f, err, sizeof(err)) : st_read(p, &f, err, sizeof(err));
        CHECK(rc == 0, "%s", err);
        if (rc)
            continue;
        CHECK(st_get_f32(&f, "t", shape, 1, got, err, sizeof(err)) == 0, "%s", err);
        for (int i = 0; i < 6; i++)
            CHECK(got[i] == want[i] && signbit(got[i]) == signbit(want[i]),
                  "element %d: %g, expected %g", i, got[i], want[i]);
        st_free(&f);
    }
    unlink(p);
}

static void test_wrong_shape(void)
{
    char p[256], err[512];
    path_in(p, sizeof(p), "shape.safetensors");
    struct st_file f;
    if (write_sample(p, err, sizeof(err)) || st_read(p, &f, err, sizeof(err))) {
        CHECK(0, "%s", err);
        return;
    }
    float dst[8];
    int64_t s32[2] = {3, 2}, s6[1] = {6}, s23[2] = {2, 3};
    CHECK(st_get_f32(&f, "a.weight", s32, 2, dst, err, sizeof(err)) == -1 &&
              !strcmp(err, "tensor a.weight: shape [2,3] expected [3,2]"),
          "%s", err);
    CHECK(st_get_f32(&f, "a.weight", s6, 1, dst, err, sizeof(err)) == -1 &&
              !strcmp(err, "tensor a.weight: shape [2,3] expected [6]"),
          "%s", err);
    CHECK(st_get_f32(&f, "nope", s23, 2, dst, err, sizeof(err)) == -1 &&
              !strcmp(err, "tensor nope: missing"),
          "%s", err);
    int64_t s3[1] = {3};
    double dd[3];
    CHECK(st_get_f64(&f, "d", s3, 1, dd, err, sizeof(err)) == -1 && strstr(err, "tensor d") &&
              strstr(err, "I64"),
          "%s", err);
    st_free(&f);
    unlink(p);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/cod_test_st_XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_round_trip);
    RUN(test_layout);
    RUN(test_atomic);
    RUN(test_corrupt);
    RUN(test_truncated);
    RUN(test_f16);
    RUN(test_wrong_shape);
    if (rmdir(dir) != 0)
        perror(dir);
    CHECK_EXIT();
}
