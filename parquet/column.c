/* A column chunk read page by page: see column.h. */
#include "parquet/column.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parquet/codec.h"
#include "parquet/rle.h"
#include "parquet/thrift.h"

enum { PAGE_DATA = 0, PAGE_INDEX = 1, PAGE_DICT = 2, PAGE_DATA_V2 = 3 };
enum { ENC_PLAIN = 0, ENC_PLAIN_DICT = 2, ENC_RLE = 3, ENC_BIT_PACKED = 4, ENC_RLE_DICT = 8 };

/* what a page header says */
struct page_head {
    int type;
    int32_t usize, csize;
    int32_t values;        /* entries, nulls included */
    int enc, def_enc, rep_enc;
    int32_t dl_len, rl_len; /* v2: the levels' bytes, stored uncompressed */
    int compressed;        /* v2: the values are compressed */
    int seen_data, seen_v2, seen_dict;
};

struct pq_col {
    const struct pq_file *f;
    const struct pq_chunk *ck;
    int max_def, max_rep, type;
    int64_t pos, end;          /* the next page header; the chunk's end */
    uint8_t *win;              /* bytes of the file from win_off */
    size_t win_cap, win_n;
    int64_t win_off;
    uint8_t *page;             /* a decompressed page */
    size_t page_cap;
    struct pq_inflate *z;
    uint8_t *dict;             /* the dictionary's values, as stored (PLAIN) */
    size_t dict_cap;
    uint32_t dict_n;
    uint32_t *dict_at;         /* BYTE_ARRAY: each value's offset in dict (its length before it) */
    int have_dict, data_pages;
    int64_t left;              /* entries left in the page */
    struct rle rep, def;
    int enc;
    const uint8_t *vp, *vend;  /* PLAIN values */
    uint64_t vbit;             /* PLAIN booleans: the next bit */
    struct rle idx;            /* dictionary indices, RLE booleans */
    struct pq_value ahead;
    int has_ahead;
    int64_t page_at;           /* the current page's offset, for errors */
    char where[700];
};

