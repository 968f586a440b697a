#include "eval/prompt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/pystr.h"

/* A growing string. */
struct buf {
    char *s;
    size_t n, cap;
    int oom;
};

static void put(struct buf *b, const char *s)
{
    size_t len = strlen(s);
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, len + 1);
    b->n += len;
}

/* An example: its question (WinoGrande: its right filling), the
 * delimiter, its answer, the few-shot delimiter. */
static void example(struct buf *b, enum eval_layout l, const struct eval_doc *e)
{
    const char *delim = eval_layout_delimiter(l);
    if (e->target) {
        put(b, e->choices[e->gold]);
        put(b, delim);
        put(b, e->target);
    } else {
        put(b, e->query);
        put(b, delim);
        put(b, e->choices[e->gold]);
    }
    put(b, "\n\n");
}

/* The examples of d into b: 0, or -1 with why. */
static int examples(struct buf *b, enum eval_layout l, const struct eval_doc *d,
                    struct eval_shots *s, char *why, size_t whylen)
{
    if (s->k <= 0)
        return 0;
    if (l == LAYOUT_MMLU) {
        int taken = 0;
        for (int i = 0; i < s->n_pool && taken < s->k; i++)
            if (!strcmp(s->pool[i].subject, d->subject)) {
                example(b, l, &s->pool[i]);
                taken++;
            }
        if (taken < s->k) {
            snprintf(why, whylen, "the few-shot file has %d items of subject \"%s\", not %d",
                     taken, d->subject, s->k);
            return -1;
        }
        return 0;
    }
    int draw = s->k + (s->own ? 1 : 0);
    if (draw > s->n_pool) {
        snprintf(why, whylen, "%d examples asked of a few-shot pool of %d items", draw, s->n_pool);
        return -1;
    }
    int *at = malloc((size_t)draw * sizeof(int));
    if (!at || py_random_sample(&s->rng, s->n_pool, draw, at)) {
        free(at);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (int i = 0, taken = 0; i < draw && taken < s->k; i++) {
        const struct eval_doc *e = &s->pool[at[i]];
        if (s->own && json_equal(e->row, d->row))
            continue;
        example(b, l, e);
        taken++;
    }
    free(at);
    return 0;
}

int eval_render(enum eval_layout l, const struct eval_doc *d, struct eval_shots *s,
                struct eval_item *it, char *why, size_t whylen)
{
    memset(it, 0, sizeof *it);
    int n = d->n_choices;
    it->where = d->where;
    it->n = n;
    it->gold = d->gold;
    struct buf pre = {0};
    if (l == LAYOUT_MMLU) {
        put(&pre, "The following are multiple choice questions (with answers) about ");
        size_t at = pre.n;
        put(&pre, d->subject);
        for (size_t i = at; !pre.oom && i < pre.n; i++)
            if (pre.s[i] == '_')
                pre.s[i] = ' ';
        put(&pre, ".\n\n");
    }
    put(&pre, "");
    if (examples(&pre, l, d, s, why, whylen)) {
        free(pre.s);
        return -1;
    }
    it->context = calloc((size_t)n, sizeof(char *));
    it->cont = calloc((size_t)n, sizeof(char *));
    it->chars = calloc((size_t)n, sizeof(int));
    it->subject = d->subject ? strdup(d->subject) : NULL;
    int oom = pre.oom || !it->context || !it->cont || !it->chars || (d->subject && !it->subject);
    const char *delim = eval_layout_delimiter(l);
    for (int k = 0; !oom && k < n; k++) {
        struct buf c = {0}, t = {0};
        if (d->target) {
            put(&c, pre.s);
            put(&c, d->choices[k]);
            put(&t, delim);
            put(&t, d->target);
        } else if (k == 0) {
            put(&c, pre.s);
            put(&c, d->query);
        }
        if (!d->target)
            put(&t, delim), put(&t, d->choices[k]);
        it->context[k] = d->target || k == 0 ? c.s : it->context[0];
        it->cont[k] = t.s;
        it->chars[k] = (int)py_len(d->choices[k], strlen(d->choices[k]));
        oom = c.oom || t.oom;
    }
    free(pre.s);
    if (oom) {
        eval_item_free(it);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    return 0;
}

void eval_item_free(struct eval_item *it)
{
    for (int k = 0; k < it->n; k++) {
        int owns = k == 0 || (it->context && it->context[k] != it->context[0]);
        if (it->context && owns)
            free(it->context[k]);
        if (it->ctx_tok && (k == 0 || it->ctx_tok[k] != it->ctx_tok[0]))
            free(it->ctx_tok[k]);
        if (it->cont)
            free(it->cont[k]);
        if (it->cont_tok)
            free(it->cont_tok[k]);
    }
    free(it->context);
    free(it->cont);
    free(it->chars);
    free(it->ctx_tok);
    free(it->n_ctx);
    free(it->cont_tok);
    free(it->n_cont);
    free(it->subject);
    memset(it, 0, sizeof *it);
}
