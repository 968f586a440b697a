/* What cod-analyze is given: a cod checkpoint (state.json and its spec)
 * or a Hugging Face model folder (config.json), made into a forward-only
 * model's configuration; and what each command's run says of it. */
#ifndef COD_ANALYZE_SOURCE_H
#define COD_ANALYZE_SOURCE_H

#include <stddef.h>

#include "spec/spec.h"
#include "trainer/hf_config.h"
#include "trainer/model.h"

struct source {
    int hf;                     /* a Hugging Face folder, else a cod checkpoint */
    struct job_spec spec;
    struct hf_config h;
    struct model_config mc;
    const char *val;            /* held-out shards: --val, else a checkpoint's data.val */
    char what[256];
};

/* dir's model at sequences of T (0: a checkpoint's train.seq_len, a
 * folder's max_position_embeddings up to 2048) in batches of B (0: a
 * checkpoint's train.micro_batch, else 8192 tokens' worth) into *max_B.
 * need_val: a Hugging Face folder needs --val. 0, or -1 with err. */
int analyze_open_source(const char *dir, struct source *src, const char *val, int need_val, int T,
                        int B, int *max_B, char *err, size_t errlen);

/* The memory the model asked of the backend, weights apart from the rest. */
void analyze_print_memory(const struct model *m, const char *device);

double analyze_seconds(void);

/* A flag's value that must be a positive integer (at most 2^30): 0, or -1
 * having said why on stderr. */
int analyze_positive(const char *flag, const char *s, long long *out);

#endif