static const char *encoding_name(int e)
{
    static const char *const names[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
                                        "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                        "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
    return e >= 0 && e < 10 ? names[e] : "an unknown encoding";
}

const char *pq_col_where(const struct pq_col *c) { return c->where; }
int64_t pq_col_offset(const struct pq_col *c) { return c->pos; }

static int fail(struct pq_col *c, char *err, size_t errlen, const char *fmt, const char *what)
{
    char msg[500];
    snprintf(msg, sizeof(msg), fmt, what);
    snprintf(err, errlen, "%s: page at byte %lld: %s", c->where, (long long)c->page_at, msg);
    return -1;
}

/* Makes win hold the file's bytes [off, off + len), keeping what it holds of them. */
static int ensure(struct pq_col *c, int64_t off, size_t len, char *err, size_t errlen)
{
    int64_t have_end = c->win_off + (int64_t)c->win_n;
    if (off >= c->win_off && off + (int64_t)len <= have_end)
        return 0;
    size_t keep = 0;
    if (off >= c->win_off && off < have_end) {
        keep = (size_t)(have_end - off);
        memmove(c->win, c->win + (off - c->win_off), keep);
    }
    if (len > c->win_cap) {
        uint8_t *w = realloc(c->win, len);
        if (!w) {
            snprintf(err, errlen, "%s: out of memory for a page of %zu bytes", c->where, len);
            return -1;
        }
        c->win = w;
        c->win_cap = len;
    }
    c->win_off = off;
    c->win_n = keep;
    if (pq_pread(c->f, c->win + keep, len - keep, off + (int64_t)keep, err, errlen) != 0)
        return -1;
    c->win_n = len;
    return 0;
}

static void data_header(struct tc *t, struct page_head *h, int v2)
{
    int16_t last = 0, id;
    tc_enter(t);
    for (int ft; (ft = tc_field(t, &last, &id)) != TC_STOP;) {
        if (ft == TC_I32 && id == 1)
            h->values = tc_i32(t);
        else if (ft == TC_I32 && ((!v2 && id == 2) || (v2 && id == 4)))
            h->enc = tc_i32(t);
        else if (ft == TC_I32 && !v2 && id == 3)
            h->def_enc = tc_i32(t);
        else if (ft == TC_I32 && !v2 && id == 4)
            h->rep_enc = tc_i32(t);
        else if (ft == TC_I32 && v2 && id == 5)
            h->dl_len = tc_i32(t);
        else if (ft == TC_I32 && v2 && id == 6)
            h->rl_len = tc_i32(t);
        else if ((ft == TC_TRUE || ft == TC_FALSE) && v2 && id == 7)
            h->compressed = ft == TC_TRUE;
        else
            tc_skip(t, ft);
    }
    tc_leave(t);
}

/* Parses a page header from bytes; *used its length. */
static void page_header(struct tc *t, struct page_head *h)
{
    int16_t last = 0, id;
    *h = (struct page_head){.type = -1, .usize = -1, .csize = -1, .compressed = 1, .enc = -1};
    for (int ft; (ft = tc_field(t, &last, &id)) != TC_STOP;) {
        if (ft == TC_I32 && id == 1)
            h->type = tc_i32(t);
        else if (ft == TC_I32 && id == 2)
            h->usize = tc_i32(t);
        else if (ft == TC_I32 && id == 3)
            h->csize = tc_i32(t);
        else if (ft == TC_STRUCT && (id == 5 || id == 8)) {
            data_header(t, h, id == 8);
            h->seen_data |= id == 5;
            h->seen_v2 |= id == 8;
        } else if (ft == TC_STRUCT && id == 7) {
            int16_t l2 = 0, i2;
            h->seen_dict = 1;
            tc_enter(t);
            for (int f2; (f2 = tc_field(t, &l2, &i2)) != TC_STOP;)
                if (f2 == TC_I32 && i2 == 1)
                    h->values = tc_i32(t);
                else if (f2 == TC_I32 && i2 == 2)
                    h->enc = tc_i32(t);
                else
                    tc_skip(t, f2);
            tc_leave(t);
        } else
            tc_skip(t, ft);
    }
}

/* Reads the header at c->pos into h and the page's bytes into the window;
 * *data points at them. 0, or -1 with err. */
static int read_page(struct pq_col *c, struct page_head *h, const uint8_t **data, char *err, size_t errlen)
{
    c->page_at = c->pos;
    size_t avail = (size_t)(c->end - c->pos), want = avail < 16384 ? avail : 16384, hlen;
    for (;;) {
        if (ensure(c, c->pos, want, err, errlen) != 0)
            return -1;
        struct tc t;
        tc_init(&t, c->win + (c->pos - c->win_off), want);
        page_header(&t, h);
        if (tc_ok(&t)) {
            hlen = (size_t)(t.p - (c->win + (c->pos - c->win_off)));
            break;
        }
        if (!t.short_read || want == avail)
            return fail(c, err, errlen, "a malformed page header (%s)", t.short_read ? "cut off by the chunk's end" : t.why);
        want = want > avail / 2 ? avail : 2 * want;
    }
    if (h->usize < 0 || h->csize < 0)
        return fail(c, err, errlen, "%s", "a page header without its sizes");
    if ((uint64_t)h->csize > avail - hlen)
        return fail(c, err, errlen, "%s", "a page that runs past its column chunk's end (the footer's size for it)");
    if (ensure(c, c->pos, hlen + (size_t)h->csize, err, errlen) != 0)
        return -1;
    *data = c->win + (c->pos - c->win_off) + hlen;
    c->pos += (int64_t)(hlen + (size_t)h->csize);
    return 0;
}

/* The page's bytes decompressed: *out and *n. */
static int inflate_page(struct pq_col *c, const uint8_t *src, size_t n, size_t want, const uint8_t **out,
                        size_t *outn, char *err, size_t errlen)
{
    if (c->ck->codec == PQ_UNCOMPRESSED) {
        if (n != want)
            return fail(c, err, errlen, "%s", "an uncompressed page whose two sizes differ");
        *out = src;
        *outn = n;
        return 0;
    }
    char why[300];
    if (pq_decompress(&c->z, c->ck->codec, src, n, want, &c->page, &c->page_cap, why, sizeof(why)) != 0)
        return fail(c, err, errlen, "%s", why);
    *out = c->page;
    *outn = want;
    return 0;
}

static int type_width(int type)
{
    return type == PQ_INT32 || type == PQ_FLOAT ? 4 : type == PQ_INT64 || type == PQ_DOUBLE ? 8 : 0;
}

static int load_dict(struct pq_col *c, const struct page_head *h, const uint8_t *p, size_t n, char *err,
                     size_t errlen)
{
    if (c->have_dict || c->data_pages)
        return fail(c, err, errlen, "%s", c->have_dict ? "a second dictionary page" : "a dictionary page after data pages");
    if (h->enc != ENC_PLAIN && h->enc != ENC_PLAIN_DICT)
        return fail(c, err, errlen, "a dictionary in the encoding %s, which cod does not read", encoding_name(h->enc));
    if (c->type == PQ_BOOLEAN)
        return fail(c, err, errlen, "%s", "a dictionary of booleans");
    int w = type_width(c->type);
    if (h->values < 0 || (w && (uint64_t)h->values * (uint64_t)w > n) || (!w && (uint64_t)h->values * 4 > n))
        return fail(c, err, errlen, "%s", "a dictionary with more values than its bytes hold");
    if (c->dict_cap < n + 1) {
        uint8_t *d = realloc(c->dict, n + 1);
        if (!d)
            return fail(c, err, errlen, "%s", "out of memory for the dictionary");
        c->dict = d;
        c->dict_cap = n + 1;
    }
    memcpy(c->dict, p, n);
    c->dict_n = (uint32_t)h->values;
    if (c->type == PQ_BYTE_ARRAY) {
        if (!(c->dict_at = malloc((c->dict_n ? c->dict_n : 1) * sizeof(*c->dict_at))))
            return fail(c, err, errlen, "%s", "out of memory for the dictionary");
        size_t at = 0;
        for (uint32_t i = 0; i < c->dict_n; i++) {
            if (n - at < 4)
                return fail(c, err, errlen, "%s", "a dictionary whose strings run past its end");
            uint32_t len;
            memcpy(&len, c->dict + at, 4);
            if (len > n - at - 4)
                return fail(c, err, errlen, "%s", "a dictionary whose strings run past its end");
            c->dict_at[i] = (uint32_t)at;
            at += 4 + (size_t)len;
        }
    }
    c->have_dict = 1;
    return 0;
}

/* The levels of a v1 page: a 4-byte length, then the runs. */
static int v1_levels(struct pq_col *c, struct rle *r, int enc, int max, const uint8_t **p, const uint8_t *end,
                     char *err, size_t errlen)
{
    if (!max)
        return 0;
    if (enc != ENC_RLE)
        return fail(c, err, errlen, "levels in the encoding %s, which cod does not read (it reads RLE)",
                    encoding_name(enc));
    uint32_t len;
    if (end - *p < 4 || (memcpy(&len, *p, 4), len > (uint64_t)(end - *p - 4)))
        return fail(c, err, errlen, "%s", "levels that run past the page's end");
    rle_init(r, *p + 4, len, rle_width((uint32_t)max));
    *p += 4 + len;
    return 0;
}

/* Sets up the values of a data page at p..end. */
static int start_values(struct pq_col *c, int enc, const uint8_t *p, const uint8_t *end, char *err, size_t errlen)
{
    c->enc = enc;
    if (enc == ENC_PLAIN) {
        c->vp = p;
        c->vend = end;
        c->vbit = 0;
        return 0;
    }
    if (enc == ENC_PLAIN_DICT || enc == ENC_RLE_DICT) {
        if (!c->have_dict)
            return fail(c, err, errlen, "%s", "dictionary-encoded values without a dictionary page");
        if (p >= end || *p > 32)
            return fail(c, err, errlen, "%s", "dictionary indices without a valid bit width");
        rle_init(&c->idx, p + 1, (size_t)(end - p - 1), *p);
        return 0;
    }
    if (enc == ENC_RLE && c->type == PQ_BOOLEAN) {
        uint32_t len;
        if (end - p < 4 || (memcpy(&len, p, 4), len > (uint64_t)(end - p - 4)))
            return fail(c, err, errlen, "%s", "RLE booleans that run past the page's end");
        rle_init(&c->idx, p + 4, len, 1);
        return 0;
    }
    return fail(c, err, errlen, "values in the encoding %s, which cod does not read (it reads PLAIN, "
                                "PLAIN_DICTIONARY and RLE_DICTIONARY)", encoding_name(enc));
}

/* Moves to the next data page with entries. 1, 0 at the chunk's end, -1 with err. */
static int next_page(struct pq_col *c, char *err, size_t errlen)
{
    while (c->pos < c->end) {
        struct page_head h;
        const uint8_t *raw, *p;
        size_t n;
        if (read_page(c, &h, &raw, err, errlen) != 0)
            return -1;
        if (h.type == PAGE_INDEX)
            continue;
        if (h.type == PAGE_DICT) {
            if (!h.seen_dict)
                return fail(c, err, errlen, "%s", "a dictionary page without its header");
            if (inflate_page(c, raw, (size_t)h.csize, (size_t)h.usize, &p, &n, err, errlen) != 0 ||
                load_dict(c, &h, p, n, err, errlen) != 0)
                return -1;
            continue;
        }
        if ((h.type == PAGE_DATA && !h.seen_data) || (h.type == PAGE_DATA_V2 && !h.seen_v2))
            return fail(c, err, errlen, "%s", "a data page without its header");
        if (h.type != PAGE_DATA && h.type != PAGE_DATA_V2) {
            char t[40];
            snprintf(t, sizeof(t), "%d", h.type);
            return fail(c, err, errlen, "a page of unknown type %s", t);
        }
        if (h.values < 0)
            return fail(c, err, errlen, "%s", "a page with a negative count of values");
        c->data_pages++;
        const uint8_t *end;
        if (h.type == PAGE_DATA) {
            if (inflate_page(c, raw, (size_t)h.csize, (size_t)h.usize, &p, &n, err, errlen) != 0)
                return -1;
            end = p + n;
            if (v1_levels(c, &c->rep, h.rep_enc, c->max_rep, &p, end, err, errlen) != 0 ||
                v1_levels(c, &c->def, h.def_enc, c->max_def, &p, end, err, errlen) != 0)
                return -1;
        } else {
            if (h.rl_len < 0 || h.dl_len < 0 || (int64_t)h.rl_len + h.dl_len > h.csize ||
                (int64_t)h.rl_len + h.dl_len > h.usize)
                return fail(c, err, errlen, "%s", "a v2 page whose levels are longer than the page");
            rle_init(&c->rep, raw, (size_t)h.rl_len, rle_width((uint32_t)c->max_rep));
            rle_init(&c->def, raw + h.rl_len, (size_t)h.dl_len, rle_width((uint32_t)c->max_def));
            size_t lv = (size_t)h.rl_len + (size_t)h.dl_len, cn = (size_t)h.csize - lv, un = (size_t)h.usize - lv;
            if (!h.compressed || c->ck->codec == PQ_UNCOMPRESSED) {
                if (cn != un)
                    return fail(c, err, errlen, "%s", "an uncompressed page whose two sizes differ");
                p = raw + lv;
                n = cn;
            } else if (inflate_page(c, raw + lv, cn, un, &p, &n, err, errlen) != 0)
                return -1;
            end = p + n;
        }
        if (start_values(c, h.enc, p, end, err, errlen) != 0)
            return -1;
        c->left = h.values;
        if (c->left > 0)
            return 1;
    }
    return 0;
}

static int value(struct pq_col *c, struct pq_value *v, char *err, size_t errlen)
{
    uint32_t k;
    if (c->enc == ENC_PLAIN_DICT || c->enc == ENC_RLE_DICT) {
        if (rle_next(&c->idx, &k) != 0)
            return fail(c, err, errlen, "%s", "dictionary indices that end before the page's values");
        if (k >= c->dict_n)
            return fail(c, err, errlen, "%s", "a dictionary index past the dictionary's end");
        if (c->type == PQ_BYTE_ARRAY) {
            memcpy(&v->len, c->dict + c->dict_at[k], 4);
            v->s = (const char *)c->dict + c->dict_at[k] + 4;
        } else if (c->type == PQ_INT32 || c->type == PQ_FLOAT) {
            int32_t x;
            memcpy(&x, c->dict + 4 * (size_t)k, 4);
            v->i = x;
            float fl;
            memcpy(&fl, &x, 4);
            v->d = fl;
        } else {
            memcpy(&v->i, c->dict + 8 * (size_t)k, 8);
            memcpy(&v->d, c->dict + 8 * (size_t)k, 8);
        }
        return 0;
    }
    if (c->type == PQ_BOOLEAN) {
        if (c->enc == ENC_RLE) {
            if (rle_next(&c->idx, &k) != 0)
                return fail(c, err, errlen, "%s", "RLE booleans that end before the page's values");
            v->i = k != 0;
        } else {
            if (c->vbit / 8 >= (uint64_t)(c->vend - c->vp))
                return fail(c, err, errlen, "%s", "booleans that end before the page's values");
            v->i = (c->vp[c->vbit / 8] >> (c->vbit % 8)) & 1;
            c->vbit++;
        }
        return 0;
    }
    size_t avail = (size_t)(c->vend - c->vp);
    if (c->type == PQ_BYTE_ARRAY) {
        uint32_t len;
        if (avail < 4 || (memcpy(&len, c->vp, 4), len > avail - 4))
            return fail(c, err, errlen, "%s", "a string that runs past the page's end");
        v->s = (const char *)c->vp + 4;
        v->len = len;
        c->vp += 4 + (size_t)len;
        return 0;
    }
    size_t w = (size_t)type_width(c->type);
    if (avail < w)
        return fail(c, err, errlen, "%s", "values that end before the page's count");
    if (w == 4) {
        int32_t x;
        memcpy(&x, c->vp, 4);
        v->i = x;
        float fl;
        memcpy(&fl, &x, 4);
        v->d = fl;
    } else {
        memcpy(&v->i, c->vp, 8);
        memcpy(&v->d, c->vp, 8);
    }
    c->vp += w;
    return 0;
}

/* 1 with the next entry, 0 at the chunk's end, -1 with err. */
static int read_entry(struct pq_col *c, struct pq_value *v, char *err, size_t errlen)
{
    if (c->left == 0) {
        int r = next_page(c, err, errlen);
        if (r <= 0)
            return r;
    }
    uint32_t rep = 0, def = 0;
    if (c->max_rep && rle_next(&c->rep, &rep) != 0)
        return fail(c, err, errlen, "%s", "repetition levels that end before the page's values");
    if (c->max_def && rle_next(&c->def, &def) != 0)
        return fail(c, err, errlen, "%s", "definition levels that end before the page's values");
    if (rep > (uint32_t)c->max_rep || def > (uint32_t)c->max_def)
        return fail(c, err, errlen, "%s", "a level past the column's maximum");
    c->left--;
    *v = (struct pq_value){.rep = (int)rep, .def = (int)def, .has = (int)def == c->max_def};
    if (v->has && value(c, v, err, errlen) != 0)
        return -1;
    return 1;
}

int pq_col_next(struct pq_col *c, struct pq_value *v, char *err, size_t errlen)
{
    if (c->has_ahead) {
        c->has_ahead = 0;
        *v = c->ahead;
        return 1;
    }
    return read_entry(c, v, err, errlen);
}

int pq_col_peek(struct pq_col *c, int *rep, char *err, size_t errlen)
{
    if (!c->has_ahead) {
        int r = read_entry(c, &c->ahead, err, errlen);
        if (r <= 0)
            return r;
        c->has_ahead = 1;
    }
    *rep = c->ahead.rep;
    return 1;
}

struct pq_col *pq_col_open(const struct pq_file *f, int group, int column, char *err, size_t errlen)
{
    const struct pq_chunk *ck = &f->meta.groups[group].chunks[column];
    const struct pq_node *leaf = &f->nodes[f->leaf[column]];
    char where[700];
    snprintf(where, sizeof(where), "%s: row group %d, column '%s'", f->path, group, leaf->path);
    int64_t start = ck->dict_off > 0 && ck->dict_off < ck->data_off ? ck->dict_off : ck->data_off;
    if (!ck->has_meta || ck->external || ck->encrypted) {
        snprintf(err, errlen, "%s: %s", where,
                 ck->encrypted ? "encrypted (Parquet modular encryption), which cod does not read"
                 : ck->external ? "kept in another file (ColumnChunk.file_path), which cod does not read"
                                : "the footer gives no metadata for it");
        return NULL;
    }
    if (!pq_codec_known(ck->codec)) {
        snprintf(err, errlen, "%s: compressed with the codec %s (%d), which cod does not read (it reads "
                 "UNCOMPRESSED, SNAPPY, GZIP and ZSTD)", where, pq_codec_name(ck->codec), ck->codec);
        return NULL;
    }
    if (ck->type != leaf->el->type) {
        snprintf(err, errlen, "%s: the footer says its chunk is %s, the schema %s", where, pq_type_name(ck->type),
                 pq_type_name(leaf->el->type));
        return NULL;
    }
    if (start < 4 || ck->compressed < 0 || ck->compressed > f->data_end - start) {
        snprintf(err, errlen, "%s: the footer says its pages lie at bytes %lld to %lld, outside the file's data "
                 "(bytes 4 to %lld): a footer that lies, or a file cut short",
                 where, (long long)start, (long long)start + (long long)ck->compressed, (long long)f->data_end);
        return NULL;
    }
    struct pq_col *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errlen, "%s: out of memory", where);
        return NULL;
    }
    *c = (struct pq_col){.f = f, .ck = ck, .max_def = leaf->def, .max_rep = leaf->rep, .type = leaf->el->type,
                         .pos = start, .end = start + ck->compressed, .page_at = start};
    memcpy(c->where, where, sizeof(where));
    return c;
}

void pq_col_close(struct pq_col *c)
{
    if (!c)
        return;
    free(c->win);
    free(c->page);
    free(c->dict);
    free(c->dict_at);
    pq_inflate_free(c->z);
    free(c);
}
