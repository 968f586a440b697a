#include "eval/task.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/encode.h"
#include "eval/prompt.h"
#include "eval/rows.h"
#include "spec/spec.h"

/* The bad lines a load reports: the first ten, then a count. */
struct bad_lines {
    FILE *report;
    const char *file;
    int strict;
    long count;
};

/* 0 to go on, -1 when --strict makes it fatal (err says where) */
static int bad_line(struct bad_lines *b, long where, const char *why, char *err, size_t errlen)
{
    char line[900];
    snprintf(line, sizeof line, "%s:%ld: %s", b->file, where, why);
    if (b->strict) {
        snprintf(err, errlen, "%s", line);
        return -1;
    }
    if (b->count++ < 10 && b->report)
        fprintf(b->report, "%s\n", line);
    return 0;
}

struct docs {
    struct eval_doc *v;
    int n, cap;
};

static void docs_free(struct docs *d)
{
    for (int i = 0; i < d->n; i++)
        eval_doc_free(&d->v[i]);
    free(d->v);
    memset(d, 0, sizeof *d);
}

/* Every row of a file as docs of layout *l (*have 0: the first row's
 * fields say, then *have is 1). */
static int read_docs(const char *file, enum eval_layout *l, int *have, struct bad_lines *b,
                     struct docs *d, char *err, size_t errlen)
{
    struct eval_rows *r = eval_rows_open(file, err, errlen);
    if (!r)
        return -1;
    char why[512];
    int rc = 0;
    for (;;) {
        json_t *row = NULL;
        long where = 0;
        int got = eval_rows_next(r, &row, &where, why, sizeof why);
        if (got == ROWS_END)
            break;
        if (got == ROWS_FAILED) {
            snprintf(err, errlen, "%s: %s", file, why);
            rc = -1;
            break;
        }
        if (got == ROWS_BAD) {
            if ((rc = bad_line(b, where, why, err, errlen)))
                break;
            continue;
        }
        if (!*have) {
            if (eval_layout_detect(row, l)) {
                snprintf(err, errlen,
                         "%s:%ld: the fields match no layout (%s); name one as FILE:LAYOUT", file,
                         where, eval_layout_names());
                json_decref(row);
                rc = -1;
                break;
            }
            *have = 1;
        }
        if (d->n == d->cap) {
            int cap = d->cap ? 2 * d->cap : 256;
            struct eval_doc *v = realloc(d->v, (size_t)cap * sizeof *v);
            if (!v) {
                json_decref(row);
                snprintf(err, errlen, "out of memory");
                rc = -1;
                break;
            }
            d->v = v;
            d->cap = cap;
        }
        struct eval_doc *doc = &d->v[d->n];
        if (eval_doc_read(*l, row, doc, why, sizeof why) == 0) {
            doc->where = where;
            d->n++;
        } else if ((rc = bad_line(b, where, why, err, errlen))) {
            json_decref(row);
            break;
        }
        json_decref(row);
    }
    eval_rows_close(r);
    if (!rc && d->n == 0) {
        snprintf(err, errlen, "%s: no item to evaluate", file);
        rc = -1;
    }
    return rc;
}

/* A choice of no characters cannot be scored by acc_norm (a division by
 * its length): reported as a bad line. */
static const char *empty_choice(const struct eval_doc *d)
{
    for (int k = 0; k < d->n_choices; k++)
        if (!d->choices[k][0])
            return "a choice is empty";
    return NULL;
}

