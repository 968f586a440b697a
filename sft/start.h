/* Where a run's weights start (init.from), found and read: a cod checkpoint
 * or a Hugging Face folder named by path, or an experiment's final
 * checkpoint under the work dir (WORK/experiments/ID, where its worker
 * wrote it; the work dir a cluster shares for resumption). The start gives
 * the run its model's shape and variant, which a spec that says otherwise
 * contradicts (refused, naming the field), and its tokenizer (instruction
 * data's, and a job's analysis.tasks'): a Hugging Face folder's, or the
 * one that made the shards a cod checkpoint was trained on (meta.json
 * beside them; a fine-tuned checkpoint's is its own start's). */
#ifndef COD_SFT_START_H
#define COD_SFT_START_H

#include <stddef.h>

#include "spec/spec.h"
#include "text/tokenizer.h"

struct sft_start {
    char dir[4400];       /* the checkpoint directory, or the folder */
    int hf;               /* a Hugging Face folder */
};

/* Finds init.from's directory. work_dir: where {"experiment": ID} is
 * looked for (NULL: such a start is refused). 0, or -1 with err naming the
 * field (init.from) and what is missing. */
int sft_start_find(const struct job_spec *s, const char *work_dir, struct sft_start *st,
                   char *err, size_t errlen);

/* Fills what the spec leaves to the start (model, norm, vocab) and refuses
 * what contradicts it, or what a run cannot train (a Hugging Face shape
 * cod's model computes forward only). 0, or -1 with err naming the field. */
int sft_start_apply(const struct sft_start *st, struct job_spec *s, char *err, size_t errlen);

/* Where the start's tokenizer is: a Hugging Face folder's own, or that of
 * the shards the first cod checkpoint down the chain of starts was trained
 * on (meta.json beside them, eval/tokenizer_of.h). */
struct sft_text_source {
    int hf;               /* path is a Hugging Face folder, else a shard glob */
    char path[4400];
};
int sft_start_text(const struct sft_start *st, const char *work_dir, struct sft_text_source *src,
                   char *err, size_t errlen);

/* That tokenizer (caller closes it) and the end token its model's answers
 * end with (a Hugging Face config.json's eos_token_id, else the
 * tokenizer's). 0, or -1 with err. */
int sft_start_tokenizer(const struct sft_text_source *src, struct tokenizer **tok,
                        uint32_t *end_token, char *err, size_t errlen);

#endif
