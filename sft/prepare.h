/* A run's start and its instruction data made ready for the trainer, by
 * cod-train and cod-worker before train_run (docs/finetune.md): the spec
 * completed from init.from's checkpoint (model, variant, vocabulary), its
 * records tokenized with that checkpoint's tokenizer into row sets in the
 * run's directory (RUN/sft/; made again at every start, the same each time
 * for the same records), and train.epochs turned into steps. What it makes
 * goes into the trainer's options (trainer/train.h), and where its
 * tokenizer is into the evaluation's (eval/job.h). */
#ifndef COD_SFT_PREPARE_H
#define COD_SFT_PREPARE_H

#include <stddef.h>

#include "eval/job.h"
#include "sft/rows.h"
#include "sft/start.h"
#include "spec/spec.h"
#include "trainer/train.h"

struct sft_prepared {
    char init_dir[4400];
    char train_rows[4400], val_rows[4400];
    struct sft_rows_stats train, val;
    char summary[1024];   /* what was made, for the run's log ("" when nothing) */
    /* instruction data's tokenizer, for analysis.tasks too (eval/job.h):
     * text.data and text.folder NULL when the run reads shards */
    struct sft_text_source source;
    struct eval_text_source text;
};

/* Completes s and fills opts' init and rows (pointing into p, which must
 * outlive the run). work_dir: where {"experiment": ID} starts are found
 * (NULL refuses them); rank names the row sets of a gang's rank apart.
 * 0, or -1 with err naming the field. */
int sft_prepare(struct job_spec *s, const char *work_dir, const char *run_dir, int rank,
                struct sft_prepared *p, struct train_opts *opts, char *err, size_t errlen);

#endif
