/* Multiple-choice evaluation scored as lm-evaluation-harness v0.4.12
 * scores it (docs/eval.md): a task is a file of items in one of the
 * layouts of eval/layout.h; each item becomes, for each choice, a context
 * and a continuation (the harness's prompt, few-shot examples before it),
 * both encoded as the harness encodes them; the model's summed
 * log-likelihood of each continuation picks the answer (acc), or the same
 * divided by the choice's length in characters (acc_norm). */
#ifndef COD_EVAL_TASK_H
#define COD_EVAL_TASK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eval/layout.h"
#include "text/tokenizer.h"

/* How texts become tokens. */
struct eval_encoding {
    const struct tokenizer *tok;
    /* the doc token before every encoded text: the harness's
     * add_special_tokens (docs/eval.md's BOS policy) */
    int bos;
    uint32_t doc;   /* the doc token; an empty context is it alone (prefix_token_id) */
    int max_len;    /* the model's length: longer inputs lose tokens at their start */
};

struct eval_task_opts {
    const char *file;
    const char *layout;         /* NULL: the first row's fields say */
    const char *fewshot_from;   /* NULL: the task's own file, an item never its own example */
    int shots;
    long limit;                 /* items at most (the first of the file); 0: all */
    uint64_t seed;              /* of the few-shot sampler: the harness's is 1234 */
    int strict;                 /* a bad line fails the load rather than being skipped */
};

struct eval_item {
    long where;                 /* its line in the file */
    int n, gold;                /* choices, the right one */
    char **context;             /* [n]: each choice's context, one string shared unless the
                                   layout's choices are contexts (WinoGrande) */
    char **cont;                /* [n]: each continuation, the delimiter included */
    int *chars;                 /* [n]: len(choice) in code points: acc_norm's divisor */
    int32_t **ctx_tok, *n_ctx;  /* [n]: the context's tokens (shared as the text is) */
    int32_t **cont_tok, *n_cont;/* [n]: the continuation's: the whole's after the context's */
    char *subject;              /* MMLU */
};

struct eval_task {
    char name[80];              /* the file's name without its extensions (spec_task_name) */
    char file[4096];
    enum eval_layout layout;
    int shots;
    struct eval_item *items;
    int n;
    long choices;               /* Σ n over the items */
    long bad;                   /* lines skipped */
    int configs;                /* after eval_score: 1, or 1 + L with each block removed */
    double *ll;                 /* [configs][choices]: item i's choice k at
                                   choice_at[i] + k */
    long *choice_at;
    long long tokens;           /* the model's input tokens (padding aside) */
};

/* Reads, renders and encodes a task. Bad lines (no JSON object, a missing
 * field, a gold out of range, no choices, a continuation that encodes to
 * no token or to more than max_len) are reported to `report` as
 * "FILE:LINE: why" (the first ten) and skipped, or fail with --strict.
 * 0, or -1 with err. */
int eval_task_load(struct eval_task *t, const struct eval_task_opts *o,
                   const struct eval_encoding *e, FILE *report, char *err, size_t errlen);
void eval_task_free(struct eval_task *t);
/* Each of n tasks, then the array. */
void eval_tasks_free(struct eval_task *tasks, int n);

struct eval_metrics {
    int n;
    double acc, acc_norm, acc_stderr, acc_norm_stderr; /* stderr NAN below 2 items */
};

/* The metrics of configuration c (0: the whole model; ℓ: block ℓ removed). */
void eval_metrics(const struct eval_task *t, int c, struct eval_metrics *m);
/* An item's predictions from its log-likelihoods: the argmax, ties to the
 * first choice, of ll (acc) and of ll / chars (acc_norm). */
void eval_predict(const double *ll, const int *chars, int n, int *pred, int *pred_norm);

#endif
