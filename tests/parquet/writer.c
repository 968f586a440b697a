/* The tests' Parquet writer: see writer.h. */
#include "tests/parquet/writer.h"

#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

struct buf {
    unsigned char *p;
    size_t n, cap;
};

static int reserve(struct buf *b, size_t n)
{
    if (n <= b->cap)
        return 0;
    size_t c = b->cap ? b->cap : 4096;
    while (c < n)
        c *= 2;
    unsigned char *q = realloc(b->p, c);
    if (!q)
        return -1;
    b->p = q;
    b->cap = c;
    return 0;
}

static int put(struct buf *b, const void *data, size_t n)
{
    if (reserve(b, b->n + n) != 0)
        return -1;
    if (n)
        memcpy(b->p + b->n, data, n);
    b->n += n;
    return 0;
}

/* Thrift compact protocol, written */
static void varint(struct buf *b, uint64_t v)
{
    unsigned char x[10];
    int n = 0;
    do {
        x[n] = v & 0x7f;
        v >>= 7;
        if (v)
            x[n] |= 0x80;
        n++;
    } while (v);
    put(b, x, (size_t)n);
}
static uint64_t zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static void field(struct buf *b, int16_t *last, int16_t id, int type)
{
    unsigned char h = (unsigned char)((id - *last) << 4 | type);
    put(b, &h, 1);
    *last = id;
}
static void f_i32(struct buf *b, int16_t *last, int16_t id, int64_t v) { field(b, last, id, 5), varint(b, zz(v)); }
static void f_i64(struct buf *b, int16_t *last, int16_t id, int64_t v) { field(b, last, id, 6), varint(b, zz(v)); }
static void f_str(struct buf *b, int16_t *last, int16_t id, const char *s)
{
    field(b, last, id, 8);
    varint(b, strlen(s));
    put(b, s, strlen(s));
}
static void list(struct buf *b, int type, size_t n)
{
    unsigned char h = (unsigned char)((n < 15 ? n : 15) << 4 | (size_t)type);
    put(b, &h, 1);
    if (n >= 15)
        varint(b, n);
}
static void stop(struct buf *b) { put(b, "", 1); }

struct chunk_meta {
    int64_t offset, data, compressed, uncompressed, values;
    int dict;
};

struct col {
    char *name;
    enum pqw_type type;
    struct buf levels, values, pages; /* the page being filled; the group's pages */
    struct buf dict;                  /* the chunk's dictionary (PLAIN strings) */
    uint32_t *dict_at, dict_n, *idx;  /* each entry's offset; the page's indices */
    size_t n_idx;
    int64_t page_values, page_nulls;
    int64_t chunk_values, chunk_uncompressed;
    struct chunk_meta *chunks;        /* one a row group */
};

struct pqw {
    FILE *f;
    struct pqw_opts o;
    struct col *cols;
    int n;
    int64_t group_rows, rows, offset;
    int groups;
    int64_t *group_n;
};

/* levels as RLE runs */
static void rle_levels(struct buf *out, const unsigned char *lv, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && lv[j] == lv[i])
            j++;
        varint(out, (uint64_t)(j - i) << 1);
        put(out, &lv[i], 1);
        i = j;
    }
}

