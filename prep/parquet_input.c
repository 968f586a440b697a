/* cod-prep's Parquet files: see parquet_input.h. */
#include "prep/parquet_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/utf8.h"
#include "parquet/parquet.h"
#include "text/sha256.h"

struct pq_input {
    struct pq_file *f;
    int column;
    int64_t *first_row; /* each row group's first row in the file */
};

struct pq_input *pq_input_open(const char *path, const char *text_key, char *err, size_t errlen)
{
    struct pq_input *p = calloc(1, sizeof(*p));
    if (!p) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (!(p->f = pq_open(path, err, errlen)) || (p->column = pq_text_column(p->f, text_key, err, errlen)) < 0) {
        pq_input_close(p);
        return NULL;
    }
    int n = pq_row_groups(p->f);
    if (!(p->first_row = malloc((size_t)(n ? n : 1) * sizeof(int64_t)))) {
        snprintf(err, errlen, "%s: out of memory", path);
        pq_input_close(p);
        return NULL;
    }
    for (int g = 0; g < n; g++)
        p->first_row[g] = g ? p->first_row[g - 1] + pq_group_rows(p->f, g - 1) : 0;
    return p;
}

int pq_input_groups(const struct pq_input *p) { return pq_row_groups(p->f); }

void pq_input_close(struct pq_input *p)
{
    if (!p)
        return;
    pq_close(p->f);
    free(p->first_row);
    free(p);
}

/* A block being filled: its texts and rows. */
struct filling {
    struct block *b;
    size_t cap, cap_rows;
};

static int start(struct filling *x, size_t file, int64_t row, size_t block_bytes)
{
    x->cap = block_bytes + 1;
    x->cap_rows = 1024;
    x->b = calloc(1, sizeof(*x->b));
    if (x->b) {
        x->b->data = malloc(x->cap);
        x->b->rows = malloc(x->cap_rows * sizeof(*x->b->rows));
        x->b->file = file;
        x->b->first_line = row;
    }
    if (!x->b || !x->b->data || !x->b->rows) {
        block_free(x->b);
        x->b = NULL;
        return -1;
    }
    x->b->data[0] = 0;
    return 0;
}

static int add_row(struct filling *x, const char *s, size_t len, enum row_kind kind)
{
    struct block *b = x->b;
    if (b->n_rows == x->cap_rows) {
        struct block_row *r = realloc(b->rows, 2 * x->cap_rows * sizeof(*r));
        if (!r)
            return -1;
        b->rows = r;
        x->cap_rows *= 2;
    }
    size_t need = kind == ROW_TEXT ? len + 1 : 0;
    if (b->len + need + 1 > x->cap) {
        size_t cap = x->cap;
        while (b->len + need + 1 > cap)
            cap *= 2;
        unsigned char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        x->cap = cap;
    }
    b->rows[b->n_rows++] = (struct block_row){.off = b->len, .len = len, .kind = kind};
    if (kind == ROW_TEXT) {
        memcpy(b->data + b->len, s, len);
        b->len += len;
        b->data[b->len++] = 0;
    }
    b->data[b->len] = 0;
    return 0;
}

/* The block being filled, on to the reader; 0, or -1 when it stops (err
 * empty: the stop is not this file's fault) */
static int hand_on(struct filling *x, struct pq_text *t, pq_push push, void *ctx, char *err)
{
    x->b->stored_end = pq_text_offset(t);
    struct block *b = x->b;
    x->b = NULL;
    if (push(ctx, b) == 0)
        return 0;
    err[0] = 0;
    return -1;
}

int pq_input_group(struct pq_input *p, size_t file, int g, size_t block_bytes, pq_push push, void *ctx, char *err,
                   size_t errlen)
{
    const char *path = pq_path(p->f);
    struct pq_text *t = pq_text_open(p->f, g, p->column, err, errlen);
    if (!t)
        return -1;
    struct filling x = {0};
    int64_t row = p->first_row[g];
    int rc = 0, k;
    const char *s;
    size_t len;
    while (rc == 0 && (k = pq_text_next(t, &s, &len, err, errlen)) == 1) {
        if (!x.b && start(&x, file, row, block_bytes) != 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = -1;
            break;
        }
        enum row_kind kind = !s ? ROW_NULL : !len ? ROW_EMPTY : utf8_valid(s, len) ? ROW_TEXT : ROW_NOT_UTF8;
        if (add_row(&x, s, len, kind) != 0) {
            snprintf(err, errlen, "%s: out of memory for a text of %zu bytes (row %lld)", path, len, (long long)row);
            rc = -1;
        }
        row++;
        if (rc == 0 && x.b->len >= block_bytes)
            rc = hand_on(&x, t, push, ctx, err);
    }
    if (rc == 0 && k < 0)
        rc = -1;
    if (rc == 0 && x.b)
        rc = hand_on(&x, t, push, ctx, err);
    block_free(x.b);
    pq_text_close(t);
    return rc;
}

int pq_input_hash(struct pq_input *p, size_t file, pq_push push, void *ctx, char *err, size_t errlen)
{
    const char *path = pq_path(p->f);
    struct sha256_stream *sha = sha256_begin();
    unsigned char *buf = malloc(1 << 20), md[32];
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
    int64_t total = 0;
    if (!sha || !buf || fd < 0) {
        snprintf(err, errlen, "%s: %s", path, fd < 0 ? strerror(errno) : "out of memory");
        rc = -1;
    }
    for (ssize_t n; rc == 0 && (n = read(fd, buf, 1 << 20)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            rc = -1;
        } else if (sha256_update(sha, buf, (size_t)n) != 0) {
            snprintf(err, errlen, "%s: sha256 failed (libcrypto)", path);
            rc = -1;
        }
        total += n > 0 ? n : 0;
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    struct block *b = calloc(1, sizeof(*b));
    if (sha && sha256_end(sha, md) != 0 && rc == 0) {
        snprintf(err, errlen, "%s: sha256 failed (libcrypto)", path);
        rc = -1;
    }
    if (rc == 0 && (!b || !(b->data = calloc(1, 1)))) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -1;
    }
    if (rc != 0) {
        block_free(b);
        return -1;
    }
    sha256_to_hex(md, b->sha256);
    b->file = file;
    b->last = 1;
    b->stored_end = total;
    b->groups = pq_input_groups(p);
    if (push(ctx, b) != 0) {
        err[0] = 0;
        return -1;
    }
    return 0;
}
