/* Documents cut at blank lines: see paragraphs.h. */
#include "prep/paragraphs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pieces_free(struct pieces *p)
{
    free(p->v);
    memset(p, 0, sizeof(*p));
}

static int push(struct pieces *p, size_t off, size_t len)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        struct piece *v = realloc(p->v, cap * sizeof(*v));
        if (!v)
            return -1;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = (struct piece){off, len};
    return 0;
}

static int blank(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static int space(unsigned char c) { return blank(c) || c == '\n'; }

/* The paragraphs of text, as pieces (spans without their final newline). */
static int find_paragraphs(const unsigned char *text, size_t len, struct pieces *out)
{
    size_t start = 0, end = 0;
    int open = 0;
    for (size_t ls = 0; ls < len;) {
        const unsigned char *nl = memchr(text + ls, '\n', len - ls);
        size_t le = nl ? (size_t)(nl - text) : len;
        int is_blank = 1;
        for (size_t i = ls; i < le && is_blank; i++)
            is_blank = blank(text[i]);
        if (!is_blank) {
            if (!open)
                start = ls;
            open = 1;
            end = le;
        } else if (open) {
            if (push(out, start, end - start) != 0)
                return -1;
            open = 0;
        }
        ls = le + 1;
    }
    if (open && push(out, start, end - start) != 0)
        return -1;
    return 0;
}

static int64_t count(struct tok_session *s, const unsigned char *text, size_t len, struct tok_ids *scratch,
                     char *err, size_t errlen)
{
    scratch->n = 0;
    if (tok_encode(s, text, len, 0, scratch, err, errlen) != 0)
        return -1;
    return (int64_t)scratch->n;
}

/* A cut at or before `at` (pos < cut <= at): after the last whitespace
 * run's start, else at a UTF-8 character boundary. */
static size_t cut_before(const unsigned char *p, size_t pos, size_t at)
{
    for (size_t i = at; i > pos; i--)
        if (space(p[i]) && !space(p[i - 1]))
            return i;
    size_t i = at;
    while (i > pos + 1 && (p[i] & 0xC0) == 0x80)
        i--;
    return i;
}

/* A paragraph of `tokens` > max tokens, in parts of at most max tokens. */
static int cut_long(struct tok_session *s, const unsigned char *p, size_t base, size_t len, int64_t tokens,
                    int64_t max, struct pieces *out, struct tok_ids *scratch, char *err, size_t errlen)
{
    double bytes_per_token = (double)len / (double)tokens;
    size_t pos = 0;
    while (pos < len) {
        while (pos < len && space(p[pos]))
            pos++;
        if (pos == len)
            break;
        double want = (double)max * bytes_per_token;
        size_t end;
        for (;;) {
            end = want >= (double)(len - pos) ? len : cut_before(p, pos, pos + (size_t)(want > 1 ? want : 1));
            int64_t c = count(s, p + pos, end - pos, scratch, err, errlen);
            if (c < 0)
                return -1;
            if (c <= max || end - pos <= 1)
                break;
            double shrunk = want * 0.95 * (double)max / (double)c;
            /* the cut may lie far before `want`: shrink from where it fell */
            want = shrunk < (double)(end - pos) ? shrunk : (double)(end - pos) * 0.95;
        }
        size_t e = end;
        while (e > pos && space(p[e - 1]))
            e--;
        if (push(out, base + pos, e - pos) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        pos = end;
    }
    return 0;
}

int para_cut(struct tok_session *s, const unsigned char *text, size_t len, int64_t max_tokens, struct pieces *out,
             struct tok_ids *scratch, char *err, size_t errlen)
{
    struct pieces para = {0};
    int64_t *c = NULL, *sep = NULL;
    int rc = -1;
    if (find_paragraphs(text, len, &para) != 0)
        goto oom;
    if (para.n == 0) {
        if (push(out, 0, len) != 0)
            goto oom;
        return 0;
    }
    c = calloc(para.n, sizeof(*c));
    sep = calloc(para.n, sizeof(*sep));
    if (!c || !sep)
        goto oom;
    int64_t total = 0;
    const unsigned char *last_sep = NULL;
    size_t last_sep_len = 0;
    int64_t last_sep_tokens = 0;
    for (size_t i = 0; i < para.n; i++) {
        if ((c[i] = count(s, text + para.v[i].off, para.v[i].len, scratch, err, errlen)) < 0)
            goto out;
        total += c[i];
        if (i + 1 < para.n) {
            /* separators are mostly the same "\n\n": counted once */
            const unsigned char *sp = text + para.v[i].off + para.v[i].len;
            size_t sl = para.v[i + 1].off - (para.v[i].off + para.v[i].len);
            if (!last_sep || sl != last_sep_len || memcmp(sp, last_sep, sl) != 0) {
                if ((last_sep_tokens = count(s, sp, sl, scratch, err, errlen)) < 0)
                    goto out;
                last_sep = sp;
                last_sep_len = sl;
            }
            sep[i] = last_sep_tokens;
            total += sep[i];
        }
    }
    if (total <= max_tokens) {
        rc = push(out, 0, len) != 0 ? -1 : 0;
        if (rc != 0)
            goto oom;
        goto out;
    }
    for (size_t i = 0; i < para.n;) {
        if (c[i] > max_tokens) {
            if (cut_long(s, text + para.v[i].off, para.v[i].off, para.v[i].len, c[i], max_tokens, out, scratch, err,
                         errlen) != 0)
                goto out;
            i++;
            continue;
        }
        size_t j = i + 1;
        int64_t cost = c[i];
        while (j < para.n && c[j] <= max_tokens && cost + sep[j - 1] + c[j] <= max_tokens) {
            cost += sep[j - 1] + c[j];
            j++;
        }
        if (push(out, para.v[i].off, para.v[j - 1].off + para.v[j - 1].len - para.v[i].off) != 0)
            goto oom;
        i = j;
    }
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
    rc = -1;
out:
    free(c);
    free(sep);
    pieces_free(&para);
    return rc;
}
