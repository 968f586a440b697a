/* Instruction records from their files: see records.h. */
#include "sft/records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/shard.h"
#include "text/decompress.h"

/* A scan of one file: the bytes of the record being read, where it began,
 * and in array form the JSON around it (depth, strings). */
struct scan {
    const char *path, *field;
    sft_record_fn fn;
    void *ctx;
    long *index;
    char *err;
    size_t errlen;
    int form;           /* 0: not yet known, 'a': one array, 'l': lines */
    int opened, closed; /* the array's '[' and ']' */
    int depth, in_str, esc;
    int seen;           /* lines: a byte of the line that is not blank */
    int bom;            /* bytes of a UTF-8 byte-order mark matched */
    long line, start_line;
    char *buf;
    size_t n, cap;
};

static int push(struct scan *s, char c)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        char *b = realloc(s->buf, cap);
        if (!b) {
            snprintf(s->err, s->errlen, "%s: out of memory for a record of %zu bytes", s->path,
                     s->n);
            return -1;
        }
        s->buf = b;
        s->cap = cap;
    }
    s->buf[s->n++] = c;
    return 0;
}

static int bad(struct scan *s, long line, const char *what)
{
    snprintf(s->err, s->errlen, "%s: %s, line %ld: %s", s->field, s->path, line, what);
    return -1;
}

/* The record in buf, parsed and handed on. */
static int record(struct scan *s)
{
    json_error_t je;
    json_t *obj = json_loadb(s->buf, s->n, JSON_REJECT_DUPLICATES, &je);
    s->n = 0;
    if (!obj || !json_is_object(obj)) {
        char why[300];
        snprintf(why, sizeof why, "record %ld is not a JSON object%s%s", *s->index + 1,
                 obj ? "" : ": ", obj ? "" : je.text);
        json_decref(obj);
        return bad(s, s->start_line + (obj ? 0 : je.line - 1), why);
    }
    struct sft_record r = {s->path, (*s->index)++, s->start_line, obj};
    int rc = s->fn(s->ctx, &r, s->err, s->errlen);
    json_decref(obj);
    return rc;
}

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* One byte of a file of JSON lines. */
static int line_byte(struct scan *s, char c)
{
    if (c == '\n') {
        int rc = s->seen ? record(s) : 0;
        s->n = 0;
        s->seen = 0;
        return rc;
    }
    if (!s->seen && !blank(c)) {
        s->seen = 1;
        s->start_line = s->line;
    }
    return push(s, c);
}

/* One byte of a file that is one JSON array of objects. */
static int array_byte(struct scan *s, char c)
{
    if (s->depth > 0) {
        if (push(s, c))
            return -1;
        if (s->in_str) {
            if (s->esc)
                s->esc = 0;
            else if (c == '\\')
                s->esc = 1;
            else if (c == '"')
                s->in_str = 0;
        } else if (c == '"') {
            s->in_str = 1;
        } else if (c == '{' || c == '[') {
            s->depth++;
        } else if ((c == '}' || c == ']') && --s->depth == 0) {
            return record(s);
        }
        return 0;
    }
    if (blank(c) || (c == ',' && s->opened && !s->closed))
        return 0;
    if (!s->opened && c == '[') {
        s->opened = 1;
        return 0;
    }
    if (s->opened && !s->closed && c == ']') {
        s->closed = 1;
        return 0;
    }
    if (s->opened && !s->closed && c == '{') {
        s->start_line = s->line;
        s->depth = 1;
        s->in_str = s->esc = 0;
        return push(s, c);
    }
    return bad(s, s->line, s->closed ? "text after the array of records"
                                     : "the array holds something that is no record");
}

static int byte(struct scan *s, char c)
{
    static const unsigned char bom[] = {0xef, 0xbb, 0xbf};
    if (!s->form && s->line == 1 && s->bom < 3 && (unsigned char)c == bom[s->bom]) {
        s->bom++;
        return 0;
    }
    if (!s->form && !blank(c))
        s->form = c == '[' ? 'a' : 'l';
    int rc = 0;
    if (s->form == 'a')
        rc = array_byte(s, c);
    else if (s->form == 'l')
        rc = line_byte(s, c);
    s->line += c == '\n';
    return rc;
}

static int read_file(struct scan *s)
{
    struct dz *z = dz_open(s->path, s->err, s->errlen);
    if (!z)
        return -1;
    static __thread char chunk[1 << 16];
    ssize_t got;
    int rc = 0;
    while (rc == 0 && (got = dz_read(z, chunk, sizeof chunk, s->err, s->errlen)) > 0)
        for (ssize_t i = 0; rc == 0 && i < got; i++)
            rc = byte(s, chunk[i]);
    if (rc == 0 && got < 0)
        rc = -1;
    dz_close(z);
    if (rc)
        return -1;
    if (s->form == 'l' && s->seen)
        return record(s);
    if (s->form == 'a' && (s->depth > 0 || !s->closed))
        return bad(s, s->line, "the file ends inside its array of records");
    return 0;
}

int sft_records_each(const char *pattern, const char *field, sft_record_fn fn, void *ctx,
                     char *err, size_t errlen)
{
    char **paths;
    int n;
    if (shard_glob(pattern, &paths, &n, err, errlen)) {
        char why[600];
        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "%s: %s", field, why);
        return -1;
    }
    long index = 0;
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        struct scan s = {.path = paths[i], .field = field, .fn = fn, .ctx = ctx, .index = &index,
                         .err = err, .errlen = errlen, .line = 1};
        rc = read_file(&s);
        free(s.buf);
    }
    shard_free_paths(paths, n);
    return rc;
}
