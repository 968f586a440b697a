#include "eval/rows.h"

#include <stdlib.h>
#include <string.h>

#include "parquet/parquet.h"
#include "text/decompress.h"

struct eval_rows {
    struct pq_rows *pq; /* a Parquet file's rows, or else the lines of z */
    struct dz *z;
    char buf[1 << 16];
    size_t at, end;      /* unread bytes of buf */
    int eof;
    char *line;
    size_t cap;
    long number;
};

struct eval_rows *eval_rows_open(const char *path, char *err, size_t errlen)
{
    struct eval_rows *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    size_t n = strlen(path);
    /* every column: the layouts' fields are found in a row, as in a JSON line */
    if (n > 8 && !strcmp(path + n - 8, ".parquet") ? !(r->pq = pq_rows_open(path, NULL, 0, err, errlen))
                                                   : !(r->z = dz_open(path, err, errlen))) {
        free(r);
        return NULL;
    }
    return r;
}

const char *eval_rows_unit(const struct eval_rows *r)
{
    return r->pq ? "row" : "line";
}

/* A Parquet row is an object by construction; a fault in the file ends it. */
static int parquet_next(struct eval_rows *r, json_t **row, long *where, char *why, size_t whylen)
{
    int rc = pq_rows_next(r->pq, row, why, whylen);
    if (rc < 0)
        return ROWS_FAILED;
    if (rc == 0)
        return ROWS_END;
    *where = ++r->number;
    return ROWS_ROW;
}

/* The next line without its newline into r->line: its length, -1 at the
 * end, -2 on failure (why says it). */
static long read_line(struct eval_rows *r, char *why, size_t whylen)
{
    size_t n = 0;
    for (;;) {
        if (r->at == r->end) {
            if (r->eof)
                return n ? (long)n : -1;
            ssize_t got = dz_read(r->z, r->buf, sizeof r->buf, why, whylen);
            if (got < 0)
                return -2;
            r->at = 0;
            r->end = (size_t)got;
            r->eof = got == 0;
            continue;
        }
        char *nl = memchr(r->buf + r->at, '\n', r->end - r->at);
        size_t take = (nl ? (size_t)(nl - r->buf) : r->end) - r->at;
        if (n + take + 1 > r->cap) {
            size_t cap = r->cap ? r->cap : 4096;
            while (cap < n + take + 1)
                cap *= 2;
            char *p = realloc(r->line, cap);
            if (!p) {
                snprintf(why, whylen, "out of memory for a line of %zu bytes", n + take);
                return -2;
            }
            r->line = p;
            r->cap = cap;
        }
        memcpy(r->line + n, r->buf + r->at, take);
        n += take;
        r->line[n] = 0;
        r->at += take + (nl != NULL);
        if (nl)
            return (long)n;
    }
}

int eval_rows_next(struct eval_rows *r, json_t **row, long *where, char *why, size_t whylen)
{
    if (r->pq)
        return parquet_next(r, row, where, why, whylen);
    for (;;) {
        long n = read_line(r, why, whylen);
        if (n == -1)
            return ROWS_END;
        if (n == -2)
            return ROWS_FAILED;
        *where = ++r->number;
        size_t len = (size_t)n;
        if (len && r->line[len - 1] == '\r')
            len--;
        size_t blank = 0;
        while (blank < len && (r->line[blank] == ' ' || r->line[blank] == '\t'))
            blank++;
        if (blank == len)
            continue; /* a blank line (the last newline's) holds no row */
        json_error_t je;
        json_t *v = json_loadb(r->line, len, 0, &je);
        if (!v) {
            snprintf(why, whylen, "not JSON: %s (column %d)", je.text, je.column);
            return ROWS_BAD;
        }
        if (!json_is_object(v)) {
            json_decref(v);
            snprintf(why, whylen, "not a JSON object");
            return ROWS_BAD;
        }
        *row = v;
        return ROWS_ROW;
    }
}

void eval_rows_close(struct eval_rows *r)
{
    if (!r)
        return;
    pq_rows_close(r->pq);
    dz_close(r->z);
    free(r->line);
    free(r);
}
