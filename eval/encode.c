#include "eval/encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/pystr.h"

static int32_t *copy_ids(const uint32_t *v, size_t n)
{
    int32_t *p = malloc((n ? n : 1) * sizeof(int32_t));
    for (size_t i = 0; p && i < n; i++)
        p[i] = (int32_t)v[i];
    return p;
}

/* ids of text, the doc token first with bos */
static int encode(struct tok_session *s, const struct eval_encoding *e, int bos, const char *text,
                  size_t len, struct tok_ids *out, char *err, size_t errlen)
{
    out->n = 0;
    if (bos && tok_ids_push(out, e->doc)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return tok_encode(s, (const unsigned char *)text, len, 0, out, err, errlen);
}

/* One item; 1 when it cannot be scored (why set), -1 on failure. */
static int encode_item(struct tok_session *s, const struct eval_encoding *e, struct eval_item *it,
                       char **why, char *err, size_t errlen)
{
    int n = it->n;
    it->ctx_tok = calloc((size_t)n, sizeof(int32_t *));
    it->cont_tok = calloc((size_t)n, sizeof(int32_t *));
    it->n_ctx = calloc((size_t)n, sizeof(int32_t));
    it->n_cont = calloc((size_t)n, sizeof(int32_t));
    struct tok_ids c = {0}, w = {0};
    char *whole = NULL;
    int rc = 0;
    if (!it->ctx_tok || !it->cont_tok || !it->n_ctx || !it->n_cont) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; !rc && k < n; k++) {
        const char *ctx = it->context[k], *cont = it->cont[k];
        size_t clen = strlen(ctx), keep = py_rstrip_len(ctx, clen), tlen = strlen(cont);
        int fresh = k == 0 || ctx != it->context[0];
        if (fresh && keep &&
            encode(s, e, e->bos, ctx, keep, &c, err, errlen))
            rc = -1;
        free(whole);
        whole = malloc(clen + tlen + 1);
        if (!rc && !whole) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
        if (rc)
            break;
        memcpy(whole, ctx, clen);
        memcpy(whole + clen, cont, tlen + 1);
        size_t skip = 0;
        if (keep == 0) {
            /* no context: the doc token is, unless the continuation starts with it */
            if (encode(s, e, 0, whole, clen + tlen, &w, err, errlen)) {
                rc = -1;
                break;
            }
            skip = w.n && w.v[0] == e->doc;
            uint32_t doc = e->doc;
            if (fresh) {
                free(it->ctx_tok[k]);
                it->ctx_tok[k] = copy_ids(skip ? w.v : &doc, 1);
                it->n_ctx[k] = 1;
            }
        } else {
            if (encode(s, e, e->bos, whole, clen + tlen, &w, err, errlen)) {
                rc = -1;
                break;
            }
            skip = c.n < w.n ? c.n : w.n;
            if (fresh) {
                it->ctx_tok[k] = copy_ids(c.v, c.n);
                it->n_ctx[k] = (int32_t)c.n;
            }
        }
        if (!fresh) {
            it->ctx_tok[k] = it->ctx_tok[0];
            it->n_ctx[k] = it->n_ctx[0];
        }
        it->cont_tok[k] = copy_ids(w.v + skip, w.n - skip);
        it->n_cont[k] = (int32_t)(w.n - skip);
        if (!it->ctx_tok[k] || !it->cont_tok[k]) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        } else if (it->n_cont[k] == 0 || it->n_cont[k] > e->max_len) {
            if (asprintf(why, "choice %d's continuation is %d tokens (the model takes 1 to %d)",
                         k, it->n_cont[k], e->max_len) < 0)
                *why = NULL;
            rc = 1;
        }
    }
    free(whole);
    tok_ids_free(&c);
    tok_ids_free(&w);
    return rc;
}

int eval_encode(struct eval_task *t, const struct eval_encoding *e, unsigned char *bad,
                char **why, char *err, size_t errlen)
{
    int failed = 0;
    char first[512] = "";
#pragma omp parallel
    {
        char terr[512];
        struct tok_session *s = tok_session_new(e->tok, terr, sizeof terr);
        if (!s) {
#pragma omp critical(eval_encode)
            if (!failed++)
                snprintf(first, sizeof first, "%s", terr);
        }
#pragma omp for schedule(dynamic, 16)
        for (int i = 0; i < t->n; i++) {
            if (!s || failed)
                continue;
            int rc = encode_item(s, e, &t->items[i], &why[i], terr, sizeof terr);
            if (rc > 0)
                bad[i] = 1;
            if (rc < 0) {
#pragma omp critical(eval_encode)
                if (!failed++)
                    snprintf(first, sizeof first, "%s", terr);
            }
        }
        tok_session_free(s);
    }
    if (failed) {
        snprintf(err, errlen, "%s: %s", t->file, first);
        return -1;
    }
    return 0;
}
