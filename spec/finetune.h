/* The job spec's fields of fine-tuning (docs/finetune.md): where the
 * weights start (init.from), the experiments a run waits for (after), the
 * instruction data's settings (sft) and the recipes that fill them in.
 * spec.c parses the rest of the spec and calls these in its order; they
 * share its refusals (a field named by its dotted path). */
#ifndef COD_SPEC_FINETUNE_H
#define COD_SPEC_FINETUNE_H

#include <jansson.h>

#include "spec/spec.h"

/* init.from: a path (a cod checkpoint or a Hugging Face folder) or
 * {"experiment": ID}. */
int finetune_parse_init(json_t *root, struct job_spec *s, struct spec_error *err);
/* after: a list of experiment ids (positive, no repeats). */
int finetune_parse_after(json_t *root, struct job_spec *s, struct spec_error *err);
/* The sft section, once data.format is known: refused with shard data. */
int finetune_parse_sft(json_t *root, struct job_spec *s, struct spec_error *err);
/* The recipe's values over the train and eval defaults, before the spec's
 * own train and eval fields are read over them. */
void finetune_recipe_defaults(const struct sft_cfg *sft, struct train_cfg *t, long *eval_every);
/* The checks between the sections once all are read: sft.cutoff_len
 * against the rows, the held-out records and eval.every. */
int finetune_check(struct job_spec *s, int eval_every_given, struct spec_error *err);

/* The JSON form of init, after and sft, into root (only what is set). */
int finetune_to_json(const struct job_spec *s, json_t *root);

#endif
