/* A job's analysis.tasks (docs/spec.md): checked when the job starts, so
 * that a missing task file fails it before it trains, and evaluated on
 * the trained model at its end: RUN/analysis/eval.json and
 * samples_NAME.jsonl, and with analysis.prune the accuracy with each block
 * removed (RUN/analysis/prune_tasks.json); metrics task/NAME/acc and
 * task/NAME/acc_norm at the last step, prune/NAME/delta_acc with
 * layer = the removed block. The text is read with the tokenizer of the
 * job's data (meta.json beside data.train), or of the checkpoint it
 * started from (a fine-tuning's: its records are no shards), the BOS
 * policy "auto". */
#ifndef COD_EVAL_JOB_H
#define COD_EVAL_JOB_H

#include <stddef.h>

#include "spec/spec.h"
#include "trainer/model.h"
#include "trainer/train.h"

/* Where a job's tokenizer is: its data's (both NULL); the shards a start
 * was trained on (data, a glob: meta.json beside them); a Hugging Face
 * folder's own (folder). */
struct eval_text_source {
    const char *data, *folder;
};

/* The tokenizer opens and every task file's first row is an item of its
 * layout. 0, or -1 with err naming the task. */
int eval_job_check(const struct job_spec *s, const struct eval_text_source *src, char *err,
                   size_t errlen);

/* The tasks on m at step; 0, or -1 with err. */
int eval_job_run(struct model *m, const struct job_spec *s, const struct eval_text_source *src,
                 const char *out_dir, long step, const struct train_emit *e, char *err,
                 size_t errlen);

#endif
