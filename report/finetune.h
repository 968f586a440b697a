/* Inside the report: the fine-tuning table of a sweep whose cells were
 * fine-tuned and scored on evaluation tasks (the sweep view's "finetune":
 * views/tasks.c), as the paper's: a row for each variant, a column for
 * each task and their average, accuracy in % as mean ± sd over the seeds;
 * its data in finetune.csv (a later stage's finetune_stageK.csv). */
#ifndef COD_REPORT_FINETUNE_H
#define COD_REPORT_FINETUNE_H

#include <stdio.h>

#include "report/sweep.h"

/* Writes each table's section into f and its CSV file; nothing for a
 * sweep without scored stages. 0, or -1 with c->err filled. */
int rp_finetune(struct ctx *c, FILE *f);

#endif
