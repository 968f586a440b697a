/* cod-analyze's multiple-choice tasks (eval/task.h): `eval` scores them on
 * the model, `prune --task` with each block removed too (the accuracy
 * ΔP), `cloze` writes a task built from held-out text (eval/cloze.h). */
#ifndef COD_ANALYZE_EVAL_H
#define COD_ANALYZE_EVAL_H

#include <stdint.h>

#include "analyze/source.h"
#include "eval/task.h"
#include "kernels/ops.h"
#include "trainer/model.h"

enum { ANALYZE_MAX_TASKS = 64 };

struct analyze_tasks {
    const char *task[ANALYZE_MAX_TASKS];      /* FILE or FILE:LAYOUT */
    const char *fewshot[ANALYZE_MAX_TASKS];   /* --fewshot-from after each --task */
    int n;
    int shots;
    long limit;
    uint64_t seed;
    int strict;
    const char *bos;                          /* auto, yes or no */
    const char *tokenizer, *tokenizer_dir;    /* a checkpoint's data's tokenizer files */
};

/* The tasks read with dir's tokenizer, their inputs at most max_len
 * tokens; *n of them into *tasks (free each, then the array). 0, or -1
 * with err; bad lines go to stderr. */
int analyze_tasks_load(const struct analyze_tasks *o, const char *dir, const struct source *src,
                       int max_len, struct eval_task **tasks, int *n, char *err, size_t errlen);

/* cod-analyze eval: exit status. */
int analyze_eval(const char *dir, const struct ops *ops, const char *device, int T, int B,
                 const struct analyze_tasks *o, const char *out);

/* After prune's loss ΔP on m: the tasks with each block removed, printed
 * and, with out, written to out/prune_tasks.json. 0, or -1 with err. */
int analyze_prune_tasks(struct model *m, struct eval_task *tasks, int n, const char *out,
                        char *err, size_t errlen);

/* cod-analyze cloze: exit status. */
int analyze_cloze(int argc, char **argv);

#endif