int eval_task_load(struct eval_task *t, const struct eval_task_opts *o,
                   const struct eval_encoding *e, FILE *report, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    snprintf(t->file, sizeof t->file, "%s", o->file);
    spec_task_name(o->file, t->name, sizeof t->name);
    t->shots = o->shots;
    int have = 0;
    if (o->layout) {
        if (eval_layout_parse(o->layout, &t->layout)) {
            snprintf(err, errlen, "%s: unknown layout \"%s\" (%s)", o->file, o->layout,
                     eval_layout_names());
            return -1;
        }
        have = 1;
    }
    struct bad_lines b = {report, o->file, o->strict, 0};
    struct docs docs = {0}, pool = {0};
    struct eval_shots shots = {.k = o->shots};
    int rc = read_docs(o->file, &t->layout, &have, &b, &docs, err, errlen);
    if (!rc && o->shots > 0 && o->fewshot_from && strcmp(o->fewshot_from, o->file)) {
        struct bad_lines pb = {report, o->fewshot_from, o->strict, 0};
        rc = read_docs(o->fewshot_from, &t->layout, &have, &pb, &pool, err, errlen);
        shots.pool = pool.v;
        shots.n_pool = pool.n;
    } else if (!rc && o->shots > 0) {
        if (t->layout == LAYOUT_MMLU) {
            snprintf(err, errlen, "%s: MMLU's few-shot examples are the first %d of its dev "
                                  "split's items of each subject: --fewshot-from DEV",
                     o->file, o->shots);
            rc = -1;
        }
        shots.pool = docs.v;
        shots.n_pool = docs.n;
        shots.own = 1;
    }
    py_random_seed(&shots.rng, o->seed);
    int n = !rc ? docs.n : 0;
    if (o->limit > 0 && o->limit < n)
        n = (int)o->limit;
    t->items = rc ? NULL : calloc((size_t)n + 1, sizeof *t->items);
    if (!rc && !t->items) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    char why[600];
    for (int i = 0; !rc && i < n; i++) {
        const char *empty = empty_choice(&docs.v[i]);
        if (empty) {
            rc = bad_line(&b, docs.v[i].where, empty, err, errlen);
            continue;
        }
        /* the sampler draws for every item, as the harness's does */
        if (eval_render(t->layout, &docs.v[i], &shots, &t->items[t->n], why, sizeof why)) {
            snprintf(err, errlen, "%s:%ld: %s", o->file, docs.v[i].where, why);
            rc = -1;
        } else {
            t->n++;
        }
    }
    docs_free(&docs);
    docs_free(&pool);
    unsigned char *flag = rc ? NULL : calloc((size_t)t->n + 1, 1);
    char **whys = rc ? NULL : calloc((size_t)t->n + 1, sizeof(char *));
    if (!rc && (!flag || !whys)) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (!rc)
        rc = eval_encode(t, e, flag, whys, err, errlen);
    /* the items that cannot be scored leave the task, as bad lines */
    int kept = 0;
    for (int i = 0; !rc && i < t->n; i++) {
        if (flag[i]) {
            rc = bad_line(&b, t->items[i].where, whys[i] ? whys[i] : "out of memory", err, errlen);
            eval_item_free(&t->items[i]);
        } else {
            t->items[kept++] = t->items[i];
        }
    }
    for (int i = 0; whys && i < t->n; i++)
        free(whys[i]);
    free(whys);
    free(flag);
    if (!rc) {
        t->n = kept;
        if (!t->n) {
            snprintf(err, errlen, "%s: no item could be scored", o->file);
            rc = -1;
        }
    }
    t->bad = b.count;
    if (!rc && b.count > 10 && report)
        fprintf(report, "%s: %ld bad lines skipped in all\n", o->file, b.count);
    t->choice_at = rc ? NULL : malloc((size_t)t->n * sizeof(long));
    if (!rc && !t->choice_at) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    for (int i = 0; !rc && i < t->n; i++) {
        t->choice_at[i] = t->choices;
        t->choices += t->items[i].n;
    }
    if (rc)
        eval_task_free(t);
    return rc;
}

void eval_task_free(struct eval_task *t)
{
    for (int i = 0; t->items && i < t->n; i++)
        eval_item_free(&t->items[i]);
    free(t->items);
    free(t->ll);
    free(t->choice_at);
    t->items = NULL;
    t->ll = NULL;
    t->choice_at = NULL;
    t->n = 0;
}

void eval_tasks_free(struct eval_task *tasks, int n)
{
    for (int i = 0; tasks && i < n; i++)
        eval_task_free(&tasks[i]);
    free(tasks);
}

void eval_predict(const double *ll, const int *chars, int n, int *pred, int *pred_norm)
{
    *pred = *pred_norm = 0;
    for (int k = 1; k < n; k++) {
        if (ll[k] > ll[*pred])
            *pred = k;
        if (ll[k] / chars[k] > ll[*pred_norm] / chars[*pred_norm])
            *pred_norm = k;
    }
}

/* the harness's mean_stderr: the sample deviation over √n */
static double stderr_of(double sum, double sumsq, int n)
{
    if (n < 2)
        return NAN;
    double mean = sum / n, var = (sumsq - n * mean * mean) / (n - 1);
    return sqrt(var > 0 ? var : 0) / sqrt((double)n);
}

void eval_metrics(const struct eval_task *t, int c, struct eval_metrics *m)
{
    double right = 0, right_norm = 0;
    for (int i = 0; i < t->n; i++) {
        int p, pn;
        const struct eval_item *it = &t->items[i];
        eval_predict(t->ll + (size_t)c * t->choices + t->choice_at[i], it->chars, it->n, &p, &pn);
        right += p == it->gold;
        right_norm += pn == it->gold;
    }
    m->n = t->n;
    m->acc = t->n ? right / t->n : NAN;
    m->acc_norm = t->n ? right_norm / t->n : NAN;
    /* a 0/1 value's square is itself */
    m->acc_stderr = stderr_of(right, right, t->n);
    m->acc_norm_stderr = stderr_of(right_norm, right_norm, t->n);
}
