#include "eval/score.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct row {
    int len;
    long tok_at;   /* its tokens in the arena */
    long pair_at;  /* its pairs */
    int n_pairs;
};

struct pair {
    int pos;       /* the position in its row */
    int32_t target;
    long req;      /* the choice, over every task's */
};

struct plan {
    struct row *rows;
    long n_rows, cap_rows;
    int32_t *tok;
    long n_tok, cap_tok;
    struct pair *pairs;
    long n_pairs, cap_pairs;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define GROW(p, n, cap, more)                                                                     \
    do {                                                                                          \
        if ((n) + (more) > (cap)) {                                                               \
            long c_ = (cap) ? 2 * (cap) : 1024;                                                   \
            while (c_ < (n) + (more))                                                             \
                c_ *= 2;                                                                          \
            void *q_ = realloc((p), (size_t)c_ * sizeof *(p));                                    \
            if (!q_)                                                                              \
                goto fail;                                                                        \
            (p) = q_;                                                                             \
            (cap) = c_;                                                                           \
        }                                                                                         \
    } while (0)

/* The rows of one item: a choice whose input equals an earlier choice's
 * adds its pairs to that row; an item's pairs are laid out row by row. */
static int plan_item(struct plan *p, const struct eval_item *it, long req0, int max_len)
{
    long first_row = p->n_rows;
    int row_of[64], *rowp = it->n <= 64 ? row_of : malloc((size_t)it->n * sizeof(int));
    if (!rowp)
        return -1;
    for (int k = 0; k < it->n; k++) {
        int nctx = it->n_ctx[k], ncont = it->n_cont[k], total = nctx + ncont;
        int drop = total > max_len + 1 ? total - max_len - 1 : 0, len = total - drop - 1;
        GROW(p->tok, p->n_tok, p->cap_tok, len);
        int32_t *in = p->tok + p->n_tok; /* (ctx + cont)[drop : total - 1] */
        for (int j = drop; j < total - 1; j++)
            in[j - drop] = j < nctx ? it->ctx_tok[k][j] : it->cont_tok[k][j - nctx];
        rowp[k] = -1;
        for (long r = first_row; r < p->n_rows && rowp[k] < 0; r++)
            if (p->rows[r].len == len &&
                !memcmp(p->tok + p->rows[r].tok_at, in, (size_t)len * sizeof(int32_t)))
                rowp[k] = (int)(r - first_row);
        if (rowp[k] < 0) {
            GROW(p->rows, p->n_rows, p->cap_rows, 1);
            p->rows[p->n_rows] = (struct row){len, p->n_tok, 0, 0};
            rowp[k] = (int)(p->n_rows - first_row);
            p->n_rows++;
            p->n_tok += len;
        }
        p->rows[first_row + rowp[k]].n_pairs += ncont;
    }
    long at = p->n_pairs;
    for (long r = first_row; r < p->n_rows; r++) {
        p->rows[r].pair_at = at;
        at += p->rows[r].n_pairs;
        p->rows[r].n_pairs = 0;
    }
    GROW(p->pairs, p->n_pairs, p->cap_pairs, at - p->n_pairs);
    for (int k = 0; k < it->n; k++) {
        struct row *r = &p->rows[first_row + rowp[k]];
        int ncont = it->n_cont[k];
        for (int j = 0; j < ncont; j++)
            p->pairs[r->pair_at + r->n_pairs++] =
                (struct pair){r->len - ncont + j, it->cont_tok[k][j], req0 + k};
    }
    p->n_pairs = at;
    if (rowp != row_of)
        free(rowp);
    return 0;
fail:
    if (rowp != row_of)
        free(rowp);
    return -1;
}

static const struct row *sort_rows;

/* longest first, then in the order they came */
static int by_length(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    int lx = sort_rows[x].len, ly = sort_rows[y].len;
    return lx != ly ? ly - lx : (x > y) - (x < y);
}

static int round_up(int len, int max)
{
    int g = len <= 128 ? 8 : len <= 512 ? 32 : 64, t = (len + g - 1) / g * g;
    return t < max ? t : max;
}

/* the batch's pairs into pos/tgt/req; their count */
static long batch_pairs(const struct plan *p, const long *order, long i0, int B, int T,
                        int32_t *pos, int32_t *tgt, long *req)
{
    long n = 0;
    for (int b = 0; b < B; b++) {
        const struct row *r = &p->rows[order[i0 + b]];
        for (int j = 0; j < r->n_pairs; j++) {
            const struct pair *q = &p->pairs[r->pair_at + j];
            pos[n] = b * T + q->pos;
            tgt[n] = q->target;
            req[n++] = q->req;
        }
    }
    return n;
}

static void add(double *ll, const long *req, const real *lp, long n)
{
    for (long i = 0; i < n; i++)
        ll[req[i]] += lp[i];
}

int eval_score(struct model *m, struct eval_task *tasks, int n_tasks, int prune,
               struct eval_speed *sp, char *err, size_t errlen)
{
    int L = m->cfg.n_layers, configs = prune ? L + 1 : 1, max_len = m->cfg.seq_len;
    long budget = (long)m->max_B * max_len, reqs = 0;
    for (int t = 0; t < n_tasks; t++)
        reqs += tasks[t].choices;
    struct plan p = {0};
    double *ll = calloc((size_t)configs * reqs + 1, sizeof(double));
    long *order = NULL, *req = NULL;
    int32_t *tok = NULL, *pos = NULL, *tgt = NULL;
    real *lp = NULL;
    int rc = -1;
    double t0 = now();
    long req0 = 0;
    for (int t = 0; ll && t < n_tasks; t++) {
        for (int i = 0; i < tasks[t].n; i++)
            if (plan_item(&p, &tasks[t].items[i], req0 + tasks[t].choice_at[i], max_len))
                goto oom;
        req0 += tasks[t].choices;
    }
    order = malloc((size_t)p.n_rows * sizeof(long) + 1);
    tok = malloc((size_t)budget * sizeof(int32_t));
    if (!ll || !order || !tok)
        goto oom;
    for (long i = 0; i < p.n_rows; i++)
        order[i] = i;
    sort_rows = p.rows;
    qsort(order, (size_t)p.n_rows, sizeof(long), by_length);
    long most = 0; /* pairs of the largest batch, for the buffers */
    struct eval_speed s = {0};
    for (long i = 0; i < p.n_rows;) {
        int T = round_up(p.rows[order[i]].len, max_len);
        long B = budget / T < p.n_rows - i ? budget / T : p.n_rows - i, n = 0;
        for (long b = 0; b < B; b++)
            n += p.rows[order[i + b]].n_pairs;
        most = n > most ? n : most;
        i += B;
    }
    pos = malloc((size_t)most * sizeof(int32_t) + 1);
    tgt = malloc((size_t)most * sizeof(int32_t) + 1);
    req = malloc((size_t)most * sizeof(long) + 1);
    lp = malloc((size_t)most * sizeof(real) + 1);
    if (!pos || !tgt || !req || !lp)
        goto oom;
    for (long i = 0; i < p.n_rows;) {
        int T = round_up(p.rows[order[i]].len, max_len);
        int B = (int)(budget / T < p.n_rows - i ? budget / T : p.n_rows - i);
        memset(tok, 0, (size_t)B * T * sizeof(int32_t));
        for (int b = 0; b < B; b++) {
            const struct row *r = &p.rows[order[i + b]];
            memcpy(tok + (size_t)b * T, p.tok + r->tok_at, (size_t)r->len * sizeof(int32_t));
            s.tokens += r->len;
        }
        long n = batch_pairs(&p, order, i, B, T, pos, tgt, req);
        model_trunk(m, tok, B, T);
        model_score(m, pos, tgt, (int)n, lp);
        add(ll, req, lp, n);
        for (int l = L; prune && l >= 1; l--) {
            model_trunk_without(m, l);
            model_score(m, pos, tgt, (int)n, lp);
            add(ll + (size_t)l * reqs, req, lp, n);
        }
        s.rows += B;
        s.padded += (long long)B * T;
        s.pairs += n;
        s.batches++;
        i += B;
    }
    char why[600];
    if (m->ops->error(why, sizeof why)) {
        snprintf(err, errlen, "device fault on %s: %s", m->ops->name, why);
        goto out;
    }
    req0 = 0;
    for (int t = 0; t < n_tasks; t++) {
        struct eval_task *k = &tasks[t];
        free(k->ll);
        k->configs = configs;
        k->ll = malloc((size_t)configs * k->choices * sizeof(double) + 1);
        if (!k->ll)
            goto oom;
        for (int c = 0; c < configs; c++)
            memcpy(k->ll + (size_t)c * k->choices, ll + (size_t)c * reqs + req0,
                   (size_t)k->choices * sizeof(double));
        req0 += k->choices;
    }
    /* each task's own share of the inputs */
    for (int t = 0; t < n_tasks; t++)
        tasks[t].tokens = 0;
    req0 = 0;
    for (int t = 0, r = 0; t < n_tasks; t++) {
        long end = req0 + tasks[t].choices;
        for (; r < p.n_rows && p.pairs[p.rows[r].pair_at].req < end; r++)
            tasks[t].tokens += p.rows[r].len;
        req0 = end;
    }
    s.seconds = now() - t0;
    if (sp)
        *sp = s;
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory for the evaluation's %ld rows", p.n_rows);
out:
    free(p.rows);
    free(p.tok);
    free(p.pairs);
    free(ll);
    free(order);
    free(tok);
    free(pos);
    free(tgt);
    free(req);
    free(lp);
    return rc;
}