static int compress_page(int codec, const unsigned char *src, size_t n, struct buf *out)
{
    out->n = 0;
    if (codec == 0)
        return put(out, src, n);
    size_t cap = codec == 1 ? snappy_max_compressed_length(n) : codec == 6 ? ZSTD_compressBound(n) : compressBound(n) + 64;
    if (reserve(out, cap) != 0)
        return -1;
    out->n = cap;
    if (codec == 1)
        return snappy_compress((const char *)src, n, (char *)out->p, &out->n) == SNAPPY_OK ? 0 : -1;
    if (codec == 6) {
        size_t r = ZSTD_compress(out->p, cap, src, n, 3);
        out->n = r;
        return ZSTD_isError(r) ? -1 : 0;
    }
    z_stream z = {0};
    if (deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)n;
    z.next_out = out->p;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    out->n = cap - z.avail_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

/* The page's dictionary indices as one bit-packed run. */
static void packed_indices(struct col *c, struct buf *out)
{
    int bw = 1;
    while ((1u << bw) < c->dict_n)
        bw++;
    unsigned char b = (unsigned char)bw;
    put(out, &b, 1);
    size_t groups = (c->n_idx + 7) / 8;
    varint(out, groups << 1 | 1);
    size_t bytes = groups * (size_t)bw, at = out->n;
    unsigned char zero[64] = {0};
    for (size_t k = 0; k < bytes; k += sizeof(zero))
        put(out, zero, bytes - k < sizeof(zero) ? bytes - k : sizeof(zero));
    for (size_t i = 0; i < c->n_idx; i++)
        for (int j = 0; j < bw; j++)
            if (c->idx[i] >> j & 1) {
                size_t bit = i * (size_t)bw + (size_t)j;
                out->p[at + bit / 8] |= (unsigned char)(1u << (bit % 8));
            }
    c->values.n = 0;
    put(&c->values, out->p, out->n);
    c->n_idx = 0;
}

/* A string's index in the chunk's dictionary, added when new. */
static int dict_index(struct col *c, const void *s, size_t n, uint32_t *k)
{
    for (uint32_t i = 0; i < c->dict_n; i++) {
        uint32_t len;
        memcpy(&len, c->dict.p + c->dict_at[i], 4);
        if (len == n && memcmp(c->dict.p + c->dict_at[i] + 4, s, n) == 0) {
            *k = i;
            return 0;
        }
    }
    uint32_t *at = realloc(c->dict_at, (c->dict_n + 1) * sizeof(*at)), len = (uint32_t)n;
    if (!at)
        return -1;
    c->dict_at = at;
    at[c->dict_n] = (uint32_t)c->dict.n;
    if (put(&c->dict, &len, 4) != 0 || put(&c->dict, s, n) != 0)
        return -1;
    *k = c->dict_n++;
    return 0;
}

static int dict_page(struct pqw *w, struct col *c, struct buf *out)
{
    struct buf z = {0};
    int16_t last = 0, l2 = 0;
    int codec = w->o.codec_id >= 0 ? 0 : w->o.codec, rc = compress_page(codec, c->dict.p, c->dict.n, &z);
    f_i32(out, &last, 1, 2);
    f_i32(out, &last, 2, (int64_t)c->dict.n);
    f_i32(out, &last, 3, (int64_t)z.n);
    field(out, &last, 7, 12);
    f_i32(out, &l2, 1, c->dict_n);
    f_i32(out, &l2, 2, w->o.v2 ? 0 : 2);
    stop(out);
    stop(out);
    if (rc == 0)
        rc = put(out, z.p, z.n);
    c->chunk_uncompressed += (int64_t)c->dict.n;
    free(z.p);
    return rc;
}

/* Cuts the page being filled. */
static int flush_page(struct pqw *w, struct col *c)
{
    if (!c->page_values)
        return 0;
    int dict = w->o.dict && c->type == PQW_STRING;
    struct buf packed = {0};
    if (dict)
        packed_indices(c, &packed);
    free(packed.p);
    int enc = dict ? (w->o.v2 ? 8 : 2) : 0;
    struct buf lv = {0}, raw = {0}, z = {0}, head = {0};
    rle_levels(&lv, c->levels.p, c->levels.n);
    int16_t last = 0, l2 = 0;
    int codec = w->o.codec_id >= 0 ? 0 : w->o.codec, rc = 0;
    size_t usize;
    if (!w->o.v2) {
        uint32_t len = (uint32_t)lv.n;
        put(&raw, &len, 4);
        put(&raw, lv.p, lv.n);
        put(&raw, c->values.p, c->values.n);
        rc = compress_page(codec, raw.p, raw.n, &z);
        usize = raw.n;
        f_i32(&head, &last, 1, 0);
        f_i32(&head, &last, 2, (int64_t)usize);
        f_i32(&head, &last, 3, (int64_t)z.n);
        field(&head, &last, 5, 12);
        f_i32(&head, &l2, 1, c->page_values);
        f_i32(&head, &l2, 2, enc);
        f_i32(&head, &l2, 3, 3);
        f_i32(&head, &l2, 4, 3);
    } else {
        rc = compress_page(codec, c->values.p, c->values.n, &raw);
        usize = lv.n + c->values.n;
        put(&z, lv.p, lv.n);
        put(&z, raw.p, raw.n);
        f_i32(&head, &last, 1, 3);
        f_i32(&head, &last, 2, (int64_t)usize);
        f_i32(&head, &last, 3, (int64_t)z.n);
        field(&head, &last, 8, 12);
        f_i32(&head, &l2, 1, c->page_values);
        f_i32(&head, &l2, 2, c->page_nulls);
        f_i32(&head, &l2, 3, c->page_values);
        f_i32(&head, &l2, 4, enc);
        f_i32(&head, &l2, 5, (int64_t)lv.n);
        f_i32(&head, &l2, 6, 0);
    }
    stop(&head);
    stop(&head);
    if (rc == 0 && (put(&c->pages, head.p, head.n) != 0 || put(&c->pages, z.p, z.n) != 0))
        rc = -1;
    c->chunk_uncompressed += (int64_t)(head.n + usize);
    c->chunk_values += c->page_values;
    c->page_values = c->page_nulls = 0;
    c->levels.n = c->values.n = 0;
    free(lv.p), free(raw.p), free(z.p), free(head.p);
    return rc;
}

static int flush_group(struct pqw *w)
{
    if (!w->group_rows)
        return 0;
    int64_t *gn = realloc(w->group_n, (size_t)(w->groups + 1) * sizeof(*gn));
    if (!gn)
        return -1;
    w->group_n = gn;
    w->group_n[w->groups] = w->group_rows;
    for (int i = 0; i < w->n; i++) {
        struct col *c = &w->cols[i];
        struct chunk_meta *m = realloc(c->chunks, (size_t)(w->groups + 1) * sizeof(*m));
        struct buf d = {0};
        if (!m || flush_page(w, c) != 0 || (c->dict_n && dict_page(w, c, &d) != 0))
            return -1;
        c->chunks = m;
        m[w->groups] = (struct chunk_meta){.offset = w->offset, .dict = d.n > 0, .data = w->offset + (int64_t)d.n,
                                           .compressed = (int64_t)(d.n + c->pages.n),
                                           .uncompressed = c->chunk_uncompressed, .values = c->chunk_values};
        if ((d.n && fwrite(d.p, 1, d.n, w->f) != d.n) ||
            (c->pages.n && fwrite(c->pages.p, 1, c->pages.n, w->f) != c->pages.n))
            return -1;
        w->offset += (int64_t)(d.n + c->pages.n);
        free(d.p);
        c->dict.n = c->dict_n = 0;
        c->pages.n = 0;
        c->chunk_values = c->chunk_uncompressed = 0;
    }
    w->groups++;
    w->group_rows = 0;
    return 0;
}

struct pqw *pqw_open(const char *path, const char *const *names, const enum pqw_type *types, int n,
                     const struct pqw_opts *o)
{
    struct pqw *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->o = *o;
    if (!w->o.page_bytes)
        w->o.page_bytes = 1 << 20;
    if (!w->o.group_rows)
        w->o.group_rows = 10000;
    w->n = n;
    w->cols = calloc((size_t)n, sizeof(*w->cols));
    w->f = fopen(path, "wb");
    if (!w->cols || !w->f || fwrite("PAR1", 1, 4, w->f) != 4) {
        if (w->f)
            fclose(w->f);
        free(w->cols);
        free(w);
        return NULL;
    }
    w->offset = 4;
    for (int i = 0; i < n; i++) {
        w->cols[i].name = strdup(names[i]);
        w->cols[i].type = types[i];
    }
    return w;
}

int pqw_row(struct pqw *w, const void *const *values, const size_t *slen)
{
    for (int i = 0; i < w->n; i++) {
        struct col *c = &w->cols[i];
        unsigned char def = values[i] != NULL;
        if (put(&c->levels, &def, 1) != 0)
            return -1;
        c->page_values++;
        c->page_nulls += !def;
        if (def && c->type == PQW_STRING && w->o.dict) {
            uint32_t k, *idx = realloc(c->idx, (c->n_idx + 1) * sizeof(*idx));
            if (!idx || dict_index(c, values[i], slen[i], &k) != 0)
                return -1;
            c->idx = idx;
            c->idx[c->n_idx++] = k;
            c->values.n += 4; /* a measure of the page's size */
        } else if (def && c->type == PQW_STRING) {
            uint32_t len = (uint32_t)slen[i];
            if (put(&c->values, &len, 4) != 0 || put(&c->values, values[i], slen[i]) != 0)
                return -1;
        } else if (def && put(&c->values, values[i], 8) != 0)
            return -1;
        if (c->values.n >= w->o.page_bytes && flush_page(w, c) != 0)
            return -1;
    }
    w->rows++;
    if (++w->group_rows == w->o.group_rows)
        return flush_group(w);
    return 0;
}

static void schema(struct buf *b, const struct pqw *w, int16_t *outer)
{
    int16_t last = 0;
    field(b, outer, 2, 9);
    list(b, 12, (size_t)w->n + 1);
    f_str(b, &last, 4, "schema");
    f_i32(b, &last, 5, w->n);
    stop(b);
    for (int i = 0; i < w->n; i++) {
        const struct col *c = &w->cols[i];
        last = 0;
        f_i32(b, &last, 1, c->type == PQW_STRING ? 6 : c->type == PQW_INT64 ? 2 : 5);
        f_i32(b, &last, 3, 1);
        f_str(b, &last, 4, c->name);
        if (c->type == PQW_STRING) {
            f_i32(b, &last, 6, 0);
            field(b, &last, 10, 12);
            int16_t l2 = 0;
            field(b, &l2, 1, 12);
            stop(b);
            stop(b);
        }
        stop(b);
    }
}

int pqw_close(struct pqw *w)
{
    int rc = flush_group(w);
    struct buf b = {0};
    int16_t last = 0;
    f_i32(&b, &last, 1, 1);
    schema(&b, w, &last);
    f_i64(&b, &last, 3, w->rows);
    field(&b, &last, 4, 9);
    list(&b, 12, (size_t)w->groups);
    for (int g = 0; g < w->groups; g++) {
        int16_t lg = 0;
        int64_t total = 0;
        field(&b, &lg, 1, 9);
        list(&b, 12, (size_t)w->n);
        for (int i = 0; i < w->n; i++) {
            const struct col *c = &w->cols[i];
            const struct chunk_meta *m = &c->chunks[g];
            int16_t lc = 0, lm = 0;
            total += m->uncompressed;
            f_i64(&b, &lc, 2, m->offset + w->o.lie);
            field(&b, &lc, 3, 12);
            f_i32(&b, &lm, 1, c->type == PQW_STRING ? 6 : c->type == PQW_INT64 ? 2 : 5);
            field(&b, &lm, 2, 9);
            list(&b, 5, m->dict ? 3 : 2);
            varint(&b, zz(0));
            varint(&b, zz(3));
            if (m->dict)
                varint(&b, zz(w->o.v2 ? 8 : 2));
            field(&b, &lm, 3, 9);
            list(&b, 8, 1);
            varint(&b, strlen(c->name));
            put(&b, c->name, strlen(c->name));
            f_i32(&b, &lm, 4, w->o.codec_id >= 0 ? w->o.codec_id : w->o.codec);
            f_i64(&b, &lm, 5, m->values);
            f_i64(&b, &lm, 6, m->uncompressed);
            f_i64(&b, &lm, 7, m->compressed);
            f_i64(&b, &lm, 9, m->data + w->o.lie);
            if (m->dict)
                f_i64(&b, &lm, 11, m->offset + w->o.lie);
            stop(&b);
            stop(&b);
        }
        f_i64(&b, &lg, 2, total);
        f_i64(&b, &lg, 3, w->group_n[g]);
        stop(&b);
    }
    f_str(&b, &last, 6, "cod tests/parquet/writer.c");
    stop(&b);
    uint32_t len = (uint32_t)b.n;
    if (rc == 0 && (fwrite(b.p, 1, b.n, w->f) != b.n || fwrite(&len, 4, 1, w->f) != 1 || fwrite("PAR1", 1, 4, w->f) != 4))
        rc = -1;
    if (fclose(w->f) != 0)
        rc = -1;
    for (int i = 0; i < w->n; i++) {
        struct col *c = &w->cols[i];
        free(c->name), free(c->levels.p), free(c->values.p), free(c->pages.p), free(c->chunks);
        free(c->dict.p), free(c->dict_at), free(c->idx);
    }
    free(b.p), free(w->cols), free(w->group_n), free(w);
    return rc;
}
